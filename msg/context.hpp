#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// MsgContext: a simulation as the msg layer sees it — core's Context (elements, layout, seed)
/// plus the simulation's message table and post office. The layers above extend it in turn
/// (reduce/context.hpp, shell/simulation.hpp).
#include "core/context.hpp"
#include "msg/msg.hpp"
#include "msg/post_office.hpp"

namespace antler {

class MsgContext : public Context {
 public:
  explicit MsgContext(NodeLayout layout = {});
  /// Drops every message before the Elements they connect go.
  ~MsgContext() override;

  MsgTable& msgs() { return msgs_; }
  const MsgTable& msgs() const { return msgs_; }
  PostOffice& post() { return post_; }

 private:
  MsgTable msgs_;
  PostOffice post_;
};

/// The MsgContext of the simulation e belongs to (every simulation is one: shell/'s Simulation
/// derives from it).
inline MsgContext& msg_context(const Element& e) {
  return static_cast<MsgContext&>(e.context());
}

}  // namespace antler
#pragma GCC visibility pop

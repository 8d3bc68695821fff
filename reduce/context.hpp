#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ReduceContext: a simulation as the reduce layer sees it — msg's MsgContext (elements, layout,
/// seed, messages, post office) plus the simulation's reduce queue.
#include "msg/context.hpp"
#include "reduce/reduce_queue.hpp"

namespace antler {

class ReduceContext : public MsgContext {
 public:
  /// The reduce queue rides in the post office's exchange (one collective a round).
  explicit ReduceContext(NodeLayout layout = {}) : MsgContext(layout), reduces_(*this) {
    post().addContributor(&reduces_);
  }
  /// Drops the messages while the reduce queue their jobs are registered in is still there.
  ~ReduceContext() override { msgs().clear(); }
  ReduceQueue& reduces() { return reduces_; }

 private:
  ReduceQueue reduces_;
};

/// The ReduceContext of the simulation e belongs to (every simulation is one: shell/'s
/// Simulation derives from it).
inline ReduceContext& reduce_context(const Element& e) {
  return static_cast<ReduceContext&>(e.context());
}

}  // namespace antler
#pragma GCC visibility pop

#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Context: one simulation, as the core layer sees it — its table of Elements, where this
/// process sits among the simulation's nodes, and its random seed.
///
/// The layers above extend it, each with its own part: msg/'s MsgContext adds the message table
/// and the post office, reduce/'s ReduceContext the reduce queue, and shell/'s Simulation the
/// clock and the Shell. Every Element knows the Context it lives in, so code reaches its
/// simulation through the Element (or Eref) it works on; nothing in antler is reached through a
/// process-wide instance but the class registry (core/cinfo.hpp) and the small-block pool
/// (core/huge_pages.hpp), which are resources of the process, not of a simulation. Several
/// simulations may live in one process; each runs on its own communicator.
#include <cstdint>

#include "core/element.hpp"
#include "core/layout.hpp"

namespace antler {

class Context {
 public:
  /// An empty simulation (the root element only) on `layout`'s node.
  explicit Context(NodeLayout layout = {});
  virtual ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  ElementTable& elements() { return elements_; }
  const ElementTable& elements() const { return elements_; }
  /// This process's node and the node count: the single source of both (the Runtime sets them
  /// from its communicator).
  const NodeLayout& layout() const { return layout_; }
  /// Moves the simulation to another layout. Only while every Element is global (the root and
  /// system elements): a distributed Element's entries were split for the old one.
  void setLayout(NodeLayout l);
  /// The model's random seed (Shell::seed; default 0). Random classes derive each object's
  /// stream from it and the object's global index, never from the node or thread.
  std::uint64_t seed() const { return seed_; }
  void setSeed(std::uint64_t s) { seed_ = s; }
  /// A count bumped whenever which entries exist where, or who sends to whom, may have changed
  /// (Elements made or deleted, messages made, deleted or refilled, the layout moved): what the
  /// post office's routes between nodes are built from (msg/detail/routes.hpp).
  std::uint64_t topology() const { return topology_; }
  void touchTopology() { ++topology_; }

 private:
  NodeLayout layout_;
  std::uint64_t seed_ = 0;
  std::uint64_t topology_ = 0;
  ElementTable elements_;  // last: its root is made on the layout above
};

}  // namespace antler
#pragma GCC visibility pop

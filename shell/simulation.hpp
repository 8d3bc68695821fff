#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Simulation: one whole simulation — its Elements, messages, post office, reduce queue, clock,
/// seed, communicator and Shell. The layers below see it as their own context (core::Context,
/// MsgContext, ReduceContext) through the Element they work on; shell code and user code hold it
/// directly. A driver program usually makes one through a Runtime (shell/runtime.hpp), which
/// also starts the worker ranks; a program may make several, each on its own communicator (or
/// none: one node), and run them in any order — nothing of one is visible to another.
///
///   antler::Simulation a, b;            // two one-node simulations in one process
///   a.shell().create("IntFire", "/n", 10);
///   b.shell().create("IntFire", "/n", 20);   // the same path, another simulation
#include <memory>

#include "core/comm/block_rounds.hpp"
#include "core/comm/comm.hpp"
#include "reduce/context.hpp"
#include "shell/clock.hpp"
#include "shell/shell.hpp"

namespace antler {

class Simulation final : public ReduceContext {
 public:
  /// A simulation on `comm`'s ranks (this process is comm.rank(); an invalid Comm: one node).
  /// Every rank of comm makes one, in the same order; then rank 0 drives (its Shell's commands)
  /// and the others serve them (Shell::serve).
  explicit Simulation(comm::Comm comm = {});
  ~Simulation() override;

  Shell& shell() { return shell_; }
  Clock& clock() { return clock_; }
  const Clock& clock() const { return clock_; }
  /// The block rounds of this simulation's nodes (shell/blocks.hpp runs them over Elements): its
  /// own duplicate of the simulation's communicator.
  comm::BlockRounds& blockRounds() { return *blockRounds_; }
  /// Leaves the communicator: this process runs the simulation alone from now on (the Runtime,
  /// once it released its workers). A model spread over several nodes is dropped (its other
  /// parts left with the other nodes); a one-node model stays.
  void detach();

 private:
  /// Gives the command channel, the step's exchange and the reductions' node stage each their
  /// own duplicate of comm (never sharing a message space).
  void attach(const comm::Comm& comm);
  Clock clock_;
  Shell shell_;
  std::unique_ptr<comm::BlockRounds> blockRounds_;
};

/// The Simulation e belongs to.
inline Simulation& simulation_of(const Element& e) {
  return static_cast<Simulation&>(e.context());
}

}  // namespace antler
#pragma GCC visibility pop

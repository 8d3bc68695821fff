#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// What a process/reinit call learns about the current step.
#include <cstdint>

namespace antler {

class Element;

/// What a run will call, for a class's prepare hook (core/proc_finfo.hpp) to look at the
/// Elements around its own: the tick each Element's process phase runs on, and each tick's step.
/// Valid during the prepare calls of one run only.
class RunSchedule {
 public:
  /// The tick e's process phase runs on in this run, or -1 if it is not processed.
  virtual int tickOf(const Element* e) const = 0;
  /// A tick's step, in base dts (0: the tick is not in use).
  virtual std::uint64_t tickStep(unsigned tick) const = 0;

 protected:
  ~RunSchedule() = default;
};

/// Passed to every process and reinit call.
struct ProcInfo {
  double dt = 0;             ///< this tick's time step
  double currTime = 0;       ///< model time at the end of this step
  unsigned tick = 0;         ///< clock tick being run
  unsigned threadIndex = 0;  ///< OpenMP thread inside the node
  unsigned numThreads = 1;   ///< threads per node
  int node = 0;              ///< this node (MPI rank)
  int numNodes = 1;          ///< node count
  /// The run's schedule: set for the prepare hook only, nullptr in process and reinit calls.
  const RunSchedule* schedule = nullptr;
};

/// Alias kept for MOOSE users.
using ProcPtr = const ProcInfo*;

}  // namespace antler
#pragma GCC visibility pop

#pragma once
/// What a process/reinit call learns about the current step.
namespace antler {

/// Passed to every process and reinit call.
struct ProcInfo {
  double dt = 0;             ///< this tick's time step
  double currTime = 0;       ///< model time at the end of this step
  unsigned tick = 0;         ///< clock tick being run
  unsigned threadIndex = 0;  ///< OpenMP thread inside the node
  unsigned numThreads = 1;   ///< threads per node
  int node = 0;              ///< this node (MPI rank)
  int numNodes = 1;          ///< node count
};

/// Alias kept for MOOSE users.
using ProcPtr = const ProcInfo*;

}  // namespace antler

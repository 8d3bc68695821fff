#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Runtime: the one object a driver program creates first. It initialises MPI (unless the caller
/// already has) and runs antler on one communicator — MPI_COMM_WORLD by default, or one the
/// caller gives, duplicated either way so antler's traffic never mixes with the caller's. On the
/// communicator's rank 0 (the driver) it returns and the program runs as if serial; every other
/// rank serves the driver's Shell commands until the driver's Runtime ends:
///
///   int main(int argc, char** argv) {
///     antler::Runtime rt(argc, argv);       // workers serve here, then exit the process
///     antler::Shell& s = rt.shell();
///     ...   // build, run, read results: runs on the driver only
///     return rt.finish(0);   // optional: tells the workers which exit code to use
///   }
///
/// With a communicator of the caller's (e.g. half the ranks, the rest doing other MPI work), the
/// workers return from the constructor once the driver's Runtime has ended (isDriver() is false
/// there), so the caller's program goes on on every rank.
#include <memory>

#include "core/comm/comm.hpp"
#include "core/comm/mpi.hpp"
#include "shell/shell.hpp"
#include "shell/simulation.hpp"

namespace antler {

class Runtime {
 public:
  /// Initialises MPI (MPI_THREAD_FUNNELED) and runs on MPI_COMM_WORLD; workers serve commands
  /// here and exit the process with the driver's exit code.
  Runtime(int& argc, char**& argv);
  /// Runs on `comm` (MPI must be initialised, e.g. by the caller or mpi4py); workers serve here
  /// and return when the driver's Runtime ends.
  explicit Runtime(comm::Comm comm);
  /// Ends the workers (exit code 0 unless finish() set one) and finalises MPI if it started it.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// The simulation this Runtime runs (on its communicator's ranks).
  Simulation& simulation() { return *sim_; }
  Shell& shell() { return sim_->shell(); }
  bool isDriver() const { return rank_ == 0; }
  int numNodes() const { return size_; }
  int myNode() const { return rank_; }
  /// The exit code the driver sent (on a worker, after it was released).
  int workerExitCode() const { return workerExit_; }
  /// Sets the exit code the workers will exit with, and returns it.
  int finish(int exitCode);

 private:
  /// Makes the simulation on the communicator and sets this rank's default threads.
  void start(comm::Comm comm);

  std::unique_ptr<comm::Environment> env_;
  std::unique_ptr<Simulation> sim_;
  int rank_ = 0, size_ = 1;
  int exitCode_ = 0, workerExit_ = 0;
  bool finished_ = false;
};

}  // namespace antler
#pragma GCC visibility pop

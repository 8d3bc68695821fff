#pragma once
/// Runtime: the one object a driver program creates first. It initialises MPI; on rank 0 (the
/// driver) it returns and the program runs as if serial; on every other rank it serves the
/// driver's Shell commands until the driver's Runtime is destroyed, then finalises MPI and ends
/// the process with the driver's exit code, so code after it never runs there.
///
///   int main(int argc, char** argv) {
///     antler::Runtime rt(argc, argv);
///     antler::Shell& s = rt.shell();
///     ...   // build, run, read results: runs on the driver only
///     return rt.finish(0);   // optional: tells the workers which exit code to use
///   }
#include <memory>

#include "core/mpi.hpp"
#include "shell/shell.hpp"

namespace antler {

class Runtime {
 public:
  /// Initialises MPI (MPI_THREAD_FUNNELED); workers serve commands here and exit.
  Runtime(int& argc, char**& argv);
  /// Ends the workers (exit code 0 unless finish() set one) and finalises MPI.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  Shell& shell() { return Shell::instance(); }
  bool isDriver() const { return guard_->rank() == 0; }
  int numNodes() const { return guard_->size(); }
  int myNode() const { return guard_->rank(); }
  /// Sets the exit code the workers will exit with, and returns it.
  int finish(int exitCode);

 private:
  std::unique_ptr<mpi::Guard> guard_;
  int exitCode_ = 0;
  bool finished_ = false;
};

}  // namespace antler

#include "shell/runtime.hpp"

#include <cstdlib>
#include <exception>

#include "core/error.hpp"

namespace antler {

Runtime::Runtime(int& argc, char**& argv) : guard_(std::make_unique<mpi::Guard>(&argc, &argv)) {
  if (guard_->rank() == 0) return;
  int code = 0;
  try {
    code = Shell::instance().serve();
  } catch (const std::exception& e) {
    // A broken command protocol cannot be recovered from: every rank must stop.
    mpi::abort(std::string("worker loop failed: ") + e.what());
  }
  guard_.reset();  // MPI_Finalize
  std::exit(code);
}

int Runtime::finish(int exitCode) {
  if (!finished_) {
    exitCode_ = exitCode;
    finished_ = true;
    if (guard_ && guard_->rank() == 0) Shell::instance().quitWorkers(exitCode);
  }
  return exitCode;
}

Runtime::~Runtime() {
  if (!guard_ || guard_->rank() != 0) return;
  // Every Shell command finishes its collectives before it returns or throws, so the workers are
  // waiting for the next command even when the driver leaves on an exception: tell them to quit
  // (with exit code 1 in that case).
  const bool failing = std::uncaught_exceptions() > 0;
  try {
    if (!finished_) {
      finished_ = true;
      Shell::instance().quitWorkers(failing ? 1 : exitCode_);
    }
  } catch (const std::exception& e) {
    mpi::abort(std::string("could not stop the workers: ") + e.what());
  }
}

}  // namespace antler

#include "shell/runtime.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <exception>

#include "core/error.hpp"
#include "shell/clock.hpp"

namespace antler {

namespace {

/// Several ranks on one machine share its cores: unless OMP_NUM_THREADS says otherwise, each
/// rank takes its share, so that `mpirun -n 2` on 2 cores does not run 4 threads (oversubscribed
/// threads spin at every barrier while the thread they wait for is descheduled).
void default_threads(const comm::Comm& c) {
  if (std::getenv("OMP_NUM_THREADS") || c.size() == 1) return;
  MPI_Comm h = comm::mpi_handle(c);
  if (h == MPI_COMM_NULL) return;
  MPI_Comm local;
  ANTLER_MPI(MPI_Comm_split_type(h, MPI_COMM_TYPE_SHARED, c.rank(), MPI_INFO_NULL, &local));
  int localSize = 1;
  ANTLER_MPI(MPI_Comm_size(local, &localSize));
  MPI_Comm_free(&local);
  omp_set_num_threads(std::max(1, omp_get_num_procs() / localSize));
}

}  // namespace

void Runtime::start(comm::Comm c) {
  rank_ = c.rank();
  size_ = c.size();
  default_threads(c);
  sim_ = std::make_unique<Simulation>(c);
  // Every rank sets its own default (not a Shell command: the workers are not serving yet).
  const unsigned threads = static_cast<unsigned>(std::max(1, omp_get_max_threads()));
  sim_->post().setNumThreads(threads);
  sim_->clock().setNumThreads(std::min(threads, Clock::kMaxThreads));
}

Runtime::Runtime(int& argc, char**& argv)
    : env_(std::make_unique<comm::Environment>(&argc, &argv)) {
  start(comm::Comm::world());
  if (rank_ == 0) return;
  int code = 0;
  try {
    code = sim_->shell().serve();
  } catch (const std::exception& e) {
    // A broken command protocol cannot be recovered from: every rank must stop.
    comm::abort(std::string("worker loop failed: ") + e.what());
  }
  env_.reset();  // MPI_Finalize
  std::exit(code);
}

Runtime::Runtime(comm::Comm c) {
  if (!c.valid()) throw ValueError("Runtime: the communicator has no ranks");
  start(std::move(c));
  if (rank_ == 0) return;
  try {
    workerExit_ = sim_->shell().serve();
  } catch (const std::exception& e) {
    comm::abort(std::string("worker loop failed: ") + e.what());
  }
  finished_ = true;
  sim_->detach();
}

int Runtime::finish(int exitCode) {
  if (!finished_) {
    exitCode_ = exitCode;
    finished_ = true;
    if (rank_ == 0) {
      // On a communicator of the caller's, the ranks go on after this: leave no model behind.
      if (!env_ && size_ > 1) sim_->shell().clearModel();
      sim_->shell().quitWorkers(exitCode);
      sim_->detach();
    }
  }
  return exitCode;
}

Runtime::~Runtime() {
  if (rank_ != 0) return;
  // Every Shell command finishes its collectives before it returns or throws, so the workers are
  // waiting for the next command even when the driver leaves on an exception: tell them to quit
  // (with exit code 1 in that case).
  const bool failing = std::uncaught_exceptions() > 0;
  try {
    if (!finished_) finish(failing ? 1 : exitCode_);
  } catch (const std::exception& e) {
    comm::abort(std::string("could not stop the workers: ") + e.what());
  }
}

}  // namespace antler

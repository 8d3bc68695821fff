#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// The MPI side of core/comm: the checked-call wrapper every MPI call goes through, and the RAII
/// environment that initialises MPI with an explicit thread level (MPI_THREAD_FUNNELED: only the
/// master thread of each rank calls MPI) and finalises it, except while an exception unwinds.
#include <mpi.h>

#include <string>

#include "core/comm/comm.hpp"

namespace antler::comm {

/// Throws CommError naming the call and this rank if rc is not MPI_SUCCESS.
void check(int rc, const char* call);

/// Checked MPI call: ANTLER_MPI(MPI_Bcast(...)).
#define ANTLER_MPI(call) ::antler::comm::check((call), #call)

/// True once MPI_Init has run and MPI_Finalize has not.
bool mpi_active();

/// Initialises MPI (if nobody has yet) and finalises it on destruction if it initialised it.
class Environment {
 public:
  Environment(int* argc, char*** argv);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

 private:
  bool owns_ = false;
};

/// The MPI communicator under a Comm of the MPI backend (MPI_COMM_NULL for another backend).
MPI_Comm mpi_handle(const Comm& c);

/// Aborts every rank of the job with a message naming this rank and the cause.
[[noreturn]] void abort(const std::string& why);

}  // namespace antler::comm
#pragma GCC visibility pop

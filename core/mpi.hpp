#pragma once
/// The one place antler talks to MPI: a checked wrapper for every call, and the RAII guard that
/// initialises MPI with an explicit thread level (MPI_THREAD_FUNNELED: only the master thread of
/// each node calls MPI) and finalises it, except while an exception unwinds.
#include <mpi.h>

#include <string>
#include <vector>

namespace antler::mpi {

/// Throws CommError naming the call if rc is not MPI_SUCCESS.
void check(int rc, const char* call);

/// Checked MPI call: ANTLER_MPI(MPI_Bcast(...)).
#define ANTLER_MPI(call) ::antler::mpi::check((call), #call)

/// Initialises MPI (if nobody has yet) and finalises it on destruction.
class Guard {
 public:
  Guard(int* argc, char*** argv);
  ~Guard();
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  bool owns_ = false;
  int rank_ = 0, size_ = 1;
};

/// True once MPI_Init has run and MPI_Finalize has not.
bool active();

/// Gathers every node's bytes onto every node; `counts` gets each node's size, `out` the
/// concatenation in node order.
void allgatherv(const char* data, std::size_t n, std::vector<std::size_t>& counts,
                std::vector<char>& out);

/// Like allgatherv, but in one MPI_Allgather of fixed blocks of `inlineBytes` when every node's
/// data fits (the common case for small exchanges: one collective instead of two); a node with
/// more makes everyone follow with one MPI_Allgatherv of the overflow.
void allgather_inline(const char* data, std::size_t n, std::size_t inlineBytes,
                      std::vector<std::size_t>& counts, std::vector<char>& out);

/// True on every node if `mine` is true on any node (one all-reduce).
bool any(bool mine);

/// Aborts every rank with a message naming this rank and the cause (for unrecoverable errors).
[[noreturn]] void abort(const std::string& why);

}  // namespace antler::mpi

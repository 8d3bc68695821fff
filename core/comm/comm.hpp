#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Comm: one communicator, passed by value to whoever needs it (never a singleton). It moves
/// bytes between ranks — point-to-point with tags, and the collectives of core/comm/collectives.hpp
/// built on them — over one of two backends that run the same algorithm code:
///
///   MPI    a duplicate of the communicator the caller gives (MPI_COMM_WORLD only by default), so
///          antler's traffic never mixes with the caller's. Every MPI call is checked: a failure
///          is a CommError naming the call and the rank.
///   Local  P simulated ranks inside one process (one thread each, eager mailboxes), with exact
///          counters per rank: messages, bytes, communication rounds and a modelled alpha-beta
///          time. A receive that can never be satisfied (every live rank waiting) is a CommError
///          naming the waiting ranks, not a hang. See core/comm/local.hpp.
///
/// Rounds: a rank may send one message and receive any number per round; a message sent in
/// round c arrives in round c + 1 (a rank's round is 1 + the latest of its own last send and the
/// arrivals it has received). Binomial broadcast takes ceil(log2 P) rounds, a k-segment chain
/// P - 1 + k - 1 — the textbook figures, counted rather than assumed.
///
/// core/comm knows nothing of Elements: it can be used without the rest of antler.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/buffer.hpp"

namespace antler::comm {

namespace detail {
class Backend;
}

/// Counters of one rank's traffic through antler's own algorithms (vendor calls count as one
/// message per call on the MPI backend, and as received bytes what must arrive at least: an
/// allgather's other parts, an all-reduce's result; the Local backend counts every message it
/// carries).
struct Stats {
  std::uint64_t messagesSent = 0, bytesSent = 0;
  std::uint64_t messagesReceived = 0, bytesReceived = 0;
  std::uint64_t rounds = 0;  ///< communication rounds (the logical clock described above)
  double modelSeconds = 0;   ///< Local only: alpha-beta time of the critical path
};

/// A non-blocking operation in flight; wait() completes it.
class Request {
 public:
  Request() = default;
  bool active() const { return impl_ != nullptr; }

 private:
  friend class Comm;
  std::shared_ptr<void> impl_;
};

/// One communicator over one backend.
class Comm {
 public:
  /// A duplicate of MPI_COMM_WORLD (the only place antler names it). Initialises nothing: MPI
  /// must be initialised (see Environment in core/comm/mpi.hpp).
  static Comm world();
  /// A duplicate of an MPI communicator the caller owns (MPI_Comm passed as its handle value).
  static Comm fromMpi(const void* mpiComm);
  /// The communicator of one simulated rank (used by Local; see core/comm/local.hpp).
  explicit Comm(std::shared_ptr<detail::Backend> b);
  Comm() = default;

  int rank() const;
  int size() const;
  /// Waits that give the core away: while a collective or a wait on this communicator has not
  /// completed, the caller polls and yields the core (sched_yield) instead of spinning inside the
  /// MPI library, so that threads sharing its cores (this rank's workers, other ranks) run. For
  /// nodes where threads outnumber cores (the Clock sets it per run: see oversubscribed()); it
  /// adds a system call per poll, so it is off otherwise. The Local backend ignores it.
  void setYielding(bool on);
  bool yielding() const;
  bool valid() const { return backend_ != nullptr; }
  /// "MPI" or "Local".
  std::string backendName() const;

  /// A new communicator over the same ranks (its own message space).
  Comm dup() const;
  /// The ranks with the same color, ordered by (key, rank); color < 0: not in any (invalid Comm).
  /// Collective over this communicator.
  Comm split(int color, int key) const;

  // ---- point-to-point (tags >= 0; antler's collectives use tags >= kCollectiveTags) ----

  /// Sends bytes (may return before the receiver has them; the bytes are copied or sent).
  void send(int dest, int tag, std::span<const char> bytes);
  /// Starts a send; `bytes` must stay alive and unchanged until wait().
  Request isend(int dest, int tag, std::span<const char> bytes);
  /// Receives the next message from src with tag, whatever its size.
  ByteBuffer recv(int src, int tag);
  /// Starts a receive of exactly n bytes into `into` (a different size is a CommError).
  Request irecv(int src, int tag, char* into, std::size_t n);
  /// Completes a request (no-op for an inactive one).
  void wait(Request& r);
  /// Sends to dest and receives from src at once (no deadlock when both sides do it).
  ByteBuffer sendrecv(int dest, int sendTag, std::span<const char> bytes, int src, int recvTag);

  // ---- bookkeeping ----

  /// This rank's counters so far.
  Stats stats() const;
  /// Sets the counters to zero.
  void resetStats();
  /// The next sequence number of a collective on this communicator (every rank counts alike).
  std::uint64_t nextSequence();

  /// Internal: the backend (for vendor collectives).
  detail::Backend& backend() const;

  static constexpr int kCollectiveTags = 1 << 20;

 private:
  std::shared_ptr<detail::Backend> backend_;
};

/// The cores this rank may count as its own: its affinity mask when the launcher bound it to
/// fewer cores than the machine has, else the machine's cores shared out among the ranks on it
/// (ranks per node from the launcher's environment, OMPI_COMM_WORLD_LOCAL_SIZE or
/// MPI_LOCALNRANKS; 1 without one), at least 1. ANTLER_CORES_PER_RANK=n forces the answer.
/// Under OpenMP binding (OMP_PROC_BIND, or OMP_PLACES alone) the mask is that of all OpenMP's
/// places, not the calling thread's: the runtime binds the initial thread to one place as the
/// program starts.
unsigned cores_per_rank();

/// Whether `threadsPerRank` threads in each of this node's ranks would outnumber the cores they
/// may run on (a bound rank's own cores; else the machine's, for all its ranks together).
/// ANTLER_COMM_YIELD=0|1 forces the answer. A local guess: callers agree on it across ranks
/// before acting on it.
bool threads_exceed_cores(unsigned threadsPerRank);

}  // namespace antler::comm
#pragma GCC visibility pop

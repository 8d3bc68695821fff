#pragma once
// One collective call on one rank (internal to core/comm): every message antler's own algorithms
// send goes through a Call, which puts the call's CallInfo in front of it and checks it on
// receipt.
//
// Why. On MPI, a rank that disagrees with the others on the sequence of collectives — it calls
// reduce where they call broadcast, names another root, or one more collective than they do —
// would otherwise wait forever for a message that no rank sends, or take a message of another
// collective for its own. So every collective call takes the next sequence number of its
// communicator (every rank counts its calls alike), and every message of it carries 16 bytes:
// (sequence, kind, algorithm, root). All collectives share one tag, and MPI keeps the messages
// from one rank to another in order, so the next message a rank receives from a peer is the
// peer's next message to it, whatever collective the peer is in: a receive sees a message of a
// different call at once and raises CollectiveMismatch naming both ranks and both calls (the
// receiver's own call of the same number, from a short history, too).
//
// What cannot be seen. A message is only checked where it is received: a rank that only sends in
// a collective (the root of a broadcast, a leaf of a reduce) finishes it even if nobody agrees,
// and the disagreement shows at the next receive between the two ranks, in a later collective,
// or never if there is none. Two ranks that both wait for each other (each thinks the other
// sends first) exchange no message to check: on MPI they hang, as do ranks that skip a
// collective the others run when no later receive pairs them up; a timeout would be needed
// there. (Local declares a deadlock instead.) Vendor calls (MPI_Bcast, MPI_Allreduce, ...)
// carry no header: they take a sequence number, but a disagreement inside one is MPI's.
//
// Spreading the news. A rank that raises a mismatch first sends a notice (a header flagged as
// such, and its message) to every other rank of the communicator, once. A rank that receives a
// notice where it expected a message raises a CommError quoting it and sends its own notices, so
// that a rank waiting on a rank that waits on the one that failed learns of it too, not only
// the failed rank's direct peers. After a mismatch the communicator holds stray messages, on
// every rank: do not use it again, and do not free it (Open MPI can crash when a new
// communicator reuses the id of a freed one that has messages pending; the MPI backend leaves
// one that saw a mismatch allocated). Make a new one (dup of another) to go on.
//
// Cost. Messages up to Backend::inlineLimit bytes (8 KiB on MPI) are copied behind their header
// into one message; larger ones go as a 16-byte header message and then the bytes themselves,
// straight from and into the caller's buffers. Receives happen at wait(): the header must be
// read before the bytes' destination is known to be right. The counters of Stats count the
// header bytes (and, on MPI, the header messages of split sends): they are real traffic. Local
// never splits, so its message and round counts stay the textbook figures.
#include <cstdint>
#include <memory>
#include <span>

#include "core/buffer.hpp"
#include "core/comm/algorithms.hpp"
#include "core/comm/comm.hpp"
#include "core/comm/detail/backend.hpp"

namespace antler::comm::detail {

/// The 16 bytes in front of every message of a collective call.
struct WireHeader {
  std::uint64_t sequence;
  std::int32_t root;
  std::uint8_t kind, algorithm, flags, magic;
};
static_assert(sizeof(WireHeader) == 16);

/// Backend::inlineLimit of a backend that never splits a message from its header.
constexpr std::size_t kNoLimit = static_cast<std::size_t>(-1);

class Call {
 public:
  /// A send or receive of this call in flight (receives run in wait()).
  struct Op {
    std::shared_ptr<void> first, second;  // backend sends in flight
    std::shared_ptr<ByteBuffer> keep;     // the bytes of a send in flight
    int src = -1;
    char* into = nullptr;
    std::size_t n = 0;
    bool recv = false;
  };

  /// Takes the communicator's next sequence number and records the call in its history.
  Call(Comm& c, Collective kind, int root, Algorithm a);
  const CallInfo& info() const { return info_; }
  /// The algorithm this rank runs from now on (broadcast_any: the head, then the rest).
  void setAlgorithm(Algorithm a);

  Comm& comm() const { return c_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  void send(int dest, std::span<const char> bytes);
  /// `bytes` must stay alive and unchanged until wait().
  Op isend(int dest, std::span<const char> bytes);
  /// The next message from src (any size).
  ByteBuffer recv(int src);
  /// A receive of exactly n bytes into `into`, done in wait().
  Op irecv(int src, char* into, std::size_t n);
  void wait(Op& op);
  ByteBuffer sendrecv(int dest, std::span<const char> bytes, int src);

 private:
  /// The first (or only) message from src: its header checked; `split` if the bytes follow.
  const ByteBuffer& first(int src, bool& split);
  [[noreturn]] void mismatch(int src, const WireHeader& h);
  [[noreturn]] void notified(int src, const ByteBuffer& m);
  [[noreturn]] void sizes(int src, std::size_t want, std::size_t got);
  void notifyOthers(const std::string& what);
  WireHeader header(std::uint8_t flags) const;

  Comm& c_;
  Backend& b_;
  CallInfo info_;
  int rank_, size_;
};

}  // namespace antler::comm::detail

#pragma once
// The interface both backends implement (internal). Point-to-point is all the algorithms need;
// the vendor_* calls are the MPI library's own collectives (the `vendor` algorithm), which the
// Local backend stands in for with plain linear algorithms over its mailboxes.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/buffer.hpp"
#include "core/comm/algorithms.hpp"
#include "core/comm/comm.hpp"

namespace antler::comm {

namespace detail {

/// Bytes of one element of type t.
inline std::size_t prim_size(Prim t) {
  switch (t) {
    case Prim::i8:
    case Prim::u8:
      return 1;
    case Prim::i16:
    case Prim::u16:
      return 2;
    case Prim::i32:
    case Prim::u32:
    case Prim::f32:
      return 4;
    default:
      return 8;
  }
}

/// The portable form of a posted receive from any source (backends that can post one natively
/// override irecvAny and its kin).
struct PostedAny {
  int tag = 0;
  char* into = nullptr;
  std::size_t cap = 0;
  ByteBuffer tmp;
};

class Backend {
 public:
  /// irecvAny's tag that takes a message of any tag.
  static constexpr int kAnyTag = -1;
  virtual ~Backend() = default;
  /// The largest tag a message may carry (MPI_TAG_UB: MPI promises at least 32767).
  virtual int maxTag() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;
  virtual std::shared_ptr<Backend> dup() = 0;
  virtual std::shared_ptr<Backend> split(int color, int key) = 0;

  virtual void send(int dest, int tag, std::span<const char> bytes) = 0;
  /// Returns an opaque in-flight operation (nullptr if already complete).
  virtual std::shared_ptr<void> isend(int dest, int tag, std::span<const char> bytes) = 0;
  virtual ByteBuffer recv(int src, int tag) = 0;
  /// Receives the next message from src with tag into `into` and returns its size (one larger
  /// than cap is a CommError).
  virtual std::size_t recvSome(int src, int tag, char* into, std::size_t cap) = 0;
  virtual std::shared_ptr<void> irecv(int src, int tag, char* into, std::size_t n) = 0;
  virtual void wait(std::shared_ptr<void>& op) = 0;

  // ---- what non-blocking consensus and star forests need (core/comm/consensus.hpp) ----

  /// A synchronous-mode send: the operation completes once the receiver has matched it.
  virtual std::shared_ptr<void> issend(int dest, int tag, std::span<const char> bytes) = 0;
  /// Whether op has completed (then it is reset; an empty op has).
  virtual bool test(std::shared_ptr<void>& op) = 0;
  /// Whether a message with tag from src (-1: any source) is waiting: its source and size.
  virtual bool iprobe(int src, int tag, int& from, std::size_t& n) = 0;
  /// Receives a waiting message with tag from src (-1: any source) into out, if there is one
  /// (its source in from); out's capacity is reused.
  virtual bool tryRecv(int src, int tag, int& from, ByteBuffer& out) {
    std::size_t n = 0;
    if (!iprobe(src, tag, from, n)) return false;
    out = recv(from, tag);
    return true;
  }
  /// Posts a receive for the next message with tag (kAnyTag: any tag) from any source, into
  /// `into` (at most cap bytes): a rank that polls for messages tests it instead of probing, and
  /// the library matches the message on arrival. op is the posted receive (reused for the next
  /// one once testAny has found it complete); withdraw it with cancelAny.
  virtual void irecvAny(std::shared_ptr<void>& op, int tag, char* into, std::size_t cap) {
    if (!op) op = std::make_shared<PostedAny>();
    auto& p = *static_cast<PostedAny*>(op.get());
    p.tag = tag;
    p.into = into;
    p.cap = cap;
  }
  /// Whether the receive posted with irecvAny has completed: then its source, size and tag. A
  /// message larger than cap is a CommError. (This portable form takes one tag only: a backend
  /// that takes kAnyTag overrides it.)
  virtual bool testAny(std::shared_ptr<void>& op, int& from, std::size_t& n, int& tag) {
    auto& p = *static_cast<PostedAny*>(op.get());
    if (p.tag == kAnyTag)
      throw InternalError("testAny: this backend (" + name() + ") posts no receive of any tag");
    if (!tryRecv(-1, p.tag, from, p.tmp)) return false;
    tag = p.tag;
    if (p.tmp.size() > p.cap)
      throw CommError("a message of " + std::to_string(p.tmp.size()) + " bytes from rank " +
                      std::to_string(from) + " for a posted receive of " + std::to_string(p.cap));
    std::memcpy(p.into, p.tmp.data(), p.tmp.size());
    n = p.tmp.size();
    return true;
  }
  /// Withdraws a receive posted with irecvAny that has not completed (op is reset).
  virtual void cancelAny(std::shared_ptr<void>& op) { op.reset(); }
  /// A barrier that completes (test, wait) once every rank has started it.
  virtual std::shared_ptr<void> ibarrier() = 0;
  /// This rank's count of events (a message arrived, a synchronous send was matched): Local's
  /// progress loops pass it to idle(); the MPI backend has none to count (0).
  virtual std::uint64_t events() { return 0; }
  /// Waits for an event after `seen` (Local: sleeps until one, and counts as blocked for its
  /// deadlock check); MPI: yields the core when yielding, else returns at once (a poll).
  virtual void idle(std::uint64_t seen) = 0;
  /// As idle, but returns by `until` at the latest; Local does not count the rank as blocked
  /// meanwhile (it will wake by itself). MPI: the same poll as idle.
  virtual void idleUntil(std::uint64_t seen, std::chrono::steady_clock::time_point until) {
    (void)until;
    idle(seen);
  }
  /// A neighbourhood (MPI: a distributed-graph communicator) receiving from `sources` and
  /// sending to `dests`, both in rank order. Collective.
  virtual std::shared_ptr<void> neighbourhood(std::span<const int> sources,
                                              std::span<const int> dests) = 0;
  /// Starts an all-to-all over a neighbourhood: counts and displacements in bytes, one per
  /// destination (send) or source (receive), in the order given to neighbourhood().
  virtual std::shared_ptr<void> ineighbourAlltoallv(
      const std::shared_ptr<void>& hood, const char* send, std::span<const std::size_t> sendCounts,
      std::span<const std::size_t> sendDispls, char* recv, std::span<const std::size_t> recvCounts,
      std::span<const std::size_t> recvDispls) = 0;

  // Vendor collectives.
  virtual void vendorBcast(char* data, std::size_t n, int root) = 0;
  virtual void vendorAllreduce(const void* in, void* out, std::size_t count, Prim t, OpKind op) = 0;
  virtual void vendorReduce(const void* in, void* out, std::size_t count, Prim t, OpKind op,
                            int root) = 0;
  /// Every rank's n bytes (n equal on every rank), concatenated in rank order.
  virtual void vendorAllgather(const char* in, std::size_t n, char* out) = 0;
  /// Every rank's bytes (sizes may differ), concatenated; counts gets each rank's size.
  virtual void vendorAllgatherv(std::span<const char> in, std::vector<std::size_t>& counts,
                                ByteBuffer& out) = 0;
  /// As allgatherv, onto root only (out and counts are left empty elsewhere).
  virtual void vendorGatherv(std::span<const char> in, int root, std::vector<std::size_t>& counts,
                             ByteBuffer& out) = 0;
  virtual void vendorBarrier() = 0;
  /// Waits that give the core away (see Comm::setYielding); a no-op where waits do not spin.
  virtual void setYielding(bool) {}
  virtual bool yielding() const { return false; }

  Stats stats;
  std::uint64_t sequence = 0;

  // ---- the collective header (see core/comm/detail/call.hpp) ----

  /// Messages up to this size travel with their header in one message (a copy); larger ones
  /// as a header message followed by the bytes themselves (no copy). Local copies every message
  /// anyway and keeps one message per send, so that its counts stay the textbook figures.
  std::size_t inlineLimit = 8192;
  /// This rank's last calls by sequence (slot sequence % kHistory), to name a mismatch.
  static constexpr std::size_t kHistory = 64;
  std::array<CallInfo, kHistory> history{};
  /// The notices this rank sent when it left a collective with a mismatch (sent once; kept
  /// alive until the communicator goes, as nobody may ever receive them).
  bool noticed = false;
  std::vector<ByteBuffer> noticeBytes;
  std::vector<std::shared_ptr<void>> noticeOps;
};

}  // namespace detail
}  // namespace antler::comm

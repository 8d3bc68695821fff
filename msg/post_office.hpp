#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// The post office: per-thread outgoing queues, their exchange between nodes and their delivery.
///
/// Two kinds of queue per thread:
///  * the process queue, filled by sends during the process phase, one segment per Element the
///    tick processes. Slices are contiguous, so concatenating segment j of thread 0, 1, ... on
///    node 0, 1, ... gives the sends of Element j in order of source global index: the serial
///    order, whatever the split.
///  * the deferred queue, filled by sends made anywhere else (inside dest functions during
///    delivery, in reinit, from Shell calls). Its records are stably sorted by (source Element,
///    data index, field index) before delivery: each object's own sends keep their order, and
///    the result again does not depend on the split. Deferred sends are delivered at the next
///    delivery phase, before that phase's process-queue sends.
///
/// Only the master thread calls exchange() (MPI_THREAD_FUNNELED); every thread then calls
/// deliver(t), which delivers to the targets in thread t's slice of each destination.
#include <omp.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/comm/comm.hpp"
#include "msg/outbox.hpp"

namespace antler {
class Context;
namespace comm {
class StarForest;
class Payloads;
}  // namespace comm
namespace detail {
class Routes;
}
}  // namespace antler

namespace antler {

/// Flags every node contributes to an exchange; the union comes back.
enum ExchangeFlags : std::uint32_t {
  kFlagError = 1,  ///< a thread of this node raised an exception this step
  kFlagStop = 2,   ///< a process function asked the clock to stop
};

/// Another layer's part of a round's exchange (the reduce queue's requests and predicted
/// partials): it packs its bytes before the exchange and reads every node's after it, so the
/// round keeps one collective and the clock knows nothing of what rides in it. Master thread.
class ExchangeContributor {
 public:
  virtual ~ExchangeContributor() = default;
  /// This node's bytes for the round of `tick` (before the exchange).
  virtual const ByteBuffer& pack(unsigned tick) = 0;
  /// Every node's bytes, in node order (after an exchange that carried no error).
  virtual void unpack(unsigned tick,
                      const std::vector<std::pair<const char*, std::size_t>>& nodes) = 0;
};

/// How a step's sends reach the other nodes (see PostOffice::prepareRun).
enum class ExchangeMode : std::uint8_t {
  allgather,  ///< every node receives every node's sends (one collective)
  targeted,   ///< each send goes only to the nodes that own one of its targets
};
const char* to_string(ExchangeMode m);

/// What the targeted exchange moved (this node; since the post office was made).
struct ExchangeStats {
  std::uint64_t steps = 0;            ///< exchanges on the targeted path
  std::uint64_t recordsSent = 0;      ///< records sent to other nodes (one per target node)
  std::uint64_t recordsReceived = 0;  ///< records received from other nodes
  std::uint64_t bytesSent = 0, bytesReceived = 0;  ///< their payloads' bytes
  /// Rounds whose point-to-point part (the star forest's reducev) ran, and rounds where no node
  /// had records for another, so none ran (every node agrees on both counts).
  std::uint64_t forestRounds = 0, forestRoundsSkipped = 0;
};

class PostOffice {
 public:
  /// The post office of `context`'s simulation (its MsgContext owns it): one thread's queues.
  explicit PostOffice(Context& context);
  ~PostOffice();

  /// Sets the number of per-thread queues (only while no run is in progress).
  void setNumThreads(unsigned n);
  /// The communicator the exchanges go through (the Runtime sets it; one rank: none needed).
  void setComm(comm::Comm c) { comm_ = std::move(c); }
  comm::Comm& comm() { return comm_; }
  unsigned numThreads() const { return static_cast<unsigned>(process_.size()); }

  /// The queue a send from the calling thread goes to. During the process phase each thread's
  /// queue is in a thread_local (set by the clock), so a send costs no lookup. Any other send (a
  /// dest function during delivery, a digest, a Shell call between runs) is deferred: whether a
  /// run is in its process phase is not enough, since between runs the clock has already begun
  /// the next round's (a Shell call's sends would then land, unsorted, in thread 0's process queue
  /// and be delivered in an order that depends on the node count).
  /// `sender` is the Element whose object sends: its simulation's post office takes a deferred
  /// send.
  static Outbox& outbox(const Element& sender) {
    if (Outbox* o = current_) return *o;
    return deferredOutbox(sender);
  }
  /// This post office's deferred queue for the calling thread.
  Outbox& deferredOutbox() {
    if (bulkPort_) [[unlikely]]
      sendInBulk();
    const unsigned t = thread();
    return deferredOut_[t < deferredOut_.size() ? t : 0];
  }
  /// The clock's thread (its slice of every Element, its queues) that the calling OS thread is
  /// running: set by the clock, which may run several in turn on one OS thread (Clock::run);
  /// outside a run, the OpenMP thread number.
  static unsigned thread() {
    return thread_ >= 0 ? static_cast<unsigned>(thread_)
                        : static_cast<unsigned>(omp_get_thread_num());
  }
  /// Whether the calling OS thread is running a clock thread's part of a run.
  static bool inRun() { return thread_ >= 0; }
  /// Called by the clock before it runs thread t's part of a phase (-1 when the run ends).
  static void setThread(int t) { thread_ = t; }
  /// The process queue of thread t (the clock marks segment ends in it).
  Outbox& processOutbox(unsigned t) { return process_[t]; }
  /// Called by each thread around its process phase: makes its process queue the current one
  /// (nullptr afterwards).
  static void setCurrent(Outbox* o) { current_ = o; }
  /// The calling thread's process queue during its process phase, else nullptr.
  static Outbox* current() { return current_; }
  /// Around a bulk send's loop (SrcFinfo::sendEach): the per-object functions it calls return what
  /// they send and must not send themselves (a send would land after the whole batch, in an order
  /// that depends on the thread split). While `port` is set, the calling thread's process queue is
  /// not current and a send to a connected port throws MsgError naming it; nullptr ends the loop.
  static void setBulkPort(const char* port) { bulkPort_ = port; }

  /// Master thread, at the start of every run, on every node (collective on several): when the
  /// model's topology changed (Context::topology), rebuilds the routes (which nodes own the
  /// targets of each of this node's sources: msg/detail/routes.hpp) and chooses the exchange
  /// for the runs that follow, from values every node agrees on:
  ///  * allgather, the single collective, on one node, where sources reach (on average) more
  ///    than half of the other nodes, or where nothing crosses nodes;
  ///  * targeted otherwise: the step's flags, the contributors' bytes and the deferred sends
  ///    still ride in one small allgather, while the process queues' records go, record by
  ///    record, only to the nodes that own one of their targets, through a star forest
  ///    (comm::StarForest, one root per node, a leaf per target node: its setUp finds who
  ///    sends to whom by non-blocking consensus) — one round of point-to-point messages.
  /// Delivery order is the same on both paths (source node, thread, send order), so every
  /// result is too. ANTLER_EXCHANGE=allgather|targeted forces one (every node alike).
  void prepareRun();
  ExchangeMode exchangeMode() const { return mode_; }
  const ExchangeStats& exchangeStats() const { return xstats_; }
  /// Every byte this node's exchanges received from other nodes (the allgather's, and the
  /// targeted path's forest's).
  std::uint64_t bytesReceived() const;
  /// Every message this node's exchanges sent (a vendor collective counts as one; the targeted
  /// path's point-to-point messages each).
  std::uint64_t messagesSent() const;
  /// What bytesReceived() counted since the current (or last) run started.
  std::uint64_t runBytesReceived() const { return bytesReceived() - runStartBytes_; }
  /// The routes' size: node entries held (memory grows with this node's sources).
  std::size_t routeEntries() const;
  /// Master thread, after exchange(): an error of this node's targeted path (a corrupted part),
  /// which the exchange could not raise without the other nodes (nullptr if none).
  std::exception_ptr takeError() { return std::exchange(targetedError_, nullptr); }
  bool hasError() const { return static_cast<bool>(targetedError_); }

  /// Adds a contributor to every round's exchange (in the order added; the simulation's layers
  /// add theirs when it is made, every node the same).
  void addContributor(ExchangeContributor* c) { contributors_.push_back(c); }
  /// Master thread, after Barrier 1: moves deferred sends in, exchanges buffers, flags and each
  /// contributor's bytes for the round of `tick` with the other nodes in one collective when they
  /// are small, and builds the delivery plan. Returns the union of every node's flags.
  std::uint32_t exchange(std::uint32_t flags, unsigned tick = 0);
  /// Master thread, after an exchange that carried no error: hands each contributor every node's
  /// bytes. Separate from exchange(): a contributor's failure is this node's alone (it travels in
  /// the next exchange), while exchange()'s verdicts are every node's.
  void unpackContributions(unsigned tick);
  /// Every thread, after exchange: delivers to the targets in thread t's slices.
  void deliver(unsigned t) const;
  /// Master thread, after every thread delivered: empties the delivered queues.
  void finishDelivery();
  /// True if sends are waiting to be delivered.
  bool pending() const;
  /// Drops every queued send (after a failed run, or when the model is cleared).
  void clear();

 private:
  static Outbox& deferredOutbox(const Element& sender);
  struct Span {
    const char* begin;
    const char* end;
  };
  struct Record {
    std::uint32_t src, bind;
    Index d, f;
    const char* args;
    std::uint32_t argBytes;
  };
  /// Segment j of a process queue.
  static Span segment(const Outbox& o, std::size_t j);
  /// This node's part of the exchange, in packed_: flags, sizes, attachment, deferred sends and
  /// the process queues' segments.
  void pack(std::uint32_t flags, const ByteBuffer& attachment, std::size_t nseg,
            bool segments = true);
  /// The targeted path: the process queues' records, per target node (outPayloads_).
  void packTargeted(std::size_t nseg);
  /// The targeted path: segSpans_ from this node's queues and what arrived (inPayloads_).
  void unpackTargeted(std::size_t nseg);
  /// The contributors' bytes for the round, framed: {u64 length, bytes} per contributor.
  const ByteBuffer& contributions(unsigned tick);
  /// Reads every node's part from gathered_ into the spans; returns the union of the flags (a
  /// disagreement on the segment count is described in `disagreement`).
  std::uint32_t unpack(std::size_t nseg, std::string& disagreement);
  void plan(std::size_t nseg);
  void deliverSpan(Span s, unsigned t) const;

  // The calling OS thread's place in whichever simulation's run it is running (a thread runs one
  // at a time). Defined once, in post_office.cpp (not inline here, so a library of classes built
  // with hidden visibility shares them); constinit: no TLS wrapper call. initial-exec: a send
  // from user code reads them with one instruction; antler is loaded at start or by Python's
  // import, and a few bytes fit the static TLS surplus glibc keeps for such modules.
  static thread_local constinit Outbox* current_ [[gnu::tls_model("initial-exec")]];
  static thread_local constinit int thread_ [[gnu::tls_model("initial-exec")]];
  static thread_local constinit const char* bulkPort_ [[gnu::tls_model("initial-exec")]];
  [[noreturn]] static void sendInBulk();
  Context& context_;
  std::vector<Outbox> process_, deferredIn_, deferredOut_;
  // The delivery plan built by exchange().
  std::vector<Record> deferredPlan_;
  std::vector<Span> spans_;
  std::vector<char> gathered_;
  comm::Comm comm_;
  std::vector<std::size_t> counts_;
  std::size_t inlineBytes_ = 120;  // agreed by every node (see exchange)
  std::vector<Span> deferredSpans_;
  std::vector<std::vector<Span>> segSpans_;
  std::vector<std::pair<const char*, std::size_t>> attachments_;  // every node's contributions
  std::vector<ExchangeContributor*> contributors_;
  ByteBuffer contributions_;
  std::vector<std::pair<const char*, std::size_t>> perNode_;  // one contributor's, every node's
  std::vector<Reader> contributionReaders_;
  ByteBuffer packed_;
  // The targeted exchange (prepareRun).
  ExchangeMode mode_ = ExchangeMode::allgather;
  std::uint64_t routesTopology_ = ~std::uint64_t{0};
  std::unique_ptr<detail::Routes> routes_;
  std::unique_ptr<comm::StarForest> forest_;
  std::unique_ptr<comm::Payloads> outPayloads_, inPayloads_;
  std::vector<ByteBuffer> outTargeted_;             // per target node (routes_->targets() order)
  std::vector<int> slotOf_;                         // per node: its place in targets, or -1
  std::vector<std::size_t> tgtSegAt_, tgtBatchAt_;  // packTargeted's scratch, per target node
  std::vector<std::uint32_t> tgtCount_;
  std::vector<Index> tgtNext_;
  ExchangeStats xstats_;
  std::uint64_t runStartBytes_ = 0;
  bool expectParts_ = true;     // targeted: last round some node had contributions or deferred
  bool forestExpected_ = true;  // targeted: last round some node had records for another
  std::vector<char> noParts_;   // every contributor's empty part
  std::exception_ptr targetedError_;  // this node's, raised at the next exchange
};

/// Visits every record of a span: f(src Element*, bind, d, f, args, argBytes). Checks the bytes
/// against the source class (CommError on a corrupted or foreign buffer).
template <class Fn>
void for_each_batch(const char* begin, const char* end, Fn&& fn);

}  // namespace antler
#pragma GCC visibility pop

#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Reductions by id and over rank groups: Converse's CmiReduce family (CmiReduce, CmiReduceStruct,
/// their ID forms, CmiListReduce, CmiGroupReduce) in C++ terms, non-blocking, with any number in
/// flight and a fixed merge order.
///
///   comm::Reductions red(c);                               // collective: its own communicator
///   auto merge = [](ByteBuffer mine, std::span<const comm::Bytes> kids) { ...; return mine; };
///   auto r = red.reduce(bytes, merge, [](comm::Bytes all) { ... });   // handler on rank 0
///   auto q = red.reduce(doubles, comm::elementwise<double>(comm::ops::sum{}));  // as MPI_SUM
///                                                      // (comm::ops: core/comm/collectives.hpp)
///   ... other work ...
///   r.wait();                                              // or r.test(), r.wait(deadline)
///
///   auto g = red.establishGroup({1, 3, 4});                // local: no communication
///   auto s = red.groupReduceStruct<Tally>(mine, mergeTallies, show, {.id = id, .toAll = true});
///
/// Members and the tree. A reduction runs over a member list: every rank of the communicator
/// (reduce, reduceStruct), a list given at the call (listReduce) or a group established once
/// (groupReduce). The first member is the root. The contributions move up the binomial tree over
/// member positions: position p's parent is p with its lowest set bit cleared, its children are
/// p + 1, p + 2, p + 4, ... below p's lowest set bit (all powers of two for the root) and below
/// the member count. Each member calls merge once, when its own contribution and every child's
/// have arrived, with the children in that order (nearest first) — never in arrival order — so
/// results are bit-identical run to run, whatever the timing. For a merge that folds its children
/// left to right, the result is antler's canonical fold over member order (core/comm/
/// algorithms.hpp), the one every other reduction in antler uses. A member without children does
/// not call merge. The root calls the handler; with toAll the result comes back down the same
/// tree and every member calls it. A toAll over two members is an exchange instead: the root
/// sends its own contribution down as it starts, and the other member makes the root's merge
/// call itself (merge(root's, {its own}): the same call, so the same bits), in one message
/// latency instead of two. (Converse uses a 4-ary tree over pes[], merges children in
/// arrival order and aborts past 16 reductions in flight; its CmiListReduceStruct sends to a
/// list position as if it were a processor.)
///
/// Matching. Without an id, reductions match by call order among the reductions over the same
/// member list (the global ones are the list 0..P-1): every member starts them in the same order.
/// With an id (ReduceOptions::id) they match by id, whatever order ranks start them in; an id may
/// be reused once this rank's previous reduction with it has finished here (each rank's uses of
/// one id are matched in order). Ids come from globalReductionId() (every rank, the same order),
/// dynamicReductionId() (rank 0 only; distribute it yourself), requestReductionId() (any rank
/// asks rank 0; the id reaches a registered handler on one rank or on all), or ReductionId::user.
///
/// Messages. Each carries a 40-byte header (kind, flags, the reduction's key, the member list's
/// hash) and its payload; a lone message of a call-order reduction over every rank (reduce()
/// without an id, the commonest) carries them in its MPI tag instead (kind, flags and the id's
/// distance from the last such message between the two ranks), so that an 8-byte contribution
/// is an 8-byte message, as MPI_Reduce's is: a shared-memory transport moves it from core to
/// core in one cache line, not two. (Where MPI_TAG_UB leaves too few tags, or the distance
/// does not fit, the header goes along as usual.)
///
/// Progress. Nothing runs in the background: messages are received, merged and forwarded inside
/// this object's calls (any start, test, wait or progress). A member that never calls in holds
/// up its parent; a rank that is not a member never receives anything of the reduction. A
/// start that has finished its own reduction while nothing else is in flight on this rank (a
/// leaf's loop of root-only reductions) skips its poll, up to 8 such starts in a row: messages
/// for this rank's other work (an id request it serves) then wait at most that many starts.
/// The commonest starts take a shorter way through the same steps: the root of a root-only
/// reduction, or of an exchange, whose children's contributions are waiting takes them from
/// the posted receive, merges and delivers without a pass of progress; a leaf of a root-only
/// reduction, and the second member of an exchange, sends its value from its buffer as it is
/// (no copy), when nothing else waits on this rank (no batch open, no message held for later).
///
/// Batches. The messages of many reductions started together (ids in flight, one per group)
/// can travel together: while a Batch from batch() is open, this rank's small messages (up to
/// 8 KiB each) wait, one buffer per destination, and go as few messages (each of up to 8 KiB
/// plus a header) when the batch ends, or sooner at any test, wait, progress or progressUntil
/// call, which always sends what waits, even when it has nothing else to do. A start inside a
/// batch neither sends nor polls; done(), inFlight() and the rest send nothing. So before this
/// rank blocks outside Reductions (another communicator's collective, a plain MPI call) with a
/// batch open, it must end the batch or make one of those calls, or a rank waiting for its
/// messages waits as long. Without a batch a start sends at once. Each pass of progress batches
/// the messages it makes (results forwarded down, merged contributions sent up) and sends them
/// at its end. Messages to one rank keep their order; results are the same bits as without.
///
///   { auto batch = red.batch();                            // 1000 starts, a few messages
///     for (...) handles.push_back(red.reduce(mine, merge, handler, {.id = ids[i]})); }
///
/// Completion. A handle's test() makes progress and says whether it is done; wait() makes
/// progress until it is; wait(timeout) also stops at the deadline with a CommError naming the
/// members that this rank has not heard from (the subtrees of its missing children: ranks
/// beyond them are not visible to it), leaving the reduction in flight. A non-root member of a
/// root-only reduction is done once its merged contribution has been sent (the send complete,
/// as for MPI_Reduce: a large value has then reached its parent, and its buffer is free for
/// Reductions::buffer; a small one inside a batch: once it is in the batch's buffer); the root,
/// and with toAll every member, is done when the handler has run, and a member that lent its
/// contribution (Lent) once its sends of the lent bytes are complete as well (its handler may
/// have run, and its result be readable, before). Destroying a Reductions waits up to a second
/// for its sends in flight; a lent contribution still being sent after that must stay alive as
/// long as the process (the reduction's wait then says so), as a send buffer must for MPI.
///
/// Errors, never hangs where they can be detected: the same id started twice while the first is
/// in flight on this rank (StateError); a rank that is not in the list or group (ValueError,
/// naming the members); a bad list (out of range or repeated ranks: IndexError/ValueError); the
/// struct and plain forms, toAll and root-only, or different member lists mixed in one reduction
/// (a CommError at the member that receives the mismatched contribution, then at the root and,
/// with toAll, at every member); a merge or handler that throws (its exception, at that member's
/// wait, and a CommError naming it further up). dynamicReductionId() off rank 0 is a StateError.
///
/// Not thread-safe: one thread of each rank uses a Reductions. core/comm knows nothing of
/// Elements.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/buffer.hpp"
#include "core/comm/algorithms.hpp"
#include "core/comm/comm.hpp"
#include "core/error.hpp"

namespace antler::comm {

/// A contribution or result as bytes.
using Bytes = std::span<const char>;
/// The plain form's merge: this member's contribution and its children's (child order), merged.
using MergeFn = std::function<ByteBuffer(ByteBuffer mine, std::span<const Bytes> children)>;
/// The plain form's handler: the merged result.
using Handler = std::function<void(Bytes result)>;
/// The struct form's merge and handler (T: any type core/buffer.hpp's Codec serializes).
template <class T>
using StructMerge = std::function<T(T mine, std::vector<T>& children)>;
template <class T>
using StructHandler = std::function<void(const T& result)>;

/// A merge Reductions applies itself, as MPI applies its predefined operations: every member's
/// contribution is an array of one arithmetic type (the same length on every member), and the
/// merge is an operator of comm::ops (core/comm/collectives.hpp: sum, prod, min, max, land, lor,
/// band, bor) element by element, children in child order: mine[i] = op(op(mine[i], child0[i]),
/// child1[i]) ..., the bits of a MergeFn that loops the same way, without a call through a
/// std::function or a move of the value. Integer sums and products wrap. A contribution whose
/// size is not a multiple of the type's is a ValueError at its start; one whose size differs
/// from a parent's fails the reduction there, as a throwing merge does. Members must agree on the
/// type and the operator: as with MPI, that is not checked (another type of the same size merges
/// as garbage). Make one with elementwise (comm::ops is in core/comm/collectives.hpp):
///
///   auto r = red.reduce(bytes, comm::elementwise<double>(comm::ops::sum{}), handler);
struct ElementwiseOp {
  Prim type = Prim::none;
  OpKind op = OpKind::none;
};
/// The elementwise merge of operator Op (comm::ops::sum, ...) over arrays of T.
template <class T, class Op>
constexpr ElementwiseOp elementwise(Op) {
  static_assert(detail::prim_of<std::remove_cv_t<T>>() != Prim::none,
                "comm::elementwise: T must be an arithmetic type (an integer of 1 to 8 bytes, "
                "float or double)");
  static_assert(Op::kind != OpKind::none,
                "comm::elementwise: Op must be sum, prod, min, max, land, lor, band or bor of "
                "comm::ops");
  static_assert(std::is_integral_v<T> || (Op::kind != OpKind::band && Op::kind != OpKind::bor),
                "comm::elementwise: band and bor need an integer type");
  return {detail::prim_of<std::remove_cv_t<T>>(), Op::kind};
}

/// A contribution lent by the caller: Reductions reads it where it lies, as MPI reads a send
/// buffer, instead of taking a buffer that holds it. A member without children sends it from
/// there; a member with children merges it with theirs into a buffer of its own (an elementwise
/// merge reads it in place; a MergeFn, which takes its value by value, gets a copy); a
/// contribution of at most 8 KiB is copied at the start (it travels in a message of its own
/// anyway), as is the contribution of a member alone (it is the result). The bytes must stay
/// alive and unchanged until the reduction is done on this rank (test() true, or wait()
/// returned): a member whose lent bytes are still being sent is not done before the send is,
/// even once its result has come (the other member of an exchange). Then they are the caller's
/// again: the result is never the lent bytes. Make one with lend:
///
///   std::vector<double> v = ...;
///   auto r = red.reduce(comm::lend(v), comm::elementwise<double>(comm::ops::sum{}));
struct Lent {
  Bytes bytes;
};
/// Lends an array (a contiguous range of trivially copyable values: a std::vector, std::array,
/// std::span, ...). A temporary container cannot be lent (it would be gone before the reduction
/// is done); a view is lent as the bytes it shows, which the caller keeps alive.
template <class R>
concept Lendable = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    std::ranges::borrowed_range<R> && std::is_trivially_copyable_v<std::ranges::range_value_t<R>>;
template <Lendable R>
Lent lend(R&& values) {
  return {Bytes(reinterpret_cast<const char*>(std::ranges::data(values)),
                std::ranges::size(values) * sizeof(std::ranges::range_value_t<R>))};
}

/// The id of a reduction (see "Matching" above). Ids of the three sources never collide.
struct ReductionId {
  std::uint64_t value = 0;
  /// An id the caller manages: n < 2^62.
  static ReductionId user(std::uint64_t n);
  bool operator==(const ReductionId&) const = default;
};

/// How a reduction matches and who gets its result.
struct ReduceOptions {
  std::optional<ReductionId> id;  ///< none: matched by call order over the same members
  bool toAll = false;             ///< every member gets the result (else only the root)
};

namespace detail {
struct ReductionState;
struct ReductionEngine;
struct MemberTree;

/// What a reduction does with its values (the plain and struct forms).
struct ReductionOps {
  virtual ~ReductionOps() = default;
  /// Merges the children's packed values (child order) into this member's value. `first`, if
  /// given, is the buffer that holds children[0], which the merge may take (leaving another
  /// buffer, or none, in its place).
  virtual void merge(std::span<const Bytes> children, ByteBuffer* first = nullptr) = 0;
  /// Replaces this member's value with the merge of the root's packed value and it (as the
  /// only child): the root's merge call, made by the other member of a toAll over two. May
  /// leave another buffer in `root` (for reuse).
  virtual void mergeUnder(ByteBuffer& root) = 0;
  /// Heap bytes the value holds (for the reuse of finished states; unknown: the most).
  virtual std::size_t heldBytes() const { return static_cast<std::size_t>(-1); }
  /// Lets the merge and handler go (the reduction has finished).
  virtual void dropFunctions() {}
  /// Whether the value shared() handed out is still read by a send (then it must not change).
  virtual bool sharedBusy() const { return false; }
  /// Whether a send still reads bytes the caller lent (then this member is not done).
  virtual bool lentBusy() const { return false; }
  /// The value's buffer, given up by a member that has no result once it is done (for
  /// Reductions::buffer); empty if there is none or a send still reads it.
  virtual ByteBuffer releaseValue() { return {}; }
  /// Appends the value, packed.
  virtual void pack(ByteBuffer& out) const = 0;
  /// The packed value, shared without a copy where the value is bytes already (the plain form;
  /// it must stay unchanged from then on): its bytes, and what keeps them (and says, by its
  /// count, whether a send still reads them). No keep: pack() it.
  struct Shared {
    Bytes bytes;
    std::shared_ptr<const void> keep;
  };
  virtual Shared shared() { return {}; }
  /// Replaces the value with the result that came down from the parent.
  virtual void unpack(Bytes result) = 0;
  /// Calls the handler with the value (the result).
  virtual void deliver() = 0;
  virtual bool isStruct() const = 0;
  virtual bool hasMerge() const = 0;
};
}  // namespace detail

/// A reduction in flight (a handle: copies refer to the same reduction).
class Reduction {
 public:
  Reduction() = default;
  /// Makes progress; true once this member's part is done (then any error is thrown).
  bool test();
  /// Makes progress until this member's part is done; rethrows its error.
  void wait();
  /// As wait(), but a CommError naming the members not heard from once `timeout` has passed.
  void wait(std::chrono::steady_clock::duration timeout);
  /// Done, without making progress.
  bool done() const;
  /// Whether it refers to a reduction (a default-constructed handle does not).
  bool valid() const { return s_ != nullptr; }
  /// The result, on the members that received it (the root; every member with toAll).
  bool hasResult() const;
  Bytes result() const;
  /// The plain form's result moved out (then hasResult() is false): its buffer can carry the
  /// caller's next contribution.
  ByteBuffer takeResult();
  /// The id it matched by (call-order reductions: none).
  std::optional<ReductionId> id() const;

 protected:
  friend class Reductions;
  explicit Reduction(std::shared_ptr<detail::ReductionState> s) : s_(std::move(s)) {}
  const detail::ReductionOps& ops() const;
  std::shared_ptr<detail::ReductionState> s_;
};

/// A struct-form reduction: the result as a T.
template <class T>
class StructReduction : public Reduction {
 public:
  StructReduction() = default;
  /// The result (on the members that received it; StateError elsewhere or before done).
  const T& value() const;

 private:
  friend class Reductions;
  explicit StructReduction(Reduction r) : Reduction(std::move(r)) {}
};

/// A fixed member list, validated and with its tree worked out once.
class Group {
 public:
  Group() = default;
  /// The members, root first.
  std::span<const int> ranks() const;
  /// Whether this rank is a member.
  bool contains(int rank) const;
  bool valid() const { return tree_ != nullptr; }

 private:
  friend class Reductions;
  explicit Group(std::shared_ptr<const detail::MemberTree> t) : tree_(std::move(t)) {}
  std::shared_ptr<const detail::MemberTree> tree_;
};

/// The reductions of one communicator (see the top of this file).
class Reductions {
 public:
  /// Collective over c: the reductions travel on a duplicate of it.
  explicit Reductions(const Comm& c);
  ~Reductions();
  Reductions(const Reductions&) = delete;
  Reductions& operator=(const Reductions&) = delete;

  int rank() const;
  int size() const;
  /// The communicator its messages travel on (its counters are the reductions' own). Anything
  /// sent on it is read as reductions' messages (their receive takes any tag: a message of a
  /// call-order reduction over every rank carries its header in its tag, the upper half of
  /// MPI_TAG_UB, and travels as its payload alone): bytes that are not one are a CommError at the
  /// receiver, naming the sender and the tag. Keep such sends under 8,232 bytes: Open MPI 4.1's
  /// shared-memory transport, when it copies a large message with one system call (CMA), writes
  /// a message longer than the posted receive past its end (measured with a plain MPI program;
  /// `--mca btl_vader_single_copy_mechanism none` stops at the buffer's end).
  Comm& comm();

  // ---- the plain form: contributions are bytes ----
  Reduction reduce(ByteBuffer mine, MergeFn merge, Handler handler = {}, ReduceOptions o = {});
  Reduction listReduce(std::span<const int> ranks, ByteBuffer mine, MergeFn merge,
                       Handler handler = {}, ReduceOptions o = {});
  Reduction groupReduce(const Group& g, ByteBuffer mine, MergeFn merge, Handler handler = {},
                        ReduceOptions o = {});
  // ... with an elementwise merge (see ElementwiseOp)
  Reduction reduce(ByteBuffer mine, ElementwiseOp op, Handler handler = {}, ReduceOptions o = {});
  Reduction listReduce(std::span<const int> ranks, ByteBuffer mine, ElementwiseOp op,
                       Handler handler = {}, ReduceOptions o = {});
  Reduction groupReduce(const Group& g, ByteBuffer mine, ElementwiseOp op, Handler handler = {},
                        ReduceOptions o = {});
  // ... with a lent contribution (see Lent)
  Reduction reduce(Lent mine, MergeFn merge, Handler handler = {}, ReduceOptions o = {});
  Reduction listReduce(std::span<const int> ranks, Lent mine, MergeFn merge, Handler handler = {},
                       ReduceOptions o = {});
  Reduction groupReduce(const Group& g, Lent mine, MergeFn merge, Handler handler = {},
                        ReduceOptions o = {});
  Reduction reduce(Lent mine, ElementwiseOp op, Handler handler = {}, ReduceOptions o = {});
  Reduction listReduce(std::span<const int> ranks, Lent mine, ElementwiseOp op,
                       Handler handler = {}, ReduceOptions o = {});
  Reduction groupReduce(const Group& g, Lent mine, ElementwiseOp op, Handler handler = {},
                        ReduceOptions o = {});

  // ---- the struct form: contributions are values of T ----
  template <class T>
  StructReduction<T> reduceStruct(T mine, StructMerge<T> merge, StructHandler<T> handler = {},
                                  ReduceOptions o = {});
  template <class T>
  StructReduction<T> listReduceStruct(std::span<const int> ranks, T mine, StructMerge<T> merge,
                                      StructHandler<T> handler = {}, ReduceOptions o = {});
  template <class T>
  StructReduction<T> groupReduceStruct(const Group& g, T mine, StructMerge<T> merge,
                                       StructHandler<T> handler = {}, ReduceOptions o = {});

  // ---- groups and ids ----
  /// A group of these ranks (root first; local: every member establishes it alike).
  Group establishGroup(std::vector<int> ranks) const;
  /// The next id of the global sequence: every rank calls it in the same order.
  ReductionId globalReductionId();
  /// A fresh id, on rank 0 only; distributing it is the caller's business.
  ReductionId dynamicReductionId();
  /// Registers a handler for ids delivered by requestReductionId; every rank registers the same
  /// handlers in the same order (the index names it across ranks).
  int onReductionId(std::function<void(ReductionId, Bytes data)> handler);
  /// Asks rank 0 for a fresh id, delivered with `data` to handler `handler` on rank `to` (-1:
  /// every rank), during their progress.
  void requestReductionId(int handler, int to, Bytes data = {});

  /// Holds this rank's small messages while open (see "Batches" above); ends when destroyed.
  class Batch {
   public:
    Batch(Batch&& o) noexcept;
    Batch& operator=(Batch&& o) noexcept;
    ~Batch();
    /// Ends it now: sends what waits, unless another batch is still open (a send's error is
    /// thrown here; the destructor leaves such messages for the next call).
    void end();

   private:
    friend class Reductions;
    explicit Batch(std::weak_ptr<detail::ReductionEngine> e) : e_(std::move(e)) {}
    std::weak_ptr<detail::ReductionEngine> e_;
  };
  /// Opens a batch (batches nest: messages go when the last one ends).
  [[nodiscard]] Batch batch();

  /// An empty buffer of at least `capacity` bytes for a contribution: one that a finished
  /// reduction left behind (a member's own value once its send is done, a child's received
  /// value) when there is one, else new. Large contributions built in it cost no fresh pages.
  ByteBuffer buffer(std::size_t capacity);

  /// One pass of progress: receives (until a reduction has finished: the rest waits for the
  /// next pass), merges, forwards, delivers. True if anything happened.
  bool progress();
  /// Progress until pred() holds (between passes the rank gives its core away); with a timeout,
  /// a CommError once it has passed.
  void progressUntil(const std::function<bool()>& pred,
                     std::optional<std::chrono::steady_clock::duration> timeout = {});
  /// Reductions this rank has started and not finished.
  std::size_t inFlight() const;

 private:
  Reduction start(const std::shared_ptr<const detail::MemberTree>& tree,
                  std::unique_ptr<detail::ReductionOps> ops, const ReduceOptions& o,
                  const char* what);
  Reduction startBytes(const std::shared_ptr<const detail::MemberTree>& tree, ByteBuffer&& mine,
                       const Lent* lent, MergeFn&& merge, ElementwiseOp op, Handler&& handler,
                       const ReduceOptions& o, const char* what);
  /// A state for a new reduction (its checks passed: nothing thrown after it but allocation).
  std::shared_ptr<detail::ReductionState> prepare(
      const std::shared_ptr<const detail::MemberTree>& tree, bool hasMerge, const ReduceOptions& o,
      const char* what);
  Reduction launch(std::shared_ptr<detail::ReductionState> s);
  std::shared_ptr<const detail::MemberTree> listTree(std::span<const int> ranks,
                                                     const char* what) const;
  const std::shared_ptr<const detail::MemberTree>& groupTree(const Group& g,
                                                             const char* what) const;
  const std::shared_ptr<const detail::MemberTree>& globalTree() const;
  std::shared_ptr<detail::ReductionEngine> e_;
};

// ---- templates ----

namespace detail {

template <class T>
struct StructOps final : ReductionOps {
  StructOps(T v, StructMerge<T> m, StructHandler<T> h)
      : value(std::move(v)), mergeFn(std::move(m)), handler(std::move(h)) {}
  void merge(std::span<const Bytes> children, ByteBuffer* = nullptr) override {
    std::vector<T> kids;
    kids.reserve(children.size());
    for (Bytes b : children) {
      Reader r(b.data(), b.size());
      kids.push_back(Codec<T>::read(r));
    }
    value = mergeFn(std::move(value), kids);
  }
  void mergeUnder(ByteBuffer& root) override {
    Reader r(root.data(), root.size());
    T first = Codec<T>::read(r);
    std::vector<T> kids;
    kids.push_back(std::move(value));
    value = mergeFn(std::move(first), kids);
  }
  void pack(ByteBuffer& out) const override {
    Writer w(out);
    Codec<T>::write(w, value);
  }
  void unpack(Bytes b) override {
    Reader r(b.data(), b.size());
    value = Codec<T>::read(r);
  }
  void deliver() override {
    if (handler) handler(value);
  }
  bool isStruct() const override { return true; }
  bool hasMerge() const override { return static_cast<bool>(mergeFn); }
  void dropFunctions() override {
    mergeFn = nullptr;
    handler = nullptr;
  }
  T value;
  StructMerge<T> mergeFn;
  StructHandler<T> handler;
};

}  // namespace detail

template <class T>
const T& StructReduction<T>::value() const {
  if (!hasResult())
    throw StateError(
        "Reduction::value: no result on this rank (the root has it; every member "
        "with toAll), or not done yet");
  return static_cast<const detail::StructOps<T>&>(ops()).value;
}

template <class T>
StructReduction<T> Reductions::reduceStruct(T mine, StructMerge<T> merge, StructHandler<T> handler,
                                            ReduceOptions o) {
  return StructReduction<T>(start(
      globalTree(),
      std::make_unique<detail::StructOps<T>>(std::move(mine), std::move(merge), std::move(handler)),
      o, "reduceStruct"));
}

template <class T>
StructReduction<T> Reductions::listReduceStruct(std::span<const int> ranks, T mine,
                                                StructMerge<T> merge, StructHandler<T> handler,
                                                ReduceOptions o) {
  auto tree = listTree(ranks, "listReduceStruct");
  return StructReduction<T>(start(
      std::move(tree),
      std::make_unique<detail::StructOps<T>>(std::move(mine), std::move(merge), std::move(handler)),
      o, "listReduceStruct"));
}

template <class T>
StructReduction<T> Reductions::groupReduceStruct(const Group& g, T mine, StructMerge<T> merge,
                                                 StructHandler<T> handler, ReduceOptions o) {
  return StructReduction<T>(start(
      groupTree(g, "groupReduceStruct"),
      std::make_unique<detail::StructOps<T>>(std::move(mine), std::move(merge), std::move(handler)),
      o, "groupReduceStruct"));
}

}  // namespace antler::comm
#pragma GCC visibility pop

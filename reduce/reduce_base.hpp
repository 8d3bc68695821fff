#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// What a reduce class is, and the type-erased reduction job the reduce queue runs.
///
/// A reduce class R is any default-constructible class (a default-constructed R is the identity)
/// with three folds and a Boost.Serialization `serialize` member:
///
///   void primaryReduce(const F& value);            // or (const F& value, const ObjId& where)
///   void secondaryReduce(const R& other);          // across the threads of a node
///   void tertiaryReduce(const R& other);           // across nodes
///   template <class Ar> void serialize(Ar& ar, unsigned version);
///
/// A class that is not trivially copyable may declare `static constexpr std::size_t
/// kSerializedSizeBound`: an upper bound of its serialized bytes, by which the node stage chooses
/// its algorithm (without one it assumes the worst; see reduce/reduce_queue.hpp).
///
/// Optionally `void clear()` resets an object to the identity keeping its storage (a class that
/// holds a vector then allocates nothing per step), and `void primaryReduceBlock(const F* values,
/// std::size_t n)` folds a block of values at once (the built-in classes use it to keep the hot
/// loop vectorisable).
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "core/buffer.hpp"
#include "core/fwd.hpp"
#include "core/id.hpp"

namespace antler {

/// A reduce class for values of type F.
template <class R, class F>
concept ReduceClass = std::default_initializable<R> && std::copy_constructible<R> &&(
                          requires(R r, const F& v) { r.primaryReduce(v); } ||
                          requires(R r, const F& v, const ObjId& o) { r.primaryReduce(v, o); }) &&
                      requires(R r, const R& o) {
  r.secondaryReduce(o);
  r.tertiaryReduce(o);
};

/// One reduction in flight: one partial per thread, the folds, and the digest.
class ReduceBase {
 public:
  virtual ~ReduceBase() = default;
  /// Reduction id: the same on every node (the ReduceMsg id, or a Shell command's own id).
  virtual std::uint64_t id() const = 0;
  /// Sizes the partials for T threads and resets them to the identity.
  virtual void reset(unsigned T) = 0;
  /// Resets thread t's partial, then runs primaryReduce over the targets in thread t's slice
  /// (runs on thread t; reset(T) must have sized the partials).
  virtual void primary(unsigned t, unsigned T) = 0;
  /// Folds thread partials 1..T-1 into partial 0, in thread order.
  virtual void secondary() = 0;
  /// Appends partial 0, serialized.
  virtual void save(Writer& w) const = 0;
  /// An upper bound of the bytes save() appends, the same on every node (0: unknown). The node
  /// stage chooses its algorithm by it (reduce/reduce_queue.hpp).
  virtual std::size_t sizeBound() const = 0;
  /// The node whose digest needs the result, or -1 if every node's does (a global requester).
  virtual int resultNode() const = 0;
  /// The nodes that take part, sorted: those holding targets, and those needing the result (of
  /// P nodes; every node unless the job knows better). A Shell command's reduction runs over
  /// these only (reduce/reduce_queue.hpp, runNow).
  virtual void nodes(int P, std::vector<int>& out) const {
    out.resize(static_cast<std::size_t>(P));
    for (int r = 0; r < P; ++r) out[static_cast<std::size_t>(r)] = r;
  }
  /// Sets the result to the fold of every node's serialized partial (readers in node order,
  /// consumed) in the canonical order of core/comm/algorithms.hpp.
  virtual void tertiary(std::vector<Reader>& nodes) = 0;
  /// acc (a serialized partial) becomes the serialized fold acc . other, or other . acc if
  /// otherOnLeft (one step of a tree: the node stage's reduce algorithms call it).
  virtual void foldSerialized(ByteBuffer& acc, std::span<const char> other,
                              bool otherOnLeft) const = 0;
  /// Sets the result to a serialized fold of every node's partial (consumed from r).
  virtual void setResult(Reader& r) = 0;
  /// Sets the result to partial 0 (single node).
  virtual void finishLocal() = 0;
  /// Calls the digest on the requesting object wherever it lives on this node.
  virtual void digest() = 0;
  /// This job as a sink a process sweep may feed with the values of its targets' data member of
  /// C++ type `member` (core/element.hpp, SweepSink), or nullptr if it reads them another way.
  virtual SweepSink* sweepSink(const std::type_info& /*member*/) { return nullptr; }
};

namespace detail {

/// One thread's partial, on its own cache line.
template <class R>
struct alignas(64) Partial {
  R r;
  // Set when a process sweep fed r (SweepSink): the sweep's stamp and slice; 0 once used.
  std::uint64_t swept = 0;
  Index sweptLo = 0, sweptHi = 0;
  // A feed went unused (the reduction is asked for less often than the sweep runs): the sweep
  // feeds again only after a primary fold found no feed.
  bool skipSweeps = false;
};

/// r back to the identity, keeping its storage where R can (a step allocates nothing).
template <class R>
void reset_partial(R& r) {
  if constexpr (requires { r.clear(); })
    r.clear();
  else
    r = R{};
}

/// The serialized size bound of R: R::kSerializedSizeBound if R declares it, else sizeof(R) for a
/// trivially copyable R (copied with memcpy), else 0 (unknown: the node stage assumes the worst).
template <class R>
constexpr std::size_t serialized_size_bound() {
  if constexpr (requires { std::size_t{R::kSerializedSizeBound}; })
    return R::kSerializedSizeBound;
  else if constexpr (std::is_trivially_copyable_v<R>)
    return sizeof(R);
  else
    return 0;
}

/// Folds P parts, part(0) .. part(P - 1), in the canonical order (the binomial tree over node
/// order, lower nodes on the left: fold[a, a + 2m) = fold[a, a + m) . fold[a + m, a + 2m)); the
/// result is part(0).
template <class Part>
void fold_canonical(std::size_t P, Part&& part) {
  for (std::size_t m = 1; m < P; m *= 2)
    for (std::size_t a = 0; a + m < P; a += 2 * m) part(a).tertiaryReduce(part(a + m));
}

/// The folds, serialization and result of a reduction with reduce class R; a job adds its
/// primary fold (what it reads), its digest and who needs the result.
template <class R>
class TypedReduceJob : public ReduceBase {
 public:
  void reset(unsigned T) override {
    // A partial a process sweep fed this round is kept (primary decides whether it holds).
    if (partials_.size() != T)
      partials_.assign(T, Partial<R>{});
    else
      for (Partial<R>& p : partials_)
        if (!p.swept) reset_partial(p.r);
    result_ = R{};
  }
  void secondary() override {
    for (std::size_t t = 1; t < partials_.size(); ++t)
      partials_[0].r.secondaryReduce(partials_[t].r);
    // Folded: no partial holds a sweep's feed any more (where a primary did not run to use it:
    // a thread whose fold failed).
    for (Partial<R>& p : partials_) p.swept = 0;
  }
  void save(Writer& w) const override { w.put<R>(partials_[0].r); }
  std::size_t sizeBound() const override { return serialized_size_bound<R>(); }
  void tertiary(std::vector<Reader>& nodes) override {
    if (nodes.empty()) {
      result_ = R{};
      return;
    }
    // Node 0's partial is read into the result and the others into scratch (in place where R
    // reads itself so), then folded with the result as part 0.
    std::vector<R>& parts = scratch_;
    if (parts.size() < nodes.size()) parts.resize(nodes.size());
    read_into(nodes[0], result_);
    for (std::size_t i = 1; i < nodes.size(); ++i) read_into(nodes[i], parts[i]);
    fold_canonical(nodes.size(), [&](std::size_t i) -> R& { return i ? parts[i] : result_; });
  }
  void foldSerialized(ByteBuffer& acc, std::span<const char> other,
                      bool otherOnLeft) const override {
    Reader ra(acc.data(), acc.size()), ro(other.data(), other.size());
    R a = ra.get<R>(), o = ro.get<R>();
    if (otherOnLeft) {
      o.tertiaryReduce(a);
      a = std::move(o);
    } else {
      a.tertiaryReduce(o);
    }
    acc.clear();
    Writer(acc).put<R>(a);
  }
  void setResult(Reader& r) override { result_ = r.get<R>(); }
  void finishLocal() override { result_ = partials_[0].r; }

 protected:
  std::vector<Partial<R>> partials_;
  R result_;

 private:
  std::vector<R> scratch_;
};

}  // namespace detail

}  // namespace antler
#pragma GCC visibility pop

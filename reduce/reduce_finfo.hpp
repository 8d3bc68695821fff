#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ReduceFinfo<T, F, R>: a reduce field. Declare it as an inline static member of the requesting
/// class T, add it with ClassBuilder::src (or ::reduce), and call send(e) to ask for a reduction:
///
///   class Stats {
///    public:
///     void digest(const Eref& e, const ReduceStats* r) { mean_ = r->mean(); ... }  // declare
///     first inline static ReduceFinfo<Stats, double, ReduceStats> reduce{
///         "reduce", &Stats::digest, "connect to any 'get' field"};
///     void process(const Eref& e, ProcPtr) { reduce.send(e); }
///   };
///
/// F is the type the reduction folds; the target field may be F or any arithmetic type when F is
/// arithmetic (converted with static_cast). The digest runs on the node(s) holding the requester,
/// after the whole population has been folded (see reduce/reduce_queue.hpp for when).
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/type_name.hpp"
#include "msg/post_office.hpp"
#include "reduce/context.hpp"
#include "reduce/reduce_msg.hpp"

namespace antler {

namespace detail {

template <class R, class F>
concept has_block = requires(R r, const F* p, std::size_t n) {
  r.primaryReduceBlock(p, n);
};
template <class R, class F>
concept wants_objid = requires(R r, const F& v, const ObjId& o) {
  r.primaryReduce(v, o);
};

/// Folds m values, those of data indices first .. first + m - 1 of e, into r.
template <class R, class F>
void fold_block(R& r, const F* v, Index m, const Element* e, Index first) {
  if constexpr (wants_objid<R, F>) {
    for (Index k = 0; k < m; ++k) r.primaryReduce(v[k], ObjId(e->id(), first + k));
  } else if constexpr (has_block<R, F>) {
    r.primaryReduceBlock(v, m);
  } else {
    for (Index k = 0; k < m; ++k) r.primaryReduce(v[k]);
  }
}

/// Folds the targets with data index in [lo, hi) of e's field vf (C++ type Src) into r.
/// The hot loop: for a plain data member of a DataElement it is a strided load per object, with
/// no lookup, allocation or virtual call; for a getter of a DataElement one virtual call per block
/// of 512 (the getter inlined inside it); otherwise one virtual read per entry.
template <class R, class F, class Src>
void reduce_loop(R& r, const Element* e, const ValueFinfoBase* vf, Index lo, Index hi) {
  if (lo >= hi) return;
  constexpr Index B = 512;
  std::ptrdiff_t off = 0;
  if (!e->isField() && vf->memberOffset(e->data(lo, 0), &off)) {
    // A plain data member: a strided load per object, a block at a time.
    auto* de = static_cast<const DataElement*>(e);
    if constexpr (std::is_same_v<F, Src>) {
      // The class's process wrote the member out this run (ElementState::memberCopy): folded
      // from there, in the same blocks (the same values, so the same result).
      const ElementState* st = PostOffice::inRun() ? de->state() : nullptr;
      if (const void* copy = st ? st->memberCopy(off) : nullptr) {
        const F* v = static_cast<const F*>(copy) + (lo - de->localBegin());
        for (Index i = lo; i < hi; i += B) fold_block(r, v + (i - lo), std::min(B, hi - i), e, i);
        return;
      }
    }
    const char* p = de->localData(lo) + off;
    const std::size_t stride = de->objectSize();
    F buf[B];
    for (Index i = lo; i < hi; i += B) {
      const Index m = std::min(B, hi - i);
      // One load and one store a value (an index multiplied per value costs as much again).
#pragma GCC unroll 4
      for (Index k = 0; k < m; ++k, p += stride) {
        Src v;
        std::memcpy(&v, p, sizeof v);
        buf[k] = static_cast<F>(v);
      }
      fold_block(r, buf, m, e, i);
    }
    return;
  }
  auto* tv = static_cast<const TypedValueFinfo<Src>*>(vf);
  if constexpr (std::is_arithmetic_v<Src>) {
    if (!e->isField()) {
      // A getter (e.g. IntFire's spiked): values read a block at a time, one virtual call each.
      Src src[B];
      for (Index i = lo; i < hi; i += B) {
        const Index m = std::min(B, hi - i);
        tv->readBlock(e, i, m, src);
        if constexpr (std::is_same_v<Src, bool> && !wants_objid<R, F> &&
                      requires { r.primaryReduceFlags(std::size_t{}, std::size_t{}); }) {
          // A bool getter (a flag) into a sum: counted, then added once.
          std::size_t ones = 0;
          for (Index k = 0; k < m; ++k) ones += src[k];
          r.primaryReduceFlags(ones, m);
        } else if constexpr (std::is_same_v<F, Src>) {
          fold_block(r, src, m, e, i);  // the values as read
        } else {
          F buf[B];
          for (Index k = 0; k < m; ++k) buf[k] = static_cast<F>(src[k]);
          fold_block(r, buf, m, e, i);
        }
      }
      return;
    }
  }
  for (Index d = lo; d < hi; ++d) {
    const Index nf = e->isField() ? e->numField(d) : 1;
    for (Index f = 0; f < nf; ++f) {
      const F v = static_cast<F>(tv->read(e, d, f));
      if constexpr (wants_objid<R, F>)
        r.primaryReduce(v, ObjId(e->id(), d, f));
      else
        r.primaryReduce(v);
    }
  }
}

template <class R, class F>
using LoopFn = void (*)(R&, const Element*, const ValueFinfoBase*, Index, Index);

/// Folds the one object (d, f) of e into r (a Single reduce message).
template <class R, class F, class Src>
void reduce_one(R& r, const Element* e, const ValueFinfoBase* vf, Index d, Index f) {
  if (f >= e->numField(d)) return;  // a field entry that does not exist (any more): nothing to read
  const F v = static_cast<F>(static_cast<const TypedValueFinfo<Src>*>(vf)->read(e, d, f));
  if constexpr (wants_objid<R, F>)
    r.primaryReduce(v, ObjId(e->id(), d, f));
  else
    r.primaryReduce(v);
}
template <class R, class F>
using OneFn = void (*)(R&, const Element*, const ValueFinfoBase*, Index, Index);

/// The loops (range, one object) for a target field of C++ type `src`, or nullptrs if it cannot
/// be read as F.
template <class R, class F>
std::pair<LoopFn<R, F>, OneFn<R, F>> select_loop(const std::type_info& src) {
  if (src == typeid(F)) return {&reduce_loop<R, F, F>, &reduce_one<R, F, F>};
  if constexpr (std::is_arithmetic_v<F>) {
    std::pair<LoopFn<R, F>, OneFn<R, F>> out{nullptr, nullptr};
    auto try_one = [&]<class S>(S*) {
      if (!out.first && src == typeid(S)) out = {&reduce_loop<R, F, S>, &reduce_one<R, F, S>};
    };
    try_one(static_cast<double*>(nullptr));
    try_one(static_cast<float*>(nullptr));
    try_one(static_cast<int*>(nullptr));
    try_one(static_cast<unsigned*>(nullptr));
    try_one(static_cast<long*>(nullptr));
    try_one(static_cast<unsigned long*>(nullptr));
    try_one(static_cast<long long*>(nullptr));
    try_one(static_cast<unsigned long long*>(nullptr));
    try_one(static_cast<short*>(nullptr));
    try_one(static_cast<unsigned short*>(nullptr));
    try_one(static_cast<bool*>(nullptr));
    return out;
  }
  return {nullptr, nullptr};
}

/// The job of one ReduceMsg.
/// What every ReduceMsg's job does alike: the primary fold over the message's targets in a
/// thread's slice, and who needs the result. A job adds its digest.
template <class R, class F>
class MsgReduceJob : public TypedReduceJob<R>, public SweepSink {
 public:
  MsgReduceJob(const ReduceMsg& msg, LoopFn<R, F> loop, OneFn<R, F> one)
      : msg_(msg), loop_(loop), one_(one) {}
  std::uint64_t id() const override { return msg_.id(); }
  void primary(unsigned t, unsigned nthreads) override {
    auto [lo, hi] = thread_slice(msg_.dest(), t, nthreads);
    Partial<R>& part = this->partials_[t];
    R& r = part.r;
    if (part.swept) {
      // The targets' process sweep fed this partial (SweepSink, below): it holds the fold of the
      // slice's values if they are still as that sweep left them (the state says so by its
      // stamp) and the slice is this one. Used once (secondary folds into partial 0).
      const std::uint64_t stamp = part.swept;
      part.swept = 0;
      const ElementState* st =
          PostOffice::inRun() ? static_cast<const DataElement*>(msg_.dest())->state() : nullptr;
      if (st && part.sweptLo == lo && part.sweptHi == hi && st->sweepStamp(t) == stamp) return;
    }
    part.skipSweeps = false;
    reset_partial(r);
    if (msg_.isSingle()) {
      const Target x = msg_.singleTarget();
      if (x.data >= lo && x.data < hi) one_(r, msg_.dest(), msg_.getter(), x.data, x.field);
    } else {
      loop_(r, msg_.dest(), msg_.getter(), lo, hi);
    }
  }
  int resultNode() const override {
    const Element* src = msg_.src();
    return src->isGlobal() ? -1 : src->owner(msg_.requester());
  }
  /// The nodes holding targets (block distribution: the first min(N, P) nodes hold the N
  /// entries; a Single message's one owner) and the requester's; every node when either side
  /// is global.
  void nodes(int P, std::vector<int>& out) const override {
    const Element* src = msg_.src();
    const Element* dest = msg_.dest();
    if (src->isGlobal() || dest->isGlobal()) return ReduceBase::nodes(P, out);
    out.clear();
    if (msg_.isSingle()) {
      out.push_back(dest->owner(msg_.singleTarget().data));
    } else {
      const Index holders = std::min<Index>(dest->numData(), static_cast<Index>(P));
      for (Index r = 0; r < holders; ++r) out.push_back(static_cast<int>(r));
    }
    const int asker = src->owner(msg_.requester());
    if (std::find(out.begin(), out.end(), asker) == out.end()) {
      out.push_back(asker);
      std::sort(out.begin(), out.end());
    }
  }

  /// A sweep may feed this job where it folds a plain data member of type F of a DataElement's
  /// objects, every target's (not a Single message's one), in blocks: what primary would read.
  SweepSink* sweepSink(const std::type_info& member) override {
    const Element* e = msg_.dest();
    if (member != typeid(F) || msg_.isSingle() || e->isField() || loop_ != &reduce_loop<R, F, F>)
      return nullptr;
    return this;
  }
  bool sweepBegin(unsigned t, Index lo, Index hi) override {
    if (t >= this->partials_.size()) return false;  // (not sized for this run's threads yet)
    Partial<R>& part = this->partials_[t];
    if (part.swept) part.skipSweeps = true;  // the last feed went unused
    part.swept = 0;
    if (part.skipSweeps) return false;
    reset_partial(part.r);
    part.sweptLo = lo;
    part.sweptHi = hi;
    return true;
  }
  void sweepBlock(unsigned t, const void* values, Index m, Index first) override {
    fold_block(this->partials_[t].r, static_cast<const F*>(values), m, msg_.dest(), first);
  }
  void sweepEnd(unsigned t, std::uint64_t stamp) override { this->partials_[t].swept = stamp; }

 protected:
  /// The requesting object, or nullptr where this node does not hold it.
  char* requester() const {
    const Element* src = msg_.src();
    const Index d = msg_.requester();
    return src->isLocal(d) ? src->data(d, 0) : nullptr;
  }
  const ReduceMsg& msg_;

 private:
  LoopFn<R, F> loop_;
  OneFn<R, F> one_;
};

/// The job of one ReduceMsg of a ReduceFinfo: the digest is a member of the requesting class.
template <class T, class F, class R>
class FieldReduceJob final : public MsgReduceJob<R, F> {
 public:
  using Digest = void (T::*)(const Eref&, const R*);
  FieldReduceJob(const ReduceMsg& msg, Digest digest, LoopFn<R, F> loop, OneFn<R, F> one)
      : MsgReduceJob<R, F>(msg, loop, one), digest_(digest) {}
  void digest() override {
    if (char* p = this->requester())
      (reinterpret_cast<T*>(p)->*digest_)(Eref(this->msg_.src(), this->msg_.requester()),
                                          &this->result_);
  }

 private:
  Digest digest_;
};

}  // namespace detail

/// A reduce field of class T folding values of type F with reduce class R.
template <class T, class F, class R>
requires ReduceClass<R, F>
class ReduceFinfo final : public ReduceFinfoBase {
 public:
  using Digest = void (T::*)(const Eref&, const R*);
  ReduceFinfo(std::string name, Digest digest, std::string doc)
      : ReduceFinfoBase(std::move(name), std::move(doc)), digest_(digest) {}
  const std::type_info& reducedType() const override { return typeid(F); }
  std::string reduceClassName() const override { return type_name<R>(); }

  /// Asks for a reduction over every target of every Reduce message from object e.
  void send(const Eref& e) const {
    if (!e.element()->hasConns(bindIndex())) return;
    ReduceQueue& q = reduce_context(*e.element()).reduces();
    for (const Conn& c : e.element()->conns(bindIndex()))
      if (static_cast<const ReduceMsg*>(c.msg)->requester() == e.dataIndex())
        q.request(static_cast<const ReduceMsg*>(c.msg)->job());
  }

  std::unique_ptr<ReduceBase> makeJob(const ReduceMsg& msg) const override {
    const ValueFinfoBase* g = msg.getter();
    auto [loop, one] = detail::select_loop<R, F>(g->valueType());
    if (!loop)
      throw TypeError("connect: " + msg.src()->cinfo()->name() + "." + name() + " reduces " +
                      type_name<F>() + ", but " + msg.dest()->cinfo()->name() + "." + g->name() +
                      " is " + type_name(g->valueType()));
    return std::make_unique<detail::FieldReduceJob<T, F, R>>(msg, digest_, loop, one);
  }

 private:
  Digest digest_;
};

}  // namespace antler
#pragma GCC visibility pop

#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Typed collectives on a Comm: broadcast, reduce, all-reduce, allgather, gather and an
/// exclusive scan, for trivially copyable values (copied with memcpy), strings, vectors, and any
/// Boost-serializable type (core/buffer.hpp's Codec), with the operators in comm::ops or any
/// reduce class (a class with tertiaryReduce, folded as a . b). Each takes an Options whose
/// algorithm may be forced (see algorithms.hpp); the default chooses automatically.
///
///   double total = comm::allreduce(c, x, comm::ops::sum{});           // same bits on every rank
///   auto all = comm::allgather(c, std::vector<int>{c.rank()});
///   comm::broadcast(c, params, 0, {comm::Algorithm::fibonacci, 8});
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/buffer.hpp"
#include "core/comm/algorithms.hpp"
#include "core/comm/comm.hpp"

namespace antler::comm {

/// A value and the rank it came from (the payload of minloc and maxloc).
template <class T>
struct ValueLoc {
  T value{};
  int rank = 0;
  bool operator==(const ValueLoc&) const = default;
};

namespace ops {
// Each operator: `T operator()(const T& left, const T& right)`, plus what vendor needs.
struct sum {
  static constexpr OpKind kind = OpKind::sum;
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a + b;
  }
};
struct prod {
  static constexpr OpKind kind = OpKind::prod;
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a * b;
  }
};
struct min {
  static constexpr OpKind kind = OpKind::min;
  template <class T>
  T operator()(const T& a, const T& b) const {
    return b < a ? b : a;
  }
};
struct max {
  static constexpr OpKind kind = OpKind::max;
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a < b ? b : a;
  }
};
struct land {
  static constexpr OpKind kind = OpKind::land;
  template <class T>
  T operator()(const T& a, const T& b) const {
    return static_cast<T>(a && b);
  }
};
struct lor {
  static constexpr OpKind kind = OpKind::lor;
  template <class T>
  T operator()(const T& a, const T& b) const {
    return static_cast<T>(a || b);
  }
};
struct band {
  static constexpr OpKind kind = OpKind::band;
  template <class T>
  T operator()(const T& a, const T& b) const {
    static_assert(std::is_integral_v<T>, "comm::ops::band needs an integer type");
    return static_cast<T>(a & b);
  }
};
struct bor {
  static constexpr OpKind kind = OpKind::bor;
  template <class T>
  T operator()(const T& a, const T& b) const {
    static_assert(std::is_integral_v<T>, "comm::ops::bor needs an integer type");
    return static_cast<T>(a | b);
  }
};
/// The smallest value and the lowest rank holding it (MPI_MINLOC).
struct minloc {
  static constexpr OpKind kind = OpKind::none;
  template <class T>
  ValueLoc<T> operator()(const ValueLoc<T>& a, const ValueLoc<T>& b) const {
    if (b.value < a.value || (!(a.value < b.value) && b.rank < a.rank)) return b;
    return a;
  }
};
/// The largest value and the lowest rank holding it (MPI_MAXLOC).
struct maxloc {
  static constexpr OpKind kind = OpKind::none;
  template <class T>
  ValueLoc<T> operator()(const ValueLoc<T>& a, const ValueLoc<T>& b) const {
    if (a.value < b.value || (!(b.value < a.value) && b.rank < a.rank)) return b;
    return a;
  }
};
/// A reduce class R (antler's ReduceStats, a user's class): a . b = a.tertiaryReduce(b).
struct reduce_class {
  static constexpr OpKind kind = OpKind::none;
  template <class R>
  R operator()(const R& a, const R& b) const {
    R out = a;
    out.tertiaryReduce(b);
    return out;
  }
};
}  // namespace ops

namespace detail {

template <class T>
struct is_vec : std::false_type {};
template <class E>
struct is_vec<std::vector<E>> : std::true_type {};

/// The element type of a vector, or T itself.
template <class T>
struct element {
  using type = T;
};
template <class E>
struct element<std::vector<E>> {
  using type = E;
};

template <class T>
ByteBuffer encode(const T& v) {
  ByteBuffer b;
  Writer(b).put<T>(v);
  return b;
}
template <class T>
T decode(const ByteBuffer& b, const char* what) {
  Reader r(b);
  T v = r.get<T>();
  if (r.left())
    throw CommError(std::string(what) + ": " + std::to_string(r.left()) + " bytes too many");
  return v;
}

/// The Fold of operator Op on values of type T.
template <class T, class Op>
Fold make_fold(Op op) {
  Fold f;
  using E = typename element<T>::type;
  constexpr bool elementwise =
      std::is_arithmetic_v<E> && !std::is_same_v<E, bool> && Op::kind != OpKind::none;
  if constexpr (elementwise) {
    // Plain numbers, or vectors of them: folded in place, element by element, with no length
    // prefix on the wire (a vector's bytes are its elements; see to_bytes below).
    f.elemSize = sizeof(E);
    f.prim = prim_of<E>();
    f.op = Op::kind;
    f.exact = std::is_integral_v<E> || Op::kind == OpKind::min || Op::kind == OpKind::max;
    f.fold = [op](ByteBuffer& acc, std::span<const char> other, bool otherOnLeft) {
      if (other.size() != acc.size())
        throw CommError("reduce: ranks contribute vectors of different lengths (" +
                        std::to_string(acc.size() / sizeof(E)) + " and " +
                        std::to_string(other.size() / sizeof(E)) + " elements)");
      const std::size_t n = acc.size() / sizeof(E);
      E* a = reinterpret_cast<E*>(acc.data());
      for (std::size_t i = 0; i < n; ++i) {
        E o;
        std::memcpy(&o, other.data() + i * sizeof(E), sizeof(E));
        a[i] = otherOnLeft ? op(o, a[i]) : op(a[i], o);
      }
    };
  } else {
    f.commutative = false;
    f.fold = [op](ByteBuffer& acc, std::span<const char> other, bool otherOnLeft) {
      const T mine = decode<T>(acc, "reduce");
      ByteBuffer ob;
      ob.append(other.data(), other.size());
      const T theirs = decode<T>(ob, "reduce");
      acc = encode<T>(otherOnLeft ? op(theirs, mine) : op(mine, theirs));
    };
  }
  return f;
}

/// The bytes of v as the folds above expect them.
template <class T, class Op>
ByteBuffer to_bytes(const T& v) {
  using E = typename element<T>::type;
  if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool> && Op::kind != OpKind::none) {
    ByteBuffer b;
    if constexpr (is_vec<T>::value)
      b.append(v.data(), v.size() * sizeof(E));
    else
      b.append(&v, sizeof v);
    return b;
  } else {
    return encode<T>(v);
  }
}
template <class T, class Op>
T from_bytes(const ByteBuffer& b) {
  using E = typename element<T>::type;
  if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool> && Op::kind != OpKind::none) {
    T v{};
    if constexpr (is_vec<T>::value) {
      v.resize(b.size() / sizeof(E));
      if (b.size()) std::memcpy(v.data(), b.data(), b.size());
    } else {
      if (b.size() != sizeof v) throw CommError("reduce: wrong payload size");
      std::memcpy(&v, b.data(), sizeof v);
    }
    return v;
  } else {
    return decode<T>(b, "reduce");
  }
}

}  // namespace detail

/// Sets value on every rank to root's value.
template <class T>
void broadcast(Comm& c, T& value, int root, const Options& o = {}) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    algo::broadcast(c, {reinterpret_cast<char*>(&value), sizeof(T)}, root, o);
  } else {
    ByteBuffer b;
    if (c.rank() == root) b = detail::encode<T>(value);
    algo::broadcast_any(c, b, root, o);
    if (c.rank() != root) value = detail::decode<T>(b, "broadcast");
  }
}

/// The fold of every rank's v by op, in the canonical order, on root (v itself elsewhere).
template <class T, class Op>
T reduce(Comm& c, const T& v, Op op, int root, const Options& o = {}) {
  ByteBuffer b = detail::to_bytes<T, Op>(v);
  algo::reduce(c, b, root, detail::make_fold<T>(op), o);
  return c.rank() == root ? detail::from_bytes<T, Op>(b) : v;
}

/// The fold of every rank's v by op, in the canonical order, on every rank (the same bits).
template <class T, class Op>
T allreduce(Comm& c, const T& v, Op op, const Options& o = {}) {
  ByteBuffer b = detail::to_bytes<T, Op>(v);
  algo::allreduce(c, b, detail::make_fold<T>(op), o);
  return detail::from_bytes<T, Op>(b);
}

/// Every rank's v, in rank order, on every rank.
template <class T>
std::vector<T> allgather(Comm& c, const T& v, const Options& o = {}) {
  const ByteBuffer mine = detail::encode<T>(v);
  ByteBuffer all;
  std::vector<std::size_t> counts;
  algo::allgather(c, {mine.data(), mine.size()}, all, counts, o);
  std::vector<T> out;
  out.reserve(counts.size());
  std::size_t at = 0;
  for (std::size_t n : counts) {
    ByteBuffer one;
    one.append(all.data() + at, n);
    out.push_back(detail::decode<T>(one, "allgather"));
    at += n;
  }
  return out;
}

/// Every rank's v, in rank order, on root (empty elsewhere).
template <class T>
std::vector<T> gather(Comm& c, const T& v, int root, const Options& o = {}) {
  const ByteBuffer mine = detail::encode<T>(v);
  ByteBuffer all;
  std::vector<std::size_t> counts;
  algo::gather(c, {mine.data(), mine.size()}, root, all, counts, o);
  std::vector<T> out;
  std::size_t at = 0;
  for (std::size_t n : counts) {
    ByteBuffer one;
    one.append(all.data() + at, n);
    out.push_back(detail::decode<T>(one, "gather"));
    at += n;
  }
  return out;
}

/// The fold by op of the values of ranks 0 .. rank - 1 (T{} on rank 0), and the total.
template <class T, class Op>
std::pair<T, T> exscan(Comm& c, const T& v, Op op, const Options& o = {}) {
  const std::vector<T> all = allgather(c, v, o);
  T before{}, total{};
  for (int r = 0; r < c.size(); ++r) {
    if (r == c.rank()) before = total;
    total = r == 0 ? all[0] : op(total, all[static_cast<std::size_t>(r)]);
  }
  return {before, total};
}

}  // namespace antler::comm
#pragma GCC visibility pop

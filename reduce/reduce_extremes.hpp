#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ReduceMax<F>, ReduceMin<F> and ReduceSum<F>: the simple folds.
///
/// Max and Min skip NaNs (NaN compares false); with no values, has() is false and value() is the
/// identity (lowest / highest representable value). Sum adds in thread order, then node order.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "reduce/exact_sum.hpp"

namespace antler {

/// Largest value (and whether there was any).
template <class F>
class ReduceMax {
 public:
  void primaryReduce(const F& v) {
    if (v == v && (!any_ || v > v_)) {  // v == v is false only for NaN
      v_ = v;
      any_ = true;
    }
  }
  void secondaryReduce(const ReduceMax& o) {
    if (o.any_ && (!any_ || o.v_ > v_)) v_ = o.v_;
    any_ = any_ || o.any_;
  }
  void tertiaryReduce(const ReduceMax& o) { secondaryReduce(o); }
  bool has() const { return any_; }
  F value() const { return v_; }
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& v_& any_;
  }

 private:
  F v_ = std::numeric_limits<F>::lowest();
  bool any_ = false;
};

/// Smallest value (and whether there was any).
template <class F>
class ReduceMin {
 public:
  void primaryReduce(const F& v) {
    if (v == v && (!any_ || v < v_)) {
      v_ = v;
      any_ = true;
    }
  }
  void secondaryReduce(const ReduceMin& o) {
    if (o.any_ && (!any_ || o.v_ < v_)) v_ = o.v_;
    any_ = any_ || o.any_;
  }
  void tertiaryReduce(const ReduceMin& o) { secondaryReduce(o); }
  bool has() const { return any_; }
  F value() const { return v_; }
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& v_& any_;
  }

 private:
  F v_ = std::numeric_limits<F>::max();
  bool any_ = false;
};

/// Sum of the values (and their count). Floating-point values are summed exactly (ExactSum,
/// reduce/exact_sum.hpp) and rounded once when read: the same bits on any split, the correctly
/// rounded sum for doubles (a float sum is that double sum rounded to float). Integers add as
/// integers.
template <class F>
class ReduceSum {
 public:
  static constexpr bool kExact = std::is_floating_point_v<F>;
  static constexpr std::size_t kSerializedSizeBound =
      8 + (kExact ? ExactSum::kSerializedSizeBound : sizeof(F));

  /// Back to no values.
  void clear() {
    v_ = F{};
    exact_.clear();
    n_ = 0;
  }
  void primaryReduce(const F& v) {
    if constexpr (kExact)
      exact_.add(static_cast<double>(v));
    else
      v_ += v;
    ++n_;
  }
  void primaryReduceBlock(const F* v, std::size_t n) requires std::is_floating_point_v<F> {
    if constexpr (std::is_same_v<F, double>) {
      // A block of 0/1 flags in doubles (IntFire's spiked) is counted: the same exact sum, a few
      // instructions per 8 values instead of the band sums (a block of other values leaves the
      // test at its first vector). A count of 0 is added too: the block's +0.0s make a sum of
      // -0.0s so far +0.0, as adding them one by one would.
      std::size_t ones = 0;
      if (detail::exact_vector_path() && detail::count_flags_avx2(v, n, ones)) {
        exact_.add(static_cast<double>(ones));
      } else {
        exact_.add(v, n);
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) exact_.add(static_cast<double>(v[i]));
    }
    n_ += n;
  }
  /// n values that are each 0 or 1 (a bool getter's flags), `ones` of them 1: one add of the count,
  /// the same sum as adding them one by one (exactly: a count is an integer).
  void primaryReduceFlags(std::size_t ones, std::size_t n) {
    if constexpr (kExact) {
      if (ones) exact_.add(static_cast<double>(ones));
    } else {
      v_ += static_cast<F>(ones);
    }
    n_ += n;
  }
  void secondaryReduce(const ReduceSum& o) {
    if constexpr (kExact)
      exact_.merge(o.exact_);
    else
      v_ += o.v_;
    n_ += o.n_;
  }
  void tertiaryReduce(const ReduceSum& o) { secondaryReduce(o); }
  F value() const {
    if constexpr (kExact)
      return static_cast<F>(exact_.value());
    else
      return v_;
  }
  unsigned long long count() const { return n_; }

  /// The compact wire form (Codec).
  void write(Writer& w) const {
    w.put<std::uint64_t>(n_);
    if constexpr (kExact)
      exact_.write(w);
    else
      w.put<F>(v_);
  }
  static ReduceSum read(Reader& r) {
    ReduceSum s;
    s.n_ = r.get<std::uint64_t>();
    if constexpr (kExact)
      s.exact_.readFrom(r);
    else
      s.v_ = r.get<F>();
    return s;
  }
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& v_& exact_& n_;
  }

 private:
  F v_{};           // integers
  ExactSum exact_;  // floating point
  unsigned long long n_ = 0;
};

}  // namespace antler
#pragma GCC visibility pop

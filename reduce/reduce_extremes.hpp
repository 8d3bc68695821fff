#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ReduceMax<F>, ReduceMin<F> and ReduceSum<F>: the simple folds.
///
/// Max and Min skip NaNs (NaN compares false); with no values, has() is false and value() is the
/// identity (lowest / highest representable value). Sum adds in thread order, then node order.
#include <cstddef>
#include <limits>
#include <type_traits>

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

/// Sum of the values (and their count). A block of floating-point values is summed with four
/// accumulators in a fixed pattern (not one dependent chain), then added: the same bits for the
/// same split, and equal to a serial sum up to reassociation, as every reduction across splits.
template <class F>
class ReduceSum {
 public:
  void primaryReduce(const F& v) {
    v_ += v;
    ++n_;
  }
  void primaryReduceBlock(const F* v, std::size_t n) requires std::is_floating_point_v<F> {
    F s[4] = {0, 0, 0, 0};
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (int k = 0; k < 4; ++k) s[k] += v[i + k];
    for (; i < n; ++i) s[0] += v[i];
    v_ += (s[0] + s[1]) + (s[2] + s[3]);
    n_ += n;
  }
  void secondaryReduce(const ReduceSum& o) {
    v_ += o.v_;
    n_ += o.n_;
  }
  void tertiaryReduce(const ReduceSum& o) { secondaryReduce(o); }
  F value() const { return v_; }
  unsigned long long count() const { return n_; }
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& v_& n_;
  }

 private:
  F v_{};
  unsigned long long n_ = 0;
};

}  // namespace antler
#pragma GCC visibility pop

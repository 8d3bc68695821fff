#pragma once
/// ReduceMax<F>, ReduceMin<F> and ReduceSum<F>: the simple folds.
///
/// Max and Min skip NaNs (NaN compares false); with no values, has() is false and value() is the
/// identity (lowest / highest representable value). Sum adds in thread order, then node order.
#include <limits>

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

/// Sum of the values (and their count).
template <class F>
class ReduceSum {
 public:
  void primaryReduce(const F& v) {
    v_ += v;
    ++n_;
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

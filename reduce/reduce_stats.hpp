#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ReduceStats: count, sum, mean, population sdev, min and max of a double field, the same bits
/// on any split of the values over threads and nodes.
///
/// The sum and the sum of squares are exact (ExactSum, reduce/exact_sum.hpp: a superaccumulator;
/// each square enters as the exact 106-bit product of the significand with itself, so it too is
/// exact unless it leaves the accumulator's range), and merge exactly; nothing is rounded until a
/// result is read. So the results do not depend on how the values were split or in which order
/// partials met:
///   sum    the exact sum, correctly rounded (what Python's math.fsum gives);
///   mean   that sum divided by the count, rounded (math.fsum(x) / n);
///   sdev   sqrt(M2 / n), M2 = sum(x^2) - 2 m sum(x) + n m^2 with m the mean above, formed in an
///          ExactSum from the exact sums (sum(x) and m^2 taken to ~106 bits) and rounded once: M2
///          carries a relative error of about 2^-100 of the terms (their truncation), then one
///          rounding each for the division and the square root; a negative M2 (impossible in
///          exact arithmetic) reads as 0.
///
/// Special values: a NaN anywhere makes sum, mean and sdev NaN; min and max skip NaNs (they are
/// the extremes of the other values, or NaN if every value is NaN). An infinity makes sum and mean
/// that infinity (NaN with both signs) and sdev NaN, as does a value whose square leaves the
/// accumulator's range (|x| >= 2^519, about 1.7e156); squares below 2^-1074 (|x| < ~2^-537) lose
/// what lies below it; min and max report infinities. With no values at all, count is 0, sum 0, and
/// mean, sdev, min and max are NaN.
#include <algorithm>
#include <boost/serialization/access.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/buffer.hpp"
#include "reduce/exact_sum.hpp"

namespace antler {

class ReduceStats {
 public:
  /// Bytes a partial takes on the wire at most (the node stage chooses by it): the count, min and
  /// max, and the two sums' digits in use.
  static constexpr std::size_t kSerializedSizeBound = 24 + 2 * ExactSum::kSerializedSizeBound;

  /// Back to no values (a step's partial is cleared, not rebuilt).
  void clear() {
    count_ = 0;
    sum_.clear();
    sq_.clear();
    cached_ = false;
    min_ = std::numeric_limits<double>::infinity();
    max_ = -std::numeric_limits<double>::infinity();
  }
  /// Folds one value.
  void primaryReduce(double v) { primaryReduceBlock(&v, 1); }
  /// Folds n values.
  void primaryReduceBlock(const double* v, std::size_t n) {
    sum_.addWithSquares(v, n, sq_, min_, max_);
    count_ += n;
    cached_ = false;
  }
  /// Folds another thread's partial (exactly).
  void secondaryReduce(const ReduceStats& o) {
    cached_ = false;
    count_ += o.count_;
    sum_.merge(o.sum_);
    sq_.merge(o.sq_);
    min_ = o.min_ < min_ ? o.min_ : min_;
    max_ = o.max_ > max_ ? o.max_ : max_;
  }
  /// Folds another node's partial (the same).
  void tertiaryReduce(const ReduceStats& o) { secondaryReduce(o); }

  /// Number of values.
  std::uint64_t count() const { return count_; }
  /// The sum, correctly rounded.
  double sum() const { return moments().sum; }
  /// sum() / count() (NaN if count is 0).
  double mean() const { return moments().mean; }
  /// Population standard deviation, sqrt(M2 / count) (NaN if count is 0).
  double sdev() const { return std::sqrt(moments().variance); }
  /// Population variance, M2 / count (NaN if count is 0; see the top of the file).
  double variance() const { return moments().variance; }
  double min() const {
    return count_ && min_ <= max_ ? min_ : std::numeric_limits<double>::quiet_NaN();
  }
  double max() const {
    return count_ && min_ <= max_ ? max_ : std::numeric_limits<double>::quiet_NaN();
  }

  /// The compact wire form (Codec): count, min, max, then the two sums' digits in use.
  void write(Writer& w) const {
    w.put<std::uint64_t>(count_).put<double>(min_).put<double>(max_);
    sum_.write(w);
    sq_.write(w);
  }
  static ReduceStats read(Reader& r) {
    ReduceStats s;
    s.readFrom(r);
    return s;
  }
  /// Reads the compact form in place (keeping the sums' storage). On a corrupted buffer it
  /// throws CommError, with this object holding a valid partial (not necessarily the old one).
  void readFrom(Reader& r) {
    cached_ = false;
    count_ = r.get<std::uint64_t>();
    min_ = r.get<double>();
    max_ = r.get<double>();
    sum_.readFrom(r);
    sq_.readFrom(r);
  }
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& count_& min_& max_& sum_& sq_;
    cached_ = false;
  }

 private:
  struct Moments {
    double sum, mean, variance;
  };
  /// The results, rounded once from the exact sums on first use (a digest reads several).
  const Moments& moments() const {
    if (cached_) return cache_;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    double s, s2;  // the sum to ~106 bits: s + s2
    sum_.split(s, s2);
    const double n = static_cast<double>(count_);
    cache_ = {s, count_ ? s / n : nan, nan};
    if (count_ && sum_.isFinite() && sq_.isFinite()) {
      const double m = cache_.mean;
      double mm, mm2;  // m^2 exactly: mm + mm2 (fma's low part where it cannot underflow)
      if (const double a = std::fabs(m); a == 0 || (a > 0x1p-450 && a < 0x1p500)) {
        mm = m * m;
        mm2 = std::fma(m, m, -mm);
      } else {
        ExactSum p;
        p.addProduct(m, m);
        p.split(mm, mm2);
      }
      ExactSum m2 = sq_;  // sum(x^2) - 2 m sum(x) + n m^2, each product exact
      m2.addProduct(-2 * m, s);
      m2.addProduct(-2 * m, s2);
      m2.addProduct(n, mm);
      m2.addProduct(n, mm2);
      const double v = m2.value();
      cache_.variance = v > 0 ? v / n : 0.0;
    }
    cached_ = true;
    return cache_;
  }

  std::uint64_t count_ = 0;
  ExactSum sum_, sq_;
  mutable Moments cache_{};
  mutable bool cached_ = false;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
};

}  // namespace antler
#pragma GCC visibility pop

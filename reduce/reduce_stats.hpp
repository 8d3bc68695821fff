#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ReduceStats: count, sum, mean, population sdev, min and max of a double field.
///
/// Threads and nodes merge with the parallel Welford/Chan update (mean and M2, the sum of squared
/// deviations), never with sum and sum of squares, so the variance keeps its precision when the
/// mean is large. Inside a thread, values are folded in blocks: two passes over a block held in
/// cache (block mean, then squared deviations), then a Chan merge into the running partial.
///
/// Special values: a NaN anywhere makes sum, mean and sdev NaN; min and max skip NaNs (they are
/// the extremes of the other values, or NaN if every value is NaN). An infinity makes sum and mean
/// that infinity (NaN with both signs) and sdev NaN; min and max report it. With no values at all,
/// count is 0, sum 0, and mean, sdev, min and max are NaN.
#include <algorithm>
#include <boost/serialization/access.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

namespace antler {

class ReduceStats {
 public:
  /// Folds one value.
  void primaryReduce(double v) { primaryReduceBlock(&v, 1); }
  /// Folds n values.
  void primaryReduceBlock(const double* v, std::size_t n) {
    if (n == 0) return;
    // Pass 1: sum, min, max with four accumulators (a fixed order: results are reproducible).
    double s[4] = {0, 0, 0, 0};
    double mn = min_, mx = max_;
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4) {
      for (int k = 0; k < 4; ++k) {
        s[k] += v[i + k];
        mn = v[i + k] < mn ? v[i + k] : mn;
        mx = v[i + k] > mx ? v[i + k] : mx;
      }
    }
    for (; i < n; ++i) {
      s[0] += v[i];
      mn = v[i] < mn ? v[i] : mn;
      mx = v[i] > mx ? v[i] : mx;
    }
    const double sum = (s[0] + s[1]) + (s[2] + s[3]);
    const double mean = sum / static_cast<double>(n);
    // Pass 2: squared deviations from the block mean.
    double q[4] = {0, 0, 0, 0};
    i = 0;
    for (; i + 4 <= n; i += 4)
      for (int k = 0; k < 4; ++k) {
        const double d = v[i + k] - mean;
        q[k] += d * d;
      }
    for (; i < n; ++i) {
      const double d = v[i] - mean;
      q[0] += d * d;
    }
    merge(n, sum, mean, (q[0] + q[1]) + (q[2] + q[3]), mn, mx);
  }
  /// Folds another thread's partial (Chan et al.'s parallel update).
  void secondaryReduce(const ReduceStats& o) {
    merge(o.count_, o.sum_, o.mean_, o.m2_, o.min_, o.max_);
  }
  /// Folds another node's partial (same update).
  void tertiaryReduce(const ReduceStats& o) { secondaryReduce(o); }

  /// Number of values.
  std::uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  /// Mean (NaN if count is 0).
  double mean() const { return count_ ? mean_ : std::numeric_limits<double>::quiet_NaN(); }
  /// Population standard deviation, sqrt(M2 / count) (NaN if count is 0).
  double sdev() const {
    return count_ ? std::sqrt(m2_ / static_cast<double>(count_))
                  : std::numeric_limits<double>::quiet_NaN();
  }
  /// Population variance (NaN if count is 0).
  double variance() const {
    return count_ ? m2_ / static_cast<double>(count_) : std::numeric_limits<double>::quiet_NaN();
  }
  double min() const {
    return count_ && min_ <= max_ ? min_ : std::numeric_limits<double>::quiet_NaN();
  }
  double max() const {
    return count_ && min_ <= max_ ? max_ : std::numeric_limits<double>::quiet_NaN();
  }

  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& count_& sum_& mean_& m2_& min_& max_;
  }

 private:
  void merge(std::uint64_t nb, double sumb, double meanb, double m2b, double minb, double maxb) {
    if (nb == 0) return;
    min_ = minb < min_ ? minb : min_;
    max_ = maxb > max_ ? maxb : max_;
    sum_ += sumb;
    if (count_ == 0) {
      count_ = nb;
      mean_ = meanb;
      m2_ = m2b;
      return;
    }
    const double na = static_cast<double>(count_), nbd = static_cast<double>(nb), n = na + nbd;
    const double delta = meanb - mean_;
    if (std::isfinite(mean_) && std::isfinite(meanb)) {
      mean_ += delta * (nbd / n);
    } else {
      mean_ = sum_ / n;  // an infinity: the mean is the sum's infinity (NaN with both signs)
    }
    m2_ += m2b + delta * delta * (na * nbd / n);
    count_ += nb;
  }

  std::uint64_t count_ = 0;
  double sum_ = 0, mean_ = 0, m2_ = 0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
};

}  // namespace antler
#pragma GCC visibility pop

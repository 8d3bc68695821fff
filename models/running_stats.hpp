#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// RunningStats: MOOSE's Stats arithmetic (builtins/Stats.cpp), shared by Stats and SpikeStats when
/// they run MOOSE's way: every value sent in (input) adds to sum, sum of squares and num; the
/// last windowLength values are kept in a circular buffer for the window statistics.
///   mean = sum / num,  sdev = sqrt((sumsq - sum^2 / num) / num)   (0 while num is 0)
///   wsum, wmean, wsdev over the min(windowLength, num) values in the buffer (same formulas)
/// The formulas are MOOSE's, so the numbers are MOOSE's to rounding; for a mean that does not
/// lose its last bits to cancellation, use the population statistics of antler's `reduce`.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/class_builder.hpp"
#include "core/error.hpp"

namespace antler {

struct RunningStats {
  double sum = 0.0, sumsq = 0.0;
  std::uint64_t num = 0;
  std::vector<double> samples;  // the window: samples[num % size] is the next slot

  void input(double v) {
    sum += v;
    sumsq += v * v;
    if (!samples.empty()) samples[num % samples.size()] = v;
    ++num;
  }
  void reinit() {
    sum = sumsq = 0.0;
    num = 0;
    std::fill(samples.begin(), samples.end(), 0.0);
  }
  double mean() const { return num ? sum / static_cast<double>(num) : 0.0; }
  double sdev() const {
    if (!num) return 0.0;
    const double n = static_cast<double>(num);
    return std::sqrt((sumsq - sum * sum / n) / n);
  }
  unsigned windowLength() const { return static_cast<unsigned>(samples.size()); }
  void setWindowLength(unsigned len, const char* cls) {
    if (len >= 1000000)
      throw ValueError(std::string(cls) + ".windowLength: " + std::to_string(len) +
                       " values (a window holds fewer than 1000000)");
    samples.assign(len, 0.0);  // MOOSE keeps the old values it can; a new window starts empty
  }
  unsigned wnum() const {
    return static_cast<unsigned>(std::min<std::uint64_t>(samples.size(), num));
  }
  double wsum() const {
    double s = 0.0;
    for (unsigned i = 0; i < wnum(); ++i) s += samples[i];
    return s;
  }
  double wmean() const { return wnum() ? wsum() / wnum() : 0.0; }
  double wsdev() const {
    const unsigned n = wnum();
    if (!n) return 0.0;
    double s = 0.0, sq = 0.0;
    for (unsigned i = 0; i < n; ++i) {
      s += samples[i];
      sq += samples[i] * samples[i];
    }
    return std::sqrt((sq - s * s / n) / n);
  }
};

/// Declares MOOSE's window fields (windowLength, wmean, wsdev, wsum, wnum) of a class that keeps
/// a RunningStats behind member functions of those names.
template <class T>
ClassBuilder<T>& add_window_fields(ClassBuilder<T>& b, const char* values) {
  const std::string v(values);
  return b
      .value("windowLength", &T::windowLength, &T::setWindowLength,
             "MOOSE's: how many of the last " + v + " the window statistics cover")
      .readOnly("wmean", &T::wmean, "MOOSE's: mean of the window")
      .readOnly("wsdev", &T::wsdev, "MOOSE's: population standard deviation of the window")
      .readOnly("wsum", &T::wsum, "MOOSE's: sum of the window")
      .readOnly("wnum", &T::wnum, "MOOSE's: " + v + " in the window");
}

}  // namespace antler
#pragma GCC visibility pop

#pragma once
// The correctly rounded sum of doubles, by CPython's math.fsum algorithm (Shewchuk's exact
// partials, then a careful rounding of their sum), written here for the tests as their oracle of
// the exact statistics. For finite inputs whose partial sums stay finite.
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace antler::test {

inline double fsum(const std::vector<double>& xs) {
  std::vector<double> p;  // non-overlapping partials, increasing magnitude
  for (double x : xs) {
    std::size_t i = 0;
    for (double y : p) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y, lo = y - (hi - x);
      if (lo != 0.0) p[i++] = lo;
      x = hi;
    }
    p.resize(i);
    p.push_back(x);
  }
  double hi = 0, lo = 0;
  std::size_t n = p.size();
  if (n > 0) {
    hi = p[--n];
    while (n > 0) {
      const double x = hi, y = p[--n];
      hi = x + y;
      lo = y - (hi - x);
      if (lo != 0.0) break;
    }
    // Half-way cases: the partials below decide the rounding direction.
    if (n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0))) {
      const double y = lo * 2.0, x = hi + y;
      if (y == x - hi) hi = x;
    }
  }
  return hi;
}

}  // namespace antler::test

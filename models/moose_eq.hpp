#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// MOOSE's floating-point equality, for the places where MOOSE's behaviour depends on it
/// (SynChan's tau1 == tau2, CompartmentBase's length rule): basecode/doubleEq.cpp's doubleEq,
/// a relative difference below 1e-6 (against 1e-6 itself when both are below 1e-12).
#include <cmath>

namespace antler::detail {

inline bool moose_eq(double x, double y) {
  double denom = std::fabs(x) + std::fabs(y);
  if (denom < 1e-12) denom = 1e-6;
  return std::fabs(x - y) / denom < 1e-6;
}

}  // namespace antler::detail
#pragma GCC visibility pop

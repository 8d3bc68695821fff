#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Comparing event times with the end of a clock step (internal to the models).
///
/// The clock's time at the end of step n is exactly n * dt, but the event times the models compare
/// it with are floating-point sums: spike time + synaptic delay, last spike + refractory period.
/// Such a sum, meant to land on a step end, can come out a few ulps after it, and the event would
/// then happen one step late (or, for a refractory check, a spike one step late). So a model counts
/// a time as reached in a step when it lies at most step_slack(dt) after the step's end. The slack
/// is 1e-6 of a step: far larger than the rounding error of any run shorter than about 1e9 steps
/// (a few ulps of n * dt), and far smaller than any delay a model means to resolve.
#include <cmath>
#include <cstdint>

namespace antler::detail {

/// Fraction of a step by which an event time may exceed the step's end and still count as due.
inline constexpr double kStepSlack = 1e-6;

/// How far after a step's end (of length dt) an event may lie and still count as due in it.
constexpr double step_slack(double dt) {
  return kStepSlack * dt;
}

/// The step an event at `time` is due in, for a model whose last processed step is `last`: the
/// first step n > last whose end n * dt, plus the slack, is not before `time` (the step in which a
/// comparison `time <= currTime + slack` at each step would first hold). Returns `limit` (or more)
/// for a time at or past step `limit` (give or take the rounding of the first guess: a caller
/// treats `limit` as "not yet"), and for NaN or +infinity. `invDt` (1 / dt) only makes the first
/// guess, which the search then settles exactly: a hot caller passes a cached one instead of
/// dividing.
inline std::uint64_t due_step(double time, double dt, double invDt, std::uint64_t last,
                              std::uint64_t limit) {
  const double slack = step_slack(dt);
  const double guess = std::ceil((time - slack) * invDt);
  if (!(guess < static_cast<double>(limit))) return limit;  // too far, +infinity or NaN
  auto n = guess > static_cast<double>(last + 1) ? static_cast<std::uint64_t>(guess) : last + 1;
  // The guess rounds: settle on the exact step with the very products the clock's time is.
  while (static_cast<double>(n) * dt + slack < time) ++n;
  while (n > last + 1 && static_cast<double>(n - 1) * dt + slack >= time) --n;
  return n;
}
inline std::uint64_t due_step(double time, double dt, std::uint64_t last, std::uint64_t limit) {
  return due_step(time, dt, 1.0 / dt, last, limit);
}

}  // namespace antler::detail
#pragma GCC visibility pop

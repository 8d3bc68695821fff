#pragma once
/// Comparing event times with the end of a clock step (internal to the models).
///
/// The clock's time at the end of step n is exactly n * dt, but the event times the models compare
/// it with are floating-point sums: spike time + synaptic delay, last spike + refractory period.
/// Such a sum, meant to land on a step end, can come out a few ulps after it, and the event would
/// then happen one step late (or, for a refractory check, a spike one step late). So a model counts
/// a time as reached in a step when it lies at most step_slack(dt) after the step's end. The slack
/// is 1e-6 of a step: far larger than the rounding error of any run shorter than about 1e9 steps
/// (a few ulps of n * dt), and far smaller than any delay a model means to resolve.
namespace antler::detail {

/// Fraction of a step by which an event time may exceed the step's end and still count as due.
inline constexpr double kStepSlack = 1e-6;

/// How far after a step's end (of length dt) an event may lie and still count as due in it.
constexpr double step_slack(double dt) {
  return kStepSlack * dt;
}

}  // namespace antler::detail

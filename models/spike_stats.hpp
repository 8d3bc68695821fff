#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// SpikeStats: the firing rate of a population. Connect its reduce field `reduce` with a Reduce
/// message to the neurons' spike flag (`addMsg("Reduce", stats, "reduce", neurons, "getSpiked")`
/// for IntFire; RandSpike's getHasFired works too). When scheduled (on the neurons' tick) it asks
/// for the sum every step, so after each step:
///   count = spikes in that step,  num = neurons,  rate = count / (num * dt) in Hz (NaN if num is
///   0)
/// with dt the tick's dt, from the ProcInfo of its own process (or reinit).
///
/// MOOSE's way, when `reduce` is not connected: spikes sent to `addSpike` (any number of
/// sources), or Vm values sent to `Vm` that rise above `threshold`, are counted, and each step
/// the count / dt goes into MOOSE's running statistics (models/running_stats.hpp): mean, sdev,
/// sum and num (of steps) since reinit, and wmean, wsdev, wsum, wnum over the last windowLength
/// steps. So mean is the pooled rate of the sources in Hz.
#include "core/class_builder.hpp"
#include "models/running_stats.hpp"
#include "reduce/reduce_extremes.hpp"
#include "reduce/reduce_finfo.hpp"

namespace antler {

class SpikeStats {
 public:
  /// Stores the result of a reduction (declared before `reduce`, which names it).
  void digest(const Eref& e, const ReduceSum<double>* r);
  /// Sums the spike flags of the population (Reduce message to a 'get' field).
  inline static ReduceFinfo<SpikeStats, double, ReduceSum<double>> reduce{
      "reduce", &SpikeStats::digest, "sums a spike flag: Reduce message to e.g. IntFire getSpiked"};
  /// Keeps dt and asks for this step's count.
  void process(const Eref& e, ProcPtr p);
  /// Starts afresh; asks for the count (so that num is known from the start).
  void reinit(const Eref& e, ProcPtr p);
  /// MOOSE's: one spike from any source.
  void addSpike(double) { ++spikes_; }
  /// MOOSE's: a Vm that rises above threshold counts as a spike.
  void Vm(double v);
  unsigned windowLength() const { return run_.windowLength(); }
  void setWindowLength(unsigned n) { run_.setWindowLength(n, "SpikeStats"); }
  double mean() const { return run_.mean(); }
  double sdev() const { return run_.sdev(); }
  double sum() const { return run_.sum; }
  double wmean() const { return run_.wmean(); }
  double wsdev() const { return run_.wsdev(); }
  double wsum() const { return run_.wsum(); }
  unsigned wnum() const { return run_.wnum(); }
  /// The class info of SpikeStats (registered at load time).
  static const Cinfo* initCinfo();

 private:
  unsigned count_ = 0;
  unsigned num_ = 0;
  double rate_ = 0.0;
  double dt_ = 0.0;
  double threshold_ = 0.0;
  unsigned spikes_ = 0;  // MOOSE's: spikes since the last step
  bool fired_ = false;
  RunningStats run_;
};

}  // namespace antler
#pragma GCC visibility pop

#pragma once
/// SpikeStats: the firing rate of a population. Connect its reduce field `reduce` with a Reduce
/// message to the neurons' spike flag (`addMsg("Reduce", stats, "reduce", neurons, "getSpiked")`
/// for IntFire; RandSpike's getHasFired works too). When scheduled (on the neurons' tick) it asks
/// for the sum every step, so after each step:
///   count = spikes in that step,  num = neurons,  rate = count / (num * dt) in Hz (NaN if num is
///   0)
/// with dt the tick's dt, from the ProcInfo of its own process (or reinit).
#include "core/class_builder.hpp"
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
  /// As process (so that num is known from the start).
  void reinit(const Eref& e, ProcPtr p) { process(e, p); }
  /// The class info of SpikeStats (registered at load time).
  static const Cinfo* initCinfo();

 private:
  unsigned count_ = 0;
  unsigned num_ = 0;
  double rate_ = 0.0;
  double dt_ = 0.0;
};

}  // namespace antler

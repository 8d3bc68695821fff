#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// RandSpike: Poisson spike source (MOOSE's RandSpike). Each step that is out of the refractory
/// period (currTime - lastEvent >= refractT, within the slack of models/step_time.hpp) it fires
/// with probability realRate * dt, where realRate = rate / (1 - rate * refractT) is MOOSE's
/// correction for the time lost to refractoriness (realRate = rate when refractT is 0, or when
/// rate * refractT >= 1). reinit sets lastEvent = -refractT (a spike is allowed at the first step).
///
/// The random number of a step comes from Rng(seed, key), seed the simulation's (Context::seed),
/// the key mixing the element's path, the object's global data index and the step number (currTime
/// / dt). It depends on nothing else: the spikes are the same for any threads x nodes split, and
/// for the same seed and model, run after run.
#include <cstdint>

#include "core/class_builder.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class RandSpike {
 public:
  /// Sends the spike time.
  inline static SrcFinfo<double> spikeOut{"spikeOut", "sends the spike time"};
  /// Draws this step's number and fires if it is below realRate * dt (see the header comment).
  void process(const Eref& e, ProcPtr p);
  /// process over a slice (core/proc_finfo.hpp): the step number and the seed once per slice.
  static void processBlock(const DataElement* e, Index lo, RandSpike* objs, Index n, ProcPtr p);
  /// lastEvent = -refractT, hasFired = false; keys the object's random stream.
  void reinit(const Eref& e, ProcPtr p);
  /// The class info of RandSpike (registered at load time).
  static const Cinfo* initCinfo();

 private:
  void keyStream(const Eref& e);
  void step(const Eref& e, ProcPtr p, std::uint64_t step, std::uint64_t seed, double slack);
  /// realRate * dt for the current rate, refractT and dt (recomputed only when one changed).
  double probability(double dt) {
    if (rate_ != probRate_ || refractT_ != probRefractT_ || dt != probDt_) [[unlikely]] {
      const double lost = rate_ * refractT_;
      const double realRate = lost < 1.0 ? rate_ / (1.0 - lost) : rate_;
      prob_ = realRate * dt;
      probRate_ = rate_, probRefractT_ = refractT_, probDt_ = dt;
    }
    return prob_;
  }
  double rate_ = 0.0;
  double refractT_ = 0.0;
  double lastEvent_ = 0.0;
  bool fired_ = false;
  bool keyed_ = false;
  std::uint64_t stream_ = 0;  // per-object part of the random key (element path and data index)
  double prob_ = 0.0;         // probability() for the three values below
  double probRate_ = 0.0, probRefractT_ = 0.0, probDt_ = 0.0;
};

}  // namespace antler
#pragma GCC visibility pop

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
  /// realRate * dt (see the header comment).
  static double probability(double rate, double refractT, double dt) {
    const double lost = rate * refractT;
    const double realRate = lost < 1.0 ? rate / (1.0 - lost) : rate;
    return realRate * dt;
  }
  // 40 bytes: a step reads every object (at 1e5 inputs, 4 MB a step), so the probability is not
  // kept here but computed in the sweep, once for each run of objects with the same rate and
  // refractT (processBlock).
  double rate_ = 0.0;
  double refractT_ = 0.0;
  double lastEvent_ = 0.0;
  std::uint64_t stream_ = 0;  // per-object part of the random key (element path and data index)
  bool fired_ = false;
  bool keyed_ = false;
};

}  // namespace antler
#pragma GCC visibility pop

#pragma once
/// PulseGen: a two-pulse stimulus generator (MOOSE's PulseGen, free-run mode). Every step it
/// computes its output for the time t at the end of the step and sends it on `output`:
///   period = firstDelay + max(firstWidth, secondDelay + secondWidth),  phase = fmod(t, period)
///   phase < firstDelay                        -> baseLevel
///   phase < firstDelay + firstWidth           -> firstLevel
///   phase - firstDelay < secondDelay          -> baseLevel   (the second delay counts from the
///   phase - firstDelay < secondDelay + secondWidth -> secondLevel   start of the first pulse)
///   otherwise                                 -> baseLevel
/// With period <= 0 the output is baseLevel. reinit sets the output to baseLevel and sends it.
/// Only trigMode 0 (free run) is supported; setting another mode is a ValueError. The read-only
/// output field is `outputValue`, as in MOOSE (`output` is the message port).
#include "core/class_builder.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class PulseGen {
 public:
  /// Sends the output level every step (and at reinit).
  inline static SrcFinfo<double> outputOut{"output", "sends the output level every step"};
  /// Computes and sends the output for the end of this step.
  void process(const Eref& e, ProcPtr p);
  /// Output = baseLevel, sent.
  void reinit(const Eref& e, ProcPtr p);
  /// The trigger mode (0: free run).
  unsigned trigMode() const { return trigMode_; }
  /// Sets the trigger mode; only 0 (free run) is supported.
  void setTrigMode(unsigned mode);
  /// The class info of PulseGen (registered at load time).
  static const Cinfo* initCinfo();

 private:
  double baseLevel_ = 0.0;
  double firstLevel_ = 0.0;
  double firstWidth_ = 0.0;
  double firstDelay_ = 0.0;
  double secondLevel_ = 0.0;
  double secondWidth_ = 0.0;
  double secondDelay_ = 0.0;
  double output_ = 0.0;
  unsigned trigMode_ = 0;
};

}  // namespace antler

#include "models/pulse_gen.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace antler {

void PulseGen::process(const Eref& e, ProcPtr p) {
  const double period = firstDelay_ + std::max(firstWidth_, secondDelay_ + secondWidth_);
  if (!(period > 0)) {
    output_ = baseLevel_;
  } else {
    double phase = std::fmod(p->currTime, period);
    if (phase < firstDelay_) {
      output_ = baseLevel_;
    } else if (phase < firstDelay_ + firstWidth_) {
      output_ = firstLevel_;
    } else {
      phase -= firstDelay_;
      output_ = (phase >= secondDelay_ && phase < secondDelay_ + secondWidth_) ? secondLevel_
                                                                               : baseLevel_;
    }
  }
  outputOut.send(e, output_);
}

void PulseGen::reinit(const Eref& e, ProcPtr) {
  output_ = baseLevel_;
  outputOut.send(e, output_);
}

void PulseGen::setTrigMode(unsigned mode) {
  if (mode != 0)
    throw ValueError("PulseGen.trigMode: only 0 (free run) is supported, got " +
                     std::to_string(mode));
  trigMode_ = mode;
}

const Cinfo* PulseGen::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<PulseGen>("PulseGen", "two-pulse stimulus generator (free run)")
          .value("baseLevel", &PulseGen::baseLevel_, "output between pulses")
          .value("firstLevel", &PulseGen::firstLevel_, "output during the first pulse")
          .value("firstWidth", &PulseGen::firstWidth_, "duration of the first pulse")
          .value("firstDelay", &PulseGen::firstDelay_, "start of the first pulse in a period")
          .value("secondLevel", &PulseGen::secondLevel_, "output during the second pulse")
          .value("secondWidth", &PulseGen::secondWidth_, "duration of the second pulse")
          .value("secondDelay", &PulseGen::secondDelay_,
                 "start of the second pulse, after the start of the first")
          .value("trigMode", &PulseGen::trigMode, &PulseGen::setTrigMode,
                 "trigger mode: only 0 (free run) is supported")
          .readOnly("outputValue", &PulseGen::output_, "output of the last step")
          .src(PulseGen::outputOut)
          .proc<&PulseGen::process, &PulseGen::reinit>()
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = PulseGen::initCinfo();
}

}  // namespace antler

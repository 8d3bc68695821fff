#include "models/pulse_gen.hpp"

#include <cmath>
#include <string>

namespace antler {

void PulseGen::process(const Eref& e, ProcPtr p) {
  const double t = p->currTime;
  const std::size_t n = level_.size();
  double period = width_[0] + delay_[0];
  for (std::size_t i = 1; i < n && (width_[i] > 0.0 || delay_[i] > 0.0); ++i) {
    const double incr = delay_[i] + width_[i] - width_[i - 1];
    if (incr > 0) period += incr;
  }
  double phase = 0.0;
  switch (trigMode_) {
    case 0:
      phase = std::fmod(t, period);
      break;
    case 1:
      if (input_ == 0) {
        phase = trigTime_ < 0 ? period : t - trigTime_;
      } else {
        if (prevInput_ == 0) trigTime_ = t;
        phase = t - trigTime_;
      }
      prevInput_ = input_;
      break;
    default:  // 2
      if (input_ == 0) {
        phase = period;
      } else {
        if (prevInput_ == 0) trigTime_ = t;
        phase = std::fmod(t - trigTime_, period);
      }
      prevInput_ = input_;
      break;
  }
  if (phase >= period) {  // after a triggered train, or the gate closed: nothing is sent
    output_ = baseLevel_;
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (phase < delay_[i]) {
      output_ = baseLevel_;
      break;
    }
    if (phase < delay_[i] + width_[i]) {
      output_ = level_[i];
      break;
    }
    phase -= delay_[i];
  }
  outputOut.send(e, output_);
}

void PulseGen::reinit(const Eref& e, ProcPtr) {
  trigTime_ = -1.0;
  prevInput_ = 0;
  input_ = 0;
  output_ = baseLevel_;
  outputOut.send(e, output_);
}

void PulseGen::setTrigMode(unsigned mode) {
  if (mode > 2)
    throw ValueError("PulseGen.trigMode: " + std::to_string(mode) +
                     " is not a mode (valid: 0 free run, 1 external trigger, 2 external gate)");
  trigMode_ = mode;
}

void PulseGen::setCount(unsigned n) {
  if (n == 0) throw ValueError("PulseGen.count: a pulse generator needs at least one pulse, got 0");
  if (n > (1u << 24))
    throw ValueError("PulseGen.count: " + std::to_string(n) + " pulses (at most 16777216)");
  level_.resize(n, 0.0);
  width_.resize(n, 0.0);
  delay_.resize(n, 0.0);
}

void PulseGen::setWidth(unsigned i, double v) {
  if (!(v >= 0))
    throw ValueError("PulseGen.width[" + std::to_string(i) + "]: a width is >= 0, got " +
                     format_double(v));
  at(width_, i, "width") = v;
}

void PulseGen::setDelay(unsigned i, double v) {
  if (!(v >= 0))
    throw ValueError("PulseGen.delay[" + std::to_string(i) + "]: a delay is >= 0, got " +
                     format_double(v));
  at(delay_, i, "delay") = v;
}

void PulseGen::input(double v) {
  // MOOSE keeps the input in an int: truncated toward zero.
  input_ = std::isfinite(v) && std::fabs(v) < 9.2e18 ? static_cast<long long>(v) : (v != 0 ? 1 : 0);
}

const Cinfo* PulseGen::initCinfo() {
  using P = PulseGen;
  static const Cinfo* c =
      ClassBuilder<PulseGen>("PulseGen",
                             "pulse generator: a train of pulses, free running, "
                             "triggered or gated (MOOSE's PulseGen)")
          .value("baseLevel", &P::baseLevel_, "output between pulses and before a trigger")
          .value("firstLevel", &P::firstLevel, &P::setFirstLevel, "level[0]")
          .value("firstWidth", &P::firstWidth, &P::setFirstWidth, "width[0]")
          .value("firstDelay", &P::firstDelay, &P::setFirstDelay,
                 "delay[0]: onset of the first pulse in a period (or after the trigger)")
          .value("secondLevel", &P::secondLevel, &P::setSecondLevel, "level[1]")
          .value("secondWidth", &P::secondWidth, &P::setSecondWidth, "width[1]")
          .value("secondDelay", &P::secondDelay, &P::setSecondDelay,
                 "delay[1]: onset of the second pulse after the onset of the first")
          .value("count", &P::count, &P::setCount,
                 "number of pulses (2 by default); the first entries are kept when it changes")
          .value("trigMode", &P::trigMode, &P::setTrigMode,
                 "0 free run, 1 external trigger (a train from each rising input), 2 external "
                 "gate (trains while the input is not 0)")
          .lookup("level", &P::level, &P::setLevel, "level of pulse i")
          .lookup("width", &P::width, &P::setWidth, "width of pulse i")
          .lookup("delay", &P::delay, &P::setDelay,
                  "onset of pulse i after the onset of pulse i-1 (of the period for i = 0)")
          .readOnly("outputValue", &P::output_, "output of the last step")
          .dest<&P::input>("input", "the trigger or gate input (truncated to an integer, as MOOSE)")
          .dest<&P::levelIn>("levelIn", "sets level[i]")
          .dest<&P::widthIn>("widthIn", "sets width[i]")
          .dest<&P::delayIn>("delayIn", "sets delay[i]")
          .src(P::outputOut)
          .proc<&P::process, &P::reinit>()
          .defaultTick(0)  // MOOSE's default tick for PulseGen
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = PulseGen::initCinfo();
}

}  // namespace antler

#include "models/stimulus_table.hpp"

#include <cmath>

namespace antler {

double StimulusTable::lookup(double x) const {
  const std::size_t n = vec_.size();
  if (n == 0) return 0.0;
  if (n == 1 || !(x > startTime_)) return vec_.front();
  if (!(x < stopTime_) || !(stopTime_ > startTime_)) return vec_.back();
  const double pos = (x - startTime_) / (stopTime_ - startTime_) * static_cast<double>(n - 1);
  std::size_t i = static_cast<std::size_t>(pos);
  if (i >= n - 1) return vec_.back();
  const double frac = pos - static_cast<double>(i);
  if (frac == 0.0) return vec_[i];  // exact at an entry (no 0 * inf, no rounding)
  return vec_[i] + frac * (vec_[i + 1] - vec_[i]);
}

void StimulusTable::process(const Eref& e, ProcPtr p) {
  double x;
  if (stepSize_ > 0) {
    stepPosition_ += stepSize_;
    if (doLoop_ && stepPosition_ > loopTime_) stepPosition_ = 0.0;
    x = stepPosition_;
  } else {
    x = p->currTime;
    if (doLoop_ && loopTime_ > 0) x = std::fmod(x, loopTime_);
    stepPosition_ = x;
  }
  output_ = lookup(x);
  outputOut.send(e, output_);
}

void StimulusTable::reinit(const Eref& e, ProcPtr) {
  stepPosition_ = 0.0;
  output_ = lookup(0.0);
  outputOut.send(e, output_);
}

const Cinfo* StimulusTable::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<StimulusTable>("StimulusTable", "plays a vector of values as a stimulus")
          .value("vector", &StimulusTable::vec_, "the stimulus values")
          .readOnly("size", &StimulusTable::size, "number of values")
          .value("startTime", &StimulusTable::startTime_, "position of the first value")
          .value("stopTime", &StimulusTable::stopTime_, "position of the last value")
          .value("loopTime", &StimulusTable::loopTime_,
                 "with doLoop, the position returns to 0 once it exceeds loopTime")
          .value("stepSize", &StimulusTable::stepSize_,
                 "position increment per step (0: the position is the time)")
          .value("stepPosition", &StimulusTable::stepPosition_, "current position")
          .value("doLoop", &StimulusTable::doLoop_, "if true, the stimulus repeats (see loopTime)")
          .readOnly("outputValue", &StimulusTable::output_, "output of the last step")
          .src(StimulusTable::outputOut)
          .proc<&StimulusTable::process, &StimulusTable::reinit>()
          .defaultTick(0)  // MOOSE's default tick for StimulusTable
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = StimulusTable::initCinfo();
}

}  // namespace antler

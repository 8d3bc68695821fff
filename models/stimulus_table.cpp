#include "models/stimulus_table.hpp"

#include <cmath>

namespace antler {

double StimulusTable::lookup(double x) const {
  // MOOSE's TableBase::interpolate, step for step (so the same bits).
  const std::size_t n = vec_.size();
  if (n == 0) return 0.0;
  if (n == 1 || x < startTime_ || startTime_ >= stopTime_) return vec_.front();
  if (x > stopTime_) return vec_.back();
  const double xdivs = static_cast<double>(n - 1);
  const double fraction = (x - startTime_) / (stopTime_ - startTime_);
  if (!(fraction >= 0)) return vec_.front();  // (NaN too)
  const auto j = static_cast<std::size_t>(xdivs * fraction);
  if (j >= n - 1) return vec_.back();
  const double dx = (stopTime_ - startTime_) / xdivs;
  const double lowerBound = startTime_ + static_cast<double>(j) * dx;
  const double subFraction = (x - lowerBound) / dx;
  return vec_[j] + (vec_[j + 1] - vec_[j]) * subFraction;
}

void StimulusTable::process(const Eref& e, ProcPtr p) {
  if (stepSize_ > 0)
    stepPosition_ += stepSize_;
  else
    stepPosition_ = p->currTime;
  double x = stepPosition_;
  if (doLoop_ && loopTime_ > 0 && stepPosition_ > startTime_ + loopTime_)
    x = stepPosition_ - loopTime_ * std::floor((stepPosition_ - startTime_) / loopTime_);
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

#pragma once
/// StimulusTable: plays a vector of values as a stimulus (MOOSE's StimulusTable). It keeps a
/// position x; each step (as in MOOSE):
///   stepSize > 0:  x += stepSize            (the vector is read at its own pace)
///   stepSize == 0: x = t, the time at the end of the step
///   if doLoop and x > loopTime: x = 0       (the next step starts again from stepSize, or for
///                                            stepSize 0 the position is t modulo loopTime)
///   output = the vector read at x, sent on `output`.
/// The vector's N entries span [startTime, stopTime] evenly: entry i sits at
/// startTime + i * (stopTime - startTime) / (N - 1), and between two entries the value is
/// interpolated linearly (MOOSE's TableBase lookup); before startTime it is entry 0, after
/// stopTime entry N - 1. So with stepSize = 1, startTime = 0 and stopTime = N - 1, step n sends
/// entry n (one entry per step), and with stepSize = 1/k one entry per k steps, ramping between.
/// An empty vector outputs 0. reinit sets x = 0 and sends the value at 0.
#include <vector>

#include "core/class_builder.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class StimulusTable {
 public:
  /// Sends the value every step (and at reinit).
  inline static SrcFinfo<double> outputOut{"output", "sends the stimulus value every step"};
  /// Advances the position and sends the value there.
  void process(const Eref& e, ProcPtr p);
  /// Position 0; sends the value there.
  void reinit(const Eref& e, ProcPtr p);
  /// The vector read at position x (see the header comment).
  double lookup(double x) const;
  /// Number of entries.
  unsigned size() const { return static_cast<unsigned>(vec_.size()); }
  /// The class info of StimulusTable (registered at load time).
  static const Cinfo* initCinfo();

 private:
  std::vector<double> vec_;
  double startTime_ = 0.0;
  double stopTime_ = 0.0;
  double loopTime_ = 0.0;
  double stepSize_ = 0.0;
  double stepPosition_ = 0.0;
  double output_ = 0.0;
  bool doLoop_ = false;
};

}  // namespace antler

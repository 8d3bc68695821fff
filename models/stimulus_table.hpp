#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// StimulusTable: plays a vector of values as a stimulus (MOOSE 4's StimulusTable,
/// builtins/StimulusTable.cpp). It keeps a position x; each step:
///   stepSize > 0:  x += stepSize            (the vector is read at its own pace)
///   stepSize == 0: x = t, the time at the end of the step
///   the vector is read at x, or, if doLoop and x > startTime + loopTime (loopTime > 0), at
///   x - loopTime floor((x - startTime) / loopTime); the value is sent on `output`.
/// The vector's N entries span [startTime, stopTime] evenly: entry i sits at
/// startTime + i (stopTime - startTime) / (N - 1), and between two entries the value is
/// interpolated linearly with MOOSE's arithmetic (TableBase::interpolate); before startTime, or
/// when stopTime <= startTime, it is entry 0; after stopTime entry N - 1. So with stepSize = 1,
/// startTime = 0 and stopTime = N - 1, step n sends entry n, and with stepSize = 1/k one entry per
/// k steps, ramping between. An empty vector outputs 0. reinit sets x = 0 and sends the value
/// there.
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
#pragma GCC visibility pop

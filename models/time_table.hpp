#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// TimeTable: replays a vector of event times (MOOSE's TimeTable), e.g. recorded spike times.
/// Each step, with t the time at the end of the step, it sends eventOut(time) for every time in
/// the vector not yet sent with time <= t (allowing the step slack of models/step_time.hpp, so a
/// time meant to land on a step end, n * dt, goes out in step n even if it was written a few ulps
/// later). Times go out in vector order, each with its own value (not the step's time), as many
/// in one step as fall in it; `state` is 1 in a step that sent at least one event, else 0. Times
/// at or before 0 go out in the first step. reinit rewinds to the first time.
/// The vector must be sorted (non-decreasing) and free of NaN: setting one that is not is a
/// ValueError that names the first offending index, and the TimeTable keeps its old vector.
#include <string>
#include <vector>

#include "core/class_builder.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class TimeTable {
 public:
  /// Sends each event time in the step it falls in.
  inline static SrcFinfo<double> eventOut{"eventOut", "sends each event time in its step"};
  /// Sends the times due by the end of this step.
  void process(const Eref& e, ProcPtr p);
  /// Rewinds to the first time; state = 0.
  void reinit(const Eref& e, ProcPtr p);
  /// The event times.
  const std::vector<double>& vec() const { return vec_; }
  /// Sets the event times (sorted, no NaN) and rewinds.
  void setVec(const std::vector<double>& v);
  /// MOOSE's filename: reads the event times from a text file (every whitespace-separated number,
  /// up to the first that is not one) into the vector, with the vector's checks.
  const std::string& filename() const { return filename_; }
  void setFilename(const std::string& f);
  /// Number of event times.
  unsigned size() const { return static_cast<unsigned>(vec_.size()); }
  /// The class info of TimeTable (registered at load time).
  static const Cinfo* initCinfo();

 private:
  std::string filename_;
  std::vector<double> vec_;
  std::size_t next_ = 0;  // index of the next time to send
  double state_ = 0.0;
};

}  // namespace antler
#pragma GCC visibility pop

#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// PulseGen: MOOSE's pulse generator, a train of `count` pulses (2 by default). Pulse i has
/// level[i], width[i] and delay[i], its onset measured from the onset of pulse i-1 (from the
/// start of the period for i = 0); firstLevel/firstWidth/firstDelay and second... name the
/// entries 0 and 1. Every step, with t the time at the end of the step:
///
///   period = width[0] + delay[0], then for i = 1.. while width[i] > 0 or delay[i] > 0:
///            period += max(0, delay[i] + width[i] - width[i-1])
///   phase  = trigMode 0 (free run):     t mod period
///            trigMode 1 (external trigger): t - trigTime, where trigTime is the time of the
///                       last step whose input rose from 0 (phase = period before any trigger)
///            trigMode 2 (external gate):  (t - trigTime) mod period while input is not 0,
///                       period while it is 0
///   phase >= period: output = baseLevel, nothing is sent this step;
///   otherwise, for i = 0..: phase < delay[i] -> baseLevel; phase < delay[i] + width[i] ->
///            level[i]; else phase -= delay[i] and on to the next pulse (past the last one the
///            output keeps its value); the output is sent on `output`.
/// `input` sets the trigger/gate input, as MOOSE stores it: truncated to an integer (0.5 is 0).
/// reinit: trigTime = -1, input = 0, output = baseLevel, sent. Default tick 0.
/// These are MOOSE 4.1's rules (device/PulseGen.cpp), checked against it (tests/python).
#include <string>
#include <vector>

#include "core/class_builder.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class PulseGen {
 public:
  /// Sends the output level every step (and at reinit).
  inline static SrcFinfo<double> outputOut{"output", "sends the output level every step"};
  void process(const Eref& e, ProcPtr p);
  void reinit(const Eref& e, ProcPtr p);
  unsigned trigMode() const { return trigMode_; }
  /// 0 free run, 1 external trigger, 2 external gate; anything else is a ValueError.
  void setTrigMode(unsigned mode);
  /// Number of pulses; setting it keeps the first entries, new ones are 0 (0 is refused).
  unsigned count() const { return static_cast<unsigned>(level_.size()); }
  void setCount(unsigned n);
  double level(unsigned i) const { return at(level_, i, "level"); }
  void setLevel(unsigned i, double v) { at(level_, i, "level") = v; }
  double width(unsigned i) const { return at(width_, i, "width"); }
  void setWidth(unsigned i, double v);
  double delay(unsigned i) const { return at(delay_, i, "delay"); }
  void setDelay(unsigned i, double v);
  /// The trigger or gate input (MOOSE keeps it as an integer).
  void input(double v);
  // first*/second*: entries 0 and 1 (a second* read with one pulse is 0, as in MOOSE).
  double firstLevel() const { return level_[0]; }
  void setFirstLevel(double v) { level_[0] = v; }
  double firstWidth() const { return width_[0]; }
  void setFirstWidth(double v) { setWidth(0, v); }
  double firstDelay() const { return delay_[0]; }
  void setFirstDelay(double v) { setDelay(0, v); }
  double secondLevel() const { return count() > 1 ? level_[1] : 0.0; }
  void setSecondLevel(double v) { setLevel(1, v); }
  double secondWidth() const { return count() > 1 ? width_[1] : 0.0; }
  void setSecondWidth(double v) { setWidth(1, v); }
  double secondDelay() const { return count() > 1 ? delay_[1] : 0.0; }
  void setSecondDelay(double v) { setDelay(1, v); }
  void levelIn(unsigned i, double v) { setLevel(i, v); }
  void widthIn(unsigned i, double v) { setWidth(i, v); }
  void delayIn(unsigned i, double v) { setDelay(i, v); }
  static const Cinfo* initCinfo();

 private:
  template <class V>
  static auto at(V& v, unsigned i, const char* field) -> decltype(v[0]) {
    if (i >= v.size())
      throw IndexError("PulseGen." + std::string(field) + "[" + std::to_string(i) +
                       "]: index out of range (count is " + std::to_string(v.size()) +
                       "; set count for more pulses)");
    return v[i];
  }
  std::vector<double> level_ = std::vector<double>(2, 0.0);
  std::vector<double> width_ = std::vector<double>(2, 0.0);
  std::vector<double> delay_ = std::vector<double>(2, 0.0);
  double baseLevel_ = 0.0;
  double output_ = 0.0;
  double trigTime_ = -1.0;
  long long input_ = 0, prevInput_ = 0;
  unsigned trigMode_ = 0;
};

}  // namespace antler
#pragma GCC visibility pop

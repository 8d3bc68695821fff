#include "models/time_table.hpp"

#include <cmath>
#include <fstream>
#include <string>

#include "models/step_time.hpp"

namespace antler {

void TimeTable::process(const Eref& e, ProcPtr p) {
  state_ = 0.0;
  const double due = p->currTime + detail::step_slack(p->dt);
  while (next_ < vec_.size() && vec_[next_] <= due) {
    eventOut.send(e, vec_[next_]);
    ++next_;
    state_ = 1.0;
  }
}

void TimeTable::reinit(const Eref&, ProcPtr) {
  next_ = 0;
  state_ = 0.0;
}

void TimeTable::setFilename(const std::string& f) {
  std::ifstream in(f);
  if (!in) throw ValueError("TimeTable.filename: cannot read '" + f + "'");
  std::vector<double> v;
  double x;
  while (in >> x) v.push_back(x);
  setVec(v);  // (the times must be sorted: the old vector stays if not)
  filename_ = f;
}

void TimeTable::setVec(const std::vector<double>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i]))
      throw ValueError("TimeTable.vector: entry " + std::to_string(i) +
                       " is NaN (event times must be numbers, sorted in non-decreasing order)");
    if (i > 0 && v[i] < v[i - 1])
      throw ValueError(
          "TimeTable.vector: times must be sorted in non-decreasing order, but entry " +
          std::to_string(i) + " (" + format_double(v[i]) + ") < entry " + std::to_string(i - 1) +
          " (" + format_double(v[i - 1]) + "); sort them first (e.g. numpy.sort)");
  }
  vec_ = v;
  next_ = 0;
}

const Cinfo* TimeTable::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<TimeTable>("TimeTable", "replays a sorted vector of event times as eventOut")
          .value("filename", &TimeTable::filename, &TimeTable::setFilename,
                 "a text file of event times to read into the vector (MOOSE's)")
          .value("vector", &TimeTable::vec, &TimeTable::setVec,
                 "the event times, sorted (non-decreasing); setting rewinds")
          .readOnly("size", &TimeTable::size, "number of event times")
          .readOnly("state", &TimeTable::state_, "1 if the last step sent an event, else 0")
          .src(TimeTable::eventOut)
          .proc<&TimeTable::process, &TimeTable::reinit>()
          .defaultTick(8)  // MOOSE's default tick for TimeTable
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = TimeTable::initCinfo();
}

}  // namespace antler

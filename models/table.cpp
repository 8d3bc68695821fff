#include "models/table.hpp"

#include <fstream>

namespace antler {

void Table::digest(const Eref&, const ReduceLast<double>* r) {
  if (r->has()) vec_.push_back(r->value());
}

void Table::reinit(const Eref& e, ProcPtr) {
  vec_.clear();
  lastTime_ = 0.0;
  fired_ = false;
  requestOut.send(e);
}

void Table::spike(double v) {
  if (!fired_ && v > threshold_) {
    fired_ = true;
    vec_.push_back(lastTime_);
  } else if (fired_ && v < threshold_) {
    fired_ = false;
  }
}

void Table::plainPlot(const std::string& fname) {
  std::ofstream out(fname, std::ios::out | std::ios::trunc);
  if (!out) throw ValueError("Table.plainPlot: cannot write '" + fname + "'");
  out.precision(18);
  out.setf(std::ios::scientific, std::ios::floatfield);
  for (double x : vec_) out << x << '\n';
  out << '\n';
  if (!out) throw ValueError("Table.plainPlot: writing '" + fname + "' failed");
}

const Cinfo* Table::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Table>("Table", "records a value every step")
          .value("vector", &Table::vector, &Table::setVector, "the recorded values")
          .value("threshold", &Table::threshold_, "level a value sent to `spike` must rise above")
          .readOnly("size", &Table::size, "number of recorded values")
          .dest<&Table::input>("input", "appends a value")
          .dest<&Table::clearVec>("clearVec", "empties the vector")
          .dest<&Table::spike>("spike", "records the time when the value rises above threshold")
          .dest<&Table::plainPlot>("plainPlot", "writes the values to a file, one per line")
          .reduce(Table::requestOut)
          .proc<&Table::process, &Table::reinit>()
          .defaultTick(8)  // MOOSE's default tick for Table
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = Table::initCinfo();
}

}  // namespace antler

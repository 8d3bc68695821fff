#include "models/stats.hpp"

#include <algorithm>
#include <limits>

namespace antler {

void Stats::digest(const Eref&, const ReduceStats* r) {
  // Keeps the exact partial; its moments are rounded when first read (ReduceStats caches them).
  last_ = *r;
  reduced_ = true;
}

double Stats::mean() const {
  return reduced_ ? last_.mean() : mean_;
}
double Stats::sdev() const {
  return reduced_ ? last_.sdev() : sdev_;
}
double Stats::sum() const {
  return reduced_ ? last_.sum() : sum_;
}
double Stats::min() const {
  return reduced_ ? last_.min() : min_;
}
double Stats::max() const {
  return reduced_ ? last_.max() : max_;
}
unsigned Stats::num() const {
  return reduced_ ? static_cast<unsigned>(last_.count()) : num_;
}

void Stats::gathered(const Eref&, const ReduceGather<double>* r) {
  for (double v : r->values()) input(v);
}

void Stats::input(double v) {
  reduced_ = false;
  min_ = run_.num ? std::min(min_, v) : v;
  max_ = run_.num ? std::max(max_, v) : v;
  run_.input(v);
  mean_ = run_.mean();
  sdev_ = run_.sdev();
  sum_ = run_.sum;
  num_ = static_cast<unsigned>(run_.num);
}

void Stats::process(const Eref& e, ProcPtr) {
  reduce.send(e);
  requestOut.send(e);
}

void Stats::reinit(const Eref& e, ProcPtr) {
  // MOOSE's running statistics start afresh (no value is taken at reinit); antler's population
  // statistics are taken at reinit too, so that they hold from the start.
  run_.reinit();
  mean_ = sdev_ = sum_ = min_ = max_ = 0.0;
  num_ = 0;
  reduced_ = false;
  reduce.send(e);
}

const Cinfo* Stats::initCinfo() {
  static const Cinfo* c = [] {
    ClassBuilder<Stats> b("Stats",
                          "statistics of a field: over a population each step (reduce), or over "
                          "every value sent in (input, requestOut: MOOSE's)");
    b.readOnly("mean", &Stats::mean, "mean (NaN for an empty reduction)")
        .readOnly("sdev", &Stats::sdev, "population standard deviation")
        .readOnly("sum", &Stats::sum, "sum of the values")
        .readOnly("num", &Stats::num, "number of values")
        .readOnly("min", &Stats::min, "smallest value")
        .readOnly("max", &Stats::max, "largest value");
    return add_window_fields(b, "values")
        .dest<&Stats::input>("input", "one value into the running statistics (MOOSE's)")
        .reduce(Stats::reduce)
        .reduce(Stats::requestOut)
        .proc<&Stats::process, &Stats::reinit>()
        .defaultTick(17)  // MOOSE's default tick for Stats
        .build();
  }();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = Stats::initCinfo();
}

}  // namespace antler

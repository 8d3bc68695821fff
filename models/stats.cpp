#include "models/stats.hpp"

namespace antler {

void Stats::digest(const Eref&, const ReduceStats* r) {
  mean_ = r->mean();
  sdev_ = r->sdev();
  sum_ = r->sum();
  min_ = r->min();
  max_ = r->max();
  num_ = static_cast<unsigned>(r->count());
}

const Cinfo* Stats::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Stats>("Stats", "statistics of a field over a population")
          .readOnly("mean", &Stats::mean_, "mean of the last reduction (NaN if num is 0)")
          .readOnly("sdev", &Stats::sdev_, "population standard deviation (NaN if num is 0)")
          .readOnly("sum", &Stats::sum_, "sum of the values")
          .readOnly("num", &Stats::num_, "number of values reduced")
          .readOnly("min", &Stats::min_, "smallest value (NaN if num is 0)")
          .readOnly("max", &Stats::max_, "largest value (NaN if num is 0)")
          .reduce(Stats::reduce)
          .proc<&Stats::process, &Stats::reinit>()
          .defaultTick(17)  // MOOSE's default tick for Stats
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = Stats::initCinfo();
}

}  // namespace antler

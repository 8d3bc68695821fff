#pragma once
/// Stats: statistics of a field over a population. Connect its `reduce` field to any 'get' field
/// (`addMsg("Reduce", stats, "reduce", neurons, "getVm")`); when scheduled it asks for a reduction
/// every step, so its fields hold the statistics of the current step (of the values as the
/// targets' process left them). With no values, num is 0 and mean, sdev, min and max are NaN.
#include "core/class_builder.hpp"
#include "reduce/reduce_finfo.hpp"
#include "reduce/reduce_stats.hpp"

namespace antler {

class Stats {
 public:
  /// Stores the result of a reduction (declared before `reduce`, which names it).
  void digest(const Eref& e, const ReduceStats* r);
  inline static ReduceFinfo<Stats, double, ReduceStats> reduce{
      "reduce", &Stats::digest, "connect to any 'get' field (Reduce message)"};
  void process(const Eref& e, ProcPtr) { reduce.send(e); }
  void reinit(const Eref& e, ProcPtr) { reduce.send(e); }
  static const Cinfo* initCinfo();

 private:
  double mean_ = 0, sdev_ = 0, sum_ = 0, min_ = 0, max_ = 0;
  unsigned num_ = 0;
};

}  // namespace antler

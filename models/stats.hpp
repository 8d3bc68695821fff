#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Stats: statistics of a field, two ways.
///
/// antler's: the statistics of a population at each step. Connect the `reduce` field to any 'get'
/// field (`addMsg("Reduce", stats, "reduce", neurons, "getVm")`); when scheduled it asks for a
/// reduction every step, so mean, sdev, sum, num, min and max are those of the values as the
/// targets' process left them in the current step. With no values, num is 0 and mean, sdev, min
/// and max are NaN. The digest keeps the reduction's exact sums; mean, sdev and sum are rounded
/// from them when first read (reduce/reduce_stats.hpp), so a step whose statistics nobody reads
/// does not pay for them (a Stats is read by one thread at a time: each phase of a step gives an
/// object to one thread).
///
/// MOOSE's: running statistics of every value sent in. Values come one by one to `input`, or
/// from `requestOut` (connected to 'get' fields: each step it takes each target's value, in index
/// order); mean, sdev, sum and num then cover every value since reinit (models/running_stats.hpp),
/// min and max too, and wmean, wsdev, wsum, wnum the last `windowLength` values. A Stats whose
/// `reduce` field is connected is antler's; otherwise MOOSE's (use one way per Stats: both write
/// the same fields).
#include "core/class_builder.hpp"
#include "models/reduce_gather.hpp"
#include "models/running_stats.hpp"
#include "reduce/reduce_finfo.hpp"
#include "reduce/reduce_stats.hpp"

namespace antler {

class Stats {
 public:
  /// Stores the result of a reduction (declared before `reduce`, which names it).
  void digest(const Eref& e, const ReduceStats* r);
  inline static ReduceFinfo<Stats, double, ReduceStats> reduce{
      "reduce", &Stats::digest, "connect to any 'get' field (Reduce message)"};
  /// Feeds the values requestOut gathered, in order, to input.
  void gathered(const Eref& e, const ReduceGather<double>* r);
  inline static ReduceFinfo<Stats, double, ReduceGather<double>> requestOut{
      "requestOut", &Stats::gathered,
      "MOOSE's: takes each target's value every step (Reduce or Single message to a 'get' field)"};
  void process(const Eref& e, ProcPtr p);
  void reinit(const Eref& e, ProcPtr p);
  /// One value into the running statistics (MOOSE's input).
  void input(double v);
  unsigned windowLength() const { return run_.windowLength(); }
  void setWindowLength(unsigned n) { run_.setWindowLength(n, "Stats"); }
  /// The statistics: the last reduction's (rounded from its exact sums when first read), or
  /// MOOSE's running ones.
  double mean() const;
  double sdev() const;
  double sum() const;
  double min() const;
  double max() const;
  unsigned num() const;
  double wmean() const { return run_.wmean(); }
  double wsdev() const { return run_.wsdev(); }
  double wsum() const { return run_.wsum(); }
  unsigned wnum() const { return run_.wnum(); }
  static const Cinfo* initCinfo();

 protected:
  double mean_ = 0, sdev_ = 0, sum_ = 0, min_ = 0, max_ = 0;  // MOOSE's running statistics
  unsigned num_ = 0;
  RunningStats run_;
  ReduceStats last_;      // the last reduction's partial, whole
  bool reduced_ = false;  // the fields read last_ (else MOOSE's)
};

}  // namespace antler
#pragma GCC visibility pop

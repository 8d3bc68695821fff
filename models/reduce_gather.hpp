#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ReduceGather<F>: a reduce class that carries every value, in serial order (global index order:
/// threads in order, then nodes in order), as MOOSE's requestOut gives a Stats its targets'
/// values one by one.
#include <boost/serialization/vector.hpp>
#include <vector>

namespace antler {

template <class F>
class ReduceGather {
 public:
  void primaryReduce(const F& v) { values_.push_back(v); }
  /// Appends o's values (o comes later in serial order).
  void secondaryReduce(const ReduceGather& o) {
    values_.insert(values_.end(), o.values_.begin(), o.values_.end());
  }
  void tertiaryReduce(const ReduceGather& o) { secondaryReduce(o); }
  const std::vector<F>& values() const { return values_; }
  void clear() { values_.clear(); }
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& values_;
  }

 private:
  std::vector<F> values_;
};

}  // namespace antler
#pragma GCC visibility pop

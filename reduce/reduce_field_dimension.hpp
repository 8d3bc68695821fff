#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ReduceFieldDimension: the largest number of entries any parent holds in an array field (e.g.
/// the most synapses of any IntFire), used by Shell::doSyncDataHandler.
#include <algorithm>

#include "core/fwd.hpp"

namespace antler {

class ReduceFieldDimension {
 public:
  void primaryReduce(Index numEntries) { max_ = std::max(max_, numEntries); }
  void secondaryReduce(const ReduceFieldDimension& o) { max_ = std::max(max_, o.max_); }
  void tertiaryReduce(const ReduceFieldDimension& o) { secondaryReduce(o); }
  /// The largest count seen (0 if none).
  Index maxIndex() const { return max_; }
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& max_;
  }

 private:
  Index max_ = 0;
};

}  // namespace antler
#pragma GCC visibility pop

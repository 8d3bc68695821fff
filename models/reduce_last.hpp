#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ReduceLast<F>: a reduce class that carries one value, the last one folded in serial order
/// (global index order: threads in order, then nodes in order). Over a Single message it carries
/// the value of the one target: that is how a Table pulls a field.
#include <cstdint>

namespace antler {

/// The last value folded (and whether there was any).
template <class F>
class ReduceLast {
 public:
  /// Keeps v (the later value wins).
  void primaryReduce(const F& v) {
    v_ = v;
    any_ = true;
  }
  /// Takes o's value if it has one (o comes later in serial order).
  void secondaryReduce(const ReduceLast& o) {
    if (o.any_) {
      v_ = o.v_;
      any_ = true;
    }
  }
  /// As secondaryReduce, across nodes.
  void tertiaryReduce(const ReduceLast& o) { secondaryReduce(o); }
  /// True if any value was folded.
  bool has() const { return any_; }
  /// The last value (F{} if none).
  const F& value() const { return v_; }
  /// Boost.Serialization.
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& v_& any_;
  }

 private:
  F v_{};
  bool any_ = false;
};

}  // namespace antler
#pragma GCC visibility pop

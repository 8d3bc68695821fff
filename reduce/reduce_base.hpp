#pragma once
/// What a reduce class is, and the type-erased reduction job the reduce queue runs.
///
/// A reduce class R is any default-constructible class (a default-constructed R is the identity)
/// with three folds and a Boost.Serialization `serialize` member:
///
///   void primaryReduce(const F& value);            // or (const F& value, const ObjId& where)
///   void secondaryReduce(const R& other);          // across the threads of a node
///   void tertiaryReduce(const R& other);           // across nodes
///   template <class Ar> void serialize(Ar& ar, unsigned version);
///
/// Optionally `void primaryReduceBlock(const F* values, std::size_t n)` folds a block of values at
/// once (the built-in classes use it to keep the hot loop vectorisable).
#include <concepts>
#include <cstdint>
#include <vector>

#include "core/buffer.hpp"
#include "core/id.hpp"

namespace antler {

/// A reduce class for values of type F.
template <class R, class F>
concept ReduceClass = std::default_initializable<R> && std::copy_constructible<R> &&(
                          requires(R r, const F& v) { r.primaryReduce(v); } ||
                          requires(R r, const F& v, const ObjId& o) { r.primaryReduce(v, o); }) &&
                      requires(R r, const R& o) {
  r.secondaryReduce(o);
  r.tertiaryReduce(o);
};

/// One reduction in flight: one partial per thread, the folds, and the digest.
class ReduceBase {
 public:
  virtual ~ReduceBase() = default;
  /// Reduction id: the same on every node (the ReduceMsg id, or a Shell command's own id).
  virtual std::uint64_t id() const = 0;
  /// Sizes the partials for T threads and resets them to the identity.
  virtual void reset(unsigned T) = 0;
  /// Resets thread t's partial, then runs primaryReduce over the targets in thread t's slice
  /// (runs on thread t; reset(T) must have sized the partials).
  virtual void primary(unsigned t, unsigned T) = 0;
  /// Folds thread partials 1..T-1 into partial 0, in thread order.
  virtual void secondary() = 0;
  /// Appends partial 0, serialized.
  virtual void save(Writer& w) const = 0;
  /// Sets the result to the fold, in node order, of every node's serialized partial (the readers
  /// are consumed).
  virtual void tertiary(std::vector<Reader>& nodes) = 0;
  /// Sets the result to partial 0 (single node).
  virtual void finishLocal() = 0;
  /// Calls the digest on the requesting object wherever it lives on this node.
  virtual void digest() = 0;
};

}  // namespace antler

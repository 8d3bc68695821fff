#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Id names an Element; ObjId names one object (or one field entry) of it.
#include <cstdint>
#include <functional>

#include "core/fwd.hpp"

namespace antler {

/// Names an Element of one simulation. Ids are handed out in creation order, identically on every
/// node (every node executes the same commands in the same order), so an Id means the same thing
/// everywhere; the simulation's ElementTable resolves it (get, path).
struct Id {
  std::uint32_t value = 0;
  constexpr Id() = default;
  constexpr explicit Id(std::uint32_t v) : value(v) {}
  /// The root element "/".
  static constexpr Id root() { return Id(0); }
  friend constexpr bool operator==(Id a, Id b) { return a.value == b.value; }
  friend constexpr auto operator<=>(Id a, Id b) { return a.value <=> b.value; }
};

/// One object: Element, data index and (for a FieldElement) field index.
struct ObjId {
  Id id;
  Index dataIndex = 0;
  Index fieldIndex = 0;
  constexpr ObjId() = default;
  constexpr ObjId(Id i, Index d = 0, Index f = 0) : id(i), dataIndex(d), fieldIndex(f) {}
  friend constexpr bool operator==(const ObjId&, const ObjId&) = default;
  friend constexpr auto operator<=>(const ObjId&, const ObjId&) = default;
};

/// One message target: a data index and a field index on the destination Element.
struct Target {
  Index data = 0;
  Index field = 0;
  friend constexpr bool operator==(const Target&, const Target&) = default;
};

}  // namespace antler

template <>
struct std::hash<antler::Id> {
  std::size_t operator()(antler::Id i) const noexcept { return i.value; }
};
#pragma GCC visibility pop

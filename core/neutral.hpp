#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Neutral: the base class of every class. Its objects hold no data; its fields describe the
/// Element (name, path, className, numData, parent, children).
#include "core/cinfo.hpp"

namespace antler {

/// The base of all classes; also the class of plain containers such as "/model".
class Neutral {
 public:
  static const Cinfo* initCinfo();
};

}  // namespace antler
#pragma GCC visibility pop

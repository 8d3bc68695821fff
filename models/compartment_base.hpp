#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// CompartmentBase: what every compartment class has besides its electrical model (MOOSE's
/// CompartmentBase): its geometry. diameter and length, and the coordinates of its two ends
/// (x0, y0, z0) and (x, y, z); setting an end sets length to the distance between the ends, and
/// setting length moves the far end along the axis when length matched the ends (MOOSE's rules).
/// `coords` is [x0, y0, z0, x, y, z, diameter]. The geometry does not change Rm, Cm or Ra (it is
/// what a model builder or a file writer reads). Compartment and LIF derive from it, so that
/// wildcards with [ISA=CompartmentBase] find them, as in MOOSE.
#include <vector>

#include "core/class_builder.hpp"

namespace antler {

class CompartmentBase {
 public:
  double length() const { return length_; }
  void setLength(double v);
  std::vector<double> coords() const { return {x0_, y0_, z0_, x_, y_, z_, diameter_}; }
  void setCoords(std::vector<double> v);
  static const Cinfo* initCinfo();

 protected:
  double diameter_ = 0.0, length_ = 0.0;
  double x0_ = 0.0, y0_ = 0.0, z0_ = 0.0, x_ = 0.0, y_ = 0.0, z_ = 0.0;
  void updateLength();
};

}  // namespace antler
#pragma GCC visibility pop

#include "models/compartment_base.hpp"

#include <cmath>
#include <string>

#include "models/moose_eq.hpp"

namespace antler {

namespace {
using detail::moose_eq;

double finite(const char* field, double v) {
  if (!std::isfinite(v))
    throw ValueError(std::string("CompartmentBase.") + field + " must be finite, got " +
                     std::to_string(v));
  return v;
}
}  // namespace

void CompartmentBase::updateLength() {
  length_ = std::sqrt((x_ - x0_) * (x_ - x0_) + (y_ - y0_) * (y_ - y0_) + (z_ - z0_) * (z_ - z0_));
}

void CompartmentBase::setLength(double v) {
  if (!(v >= 0) || !std::isfinite(v))
    throw ValueError("CompartmentBase.length must be a finite number >= 0, got " +
                     std::to_string(v));
  // When the length matched the ends, the far end moves with it (MOOSE's rule).
  const double dx = x_ - x0_, dy = y_ - y0_, dz = z_ - z0_;
  if (v > 0 && length_ > 0 && moose_eq(length_ * length_, dx * dx + dy * dy + dz * dz)) {
    const double ratio = v / length_;
    x_ = x0_ + ratio * dx;
    y_ = y0_ + ratio * dy;
    z_ = z0_ + ratio * dz;
  }
  length_ = v;
}

void CompartmentBase::setCoords(std::vector<double> v) {
  if (v.size() != 7)
    throw ValueError(
        "CompartmentBase.coords: needs 7 numbers [x0, y0, z0, x, y, z, diameter], got " +
        std::to_string(v.size()));
  for (double x : v) finite("coords", x);
  x0_ = v[0], y0_ = v[1], z0_ = v[2], x_ = v[3], y_ = v[4], z_ = v[5], diameter_ = v[6];
  updateLength();
}

const Cinfo* CompartmentBase::initCinfo() {
  // The coordinates: set, then the length follows (MOOSE's updateLength).
  auto coord = [](double CompartmentBase::*m, const char* name) {
    return std::make_pair([m](const CompartmentBase& o) { return o.*m; },
                          [m, name](CompartmentBase& o, const double& v) {
                            o.*m = finite(name, v);
                            o.updateLength();
                          });
  };
  static const Cinfo* c = [&] {
    ClassBuilder<CompartmentBase> b("CompartmentBase",
                                    "a compartment's geometry (the base of Compartment and LIF)");
    b.valueFn<double>(
        "diameter", [](const CompartmentBase& o) { return o.diameter_; },
        [](CompartmentBase& o, const double& v) {
          if (!(v >= 0) || !std::isfinite(v))
            throw ValueError("CompartmentBase.diameter must be a finite number >= 0, got " +
                             std::to_string(v));
          o.diameter_ = v;
        },
        "diameter");
    b.value("length", &CompartmentBase::length, &CompartmentBase::setLength,
            "length (setting it moves the far end along the axis)");
    for (auto [m, name] : {std::pair{&CompartmentBase::x0_, "x0"},
                           {&CompartmentBase::y0_, "y0"},
                           {&CompartmentBase::z0_, "z0"},
                           {&CompartmentBase::x_, "x"},
                           {&CompartmentBase::y_, "y"},
                           {&CompartmentBase::z_, "z"}}) {
      auto [get, set] = coord(m, name);
      b.valueFn<double>(name, get, set,
                        std::string("coordinate ") + name + " (the length follows the ends)");
    }
    return b
        .value("coords", &CompartmentBase::coords, &CompartmentBase::setCoords,
               "[x0, y0, z0, x, y, z, diameter]")
        .build();
  }();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = CompartmentBase::initCinfo();
}

}  // namespace antler

#pragma once
// A fixture: each test starts and ends with an empty model and default threads.
#include <cmath>

#include "shell/clock.hpp"
#include "shell/field.hpp"
#include "shell/shell.hpp"
#include "tests/support/runtime.hpp"

namespace antler::test {

struct Model {
  Simulation& sim = runtime().simulation();
  Shell& s = sim.shell();
  Model() { s.clearModel(); }
  ~Model() {
    try {
      s.clearModel();
      s.setNumThreads(1);
    } catch (...) {
    }
  }
};

/// Makes the RandSpike(s) at src fire at steps 1, 1 + every, 1 + 2 every, ... (a probability >= 1
/// per step, and a refractory period of `every` steps).
inline void regular_spikes(Shell& s, ObjId src, long every, double dt) {
  Field<double>::setAll(s, src.id, "rate", 2.0 / dt);
  Field<double>::setAll(s, src.id, "refractT", static_cast<double>(every) * dt);
}

/// Makes dt the clock's base dt (MOOSE's /clock.baseDt; each tick keeps its step count), so that
/// a tick set to dt afterwards runs in steps of exactly dt: a dt that is not a whole number of
/// the default base (50 us), such as 1/1024, would otherwise be rounded to one (MOOSE's rule).
inline void set_base_dt(Shell& s, double dt) {
  Field<double>::set(s, s.find("/clock"), "baseDt", dt);
}

/// The time the clock gives the end of step n of a tick of dt (MOOSE's: base dt x base steps,
/// with the tick's dt a whole number of base steps; see shell/clock.hpp). For dt = 1e-3 it is
/// not always n * 1e-3 in its last bit.
inline double step_time(long n, double dt) {
  const double base = Clock::kDefaultBaseDt <= dt ? Clock::kDefaultBaseDt : dt;
  return base * static_cast<double>(std::llround(dt / base) * n);
}

}  // namespace antler::test

namespace antler::test {

/// The Element an Id or ObjId names in the test program's simulation (nullptr if none).
inline Element* element(Id id) {
  return runtime().simulation().elements().get(id);
}
inline Element* element(const ObjId& o) {
  return element(o.id);
}
/// The path of an Id or ObjId in the test program's simulation.
inline std::string path(Id id) {
  return runtime().simulation().elements().path(id);
}
inline std::string path(const ObjId& o) {
  return runtime().simulation().elements().path(o);
}

}  // namespace antler::test

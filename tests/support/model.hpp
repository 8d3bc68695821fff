#pragma once
// A fixture: each test starts and ends with an empty model and default threads.
#include "shell/field.hpp"
#include "shell/shell.hpp"

namespace antler::test {

struct Model {
  Shell& s = Shell::instance();
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
inline void regular_spikes(ObjId src, long every, double dt) {
  Field<double>::setAll(src.id, "rate", 2.0 / dt);
  Field<double>::setAll(src.id, "refractT", static_cast<double>(every) * dt);
}

}  // namespace antler::test

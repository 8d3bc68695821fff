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

}  // namespace antler::test

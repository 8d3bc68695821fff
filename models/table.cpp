#include "models/table.hpp"

namespace antler {

void Table::digest(const Eref&, const ReduceLast<double>* r) {
  if (r->has()) vec_.push_back(r->value());
}

void Table::reinit(const Eref& e, ProcPtr) {
  vec_.clear();
  requestOut.send(e);
}

const Cinfo* Table::initCinfo() {
  static const Cinfo* c = ClassBuilder<Table>("Table", "records a value every step")
                              .readOnly("vector", &Table::vec_, "the recorded values")
                              .readOnly("size", &Table::size, "number of recorded values")
                              .dest<&Table::input>("input", "appends a value")
                              .dest<&Table::clearVec>("clearVec", "empties the vector")
                              .reduce(Table::requestOut)
                              .proc<&Table::process, &Table::reinit>()
                              .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = Table::initCinfo();
}

}  // namespace antler

// Table: pulls a Compartment's Vm every step through a Single message from its reduce field
// (compared with the closed-form solution), takes pushed values on `input`, and clears on reinit.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

TEST_CASE("Table records a Compartment's Vm every step, equal to the closed form") {
  Model m;
  Shell& s = m.s;
  const Index n = 6;
  const double Rm = 1e8, Cm = 1e-10, Em = -0.07, inject = 1e-10, V0 = -0.065, dt = 5e-5;
  const ObjId comp = m.s.create("Compartment", "/comp", n);
  const ObjId tab = m.s.create("Table", "/tab");
  Field<double>::setAll(s, comp.id, "Rm", Rm);
  Field<double>::setAll(s, comp.id, "Cm", Cm);
  Field<double>::setAll(s, comp.id, "Em", Em);
  Field<double>::setAll(s, comp.id, "initVm", V0);
  Field<double>::set(s, ObjId(comp.id, 3), "inject", inject);  // only the recorded one is driven
  m.s.addMsg("Single", tab, "requestOut", ObjId(comp.id, 3), "getVm");
  m.s.setClock(0, dt);
  m.s.useClock(0, "/tab");  // scheduled before the compartments: it still records this step's Vm
  m.s.useClock(0, "/comp");
  const int steps = 200;
  const double vinf = Em + inject * Rm;
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    CHECK(Field<unsigned>::get(s, tab, "size") == 1u);  // reinit records the initial value
    m.s.start(steps * dt);
    const auto v = Field<std::vector<double>>::get(s, tab, "vector");
    CHECK(Field<unsigned>::get(s, tab, "size") == static_cast<unsigned>(steps + 1));
    REQUIRE(v.size() == static_cast<std::size_t>(steps + 1));
    for (int k = 0; k <= steps; ++k) {
      const double want = vinf + (V0 - vinf) * std::exp(-k * dt / (Rm * Cm));
      CAPTURE(k);
      CHECK(std::abs(v[k] - want) <= 1e-12 * std::abs(want));
    }
  }
}

TEST_CASE(
    "Table input appends, clearVec and reinit empty it, a Reduce request keeps the last value") {
  Model m;
  Shell& s = m.s;
  const ObjId tab = m.s.create("Table", "/tab");
  SetGet::call(s, tab, "input", 1.5);
  SetGet::call(s, tab, "input", -2.0);
  CHECK(Field<std::vector<double>>::get(s, tab, "vector") == std::vector<double>{1.5, -2.0});
  SetGet::call(s, tab, "clearVec");
  CHECK(Field<unsigned>::get(s, tab, "size") == 0u);
  SetGet::call(s, tab, "input", 3.0);
  m.s.setClock(0, 1.0);
  m.s.useClock(0, "/tab");
  m.s.reinit();  // no requestOut message: nothing pulled
  CHECK(Field<unsigned>::get(s, tab, "size") == 0u);

  // Over a Reduce message to several objects, the value is the last in index order.
  const ObjId comp = m.s.create("Compartment", "/comp", 5);
  const ObjId last = m.s.create("Table", "/last");
  std::vector<double> vm{0.1, 0.2, 0.3, 0.4, 0.5};
  Field<double>::setVec(s, comp.id, "Vm", vm);
  m.s.addMsg("Reduce", last, "requestOut", comp, "getVm");
  m.s.reduceNow(last, "requestOut");
  CHECK(Field<std::vector<double>>::get(s, last, "vector") == std::vector<double>{0.5});
}

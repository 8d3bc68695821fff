// Compartment against the closed-form solution of Cm dV/dt = (Em - V)/Rm + I for constant I:
//   V(t) = Em + I Rm + (V0 - Em - I Rm) exp(-t / (Rm Cm)),
// which exponential Euler reproduces exactly (up to rounding).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

struct Params {
  double Rm, Cm, Em, inject, initVm;
};

double closed_form(const Params& p, double I, double t) {
  const double vinf = p.Em + I * p.Rm;
  return vinf + (p.initVm - vinf) * std::exp(-t / (p.Rm * p.Cm));
}

void check_rel(double got, double want) {
  CAPTURE(got);
  CAPTURE(want);
  CHECK(std::abs(got - want) <= 1e-12 * std::abs(want));
}

Params params(Index i) {
  const double d = static_cast<double>(i);
  return {1e9 * (1 + 0.1 * d), 1e-11 * (1 + 0.05 * d), -0.065 + 0.001 * d, 2e-11 * (d - 3),
          -0.07 + 0.002 * d};
}

}  // namespace

TEST_CASE("Compartment Vm equals the closed-form solution for a constant inject") {
  Model m;
  Shell& s = m.s;
  const Index n = 7;
  const ObjId comp = m.s.create("Compartment", "/comp", n);
  std::vector<Params> p(n);
  for (Index i = 0; i < n; ++i) {
    p[i] = params(i);
    const ObjId c(comp.id, i);
    Field<double>::set(s, c, "Rm", p[i].Rm);
    Field<double>::set(s, c, "Cm", p[i].Cm);
    Field<double>::set(s, c, "Em", p[i].Em);
    Field<double>::set(s, c, "inject", p[i].inject);
    Field<double>::set(s, c, "initVm", p[i].initVm);
  }
  const double dt = 1e-4;
  m.s.setClock(0, dt);
  m.s.useClock(0, "/comp");
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    for (Index i = 0; i < n; ++i)
      CHECK(Field<double>::get(s, ObjId(comp.id, i), "Vm") == p[i].initVm);
    int done = 0;
    for (int steps : {1, 9, 90, 400}) {  // to 1, 10, 100 and 500 steps (5 to 7 time constants)
      m.s.start(steps * dt);
      done += steps;
      const auto vm = Field<double>::getVec(s, comp.id, "Vm");
      for (Index i = 0; i < n; ++i) check_rel(vm[i], closed_form(p[i], p[i].inject, done * dt));
    }
  }
}

TEST_CASE(
    "Compartment: injectMsg adds to the next step's input, VmOut sends Vm at reinit and every "
    "step") {
  Model m;
  Shell& s = m.s;
  const Params p{2e8, 5e-11, -0.06, 1e-11, -0.08};
  const double I2 = 3e-11;  // from the PulseGen: constant, so baseLevel = firstLevel = I2
  const ObjId comp = m.s.create("Compartment", "/comp");
  const ObjId pulse = m.s.create("PulseGen", "/pulse");
  const ObjId tab = m.s.create("Table", "/tab");
  Field<double>::set(s, comp, "Rm", p.Rm);
  Field<double>::set(s, comp, "Cm", p.Cm);
  Field<double>::set(s, comp, "Em", p.Em);
  Field<double>::set(s, comp, "inject", p.inject);
  Field<double>::set(s, comp, "initVm", p.initVm);
  Field<double>::set(s, pulse, "baseLevel", I2);
  Field<double>::set(s, pulse, "firstLevel", I2);
  Field<double>::set(s, pulse, "firstWidth", 1.0);
  m.s.addMsg("Single", pulse, "output", comp, "injectMsg");
  m.s.addMsg("Single", comp, "VmOut", tab, "input");
  const double dt = 2e-5;
  m.s.setClock(0, dt);
  for (const char* path : {"/comp", "/pulse", "/tab"})
    m.s.useClock(0, path);  // one tick: see below
  m.s.reinit();
  const int steps = 300;
  m.s.start(steps * dt);
  // All three are on one tick, so reinit's sends are delivered after every reinit. The PulseGen's
  // reinit send reaches the compartment before step 1 and each step's send the
  // next step, so the compartment sees inject + I2 at every step.
  const auto v = Field<std::vector<double>>::get(s, tab, "vector");
  REQUIRE(v.size() == static_cast<std::size_t>(steps + 1));
  for (int k = 0; k <= steps; ++k) check_rel(v[k], closed_form(p, p.inject + I2, k * dt));
}

TEST_CASE("Compartment rejects a non-positive Rm, Cm or Ra and keeps its value") {
  Model m;
  Shell& s = m.s;
  const ObjId comp = m.s.create("Compartment", "/comp");
  CHECK_THROWS_AS(Field<double>::set(s, comp, "Rm", 0.0), ValueError);
  CHECK_THROWS_AS(Field<double>::set(s, comp, "Cm", -1.0), ValueError);
  CHECK_THROWS_AS(Field<double>::set(s, comp, "Ra", std::nan("")), ValueError);
  CHECK(Field<double>::get(s, comp, "Rm") == 1.0);
  CHECK(Field<double>::get(s, comp, "Cm") == 1.0);
  CHECK(Field<double>::get(s, comp, "Ra") == 1.0);
}

// PulseGen's output sequence against MOOSE's free-run formula, evaluated here in integer steps
// (dt a power of two and every time a whole number of steps, so no rounding is involved). It is
// recorded twice: pulled by Tables (requestOut -> getOutputValue) and pushed (output -> input).
#include <doctest/doctest.h>

#include <vector>

#include "core/error.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

struct Pulse {  // in steps
  long d1, w1, d2, w2;
  double base, l1, l2;
};

// Output at step n of MOOSE's free-run PulseGen (the second delay counts from the first pulse's
// start).
double expected(const Pulse& p, long n) {
  const long period = p.d1 + std::max(p.w1, p.d2 + p.w2);
  const long ph = n % period;
  if (ph < p.d1) return p.base;
  if (ph < p.d1 + p.w1) return p.l1;
  if (ph - p.d1 >= p.d2 && ph - p.d1 < p.d2 + p.w2) return p.l2;
  return p.base;
}

}  // namespace

TEST_CASE("PulseGen output follows the free-run formula, pulled and pushed into Tables") {
  Model m;
  Shell& s = m.s;
  const double dt = 1.0 / 1024;
  const std::vector<Pulse> cfg{
      {3, 4, 9, 2, -1.0, 5.0, 2.5},  // two pulses: period 3 + max(4, 11) = 14 steps
      {2, 6, 0, 0, 0.5, -3.0, 7.0},  // one pulse: period 8
      {1, 5, 2, 6, 0.0, 1.0, 2.0},   // overlapping: the second takes over after the first ends
  };
  const Index n = static_cast<Index>(cfg.size());
  const ObjId pg = m.s.create("PulseGen", "/pg", n);
  const ObjId pulled = m.s.create("Table", "/pulled", n);
  const ObjId pushed = m.s.create("Table", "/pushed", n);
  for (Index i = 0; i < n; ++i) {
    const ObjId o(pg.id, i);
    const Pulse& c = cfg[i];
    Field<double>::set(s, o, "firstDelay", c.d1 * dt);
    Field<double>::set(s, o, "firstWidth", c.w1 * dt);
    Field<double>::set(s, o, "secondDelay", c.d2 * dt);
    Field<double>::set(s, o, "secondWidth", c.w2 * dt);
    Field<double>::set(s, o, "baseLevel", c.base);
    Field<double>::set(s, o, "firstLevel", c.l1);
    Field<double>::set(s, o, "secondLevel", c.l2);
    m.s.addMsg("Single", ObjId(pulled.id, i), "requestOut", o, "getOutputValue");
  }
  m.s.addMsg("OneToOne", pg, "output", pushed, "input");
  antler::test::set_base_dt(s, dt);
  m.s.setClock(0, dt);
  for (const char* path : {"/pg", "/pulled", "/pushed"}) m.s.useClock(0, path);
  const long steps = 60;
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    m.s.start(steps * dt);
    for (Index i = 0; i < n; ++i) {
      CAPTURE(i);
      std::vector<double> want{cfg[i].base};  // reinit: output = baseLevel
      for (long k = 1; k <= steps; ++k) want.push_back(expected(cfg[i], k));
      CHECK(Field<std::vector<double>>::get(s, ObjId(pulled.id, i), "vector") == want);
      CHECK(Field<std::vector<double>>::get(s, ObjId(pushed.id, i), "vector") == want);
      CHECK(Field<double>::get(s, ObjId(pg.id, i), "outputValue") == want.back());
    }
  }
}

TEST_CASE("PulseGen takes trigMode 0-2 only and keeps its output when the period is 0") {
  Model m;
  Shell& s = m.s;
  const ObjId pg = m.s.create("PulseGen", "/pg");
  CHECK_THROWS_AS(Field<unsigned>::set(s, pg, "trigMode", 3u), ValueError);
  CHECK(Field<unsigned>::get(s, pg, "trigMode") == 0u);
  Field<unsigned>::set(s, pg, "trigMode", 2u);
  CHECK(Field<unsigned>::get(s, pg, "trigMode") == 2u);
  Field<unsigned>::set(s, pg, "trigMode", 0u);
  Field<double>::set(s, pg, "baseLevel", 4.0);
  Field<double>::set(s, pg, "firstLevel", 9.0);
  m.s.setClock(0, 0.5);
  m.s.useClock(0, "/pg");
  m.s.reinit();
  m.s.start(2.0);
  CHECK(Field<double>::get(s, pg, "outputValue") == 4.0);
}

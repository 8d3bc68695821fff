// SpikeGen's edge and level triggering and its refractory period, driven by a PulseGen square
// wave, against MOOSE's rule evaluated here in integer steps (dt a power of two, so no rounding).
#include <doctest/doctest.h>

#include <vector>

#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

struct Gen {
  bool edge;
  long refract;  // steps
};

// Spike steps of a SpikeGen whose input at step n is V(n), by MOOSE's rule.
std::vector<long> expected_spikes(const Gen& g, const std::vector<double>& V, double thresh) {
  std::vector<long> out;
  long last = -g.refract;
  bool fired = false;
  for (long n = 1; n < static_cast<long>(V.size()); ++n) {
    if (V[n] > thresh) {
      if (n + 0.5 >= static_cast<double>(last + g.refract) && !(g.edge && fired)) {
        out.push_back(n);
        last = n;
        fired = true;
      }
    } else {
      fired = false;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("SpikeGen fires on the rising edge or on the level, and respects refractT") {
  Model m;
  Shell& s = m.s;
  const double dt = 1.0 / 1024, thresh = 0.5;
  const std::vector<Gen> gens{{true, 0}, {false, 2}, {true, 10}};
  const Index n = static_cast<Index>(gens.size());
  const ObjId pg = m.s.create("PulseGen", "/pg");
  const ObjId sg = m.s.create("SpikeGen", "/sg", n);
  const ObjId tab = m.s.create("Table", "/spikes", n);
  // Square wave: 0 for 3 steps, 1 for 6 steps, period 9 steps.
  Field<double>::set(s, pg, "firstDelay", 3 * dt);
  Field<double>::set(s, pg, "firstWidth", 6 * dt);
  Field<double>::set(s, pg, "firstLevel", 1.0);
  for (Index i = 0; i < n; ++i) {
    Field<bool>::set(s, ObjId(sg.id, i), "edgeTriggered", gens[i].edge);
    Field<double>::set(s, ObjId(sg.id, i), "refractT", gens[i].refract * dt);
  }
  Field<double>::setAll(s, sg.id, "threshold", thresh);
  m.s.addMsg("OneToAll", pg, "output", sg, "Vm");
  m.s.addMsg("OneToOne", sg, "spikeOut", tab, "input");
  antler::test::set_base_dt(s, dt);
  m.s.setClock(0, dt);
  for (const char* path : {"/pg", "/sg", "/spikes"}) m.s.useClock(0, path);

  // The SpikeGens see at step n what the PulseGen sent at step n - 1 (its reinit value, 0, at n =
  // 1).
  const long steps = 40;
  std::vector<double> V{0.0, 0.0};
  for (long k = 1; k < steps; ++k) V.push_back(k % 9 >= 3 ? 1.0 : 0.0);
  const auto edge = expected_spikes(gens[0], V, thresh);
  REQUIRE(edge.size() >= 4);
  CHECK(edge[0] == 4);
  CHECK(edge[1] == 13);
  const auto blocked = expected_spikes(gens[2], V, thresh);
  CHECK(blocked[1] == 14);  // the edge at 13 is refractory; it fires when refractT is over

  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    m.s.start(steps * dt);
    for (Index i = 0; i < n; ++i) {
      CAPTURE(i);
      std::vector<double> want;
      for (long s : expected_spikes(gens[i], V, thresh)) want.push_back(s * dt);
      CHECK(Field<std::vector<double>>::get(s, ObjId(tab.id, i), "vector") == want);
      CHECK(Field<double>::get(s, ObjId(sg.id, i), "lastEvent") == want.back());
    }
    // At step 40 the input is V(40) = 1 (39 % 9 = 3) and every SpikeGen has fired since it rose.
    CHECK(Field<bool>::get(s, ObjId(sg.id, 0), "hasFired"));
  }
}

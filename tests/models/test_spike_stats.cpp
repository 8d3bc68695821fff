// SpikeStats: the population spike count and rate of a RandSpike-driven IntFire population,
// compared each step with a count computed here from the IntFires' spiked fields.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

TEST_CASE("SpikeStats count and rate equal the count of spiked IntFires, every step") {
  Model m;
  Shell& s = m.s;
  const Index n = 300;
  const double dt = 1e-3;
  const ObjId nrn = m.s.create("IntFire", "/nrn", n);
  const ObjId src = m.s.create("RandSpike", "/src", n);
  const ObjId stats = m.s.create("SpikeStats", "/stats");
  const ObjId syn = m.s.find("/nrn/synapse");
  std::vector<Index> idx(n);
  std::iota(idx.begin(), idx.end(), Index{0});
  m.s.pairFill(m.s.addMsg("Sparse", src, "spikeOut", syn, "addSpike"), idx,
               idx);  // src[i] -> nrn[i]
  Field<double>::setAll(s, syn.id, "weight", 0.6);
  Field<double>::setAll(s, src.id, "rate", 300.0);
  Field<double>::setAll(s, nrn.id, "thresh", 1.0);
  Field<double>::setAll(s, nrn.id, "tau", 0.02);
  Field<double>::setAll(s, nrn.id, "refractoryPeriod", 2e-3);
  m.s.addMsg("Reduce", stats, "reduce", nrn, "getSpiked");
  m.s.setClock(0, dt);
  for (const char* path : {"/stats", "/nrn", "/src"}) m.s.useClock(0, path);
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    CHECK(Field<unsigned>::get(s, stats, "num") == n);
    CHECK(Field<unsigned>::get(s, stats, "count") == 0u);
    unsigned total = 0;
    for (int step = 1; step <= 40; ++step) {
      CAPTURE(step);
      m.s.start(dt);
      const auto spiked = Field<double>::getVec(s, nrn.id, "spiked");
      unsigned count = 0;
      for (double s : spiked) {
        CHECK((s == 0.0 || s == 1.0));
        count += s == 1.0;
      }
      total += count;
      CHECK(Field<unsigned>::get(s, stats, "count") == count);
      CHECK(Field<unsigned>::get(s, stats, "num") == n);
      const double rate = Field<double>::get(s, stats, "rate");
      CHECK(std::abs(rate - count / (n * dt)) <= 1e-12 * (count / (n * dt)));
    }
    CHECK(total > 100);  // the population does fire
  }
}

TEST_CASE("IntFire's spike flags in runs of many steps equal those of one-step runs") {
  // A sweep within a run clears the flags of the neurons its thread fired in the last step and
  // tests no flag a neuron (IntFire::Ring::fired); the first step of each run tests them all.
  // One-step runs (reference) against runs of 20 steps with the thread count changed between
  // them (other slices), the flags read every step by a Table per neuron and summed by SpikeStats.
  Model m;
  Shell& s = m.s;
  const Index n = 200;
  const double dt = 1e-3;
  const int steps = 40;
  const ObjId nrn = s.create("IntFire", "/nrn", n);
  const ObjId src = s.create("RandSpike", "/src", n);
  const ObjId stats = s.create("SpikeStats", "/stats");
  const ObjId rec = s.create("Table", "/rec", n);  // rec[i] pulls nrn[i].spiked every step
  const ObjId cnt = s.create("Table", "/cnt");     // the SpikeStats count every step
  const ObjId syn = s.find("/nrn/synapse");
  std::vector<Index> idx(n);
  std::iota(idx.begin(), idx.end(), Index{0});
  s.pairFill(s.addMsg("Sparse", src, "spikeOut", syn, "addSpike"), idx, idx);
  Field<double>::setAll(s, syn.id, "weight", 0.6);
  Field<double>::setAll(s, src.id, "rate", 300.0);
  Field<double>::setAll(s, nrn.id, "thresh", 1.0);
  Field<double>::setAll(s, nrn.id, "tau", 0.02);
  Field<double>::setAll(s, nrn.id, "refractoryPeriod", 2e-3);
  s.addMsg("Reduce", stats, "reduce", nrn, "getSpiked");
  for (Index i = 0; i < n; ++i)
    s.addMsg("Single", ObjId(rec.id, i), "requestOut", ObjId(nrn.id, i), "getSpiked");
  s.addMsg("Single", cnt, "requestOut", stats, "getCount");
  s.setClock(0, dt);
  s.setClock(1, dt);
  for (const char* path : {"/src", "/nrn", "/stats"}) s.useClock(0, path);
  for (const char* path : {"/rec", "/cnt"}) s.useClock(1, path);
  // Reference: one step a run at 1 thread, the flags read after each.
  s.setNumThreads(1);
  s.reinit();
  std::vector<std::vector<double>> want(static_cast<std::size_t>(steps));
  for (int k = 0; k < steps; ++k) {
    s.start(dt);
    want[static_cast<std::size_t>(k)] = Field<double>::getVec(s, nrn.id, "spiked");
  }
  for (const auto& [first, second] : {std::pair{1u, 2u}, std::pair{2u, 3u}, std::pair{3u, 1u}}) {
    CAPTURE(first);
    CAPTURE(second);
    s.setNumThreads(first);
    s.reinit();
    s.start(steps / 2 * dt);
    s.setNumThreads(second);
    s.start(steps / 2 * dt);
    const auto counts = Field<std::vector<double>>::get(s, cnt, "vector");
    REQUIRE(counts.size() == static_cast<std::size_t>(steps) + 1);  // (reinit's value first)
    unsigned total = 0;
    for (Index i = 0; i < n; ++i) {
      CAPTURE(i);
      const auto got = Field<std::vector<double>>::get(s, ObjId(rec.id, i), "vector");
      REQUIRE(got.size() == static_cast<std::size_t>(steps) + 1);
      for (int k = 0; k < steps; ++k) {
        CAPTURE(k);
        CHECK(got[static_cast<std::size_t>(k) + 1] == want[static_cast<std::size_t>(k)][i]);
      }
    }
    for (int k = 0; k < steps; ++k) {
      double c = 0;
      for (double f : want[static_cast<std::size_t>(k)]) c += f;
      CHECK(counts[static_cast<std::size_t>(k) + 1] == c);
      total += static_cast<unsigned>(c);
    }
    CHECK(total > 100);  // the population does fire, and fires again
  }
}

TEST_CASE("SpikeStats over an empty population reports num 0 and a NaN rate") {
  Model m;
  Shell& s = m.s;
  // An element has at least one entry; an empty population is a field element whose parents
  // hold no entries (here: no synapses), read through a double field as getSpiked is.
  m.s.create("TestReceiver", "/r", 3);
  const ObjId stats = m.s.create("SpikeStats", "/stats");
  m.s.addMsg("Reduce", stats, "reduce", m.s.find("/r/syn"), "getWeight");
  m.s.setClock(0, 1e-3);
  m.s.useClock(0, "/stats");
  m.s.reinit();
  m.s.start(2e-3);
  CHECK(Field<unsigned>::get(s, stats, "num") == 0u);
  CHECK(Field<unsigned>::get(s, stats, "count") == 0u);
  CHECK(std::isnan(Field<double>::get(s, stats, "rate")));
}

TEST_CASE("SpikeStats over a bool getter: the flags counted a block at a time") {
  // A Reduce message to a bool field folds each block of flags as a count (reduce_loop);
  // checked against the count made here, on populations across several blocks of 512.
  for (const Index n : {Index{1}, Index{511}, Index{1300}}) {
    CAPTURE(n);
    Model m;
    Shell& s = m.s;
    const ObjId a = s.create("TestAdder", "/a", n);
    const ObjId stats = s.create("SpikeStats", "/stats");
    std::vector<double> x(n);
    unsigned positive = 0;
    for (Index i = 0; i < n; ++i) {
      x[i] = (i * 7919u) % 13 < 5 ? 1.0 + i : -1.0 * i;  // 0 at i = 0: not positive
      positive += x[i] > 0;
    }
    Field<double>::setVec(s, a.id, "x", x);
    s.addMsg("Reduce", stats, "reduce", a, "getPositive");
    s.setClock(0, 1e-3);
    s.useClock(0, "/stats");
    s.reinit();
    s.start(1e-3);
    CHECK(Field<unsigned>::get(s, stats, "count") == positive);
    CHECK(Field<unsigned>::get(s, stats, "num") == n);
  }
}

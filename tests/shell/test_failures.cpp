// Failures that one node sees and the others do not: an exception in any phase of a round must
// end the run on every node at the same round and reach the driver as that exception (never a
// hang), and a multi-entry write that fails on any node must write nothing anywhere. Run at 1, 2,
// 3 and 4 nodes: the failing entry is the last one, which lives on the last node.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "shell/clock.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

TEST_CASE("an error raised while delivering on one node ends the run on every node") {
  Model m;
  Shell& s = m.s;
  const Index n = 7;
  m.s.create("RandSpike", "/r", 2);
  m.s.create("IntFire", "/n", n);
  Field<double>::setVec(s, Id(m.s.find("/r").id), "rate", {1000.0, 1000.0});
  // Neuron n-1 (on the last node) has no synapse 5: delivering there raises, there only.
  m.s.addMsg("Single", "/r[0]", "spikeOut", "/n[6]/synapse[5]", "addSpike");
  m.s.setClock(0, 1e-3);
  m.s.useClock(0, "/r");
  m.s.useClock(0, "/n");
  for (unsigned threads : {1u, 2u, 3u}) {
    m.s.setNumThreads(threads);
    m.s.reinit();
    CHECK_THROWS_AS(m.s.start(0.05), IndexError);
    // Every node stopped at the same round: the next command runs everywhere in lockstep.
    const double t = m.s.currentTime();
    CHECK(t < 0.05);
    CHECK_THROWS_AS(m.s.start(0.01), IndexError);
  }
  // Without the bad message the same model runs to the end.
  m.s.destroy("/r");
  m.s.reinit();
  m.s.start(0.004);
  CHECK(m.s.currentTime() == doctest::Approx(0.004));
}

TEST_CASE("an error raised in reinit on one node reaches the driver, and start after it too") {
  Model m;
  m.s.create("PulseGen", "/p", 1);
  m.s.create("IntFire", "/n", 5);
  // PulseGen's output (0 before its first pulse) sets tau: refused by IntFire on every node
  // that owns an IntFire.
  m.s.addMsg("OneToAll", "/p", "output", "/n", "setTau");
  m.s.setClock(0, 1e-3);
  m.s.useClock(0, "/p");
  m.s.useClock(0, "/n");
  CHECK_THROWS_AS(m.s.reinit(), ValueError);
  CHECK_THROWS_AS(m.s.start(0.01), ValueError);
  m.s.destroy("/p");
  m.s.reinit();
  m.s.start(0.002);
  CHECK(m.s.currentTime() == doctest::Approx(0.002));
}

TEST_CASE("a vector write refused on any node writes nothing on any node") {
  Model m;
  Shell& s = m.s;
  const Index n = 9;
  const Id id = m.s.create("IntFire", "/n", n).id;
  std::vector<double> tau(n);
  for (Index i = 0; i < n; ++i) tau[i] = 0.01 + 0.001 * i;
  Field<double>::setVec(s, id, "tau", tau);
  for (Index bad : {Index{0}, n / 2, n - 1}) {
    for (double v : {std::nan(""), -1.0, 0.0, std::numeric_limits<double>::infinity()}) {
      std::vector<double> w(n, 0.5);
      w[bad] = v;
      CAPTURE(bad);
      CAPTURE(v);
      CHECK_THROWS_AS(Field<double>::setVec(s, id, "tau", w), ValueError);
      CHECK(Field<double>::getVec(s, id, "tau") == tau);
    }
  }
  // numSynapses: a count past this node's memory is refused, and every neuron keeps its synapses
  // and their weights (a partial resize would have lost them).
  std::vector<unsigned> counts(n);
  for (Index i = 0; i < n; ++i) counts[i] = i % 4;
  Field<unsigned>::setVec(s, id, "numSynapses", counts);
  std::vector<double> weights;
  for (Index i = 0; i < n; ++i)
    for (unsigned k = 0; k < counts[i]; ++k) weights.push_back(i + 0.25 * k);
  const Id syn = m.s.find("/n/synapse").id;
  Field<double>::setVec(s, syn, "weight", weights);
  std::vector<unsigned> shrink(n, 0);
  shrink[n - 1] = 0xFFFFFFFFu;
  CHECK_THROWS_AS(Field<unsigned>::setVec(s, id, "numSynapses", shrink), ValueError);
  CHECK(Field<unsigned>::getVec(s, id, "numSynapses") == counts);
  CHECK(Field<double>::getVec(s, syn, "weight") == weights);
}

TEST_CASE("runs, thread counts and element sizes past their limits are refused up front") {
  Model m;
  m.s.create("IntFire", "/n", 3);
  m.s.setClock(0, 1e-3);
  m.s.useClock(0, "/n");
  m.s.reinit();
  CHECK_THROWS_AS(m.s.start(1e300), ValueError);
  CHECK_THROWS_AS(m.s.start(1e17), ValueError);
  CHECK_THROWS_AS(m.s.start(std::nan("")), ValueError);
  CHECK(m.s.currentTime() == 0.0);
  const unsigned threads = m.s.numThreads();
  CHECK_THROWS_AS(m.s.setNumThreads(0xFFFFFFFFu), ValueError);
  CHECK_THROWS_AS(m.s.setNumThreads(Clock::kMaxThreads + 1), ValueError);
  CHECK(m.s.numThreads() == threads);
  CHECK_THROWS_AS(m.s.create("IntFire", "/huge", 0xFFFFFFFEu), ValueError);
  CHECK_FALSE(m.s.exists("/huge"));
  m.s.start(0.003);
  CHECK(m.s.currentTime() == doctest::Approx(0.003));
}

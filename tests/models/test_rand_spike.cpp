// RandSpike: the mean rate within statistical bounds, the refractory period, and spike trains
// that do not depend on the threads x nodes split (or on the run) for a given seed.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

TEST_CASE("RandSpike fires at the mean rate, with the same spikes for 1 and 2 threads") {
  Model m;
  Shell& s = m.s;
  const Index n = 1000;
  const double dt = 1e-3, rate = 20.0, T = 1.0;
  const ObjId rs = m.s.create("RandSpike", "/rs", n);
  const ObjId tab = m.s.create("Table", "/spikes", n);  // tab[i] records rs[i]'s spike times
  Field<double>::setAll(s, rs.id, "rate", rate);
  m.s.addMsg("OneToOne", rs, "spikeOut", tab, "input");
  m.s.setClock(0, dt);
  m.s.useClock(0, "/rs");
  m.s.useClock(0, "/spikes");

  std::vector<unsigned> counts1;
  std::vector<double> last1;
  for (unsigned threads : {1u, 2u, 1u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    m.s.start(T);
    const auto counts = Field<unsigned>::getVec(s, tab.id, "size");
    const auto last = Field<double>::getVec(s, rs.id, "lastEvent");
    if (counts1.empty()) {
      counts1 = counts;
      last1 = last;
      // Binomial(steps * n, rate * dt): the total is within 6 standard deviations of the mean.
      const double trials = std::round(T / dt) * n, p = rate * dt;
      const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
      CHECK(std::abs(total - trials * p) <= 6 * std::sqrt(trials * p * (1 - p)));
      // Each train: increasing times on step ends in (0, T], its last one is lastEvent.
      for (Index i = 0; i < n; i += 37) {
        const auto t = Field<std::vector<double>>::get(s, ObjId(tab.id, i), "vector");
        for (std::size_t k = 0; k < t.size(); ++k) {
          CHECK(t[k] > 0);
          CHECK(t[k] <= T + 1e-12);
          CHECK(std::abs(t[k] / dt - std::round(t[k] / dt)) < 1e-9);
          if (k) CHECK(t[k] > t[k - 1]);
        }
        if (!t.empty()) CHECK(last[i] == t.back());
      }
    } else {
      CHECK(counts == counts1);  // the same spikes whatever the split, and run after run
      CHECK(last == last1);
    }
  }
  // Another seed gives other spikes.
  m.s.seed(12345);
  m.s.reinit();
  m.s.start(T);
  CHECK(Field<unsigned>::getVec(s, tab.id, "size") != counts1);
  m.s.seed(0);
}

TEST_CASE("RandSpike never fires twice within refractT") {
  Model m;
  Shell& s = m.s;
  const Index n = 40;
  const double dt = 1e-3, refractT = 5e-3;
  const ObjId rs = m.s.create("RandSpike", "/rs", n);
  const ObjId tab = m.s.create("Table", "/spikes", n);
  Field<double>::setAll(s, rs.id, "rate", 100.0);
  Field<double>::setAll(s, rs.id, "refractT", refractT);
  m.s.addMsg("OneToOne", rs, "spikeOut", tab, "input");
  m.s.setClock(0, dt);
  m.s.useClock(0, "/rs");
  m.s.useClock(0, "/spikes");
  m.s.setNumThreads(2);
  m.s.reinit();
  m.s.start(2.0);
  std::size_t intervals = 0, atRefractT = 0;
  for (Index i = 0; i < n; ++i) {
    const auto t = Field<std::vector<double>>::get(s, ObjId(tab.id, i), "vector");
    for (std::size_t k = 1; k < t.size(); ++k) {
      const long steps = std::lround((t[k] - t[k - 1]) / dt);
      CHECK(steps >= 5);
      ++intervals;
      atRefractT += steps == 5;
    }
  }
  CHECK(intervals > 1000);
  CHECK(atRefractT > 0);  // a spike is allowed as soon as refractT is over
}

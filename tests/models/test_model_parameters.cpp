// Every model parameter that changes behaviour, set to a non-default value (a different one per
// object), against a reference computed here: IntFire's vReset, thresh, tau, refractoryPeriod and
// initVm in a hand loop; RandSpike's rate, refractT and the seed by a serial re-implementation of
// its documented random stream. (SpikeGen's threshold, refractT and edgeTriggered, PulseGen's
// levels, widths and delays, Compartment's Rm, Cm, Em, inject and initVm and Synapse's weight and
// delay are set in their own test files.)
//
// The references know nothing of nodes or threads: each object's expected behaviour is computed
// from its global index alone, so the same expectations hold at every node count ctest runs this
// at. A model that keyed anything by a node-local index would fail at 2 nodes, even with 1 thread.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

struct IntFireParams {
  double thresh, tau, vReset, initVm;
  long refractSteps;
};

IntFireParams intfire_params(Index i) {
  const double d = static_cast<double>(i);
  // Object 4's vReset lies above its threshold: it fires again as soon as refractoryPeriod allows.
  return {0.5 + 0.1 * d, 0.004 * (1 + d), i == 4 ? 1.5 : -0.25 + 0.05 * d, 0.9 + 0.1 * d,
          static_cast<long>(i == 4 ? 3 : i % 4)};
}

}  // namespace

TEST_CASE("IntFire: vReset, thresh, tau, refractoryPeriod and initVm, each object its own") {
  Model m;
  Shell& s = m.s;
  const Index n = 7;
  const double dt = 1.0 / 1024;
  const long steps = 40;
  const ObjId nrn = m.s.create("IntFire", "/nrn", n);
  const ObjId syn = m.s.find("/nrn/synapse");
  const ObjId vm = m.s.create("Table", "/vm", n);          // vm[i] pulls nrn[i].Vm every step
  const ObjId spikes = m.s.create("Table", "/spikes", n);  // spikes[i] records nrn[i]'s spikes
  for (Index i = 0; i < n; ++i) {
    const IntFireParams p = intfire_params(i);
    const ObjId o(nrn.id, i);
    Field<double>::set(s, o, "thresh", p.thresh);
    Field<double>::set(s, o, "tau", p.tau);
    Field<double>::set(s, o, "vReset", p.vReset);
    Field<double>::set(s, o, "initVm", p.initVm);
    Field<double>::set(s, o, "refractoryPeriod", p.refractSteps * dt);
    Field<unsigned>::set(s, o, "numSynapses", 1);
    Field<double>::set(s, ObjId(syn.id, i, 0), "weight", 0.7 + 0.05 * i);
    Field<double>::set(s, ObjId(syn.id, i, 0), "delay", (i % 3) * dt);
    m.s.addMsg("Single", ObjId(vm.id, i), "requestOut", o, "getVm");
  }
  m.s.addMsg("OneToOne", nrn, "spikeOut", spikes, "input");
  // A base dt of 1/1024 (MOOSE's clock.baseDt), so that every time is exact.
  Field<double>::set(s, m.s.find("/clock"), "baseDt", dt);
  m.s.setClock(0, dt);
  for (const char* path : {"/nrn", "/vm", "/spikes"}) m.s.useClock(0, path);
  // Input spike times (in steps) sent to every synapse from the Shell.
  const std::vector<long> input{3, 9, 10, 17, 25, 26, 27, 33};

  // ---- serial reference, in integer steps ----
  std::vector<std::vector<double>> wantVm(n);
  std::vector<std::vector<double>> wantSpikes(n);
  for (Index i = 0; i < n; ++i) {
    const IntFireParams p = intfire_params(i);
    const double w = 0.7 + 0.05 * i;
    const long delay = static_cast<long>(i % 3);
    double V = p.initVm;
    long last = -1000000;
    wantVm[i].push_back(V);  // the value pulled at reinit
    for (long s = 1; s <= steps; ++s) {
      for (long t : input)
        if (t + delay == s) V += w;  // one event per step at most: no same-step ordering
      if (V > p.thresh && s - last > p.refractSteps) {  // MOOSE's strict test
        V = p.vReset;
        last = s;
        wantSpikes[i].push_back(s * dt);
      } else {
        V *= 1.0 - dt / p.tau;
      }
      wantVm[i].push_back(V);
    }
    CAPTURE(i);
    REQUIRE(wantSpikes[i].size() >= 2);  // every object resets at least once after firing
  }
  for (unsigned threads : {1u, 2u, 3u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    for (Index i = 0; i < n; ++i)
      for (long t : input) SetGet::call(s, ObjId(syn.id, i, 0), "addSpike", t * dt);
    m.s.start(steps * dt);
    for (Index i = 0; i < n; ++i) {
      CAPTURE(i);
      const auto v = Field<std::vector<double>>::get(s, ObjId(vm.id, i), "vector");
      REQUIRE(v.size() == wantVm[i].size());
      for (std::size_t k = 0; k < v.size(); ++k) {
        CAPTURE(k);
        CHECK(std::abs(v[k] - wantVm[i][k]) <= 1e-12 * std::max(1.0, std::abs(wantVm[i][k])));
      }
      CHECK(Field<std::vector<double>>::get(s, ObjId(spikes.id, i), "vector") == wantSpikes[i]);
    }
  }
}

namespace {

/// FNV-1a of a path, as RandSpike's documentation specifies (written out here again).
std::uint64_t path_hash(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

/// The spike steps of RandSpike number `global` of the element at `path`, by its documented rule:
/// the number drawn at step s is Rng(seed, mix64(mix64(hash(path)) + global) + s).uniform(); it
/// fires if out of refractT and the number is below realRate * dt.
std::vector<long> rand_spike_steps(const std::string& path, std::uint64_t global,
                                   std::uint64_t seed, double rate, long refractSteps, double dt,
                                   long steps) {
  const std::uint64_t stream = mix64(mix64(path_hash(path)) + global);
  const double lost = rate * (refractSteps * dt);  // rate * refractT, as the model multiplies
  const double prob = (lost < 1.0 ? rate / (1.0 - lost) : rate) * dt;
  std::vector<long> out;
  long last = -refractSteps;
  for (long s = 1; s <= steps; ++s) {
    if (s - last < refractSteps) continue;
    Rng rng(seed, stream + static_cast<std::uint64_t>(s));
    if (prob >= 1.0 || rng.uniform() < prob) {
      out.push_back(s);
      last = s;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("RandSpike: rate, refractT and seed give the spikes of its global-index stream") {
  // 23: an odd size, every node count splits it unevenly, each object its own rate and refractT;
  // 600: past the sweep's chunks of 256 draws, in runs of objects that share rate or refractT.
  for (const Index n : {Index{23}, Index{600}}) {
    CAPTURE(n);
    const Index rateRun = n > 23 ? 41 : 1, refractRun = n > 23 ? 37 : 1;
    Model m;
    Shell& s = m.s;
    const double dt = 1.0 / 1024;
    const long steps = 300;
    const std::uint64_t seed = 97;
    const ObjId rs = m.s.create("RandSpike", "/rs", n);
    const ObjId tab = m.s.create("Table", "/spikes", n);
    std::vector<double> rate(n), refract(n);
    std::vector<long> refractSteps(n);
    for (Index i = 0; i < n; ++i) {
      // rates from 20 to 680 Hz; refractT 0 to 6 steps: rate * refractT spans 0 to above 1 (where
      // realRate falls back to rate); object 7 has rate * dt >= 1 and fires whenever it may.
      rate[i] = i % 23 == 7 ? 1500.0 : 20.0 + 30.0 * (i / rateRun % 23);
      refractSteps[i] = static_cast<long>(i / refractRun % 7);
      refract[i] = refractSteps[i] * dt;
    }
    Field<double>::setVec(s, rs.id, "rate", rate);
    Field<double>::setVec(s, rs.id, "refractT", refract);
    m.s.addMsg("OneToOne", rs, "spikeOut", tab, "input");
    antler::test::set_base_dt(s, dt);
    m.s.setClock(0, dt);
    m.s.useClock(0, "/rs");
    m.s.useClock(0, "/spikes");
    m.s.seed(seed);
    // Both of the sweep's paths on any machine: the draws made eight streams at once up front
    // (where the CPU can), and one object at a time.
    for (const bool wide : {true, false}) {
      CAPTURE(antler::detail::set_first_draws_vectorised(wide));
      for (unsigned threads : {1u, 3u}) {
        CAPTURE(threads);
        m.s.setNumThreads(threads);
        m.s.reinit();
        m.s.start(steps * dt);
        const auto last = Field<double>::getVec(s, rs.id, "lastEvent");
        for (Index i = 0; i < n; ++i) {
          CAPTURE(i);
          std::vector<double> want;
          for (long s : rand_spike_steps("/rs", i, seed, rate[i], refractSteps[i], dt, steps))
            want.push_back(s * dt);
          REQUIRE(!want.empty());
          CHECK(Field<std::vector<double>>::get(s, ObjId(tab.id, i), "vector") == want);
          CHECK(last[i] == want.back());
        }
      }
    }
    antler::detail::set_first_draws_vectorised(true);
    m.s.seed(0);
  }
}

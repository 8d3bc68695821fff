// IntFire and its Synapse field against a serial reference: free decay, synaptic input after the
// delay, threshold, reset and the refractory period, for 1 and 2 threads (and, through ctest,
// 1, 2 and 4 nodes).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/element.hpp"
#include "core/error.hpp"
#include "core/finfo.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

void check_close(double got, double want) {
  CAPTURE(got);
  CAPTURE(want);
  CHECK(std::abs(got - want) <= 1e-12 * std::max(1.0, std::abs(want)));
}

// A serial IntFire in integer steps: events are (due step, weight); the refractory test compares
// step counts, so no floating-point time is involved.
struct RefNeuron {
  double Vm = 0, thresh = 1, dt = 1, tau = 1;
  long refractSteps = 0;
  long lastStep = std::numeric_limits<long>::min() / 2;
  std::multimap<long, double> events;  // due step -> weight
  std::vector<long> spikes;
  // Runs step n; returns true if it fired.
  bool step(long n) {
    std::vector<double> due;
    while (!events.empty() && events.begin()->first <= n) {
      due.push_back(events.begin()->second);
      events.erase(events.begin());
    }
    std::sort(due.begin(), due.end());  // same-step events in ascending weight
    for (double w : due) Vm += w;
    if (Vm > thresh && n - lastStep > refractSteps) {  // MOOSE's strict test
      Vm = -1e-7;                                      // and reset
      lastStep = n;
      spikes.push_back(n);
      return true;
    }
    Vm *= 1.0 - dt / tau;
    return false;
  }
};

}  // namespace

TEST_CASE("IntFire without input decays as Vm0 (1 - dt/tau)^n") {
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3, tau = 0.02, vm0 = 0.8;
  const ObjId nrn = m.s.create("IntFire", "/nrn", 3);
  const ObjId tab = m.s.create("Table", "/tab");
  Field<double>::setAll(s, nrn.id, "thresh", 1.0);
  Field<double>::setAll(s, nrn.id, "tau", tau);
  Field<double>::setAll(s, nrn.id, "initVm", vm0);
  m.s.addMsg("Single", tab, "requestOut", ObjId(nrn.id, 2), "getVm");
  m.s.setClock(0, dt);
  m.s.useClock(0, "/nrn");
  m.s.useClock(0, "/tab");
  const int n = 60;
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    CHECK(std::isinf(Field<double>::get(s, ObjId(nrn.id, 0), "lastSpike")));
    m.s.start(n * dt);
    const auto v = Field<std::vector<double>>::get(s, tab, "vector");
    REQUIRE(v.size() == static_cast<std::size_t>(n + 1));
    for (int k = 0; k <= n; ++k) check_close(v[k], vm0 * std::pow(1.0 - dt / tau, k));
    for (double x : Field<double>::getVec(s, nrn.id, "Vm"))
      check_close(x, vm0 * std::pow(1.0 - dt / tau, n));
    for (double s : Field<double>::getVec(s, nrn.id, "spiked")) CHECK(s == 0.0);
  }
}

TEST_CASE(
    "IntFire adds synaptic weights after the delay, fires, resets and respects the refractory "
    "period") {
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3, tau = 0.05, thresh = 1.0;
  const long refractSteps = 4;
  const ObjId nrn = m.s.create("IntFire", "/nrn", 2);
  const ObjId syn = m.s.find("/nrn/synapse");
  const ObjId spikes = m.s.create("Table", "/spikes", 2);  // spike times of nrn[0], nrn[1]
  const ObjId vmTab = m.s.create("Table", "/vm");          // Vm of nrn[1] every step
  Field<double>::setAll(s, nrn.id, "thresh", thresh);
  Field<double>::setAll(s, nrn.id, "tau", tau);
  Field<double>::setAll(s, nrn.id, "refractoryPeriod", refractSteps * dt);
  Field<unsigned>::set(s, ObjId(nrn.id, 0), "numSynapses", 2);
  Field<unsigned>::set(s, ObjId(nrn.id, 1), "numSynapses", 1);
  CHECK(Field<unsigned>::getVec(s, nrn.id, "numSynapses") == std::vector<unsigned>{2, 1});
  // nrn[0]: synapse 0 strong and immediate, synapse 1 weak with a 2-step delay.
  Field<double>::setFieldVec(s, ObjId(syn.id, 0), "weight", {1.5, 0.25});
  Field<double>::setFieldVec(s, ObjId(syn.id, 0), "delay", {0.0, 2 * dt});
  // nrn[1]: driven by nrn[0] through a synapse with a 3-step delay.
  Field<double>::set(s, ObjId(syn.id, 1, 0), "weight", 0.6);
  Field<double>::set(s, ObjId(syn.id, 1, 0), "delay", 3 * dt);
  m.s.addMsg("Single", ObjId(nrn.id, 0), "spikeOut", ObjId(syn.id, 1, 0), "addSpike");
  m.s.addMsg("OneToOne", nrn, "spikeOut", spikes, "input");
  m.s.addMsg("Single", vmTab, "requestOut", ObjId(nrn.id, 1), "getVm");
  m.s.setClock(0, dt);
  m.s.useClock(0, "/nrn");
  m.s.useClock(0, "/spikes");
  m.s.useClock(0, "/vm");

  // Input spikes, by step, sent straight to nrn[0]'s synapses from the Shell.
  const std::vector<long> strong{2, 3, 12, 13, 14, 30}, weak{20, 20, 21, 22, 23};
  const long steps = 40;

  // ---- serial reference ----
  RefNeuron a, b;
  for (RefNeuron* r : {&a, &b})
    r->thresh = thresh, r->dt = dt, r->tau = tau, r->refractSteps = refractSteps;
  for (long s : strong) a.events.emplace(s, 1.5);
  for (long s : weak) a.events.emplace(s + 2, 0.25);
  std::vector<double> vmB{0.0};
  for (long n = 1; n <= steps; ++n) {
    if (a.step(n)) b.events.emplace(n + 3, 0.6);
    b.step(n);
    vmB.push_back(b.Vm);
  }
  // The scenario exercises what it means to: the first spikes at steps 2 and 7 (the first step
  // past the refractory period, without new input), the weak synapse summing to a spike, and
  // nrn[1] firing.
  REQUIRE(a.spikes.size() >= 4);
  CHECK(a.spikes[0] == 2);
  CHECK(a.spikes[1] == 2 + refractSteps + 1);
  REQUIRE(!b.spikes.empty());

  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    for (long k : strong) SetGet::call(s, ObjId(syn.id, 0, 0), "addSpike", k * dt);
    for (long k : weak) SetGet::call(s, ObjId(syn.id, 0, 1), "addSpike", k * dt);
    CHECK(Field<unsigned>::get(s, ObjId(nrn.id, 0), "numPending") == strong.size() + weak.size());
    m.s.start(steps * dt);
    std::vector<double> wantA, wantB;
    for (long s : a.spikes) wantA.push_back(antler::test::step_time(s, dt));
    for (long s : b.spikes) wantB.push_back(antler::test::step_time(s, dt));
    CHECK(Field<std::vector<double>>::get(s, ObjId(spikes.id, 0), "vector") == wantA);
    CHECK(Field<std::vector<double>>::get(s, ObjId(spikes.id, 1), "vector") == wantB);
    const auto vm = Field<std::vector<double>>::get(s, vmTab, "vector");
    REQUIRE(vm.size() == vmB.size());
    for (std::size_t k = 0; k < vm.size(); ++k) check_close(vm[k], vmB[k]);
    check_close(Field<double>::get(s, ObjId(nrn.id, 0), "Vm"), a.Vm);
    CHECK(Field<double>::get(s, ObjId(nrn.id, 0), "lastSpike") == wantA.back());
    CHECK(Field<double>::get(s, ObjId(nrn.id, 1), "lastSpike") == wantB.back());
    CHECK(Field<unsigned>::get(s, ObjId(nrn.id, 0), "numPending") == 0u);
  }
}

TEST_CASE("a step without events leaves Vm's bits alone, a signed zero's sign included") {
  // The step sums start from -0.0 and are added to Vm whether or not events came: -0.0 is the
  // one value that leaves every Vm as it is (0.0 would turn a Vm of -0.0 into +0.0). Vm then
  // decays by (1 - dt/tau) each step: -0.0 stays -0.0, +0.0 stays +0.0, x becomes x * decay.
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3, tau = 0.02;
  const ObjId nrn = m.s.create("IntFire", "/nrn", 3);
  Field<double>::setAll(s, nrn.id, "thresh", 1.0);
  Field<double>::setAll(s, nrn.id, "tau", tau);
  Field<double>::setVec(s, nrn.id, "initVm", {-0.0, 0.0, 0.25});
  m.s.setClock(0, dt);
  m.s.useClock(0, "/nrn");
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    m.s.start(5 * dt);
    const auto vm = Field<double>::getVec(s, nrn.id, "Vm");
    REQUIRE(vm.size() == 3);
    CHECK(vm[0] == 0.0);
    CHECK(std::signbit(vm[0]));
    CHECK(vm[1] == 0.0);
    CHECK(!std::signbit(vm[1]));
    double want = 0.25;
    for (int k = 0; k < 5; ++k) want *= 1.0 - dt / tau;
    CHECK(vm[2] == want);  // bit for bit: nothing but the decay touched it
  }
}

TEST_CASE("a Stats of Vm is fed by IntFire's sweep, unless a message sets Vm") {
  // (tests/python/test_exact_stats.py checks that the copy gives the neurons' bits.)
  Model m;
  Shell& s = m.s;
  for (const bool setter : {false, true}) {
    CAPTURE(setter);
    const std::string at = setter ? "/b" : "/a";
    s.create("Neutral", at);
    const ObjId nrn = s.create("IntFire", at + "/nrn", 7);
    const ObjId st = s.create("Stats", at + "/st");
    s.addMsg("Reduce", st, "reduce", nrn, "getVm");
    if (setter) {  // a SpikeGen that never fires: nothing changes but the path Stats reads
      const ObjId sg = s.create("SpikeGen", at + "/sg");
      Field<double>::set(s, sg, "threshold", 1e300);
      s.addMsg("Single", sg, "spikeOut", ObjId(nrn.id, 3), "setVm");
    }
    const std::vector<double> v0{0.5, -0.25, 0.125, 0.75, -1.0, 0.0625, 0.3};
    Field<double>::setVec(s, nrn.id, "initVm", v0);
    Field<double>::setVec(s, nrn.id, "thresh", std::vector<double>(7, 10.0));
    Field<double>::setVec(s, nrn.id, "tau", std::vector<double>(7, 0.01));
    s.setClock(0, 1e-3);
    s.setClock(1, 1e-3);
    s.useClock(0, at + "/nrn");
    s.useClock(1, at + "/st");
    s.reinit();
    s.start(5e-3);
    const auto vm = Field<double>::getVec(s, nrn.id, "Vm");
    double sum = 0;
    for (double v : vm) sum += v;
    check_close(Field<double>::get(s, st, "mean"), sum / 7);
    CHECK(vm[0] == doctest::Approx(0.5 * std::pow(1.0 - 1e-3 / 0.01, 5)).epsilon(1e-14));
    // The sweep fed this node's part of the Stats (each node holds one or more of the 7 here)
    // and stamped it, the neurons' Vm still as it left them; with the fed Stats the only
    // reader, it writes no copy of Vm.
    const auto* de = static_cast<const DataElement*>(antler::test::element(nrn.id));
    const auto* vf = static_cast<const ValueFinfoBase*>(de->cinfo()->findFinfo("Vm"));
    std::ptrdiff_t off = -1;
    REQUIRE(vf->memberOffset(de->localData(de->localBegin()), &off));
    REQUIRE(de->state());
    CHECK((de->state()->sweepStamp(0) != 0) == !setter);
    CHECK(de->state()->memberCopy(off) == nullptr);
    // Vm set between runs (every neuron, on every node): the stamp no longer holds.
    Field<double>::setVec(s, nrn.id, "Vm", vm);
    CHECK(de->state()->sweepStamp(0) == 0);
    s.destroy(at);
  }
}

TEST_CASE("IntFire: thresh and tau changed between runs and by a message during a run") {
  // The sweep reads one thresh and one decay for the whole node while the neurons share them,
  // and per-neuron copies once they differ: each way they come to differ must reach the sweep.
  // /a: a Shell set between runs, without reinit; /b: a message during a run.
  Model m;
  Shell& s = m.s;
  const double dt = 1.0 / 1024, tau = 0.01, tau4 = 0.002;
  const Index n = 6;
  const ObjId a = s.create("IntFire", "/a", n);
  const ObjId b = s.create("IntFire", "/b", n);
  std::vector<double> v0(n);
  for (Index i = 0; i < n; ++i) v0[i] = 0.3 + 0.1 * static_cast<double>(i);
  for (const ObjId& x : {a, b}) {
    Field<double>::setVec(s, x.id, "initVm", v0);
    Field<double>::setVec(s, x.id, "thresh", std::vector<double>(n, 10.0));  // shared
    Field<double>::setVec(s, x.id, "tau", std::vector<double>(n, tau));
  }
  // /b[5]'s thresh follows a PulseGen: 10.0 (the shared value: it stays shared) until step 8,
  // then -5.
  const ObjId pg = s.create("PulseGen", "/pg");
  Field<double>::set(s, pg, "baseLevel", 10.0);
  Field<double>::set(s, pg, "firstLevel", -5.0);
  Field<double>::set(s, pg, "firstDelay", 8 * dt);
  Field<double>::set(s, pg, "firstWidth", 1000 * dt);
  s.addMsg("Single", pg, "output", ObjId(b.id, 5), "setThresh");
  antler::test::set_base_dt(s, dt);
  s.setClock(0, dt);
  for (const char* path : {"/pg", "/a", "/b"}) s.useClock(0, path);
  const double d = 1.0 - dt / tau, d4 = 1.0 - dt / tau4;
  auto decayed = [&](double v, int from, int to) {  // steps from .. to of decay by d
    for (int k = from; k <= to; ++k) v *= d;
    return v;
  };
  for (unsigned threads : {1u, 2u, 3u}) {
    CAPTURE(threads);
    s.setNumThreads(threads);
    Field<double>::set(s, ObjId(a.id, 2), "thresh", 10.0);
    Field<double>::set(s, ObjId(a.id, 4), "tau", tau);
    Field<double>::set(s, ObjId(b.id, 5), "thresh", 10.0);
    s.reinit();
    s.start(3 * dt);  // steps 1-3: every neuron decays
    for (const ObjId& x : {a, b}) {
      const auto vm = Field<double>::getVec(s, x.id, "Vm");
      for (Index i = 0; i < n; ++i) CHECK(vm[i] == decayed(v0[i], 1, 3));
    }
    // Between runs, without reinit: /a[2] fires at the next step, /a[4] decays faster.
    Field<double>::set(s, ObjId(a.id, 2), "thresh", 0.0);
    Field<double>::set(s, ObjId(a.id, 4), "tau", tau4);
    s.start(15 * dt);  // steps 4-18
    for (const ObjId& x : {a, b}) {
      const bool isA = x == a;
      CAPTURE(isA);
      const auto vm = Field<double>::getVec(s, x.id, "Vm");
      const auto last = Field<double>::getVec(s, x.id, "lastSpike");
      for (Index i = 0; i < n; ++i) {
        CAPTURE(i);
        double want = decayed(v0[i], 1, 18);
        if (isA && i == 4) {
          want = decayed(v0[i], 1, 3);
          for (int k = 4; k <= 18; ++k) want *= d4;
        }
        if (isA && i == 2) {
          CHECK(last[i] == 4 * dt);
          want = decayed(-1e-7, 5, 18);  // vReset, then decay
        } else if (!isA && i == 5) {
          // The message's thresh is read from the step after it arrives (8 or 9: the order of
          // PulseGen and IntFire within the tick); before it the shared 10.0.
          const double spikeStep = std::round(last[i] / dt);
          CHECK(spikeStep >= 8);
          CHECK(spikeStep <= 10);
          want = decayed(-1e-7, static_cast<int>(spikeStep) + 1, 18);
        } else {
          CHECK(std::isinf(last[i]));
        }
        CHECK(vm[i] == want);
      }
    }
  }
}

TEST_CASE("reinit drops pending synaptic events and resets Vm and lastSpike") {
  Model m;
  Shell& s = m.s;
  const ObjId nrn = m.s.create("IntFire", "/nrn");
  const ObjId syn = m.s.find("/nrn/synapse");
  Field<unsigned>::set(s, nrn, "numSynapses", 1);
  Field<double>::set(s, nrn, "initVm", 0.25);
  m.s.setClock(0, 1e-3);
  m.s.useClock(0, "/nrn");
  m.s.reinit();
  SetGet::call(s, ObjId(syn.id, 0, 0), "addSpike", 0.5);
  CHECK(Field<unsigned>::get(s, nrn, "numPending") == 1u);
  m.s.reinit();
  CHECK(Field<unsigned>::get(s, nrn, "numPending") == 0u);
  CHECK(Field<double>::get(s, nrn, "Vm") == 0.25);
}

TEST_CASE("Synapse and IntFire reject bad input") {
  Model m;
  Shell& s = m.s;
  const ObjId lone = m.s.create("Synapse", "/lone");
  CHECK_THROWS_AS(SetGet::call(s, lone, "addSpike", 0.1), ValueError);  // not an IntFire's synapse
  const ObjId nrn = m.s.create("IntFire", "/nrn");
  CHECK_THROWS_AS(Field<double>::set(s, nrn, "tau", 0.0), ValueError);
  CHECK_THROWS_AS(Field<double>::set(s, nrn, "lastSpike", 1.0), FieldError);
  CHECK(Field<double>::get(s, nrn, "tau") == 1.0);
}

TEST_CASE("a synaptic event that rounds to just after a step end is due in that step") {
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3, delay = 3 * dt;
  // Spike times s dt whose s dt + delay comes out a few ulps above (s + 3) dt.
  std::vector<long> late;
  for (long s = 1; s < 200 && late.size() < 3; ++s)
    if (s * dt + delay > (s + 3) * dt) late.push_back(s);
  REQUIRE(late.size() == 3);
  const ObjId nrn = m.s.create("IntFire", "/nrn");
  const ObjId syn = m.s.find("/nrn/synapse");
  const ObjId tab = m.s.create("Table", "/vm");
  Field<unsigned>::set(s, nrn, "numSynapses", 1);
  Field<double>::set(s, ObjId(syn.id, 0, 0), "delay", delay);
  Field<double>::set(s, ObjId(syn.id, 0, 0), "weight", 1.0);
  Field<double>::set(s, nrn, "thresh", 100.0);
  Field<double>::set(s, nrn, "tau", 1e300);  // (1 - dt/tau) == 1: no decay, Vm counts the events
  m.s.addMsg("Single", tab, "requestOut", nrn, "getVm");
  m.s.setClock(0, dt);
  m.s.useClock(0, "/nrn");
  m.s.useClock(0, "/vm");
  m.s.reinit();
  for (long k : late) SetGet::call(m.s, ObjId(syn.id, 0, 0), "addSpike", k * dt);
  const long steps = late.back() + 5;
  m.s.start(steps * dt);
  const auto v = Field<std::vector<double>>::get(s, tab, "vector");
  REQUIRE(v.size() == static_cast<std::size_t>(steps + 1));
  double want = 0;
  for (long k = 0; k <= steps; ++k) {
    for (long s : late) want += s + 3 == k;
    CAPTURE(k);
    CHECK(v[k] == want);
  }
}

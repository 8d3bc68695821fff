// IntFire's ring of pending events against serial references: a delay longer than the ring (set
// after reinit, with events in flight), the weight a spike carries (the one at sending time),
// the order in which a step's events from several messages are summed (the serial order, bit for
// bit, at 1 and 2 threads here and at 1-4 nodes through ctest), and numSynapses changed between
// runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "msg/msg.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;
using antler::test::regular_spikes;

namespace {

/// A serial IntFire that never fires: due[n] holds the weights due in step n, added one by one
/// into a step sum in the order they were scheduled; each step Vm += sum, then Vm *= decay.
struct RefVm {
  double Vm = 0, decay = 1;
  std::map<long, double> due;
  void schedule(long step, double w) { due[step] += w; }
  void step(long n) {
    if (auto it = due.find(n); it != due.end()) Vm += it->second;
    Vm *= decay;
  }
};

}  // namespace

TEST_CASE("an event beyond the ring's slots, scheduled after reinit with events in flight") {
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3, tau = 0.05;
  const ObjId nrn = m.s.create("IntFire", "/nrn");
  const ObjId syn = m.s.find("/nrn/synapse");
  const ObjId tab = m.s.create("Table", "/vm");
  const ObjId s0(syn.id, 0, 0);
  Field<unsigned>::set(s, nrn, "numSynapses", 1);
  Field<double>::set(s, nrn, "thresh", 100.0);
  Field<double>::set(s, nrn, "tau", tau);
  Field<double>::set(s, s0, "delay", 3 * dt);  // the ring is sized for 3 steps at reinit
  m.s.addMsg("Single", tab, "requestOut", nrn, "getVm");
  m.s.setClock(0, dt);
  m.s.useClock(0, "/nrn");
  m.s.useClock(0, "/vm");
  const double a = 0.3125, b = 0.1, c = 0.7, d = 0.045;
  const long steps = 50;

  RefVm ref;
  ref.decay = 1.0 - dt / tau;
  ref.schedule(3, a);   // sent at time 0 with delay 3 dt
  ref.schedule(4, b);   // sent at 3 dt (after step 2) with delay 1 dt
  ref.schedule(32, c);  // sent at 2 dt with delay 30 dt: ten times the ring
  ref.schedule(33, d);  // sent at 3 dt with delay 30 dt, after the ring grew
  std::vector<double> want{0.0};
  for (long n = 1; n <= steps; ++n) {
    ref.step(n);
    want.push_back(ref.Vm);
  }

  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    Field<double>::set(s, s0, "delay", 3 * dt);
    m.s.reinit();
    Field<double>::set(s, s0, "weight", a);
    SetGet::call(s, s0, "addSpike", 0.0);
    m.s.start(2 * dt);  // the ring's head has moved: growth must unroll it
    Field<double>::set(s, s0, "weight", b);
    Field<double>::set(s, s0, "delay", 1 * dt);
    SetGet::call(s, s0, "addSpike", 3 * dt);
    Field<double>::set(s, s0, "weight", c);
    Field<double>::set(s, s0, "delay", 30 * dt);
    SetGet::call(s, s0, "addSpike", 2 * dt);
    Field<double>::set(s, s0, "weight", d);
    SetGet::call(s, s0, "addSpike", 3 * dt);
    CHECK(Field<unsigned>::get(s, nrn, "numPending") == 4u);
    m.s.start((steps - 2) * dt);
    CHECK(Field<unsigned>::get(s, nrn, "numPending") == 0u);
    const auto v = Field<std::vector<double>>::get(s, tab, "vector");
    REQUIRE(v.size() == want.size());
    for (std::size_t k = 0; k < v.size(); ++k) {
      CAPTURE(k);
      CHECK(v[k] == want[k]);
    }
  }
}

TEST_CASE("a spike carries the weight its synapse had when it was sent") {
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3, tau = 0.05;
  const long delay = 5, every = 4;  // spikes at steps 1, 5, 9 arrive at 6, 10, 14
  const ObjId src = m.s.create("RandSpike", "/src");
  const ObjId nrn = m.s.create("IntFire", "/nrn");
  const ObjId syn = m.s.find("/nrn/synapse");
  const ObjId tab = m.s.create("Table", "/vm");
  const ObjId s0(syn.id, 0, 0);
  regular_spikes(s, src, every, dt);
  Field<unsigned>::set(s, nrn, "numSynapses", 1);
  Field<double>::set(s, nrn, "thresh", 100.0);
  Field<double>::set(s, nrn, "tau", tau);
  Field<double>::set(s, s0, "delay", delay * dt);
  m.s.addMsg("Single", src, "spikeOut", s0, "addSpike");
  m.s.addMsg("Single", tab, "requestOut", nrn, "getVm");
  m.s.setClock(0, dt);
  m.s.useClock(0, "/src");
  m.s.useClock(0, "/nrn");
  m.s.useClock(0, "/vm");
  const double w1 = 0.25, w2 = -0.125, w3 = 0.5;
  const long steps = 16;
  // The weight changes after step 2 (spike of step 1 in flight) and after step 7 (spike of step 5
  // in flight).
  RefVm ref;
  ref.decay = 1.0 - dt / tau;
  ref.schedule(1 + delay, w1);
  ref.schedule(5 + delay, w2);
  ref.schedule(9 + delay, w3);
  std::vector<double> want{0.0};
  for (long n = 1; n <= steps; ++n) {
    ref.step(n);
    want.push_back(ref.Vm);
  }
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    Field<double>::set(s, s0, "weight", w1);
    m.s.reinit();
    m.s.start(2 * dt);
    Field<double>::set(s, s0, "weight", w2);
    m.s.start(5 * dt);
    Field<double>::set(s, s0, "weight", w3);
    m.s.start((steps - 7) * dt);
    const auto v = Field<std::vector<double>>::get(s, tab, "vector");
    REQUIRE(v.size() == want.size());
    for (std::size_t k = 0; k < v.size(); ++k) {
      CAPTURE(k);
      CHECK(v[k] == want[k]);
    }
  }
}

TEST_CASE("events due in one step from several messages are summed in the serial order") {
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3, tau = 0.03;
  const Index nA = 12, nB = 10, nN = 9;
  const long steps = 30;
  const ObjId a = m.s.create("RandSpike", "/a", nA);  // fires every 2 steps
  const ObjId b = m.s.create("RandSpike", "/b", nB);  // fires every 3 steps
  const ObjId nrn = m.s.create("IntFire", "/nrn", nN);
  const ObjId syn = m.s.find("/nrn/synapse");
  regular_spikes(s, a, 2, dt);
  regular_spikes(s, b, 3, dt);
  Field<double>::setAll(s, nrn.id, "thresh", 1e9);
  Field<double>::setAll(s, nrn.id, "tau", tau);
  // Three Sparse messages into one synapse array: a, b, and a again.
  const std::uint32_t mA = m.s.addMsg("Sparse", a, "spikeOut", syn, "addSpike");
  m.s.setRandomConnectivity(mA, 0.8, 11);
  const std::uint32_t mB = m.s.addMsg("Sparse", b, "spikeOut", syn, "addSpike");
  m.s.setRandomConnectivity(mB, 0.9, 12);
  const std::uint32_t mA2 = m.s.addMsg("Sparse", a, "spikeOut", syn, "addSpike");
  m.s.setRandomConnectivity(mA2, 0.7, 13);
  m.s.doSyncDataHandler(syn.id);
  m.s.setClock(0, dt);
  m.s.useClock(0, "/a");
  m.s.useClock(0, "/b");
  m.s.useClock(0, "/nrn");

  // Weights with all 53 bits in use and magnitudes 1e-2 to 1e2 (so that the order of additions
  // shows in the sum), delays of 1-3 steps (so that spikes of different steps and messages fall
  // due together: ~20 events per neuron and step).
  const std::vector<unsigned> numSyn = Field<unsigned>::getVec(s, nrn.id, "numSynapses");
  std::vector<std::uint64_t> start(nN + 1, 0);
  for (Index i = 0; i < nN; ++i) start[i + 1] = start[i] + numSyn[i];
  REQUIRE(start[nN] > 30);
  std::vector<double> w(start[nN]);
  std::vector<long> delaySteps(start[nN]);
  for (std::uint64_t k = 0; k < start[nN]; ++k) {
    Rng r(99, k);
    w[k] = (r.uniform() - 0.4) * (k % 3 == 0 ? 1e2 : k % 3 == 1 ? 1.0 : 1e-2);
    delaySteps[k] = 1 + static_cast<long>(k * 7 % 3);
  }
  Field<double>::setVec(s, syn.id, "weight", w);

  // Serial reference: in each step the a's fire (if due), in index order, then the b's; each spike
  // walks the messages from its element in the order they were made, each row in order; a step's
  // weights are summed in that order.
  struct Source {
    std::uint32_t msg;
    long every;
  };
  const std::vector<std::vector<Source>> bySource{{{mA, 2}, {mA2, 2}}, {{mB, 3}}};
  // The synapse each entry feeds: a message's entries follow those of the messages filled before
  // it, parent by parent, in row order (only the owner of a parent knows its real field indices,
  // so they are counted here rather than read from the message's targets).
  std::map<std::uint32_t, std::vector<std::uint64_t>> synOf;
  {
    std::vector<std::uint64_t> next(start.begin(), start.end() - 1);
    for (std::uint32_t id : {mA, mB, mA2}) {
      const auto* sm = static_cast<const SparseMsg*>(m.s.msg(id));
      for (Index row = 0; row < sm->numRows(); ++row)
        for (auto [t, e] = sm->row(row); t != e; ++t) synOf[id].push_back(next[*t]++);
    }
    REQUIRE(next == std::vector<std::uint64_t>(start.begin() + 1, start.end()));
  }
  auto reference = [&](bool reversed, const std::vector<long>& delaySteps) {
    std::vector<RefVm> ref(nN);
    for (auto& r : ref) r.decay = 1.0 - dt / tau;
    for (long n = 1; n <= steps; ++n) {
      for (auto& r : ref) r.step(n);
      std::vector<std::pair<Index, std::pair<long, double>>> sent;  // (neuron, (due step, w))
      for (const auto& msgs : bySource) {
        if ((n - 1) % msgs[0].every != 0) continue;
        const auto* first = static_cast<const SparseMsg*>(m.s.msg(msgs[0].msg));
        for (Index row = 0; row < first->numRows(); ++row)
          for (const Source& src : msgs) {
            const auto* sm = static_cast<const SparseMsg*>(m.s.msg(src.msg));
            const Index* rowBegin = sm->row(0).first;
            for (auto [t, e] = sm->row(row); t != e; ++t) {
              const std::uint64_t k = synOf.at(src.msg)[static_cast<std::size_t>(t - rowBegin)];
              sent.push_back({*t, {n + delaySteps[k], w[k]}});
            }
          }
      }
      if (reversed) std::reverse(sent.begin(), sent.end());
      for (auto& [i, ev] : sent) ref[i].schedule(ev.first, ev.second);
    }
    std::vector<double> vm;
    for (auto& r : ref) vm.push_back(r.Vm);
    return vm;
  };
  // Variant 1 sends some events past the ring: neuron 0's synapses get a 12-step delay before
  // reinit (so the node that holds neuron 0 sizes its ring for 12 steps, the others for 3: 4 rows),
  // and after reinit every fifth synapse 6 steps more, and the next ones exactly 4 steps (the last
  // row of a 4-row ring, a step whose events may also be waiting aside). Those events wait aside
  // on some splits and go straight to the ring on others; the sums must not tell.
  for (int variant : {0, 1}) {
    CAPTURE(variant);
    std::vector<long> pre = delaySteps, post = delaySteps;
    if (variant == 1) {
      for (std::uint64_t k = start[0]; k < start[1]; ++k) pre[k] = post[k] = 12;
      for (std::uint64_t k = 0; k < post.size(); k += 5) post[k] += 6;
      for (std::uint64_t k = start[1]; k < post.size(); ++k)
        if (k % 5 == 1) post[k] = 4;
    }
    auto seconds = [&](const std::vector<long>& steps) {
      std::vector<double> d;
      for (long x : steps) d.push_back(static_cast<double>(x) * dt);
      return d;
    };
    const std::vector<double> want = reference(false, post);
    // The scenario can tell orders apart: another order gives other bits.
    REQUIRE(reference(true, post) != want);

    for (unsigned threads : {1u, 2u}) {
      CAPTURE(threads);
      m.s.setNumThreads(threads);
      Field<double>::setVec(s, syn.id, "delay", seconds(pre));
      m.s.reinit();
      Field<double>::setVec(s, syn.id, "delay", seconds(post));
      m.s.start(steps * dt);
      const std::vector<double> vm = Field<double>::getVec(s, nrn.id, "Vm");
      REQUIRE(vm.size() == want.size());
      for (Index i = 0; i < nN; ++i) {
        CAPTURE(i);
        CHECK(vm[i] == want[i]);
      }
    }
  }
}

TEST_CASE("numSynapses changed between runs: new synapses deliver, the ring fits their delay") {
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    Model m;
    Shell& s = m.s;
    m.s.setNumThreads(threads);
    const double dt = 1e-3, tau = 0.04;
    const ObjId src = m.s.create("RandSpike", "/src");
    const ObjId nrn = m.s.create("IntFire", "/nrn", 3);
    const ObjId syn = m.s.find("/nrn/synapse");
    regular_spikes(s, src, 4, dt);  // steps 1, 5, 9, ...
    Field<double>::setAll(s, nrn.id, "thresh", 100.0);
    Field<double>::setAll(s, nrn.id, "tau", tau);
    const std::uint32_t one = m.s.addMsg("Sparse", src, "spikeOut", syn, "addSpike");
    m.s.pairFill(one, {0, 0}, {0, 2});  // one synapse on neurons 0 and 2
    CHECK(Field<unsigned>::getVec(s, nrn.id, "numSynapses") == std::vector<unsigned>{1, 0, 1});
    Field<double>::setVec(s, syn.id, "weight", {0.5, 0.25});
    Field<double>::setVec(s, syn.id, "delay", {2 * dt, 2 * dt});
    m.s.setClock(0, dt);
    m.s.useClock(0, "/src");
    m.s.useClock(0, "/nrn");
    const long steps = 20;
    const double decay = 1.0 - dt / tau;
    // syns[i]: (delay in steps, weight) of neuron i's synapses that src feeds.
    auto run = [&](const std::vector<std::vector<std::pair<long, double>>>& syns) {
      m.s.reinit();
      m.s.start(steps * dt);
      const std::vector<double> vm = Field<double>::getVec(s, nrn.id, "Vm");
      for (Index i = 0; i < 3; ++i) {
        RefVm ref;
        ref.decay = decay;
        for (long s = 1; s <= steps; s += 4)
          for (auto [d, wt] : syns[i]) ref.schedule(s + d, wt);
        for (long n = 1; n <= steps; ++n) ref.step(n);
        CAPTURE(i);
        CHECK(vm[i] == ref.Vm);
      }
    };
    run({{{2, 0.5}}, {}, {{2, 0.25}}});
    // Neuron 1 gets two synapses, the second one with a delay 7 times the others', fed by a
    // Single message.
    Field<unsigned>::set(s, ObjId(nrn.id, 1), "numSynapses", 2);
    CHECK(Field<unsigned>::getVec(s, nrn.id, "numSynapses") == std::vector<unsigned>{1, 2, 1});
    Field<double>::setFieldVec(s, ObjId(syn.id, 1), "weight", {0.125, 0.375});
    Field<double>::setFieldVec(s, ObjId(syn.id, 1), "delay", {3 * dt, 14 * dt});
    m.s.addMsg("Single", src, "spikeOut", ObjId(syn.id, 1, 1), "addSpike");
    run({{{2, 0.5}}, {{14, 0.375}}, {{2, 0.25}}});
    // Neuron 0 gets a second synapse that nothing feeds; the Sparse-fed ones keep their values.
    Field<unsigned>::set(s, ObjId(nrn.id, 0), "numSynapses", 2);
    CHECK(Field<double>::get(s, ObjId(syn.id, 0, 0), "weight") == 0.5);
    CHECK(Field<double>::get(s, ObjId(syn.id, 0, 1), "weight") == 1.0);  // MOOSE's default
    run({{{2, 0.5}}, {{14, 0.375}}, {{2, 0.25}}});
  }
}

TEST_CASE("events sent before the first run wait until the ring exists; a run without reinit") {
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    Model m;
    Shell& s = m.s;
    m.s.setNumThreads(threads);
    const double dt = 1e-3, tau = 0.02;
    const ObjId nrn = m.s.create("IntFire", "/nrn", 3);
    const ObjId syn = m.s.find("/nrn/synapse");
    Field<unsigned>::setAll(s, nrn.id, "numSynapses", 1);
    Field<double>::setAll(s, nrn.id, "thresh", 100.0);
    Field<double>::setAll(s, nrn.id, "tau", tau);
    Field<double>::setVec(s, syn.id, "weight", {0.5, 0.25, 0.125});
    Field<double>::setVec(s, syn.id, "delay", {3 * dt, 7 * dt, 0.0});
    m.s.setClock(0, dt);
    m.s.useClock(0, "/nrn");
    // No reinit, no run yet: the neurons know no dt, so the events wait aside.
    for (Index i = 0; i < 3; ++i) SetGet::call(s, ObjId(syn.id, i, 0), "addSpike", 0.0);
    CHECK(Field<unsigned>::getVec(s, nrn.id, "numPending") == std::vector<unsigned>{1, 1, 1});
    const long steps = 12;
    m.s.start(steps * dt);
    CHECK(Field<unsigned>::getVec(s, nrn.id, "numPending") == std::vector<unsigned>{0, 0, 0});
    const std::vector<double> vm = Field<double>::getVec(s, nrn.id, "Vm");
    const std::vector<long> due{3, 7, 1};  // a zero delay is due in the first step
    const std::vector<double> w{0.5, 0.25, 0.125};
    for (Index i = 0; i < 3; ++i) {
      RefVm ref;
      ref.decay = 1.0 - dt / tau;
      ref.schedule(due[i], w[i]);
      for (long n = 1; n <= steps; ++n) ref.step(n);
      CAPTURE(i);
      CHECK(vm[i] == ref.Vm);
    }
  }
}

TEST_CASE("useClock moves an IntFire Element: it runs on the last tick named, with its dt") {
  // MOOSE's useClock takes an element off the tick it was on (here its default tick, 2, then
  // tick 0): it runs on one tick, so its ring counts steps of that tick's dt.
  Model m;
  Shell& s = m.s;
  const ObjId nrn = m.s.create("IntFire", "/nrn", 2);
  Field<double>::setAll(s, nrn.id, "initVm", 1.0);
  Field<double>::setAll(s, nrn.id, "thresh", 10.0);
  Field<double>::setAll(s, nrn.id, "tau", 0.1);
  m.s.setClock(0, 1e-3);
  m.s.setClock(1, 2e-3);
  m.s.useClock(0, "/nrn");
  m.s.useClock(1, "/nrn");
  m.s.reinit();
  m.s.start(4e-3);
  const double decay = 1.0 - 2e-3 / 0.1;
  for (double vm : Field<double>::getVec(s, nrn.id, "Vm")) CHECK(vm == decay * decay);
}

TEST_CASE(
    "a neuron's pending events keep their arrival order across runs, Shell calls and threads") {
  // Events due in one step arrive three ways: from a run (queued by the thread that delivers to
  // the neuron: the second thread's, for the upper neurons), then from two Shell calls between
  // runs; the next run is at 1 or 2 threads. The step must add them in that order: with weights
  // whose sum depends on the order ((0.1 + 0.2) + 0.3 != 0.1 + (0.2 + 0.3)), Vm's bits say so.
  const double dt = 1e-3, tau = 0.05;
  const Index nN = 6;
  const double wA = 0.1, wB = 0.2, wC = 0.3;
  const long due = 9, steps = 14;
  for (unsigned after : {1u, 2u}) {
    CAPTURE(after);
    Model m;
    Shell& s = m.s;
    const ObjId src = m.s.create("RandSpike", "/src");
    const ObjId nrn = m.s.create("IntFire", "/nrn", nN);
    const ObjId syn = m.s.find("/nrn/synapse");
    regular_spikes(s, src, 1000, dt);  // one spike, at step 1
    Field<unsigned>::setAll(s, nrn.id, "numSynapses", 3);
    Field<double>::setAll(s, nrn.id, "thresh", 100.0);
    Field<double>::setAll(s, nrn.id, "tau", tau);
    for (Index i = 0; i < nN; ++i) {
      Field<double>::set(s, ObjId(syn.id, i, 0), "weight", wA);
      Field<double>::set(s, ObjId(syn.id, i, 0), "delay", (due - 1) * dt);  // sent at step 1
      Field<double>::set(s, ObjId(syn.id, i, 1), "weight", wB);
      Field<double>::set(s, ObjId(syn.id, i, 2), "weight", wC);
      m.s.addMsg("Single", src, "spikeOut", ObjId(syn.id, i, 0), "addSpike");
    }
    m.s.setClock(0, dt);
    m.s.useClock(0, "/src");
    m.s.useClock(0, "/nrn");
    m.s.setNumThreads(2);
    m.s.reinit();
    m.s.start(3 * dt);  // the run's spike now waits for step `due` in its threads' queues
    for (Index i = 0; i < nN; ++i)
      for (unsigned j : {1u, 2u}) {
        Field<double>::set(s, ObjId(syn.id, i, j), "delay", static_cast<double>(due - 3) * dt);
        SetGet::call(s, ObjId(syn.id, i, j), "addSpike", 3 * dt);
      }
    CHECK(Field<unsigned>::getVec(s, nrn.id, "numPending") == std::vector<unsigned>(nN, 3u));
    m.s.setNumThreads(after);
    m.s.start((steps - 3) * dt);
    CHECK(Field<unsigned>::getVec(s, nrn.id, "numPending") == std::vector<unsigned>(nN, 0u));
    RefVm ref;
    ref.decay = 1.0 - dt / tau;
    for (double w : {wA, wB, wC}) ref.schedule(due, w);
    for (long n = 1; n <= steps; ++n) ref.step(n);
    const std::vector<double> vm = Field<double>::getVec(s, nrn.id, "Vm");
    for (Index i = 0; i < nN; ++i) {
      CAPTURE(i);
      CHECK(vm[i] == ref.Vm);
    }
  }
}

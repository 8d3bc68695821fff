// The synapse store in message order (core/edge_array.hpp): a Sparse message into IntFire's
// synapse field holds the synapses it fills, in its own CSR order, and the field element still
// reads and writes the same objects; erasing or refilling the message gives them back with their
// values; shrinking numSynapses under a message's entries, growing it again, and copying an
// IntFire behave as a std::vector member did. Runs at 1-4 nodes x 1-2 threads through ctest.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/edge_array.hpp"
#include "core/error.hpp"
#include "models/simple_syn_handler.hpp"
#include "models/synapse.hpp"
#include "msg/msg.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;
using antler::test::regular_spikes;

namespace {

const SparseMsg& sparse(Shell& s, std::uint32_t id) {
  return *static_cast<const SparseMsg*>(s.msg(id));
}

}  // namespace

TEST_CASE("a Sparse message keeps the synapses it fills in its own order; the field reads them") {
  Model m;
  Shell& s = m.s;
  const ObjId src = m.s.create("RandSpike", "/src", 7);
  const ObjId nrn = m.s.create("IntFire", "/nrn", 5);
  const ObjId syn = m.s.find("/nrn/synapse");
  const std::uint32_t id = m.s.addMsg("Sparse", src, "spikeOut", syn, "addSpike");
  m.s.setRandomConnectivity(id, 0.5, 2026);
  const SparseMsg& sm = sparse(m.s, id);
  REQUIRE(sm.store() != nullptr);
  auto* fe = static_cast<const FieldElement*>(antler::test::element(syn));
  const Index lo = fe->localBegin(), hi = fe->localEnd();
  // Slot k of the store is the k-th local entry in row order, and it is the very object the
  // field element hands out for that (neuron, synapse).
  std::size_t k = 0;
  for (Index r = 0; r < 7; ++r) {
    auto [b, e] = sm.row(r);
    for (const Index* t = b; t != e; ++t) {
      if (*t < lo || *t >= hi) continue;
      CAPTURE(r);
      CHECK(sm.slotOf(r, t) == k);
      CHECK(sm.store()->object(k) == fe->data(*t, sm.fieldIndices()[sm.entryOf(t)]));
      ++k;
    }
  }
  CHECK(sm.store()->size() == k);
  // Writes through the field land in the store, reads come back.
  std::vector<double> w;
  for (Index i = 0; i < sm.numEntries(); ++i) w.push_back(0.25 + 0.5 * i);
  const auto n = Field<unsigned>::getVec(s, nrn.id, "numSynapses");
  std::size_t total = 0;
  for (unsigned c : n) total += c;
  REQUIRE(total == sm.numEntries());
  Field<double>::setVec(s, syn.id, "weight", w);
  CHECK(Field<double>::getVec(s, syn.id, "weight") == w);
}

TEST_CASE("erasing or refilling a Sparse message gives its synapses back with their values") {
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    Model m;
    Shell& s = m.s;
    m.s.setNumThreads(threads);
    const double dt = 1e-3, tau = 0.05;
    const ObjId a = m.s.create("RandSpike", "/a", 3);
    const ObjId b = m.s.create("RandSpike", "/b", 2);
    const ObjId nrn = m.s.create("IntFire", "/nrn", 4);
    const ObjId syn = m.s.find("/nrn/synapse");
    regular_spikes(s, a, 3, dt);
    regular_spikes(s, b, 5, dt);
    Field<double>::setAll(s, nrn.id, "thresh", 100.0);
    Field<double>::setAll(s, nrn.id, "tau", tau);
    const std::uint32_t ma = m.s.addMsg("Sparse", a, "spikeOut", syn, "addSpike");
    m.s.pairFill(ma, {0, 1, 2, 2}, {0, 1, 3, 0});
    const std::uint32_t mb = m.s.addMsg("Sparse", b, "spikeOut", syn, "addSpike");
    m.s.pairFill(mb, {0, 1}, {0, 2});
    // Neuron 0: [a0, a2, b0]; neuron 1: [a1]; neuron 2: [b1]; neuron 3: [a2].
    CHECK(Field<unsigned>::getVec(s, nrn.id, "numSynapses") == std::vector<unsigned>{3, 1, 1, 1});
    const std::vector<double> w{0.5, 0.25, 0.125, 0.75, 0.375, 0.0625};
    const std::vector<double> d{1 * dt, 2 * dt, 3 * dt, 1 * dt, 4 * dt, 2 * dt};
    Field<double>::setVec(s, syn.id, "weight", w);
    Field<double>::setVec(s, syn.id, "delay", d);
    m.s.setClock(0, dt);
    m.s.useClock(0, "/a");
    m.s.useClock(0, "/b");
    m.s.useClock(0, "/nrn");
    const long steps = 30;
    // Vm by hand: each synapse (neuron, weight, delay in steps, firing period of its source).
    struct Syn {
      Index nrn;
      double w;
      long delay, every;
    };
    auto expect = [&](const std::vector<Syn>& syns) {
      std::vector<double> vm(4, 0.0);
      for (Index i = 0; i < 4; ++i) {
        std::vector<double> due(steps + 20, 0.0);
        for (const Syn& s : syns)
          if (s.nrn == i)
            for (long t = 1; t <= steps; t += s.every) due[t + s.delay] += s.w;
        for (long n = 1; n <= steps; ++n) vm[i] = (vm[i] + due[n]) * (1.0 - dt / tau);
      }
      return vm;
    };
    auto run = [&] {
      m.s.reinit();
      m.s.start(steps * dt);
      return Field<double>::getVec(s, nrn.id, "Vm");
    };
    // Within a step each neuron here gets at most one event per source, summed source a first:
    // the order by hand matches the serial order only up to rounding, so compare closely.
    auto close = [](const std::vector<double>& x, const std::vector<double>& y) {
      for (std::size_t i = 0; i < x.size(); ++i)
        if (std::abs(x[i] - y[i]) > 1e-12) return false;
      return true;
    };
    CHECK(close(run(), expect({{0, 0.5, 1, 3},
                               {0, 0.25, 2, 3},
                               {0, 0.125, 3, 5},
                               {1, 0.75, 1, 3},
                               {2, 0.375, 4, 5},
                               {3, 0.0625, 2, 3}})));

    // Deleting /a erases its message: every synapse keeps its value (and the array its size).
    m.s.destroy(a);
    CHECK(Field<unsigned>::getVec(s, nrn.id, "numSynapses") == std::vector<unsigned>{3, 1, 1, 1});
    CHECK(Field<double>::getVec(s, syn.id, "weight") == w);
    CHECK(Field<double>::getVec(s, syn.id, "delay") == d);
    CHECK(close(run(), expect({{0, 0.125, 3, 5}, {2, 0.375, 4, 5}})));
    // The given-back synapses are the field's own again: writable, and nothing delivers to them.
    Field<double>::set(s, ObjId(syn.id, 0, 0), "weight", 9.0);
    CHECK(Field<double>::get(s, ObjId(syn.id, 0, 0), "weight") == 9.0);

    // Refilling /b's message: each synapse it fills again keeps the value at its position.
    m.s.pairFill(mb, {1, 0}, {0, 3});  // b1 -> neuron 0 (entry 2), b0 -> neuron 3 (entry 1)
    CHECK(Field<unsigned>::getVec(s, nrn.id, "numSynapses") == std::vector<unsigned>{3, 1, 0, 2});
    CHECK(Field<double>::get(s, ObjId(syn.id, 0, 2), "weight") == 0.125);
    CHECK(Field<double>::get(s, ObjId(syn.id, 3, 1), "weight") == 1.0);  // new: MOOSE's default
    Field<double>::set(s, ObjId(syn.id, 3, 1), "weight", 0.5);
    Field<double>::set(s, ObjId(syn.id, 3, 1), "delay", 5 * dt);
    CHECK(close(run(), expect({{0, 0.125, 3, 5}, {3, 0.5, 5, 5}})));
  }
}

TEST_CASE("field indices: an IntFire network never builds them; introspection gets them right") {
  // A Sparse message keeps only data indices. Synapse::addSpike does not read its field index, so
  // running the network leaves them unbuilt (4 bytes per synapse saved); targets() builds them,
  // and they must be those a per-parent count in row order gives, after the earlier message's.
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3;
  constexpr Index kSrc = 40, kNrn = 30;
  const ObjId a = s.create("RandSpike", "/a", kSrc);
  const ObjId b = s.create("RandSpike", "/b", kSrc);
  const ObjId nrn = s.create("IntFire", "/nrn", kNrn);
  const ObjId syn = s.find("/nrn/synapse");
  Field<double>::setAll(s, a.id, "rate", 200.0);
  Field<double>::setAll(s, b.id, "rate", 200.0);
  const std::uint32_t ma = s.addMsg("Sparse", a, "spikeOut", syn, "addSpike");
  const std::uint32_t mb = s.addMsg("Sparse", b, "spikeOut", syn, "addSpike");
  s.setRandomConnectivity(ma, 0.3, 11);
  s.setRandomConnectivity(mb, 0.2, 12);
  s.setClock(0, dt);
  s.useClock(0, "/a");
  s.useClock(0, "/b");
  s.useClock(0, "/nrn");
  s.reinit();
  s.start(20 * dt);
  double moved = 0.0;  // the spikes reached the neurons
  for (double v : Field<double>::getVec(s, nrn.id, "Vm")) moved += std::abs(v);
  CHECK(moved > 0.0);
  CHECK_FALSE(sparse(s, ma).keepsFieldIndices());
  CHECK_FALSE(sparse(s, mb).keepsFieldIndices());
  // The reference: each local parent's entries numbered in row order, message a's first.
  auto* fe = static_cast<const FieldElement*>(antler::test::element(syn));
  const Index lo = fe->localBegin(), hi = fe->localEnd();
  std::vector<Index> next(kNrn, 0);
  std::size_t wrong = 0, checked = 0;
  for (std::uint32_t id : {ma, mb}) {
    const SparseMsg& sm = sparse(s, id);
    for (Index r = 0; r < kSrc; ++r) {
      const std::vector<Target> got = sm.targets(r, 0);
      auto [rb, re] = sm.row(r);
      REQUIRE(got.size() == static_cast<std::size_t>(re - rb));
      for (std::size_t k = 0; k < got.size(); ++k) {
        wrong += got[k].data != rb[k];
        if (got[k].data < lo || got[k].data >= hi) continue;  // another node's parent
        wrong += got[k].field != next[got[k].data]++;
        ++checked;
      }
    }
    CHECK(sm.keepsFieldIndices());
  }
  CHECK(wrong == 0);
  std::size_t local = 0;
  for (Index d = lo; d < hi; ++d) local += fe->numField(d);
  CHECK(checked == local);
}

TEST_CASE("numSynapses shrunk under a message's entries, then grown: as with a plain array") {
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3;
  const ObjId src = m.s.create("RandSpike", "/src");
  const ObjId nrn = m.s.create("IntFire", "/nrn", 2);
  const ObjId syn = m.s.find("/nrn/synapse");
  regular_spikes(s, src, 2, dt);
  Field<double>::setAll(s, nrn.id, "thresh", 100.0);
  const std::uint32_t id = m.s.addMsg("Sparse", src, "spikeOut", syn, "addSpike");
  m.s.pairFill(id, {0, 0, 0}, {0, 0, 1});  // neuron 0: two synapses, neuron 1: one
  Field<double>::setVec(s, syn.id, "weight", {0.5, 0.25, 0.125});
  m.s.setClock(0, dt);
  m.s.useClock(0, "/src");
  m.s.useClock(0, "/nrn");
  // Neuron 0 keeps one synapse: the message's spike to its second is delivered nowhere, as an
  // IndexError naming the entry (what a std::vector array gave), and the model is unchanged.
  Field<unsigned>::set(s, ObjId(nrn.id, 0), "numSynapses", 1);
  m.s.reinit();
  CHECK_THROWS_AS(m.s.start(2 * dt), IndexError);
  // Grown back: the entry is a new synapse (MOOSE's default weight 1), and spikes reach it.
  Field<unsigned>::set(s, ObjId(nrn.id, 0), "numSynapses", 2);
  CHECK(Field<double>::get(s, ObjId(syn.id, 0, 0), "weight") == 0.5);
  CHECK(Field<double>::get(s, ObjId(syn.id, 0, 1), "weight") == 1.0);
  Field<double>::set(s, ObjId(nrn.id, 0), "tau", 1e9);  // no decay to speak of
  Field<double>::set(s, ObjId(nrn.id, 1), "tau", 1e9);
  m.s.reinit();
  m.s.start(1 * dt);  // one spike at step 1, delay 0: due in step 2
  m.s.start(1 * dt);
  const double decay = 1.0 - dt / 1e9;
  CHECK(Field<double>::get(s, ObjId(nrn.id, 0), "Vm") == doctest::Approx((0.5 + 1.0) * decay));
  CHECK(Field<double>::get(s, ObjId(nrn.id, 1), "Vm") == doctest::Approx(0.125 * decay));
}

TEST_CASE("a row of 200 synapses: slots no longer live amid live ones go through the array") {
  // Delivery reads the live bits a word (64 slots) at a time: a word with a slot that is not live
  // takes the slow way for that slot only, in every word of the row.
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3;
  constexpr Index kN = 200;
  const ObjId src = s.create("RandSpike", "/src");
  const ObjId nrn = s.create("IntFire", "/nrn", kN);
  const ObjId syn = s.find("/nrn/synapse");
  regular_spikes(s, src, 2, dt);
  Field<double>::setAll(s, nrn.id, "thresh", 100.0);
  Field<double>::setAll(s, nrn.id, "tau", 1e9);
  const std::uint32_t id = s.addMsg("Sparse", src, "spikeOut", syn, "addSpike");
  s.pairFill(id, std::vector<Index>(kN, 0), [] {
    std::vector<Index> d(kN);
    for (Index i = 0; i < kN; ++i) d[i] = i;
    return d;
  }());
  Field<double>::setAll(s, syn.id, "weight", 0.5);
  // Neurons 3, 64, 70, 130 and 199 drop their synapse and get a new one (weight 1, MOOSE's
  // default): the slot stays the message's but is not live; the spike reaches the new one.
  const std::vector<Index> regrown{3, 64, 70, 130, 199};
  for (Index d : regrown) {
    Field<unsigned>::set(s, ObjId(nrn.id, d), "numSynapses", 0);
    Field<unsigned>::set(s, ObjId(nrn.id, d), "numSynapses", 1);
  }
  s.setClock(0, dt);
  s.useClock(0, "/src");
  s.useClock(0, "/nrn");
  s.reinit();
  s.start(2 * dt);  // one spike at step 1, delay 0: due in step 2
  const double decay = 1.0 - dt / 1e9;
  const auto vm = Field<double>::getVec(s, nrn.id, "Vm");
  REQUIRE(vm.size() == kN);
  for (Index d = 0; d < kN; ++d) {
    CAPTURE(d);
    const bool fresh = std::find(regrown.begin(), regrown.end(), d) != regrown.end();
    CHECK(vm[d] == doctest::Approx((fresh ? 1.0 : 0.5) * decay));
  }
}

TEST_CASE("between runs, arrays the messages fill drop their addresses; any use rebuilds them") {
  // core/edge_array.hpp, "While the model runs": before a run the clock compacts every synapse
  // array whose entries are all the messages' (of one or several); reading or writing synapses,
  // resizing an array, or a Table asking for a weight during a run (from a worker thread)
  // rebuilds them, and every value and every run's Vm are as if nothing had been dropped. An
  // array with an entry of its own keeps its addresses.
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3;
  constexpr Index kN = 8;
  const ObjId src = s.create("RandSpike", "/src", 4);
  const ObjId src2 = s.create("RandSpike", "/src2", 2);
  const ObjId nrn = s.create("IntFire", "/nrn", kN);
  const ObjId syn = s.find("/nrn/synapse");
  regular_spikes(s, src, 1000, dt);  // one spike each in a run of 8 steps
  regular_spikes(s, src2, 1000, dt);
  Field<double>::setAll(s, nrn.id, "thresh", 100.0);
  Field<double>::setAll(s, nrn.id, "tau", 1e9);  // Vm: the sum of the weights that arrived
  Field<unsigned>::set(s, ObjId(nrn.id, 7), "numSynapses", 1);  // an entry of its own
  const std::uint32_t id = s.addMsg("Sparse", src, "spikeOut", syn, "addSpike");
  s.pairFill(id, {0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 3}, {0, 1, 2, 0, 3, 0, 4, 5, 1, 5, 7});
  const std::uint32_t id2 = s.addMsg("Sparse", src2, "spikeOut", syn, "addSpike");
  s.pairFill(id2, {0, 1}, {1, 5});
  // Entries, neuron by neuron (row order, the first message's first): 0: src 0, 1, 2 (k = 0-2);
  // 1: src 0, 3, src2 0 (3-5); 2: src 0 (6); 3: src 1 (7); 4: src 2 (8); 5: src 2, 3, src2 1
  // (9-11); 6: none; 7: its own, then src 3 (12-13).
  const std::vector<unsigned> num{3, 3, 1, 1, 1, 3, 0, 2};
  REQUIRE(Field<unsigned>::getVec(s, nrn.id, "numSynapses") == num);
  std::vector<double> w, d;
  for (std::size_t k = 0; k < 14; ++k) {
    w.push_back(0.125 * static_cast<double>(k + 1));  // sums exact in doubles
    d.push_back(static_cast<double>(k % 3) * dt);
  }
  Field<double>::setVec(s, syn.id, "weight", w);
  Field<double>::setVec(s, syn.id, "delay", d);
  s.setClock(0, dt);
  s.useClock(0, "/src");
  s.useClock(0, "/src2");
  s.useClock(0, "/nrn");
  const EdgeStoreBase* store = sparse(s, id).store();
  const EdgeStoreBase* store2 = sparse(s, id2).store();
  REQUIRE(store != nullptr);
  REQUIRE(store2 != nullptr);
  auto* fe = static_cast<const FieldElement*>(antler::test::element(syn));
  auto local = [&](Index i) { return fe->localBegin() <= i && i < fe->localEnd(); };
  // This node's arrays that compact, by store: the first message's, neurons 0-5; the second's,
  // neurons 1 and 5 (both also the first's).
  std::size_t compactable = 0, compactable2 = 0;
  for (Index i = 0; i < kN; ++i) {
    compactable += local(i) && i <= 5;
    compactable2 += local(i) && (i == 1 || i == 5);
  }
  auto compacted = [&](std::size_t a, std::size_t b, int line = __builtin_LINE()) {
    CAPTURE(line);
    CHECK(store->compactedArrays() == a);
    CHECK(store2->compactedArrays() == b);
  };
  // Each neuron's Vm: the weights of its entries that the messages fill (not neuron 7's own).
  auto checkVm = [&](const std::vector<double>& weights) {
    std::vector<double> want(kN, 0.0);
    std::size_t k = 0;
    for (Index i = 0; i < kN; ++i)
      for (unsigned j = 0; j < num[i]; ++j, ++k)
        if (!(i == 7 && j == 0)) want[i] += weights[k];
    const auto vm = Field<double>::getVec(s, nrn.id, "Vm");
    REQUIRE(vm.size() == want.size());
    for (Index i = 0; i < kN; ++i) {
      CAPTURE(i);
      CHECK(vm[i] == doctest::Approx(want[i]).epsilon(1e-9));
    }
  };

  compacted(0, 0);
  s.reinit();
  s.start(8 * dt);
  compacted(compactable, compactable2);
  checkVm(w);
  compacted(compactable, compactable2);  // Vm is not a synapse
  // Reading rebuilds them all, once; the values are the ones set.
  CHECK(Field<double>::getVec(s, syn.id, "weight") == w);
  compacted(0, 0);
  CHECK(Field<double>::getVec(s, syn.id, "delay") == d);
  // The next run compacts them again; a write rebuilds them (on the node that holds the entry)
  // and lands where delivery reads it.
  s.start(1 * dt);
  compacted(compactable, compactable2);
  Field<double>::set(s, ObjId(syn.id, 5, 0), "weight", 4.0);
  w[9] = 4.0;
  if (local(5))
    compacted(0, 0);
  else
    compacted(compactable, compactable2);
  s.reinit();
  s.start(8 * dt);
  checkVm(w);

  // During a run: a Table asks for a weight every step, from the thread that runs it.
  const ObjId tab = s.create("Table", "/tab");
  s.addMsg("Single", tab, "requestOut", ObjId(syn.id, 5, 1), "getWeight");
  s.useClock(0, "/tab");
  s.reinit();
  s.start(8 * dt);
  const auto v = Field<std::vector<double>>::get(s, tab, "vector");
  REQUIRE(v.size() == 9);
  for (double x : v) CHECK(x == w[10]);
  checkVm(w);
  s.destroy(tab);

  // Neuron 0 shrunk while compacted: its third slot stops being live; compacted again at the
  // next run (no spikes in it), and rebuilt without that slot. (The Table's reads rebuilt the
  // arrays twice, at reinit and in the run: a run without reads first, so that the back-off
  // tested below does not start here.)
  s.start(1 * dt);
  compacted(compactable, compactable2);
  s.start(1 * dt);
  Field<unsigned>::set(s, ObjId(nrn.id, 0), "numSynapses", 2);
  s.start(1 * dt);
  compacted(compactable, compactable2);
  std::vector<double> now = w;
  now.erase(now.begin() + 2);
  CHECK(Field<double>::getVec(s, syn.id, "weight") == now);
  // Grown back, neuron 0 has an entry of its own: it keeps its addresses from now on.
  Field<unsigned>::set(s, ObjId(nrn.id, 0), "numSynapses", 3);
  s.start(1 * dt);
  compacted(compactable - (local(0) ? 1 : 0), compactable2);
  now.insert(now.begin() + 2, 1.0);  // MOOSE's default weight
  CHECK(Field<double>::getVec(s, syn.id, "weight") == now);
  // Erasing a message while the arrays are compacted gives every value back; neurons 1 and 5
  // then hold entries of their own beside the second message's, and keep their addresses.
  s.start(1 * dt);
  s.destroy(src);
  CHECK(Field<double>::getVec(s, syn.id, "weight") == now);
  s.start(1 * dt);
  CHECK(store2->compactedArrays() == 0);
  CHECK(Field<double>::getVec(s, syn.id, "weight") == now);
}

TEST_CASE("a script that reads the synapses after every run: rebuilds grow as the log of runs") {
  // A rebuild is a pass over the stores: after EdgeStoreBase::kFreeRebuilds rebuilds in a row
  // that each undid the compaction before the next run, a store skips 1, 3, 7, ... sweeps; once
  // the reads stop, a compaction lasts a run and every run compacts again.
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3;
  const ObjId src = s.create("RandSpike", "/src", 2);
  s.create("IntFire", "/nrn", 4);
  const ObjId syn = s.find("/nrn/synapse");
  const std::uint32_t id = s.addMsg("Sparse", src, "spikeOut", syn, "addSpike");
  s.pairFill(id, {0, 0, 1, 1, 1}, {0, 1, 1, 2, 3});
  const std::vector<double> w{0.5, 0.25, 0.125, 2.0, 4.0};
  Field<double>::setVec(s, syn.id, "weight", w);
  s.setClock(0, dt);
  s.useClock(0, "/src");
  s.useClock(0, "/nrn");
  s.reinit();
  const EdgeStoreBase* st = sparse(s, id).store();
  REQUIRE(st != nullptr);
  const bool here = st->size() > 0;  // this node holds entries (every neuron has some)
  constexpr int kRuns = 64;
  int rebuilt = 0;
  for (int r = 0; r < kRuns; ++r) {
    s.start(dt);
    rebuilt += st->compactedArrays() > 0;  // compacted in this run: the read rebuilds it
    CHECK(Field<double>::getVec(s, syn.id, "weight") == w);
    CHECK(st->compactedArrays() == 0);
  }
  if (!here) {
    CHECK(rebuilt == 0);
    return;
  }
  CHECK(rebuilt >= static_cast<int>(EdgeStoreBase::kFreeRebuilds));
  CHECK(rebuilt <= static_cast<int>(EdgeStoreBase::kFreeRebuilds) + 1 + 6);  // + log2(64)
  // The reads stop: within the back-off the arrays compact, and stay so.
  int first = -1;
  for (int r = 0; r < kRuns; ++r) {
    s.start(dt);
    if (first < 0 && st->compactedArrays() > 0) first = r;
    if (first >= 0) CHECK(st->compactedArrays() > 0);
  }
  CHECK(first >= 0);
  // One read now is one rebuild, and the next run compacts again.
  CHECK(Field<double>::getVec(s, syn.id, "weight") == w);
  CHECK(st->compactedArrays() == 0);
  s.start(dt);
  CHECK(st->compactedArrays() > 0);
}

TEST_CASE("the longest delay of each handler, read from the stores while its array is compacted") {
  // A run's prepare (IntFire's rows, SimpleSynHandler's queues) needs each object's longest
  // delay; compacted arrays are read in their messages' stores instead of being rebuilt. Two
  // messages fill the arrays; handler 3 keeps an entry of its own (its array is not compacted).
  Model m;
  Shell& s = m.s;
  const double dt = 1e-3;
  constexpr Index kN = 5;
  const ObjId a = s.create("RandSpike", "/a", 3);
  const ObjId b = s.create("RandSpike", "/b", 2);
  const ObjId h = s.create("SimpleSynHandler", "/h", kN);
  const ObjId syn = s.find("/h/synapse");
  Field<unsigned>::set(s, ObjId(h.id, 3), "numSynapses", 1);
  const std::uint32_t ma = s.addMsg("Sparse", a, "spikeOut", syn, "addSpike");
  s.pairFill(ma, {0, 0, 1, 2, 2}, {0, 1, 1, 3, 4});
  const std::uint32_t mb = s.addMsg("Sparse", b, "spikeOut", syn, "addSpike");
  s.pairFill(mb, {0, 1}, {0, 4});
  // Entries: 0: a0, b0 (k = 0, 1); 1: a0, a1 (2, 3); 2: none; 3: own, a2 (4, 5); 4: a2, b1 (6, 7).
  const std::vector<double> d{3 * dt, 7 * dt, 2 * dt, 1 * dt, 9 * dt, 4 * dt, 5 * dt, 6 * dt};
  Field<double>::setVec(s, syn.id, "delay", d);
  const std::vector<double> want{7 * dt, 2 * dt, 0.0, 9 * dt, 6 * dt};  // max over each's entries
  const auto* e = static_cast<const DataElement*>(antler::test::element(h));
  // The node's one figure (IntFire's queues): the largest of its handlers'. Without handler 3's
  // array (its own entry, 9 dt, read through its addresses), the stores are read in slot order,
  // handler 3's lent entry (a2, 4 dt) among the others. Before the run (the arrays have their
  // addresses: those without own entries are read in the stores all the same) and after it (the
  // arrays compacted).
  auto check_node = [&](const std::vector<const EdgeArray<Synapse>*>& arrays) {
    double node = 0.0, others = 0.0;
    std::vector<const EdgeArray<Synapse>*> rest;
    bool restStores = false;
    for (Index i = e->localBegin(); i < e->localEnd(); ++i) {
      node = std::max(node, want[i]);
      const EdgeArray<Synapse>* arr = arrays[i - e->localBegin()];
      if (i == 3) {
        CHECK_FALSE(arr->allLent());
        others = std::max(others, 4 * dt);
        continue;
      }
      CHECK(arr->allLent());
      others = std::max(others, want[i]);
      rest.push_back(arr);
      restStores = restStores || arr->size() > 0;
    }
    CHECK(longest_delay(e, arrays) == node);
    if (restStores && rest.size() < arrays.size()) CHECK(longest_delay(e, rest) == others);
  };
  {
    std::vector<const EdgeArray<Synapse>*> before;
    for (Index i = e->localBegin(); i < e->localEnd(); ++i) {
      before.push_back(&reinterpret_cast<SimpleSynHandler*>(e->localData(i))->synapses());
      CHECK_FALSE(before.back()->compacted());
    }
    check_node(before);
  }
  s.setClock(0, dt);
  s.useClock(0, "/a");
  s.useClock(0, "/b");
  s.useClock(0, "/h");
  s.reinit();
  s.start(2 * dt);
  std::vector<const EdgeArray<Synapse>*> arrays;
  std::size_t compacted = 0;
  for (Index i = e->localBegin(); i < e->localEnd(); ++i) {
    arrays.push_back(&reinterpret_cast<SimpleSynHandler*>(e->localData(i))->synapses());
    compacted += arrays.back()->compacted();
    CHECK(arrays.back()->compacted() == (i != 2 && i != 3));
  }
  const std::vector<double> got = longest_delays(e, arrays);
  REQUIRE(got.size() == arrays.size());
  for (Index i = e->localBegin(); i < e->localEnd(); ++i) {
    CAPTURE(i);
    CHECK(got[i - e->localBegin()] == want[i]);
  }
  check_node(arrays);
  // Read without rebuilding anything.
  for (const EdgeArray<Synapse>* arr : arrays) compacted -= arr->compacted();
  CHECK(compacted == 0);
  std::size_t fromA = 0;  // the compacted arrays that hold a's entries: handlers 0, 1, 4
  for (Index i = e->localBegin(); i < e->localEnd(); ++i) fromA += i == 0 || i == 1 || i == 4;
  CHECK(sparse(s, ma).store()->compactedArrays() == fromA);
}

TEST_CASE("EdgeArray: lent entries, given back, dropped, copied") {
  struct W {
    double v = 1.0;
  };
  EdgeArray<W> arr;
  arr.resize(3);
  for (std::size_t i = 0; i < 3; ++i) arr[i].v = 10.0 + static_cast<double>(i);
  EdgeStore<W> store(2);
  const Index f[] = {2, 0};
  const std::uint64_t slot[] = {0, 1};
  arr.lend(f, slot, 2, store);
  // Lent entries are the store's slots, with the values they had.
  CHECK(&arr[2] == &store.slot(0));
  CHECK(&arr[0] == &store.slot(1));
  CHECK(store.slot(0).v == 12.0);
  CHECK(store.live(1));
  arr[0].v = 20.0;  // writes reach the slot
  CHECK(store.slot(1).v == 20.0);
  // A copy owns its values; the original keeps its slots.
  EdgeArray<W> copy = arr;
  CHECK(copy.size() == 3);
  CHECK(copy[0].v == 20.0);
  CHECK(&copy[0] != &arr[0]);
  copy[0].v = 30.0;
  CHECK(arr[0].v == 20.0);
  // Shrinking drops entry 2: its slot is no longer live.
  arr.resize(2);
  CHECK_FALSE(store.live(0));
  CHECK(store.live(1));
  // Giving back: entry 0 takes the slot's value; entry 2 (dropped) is left alone.
  arr.unlend(f, slot, 2, store);
  CHECK_FALSE(store.live(1));
  CHECK(arr[0].v == 20.0);
  CHECK(&arr[0] != &store.slot(1));
  arr.resize(4);
  CHECK(arr[1].v == 11.0);
  CHECK(arr[3].v == 1.0);
  // Moving keeps the lent pointers.
  EdgeStore<W> store2(1);
  const Index f2[] = {3};
  const std::uint64_t slot2[] = {0};
  arr.lend(f2, slot2, 1, store2);
  EdgeArray<W> moved = std::move(arr);
  CHECK(&moved[3] == &store2.slot(0));
}

TEST_CASE("EdgeArray: entries lent by two stores and its own, dropped and given back by address") {
  // The slots hold the objects alone (no flag beside them): which store or own block an entry
  // lies in is found from its address, and each store keeps a live bit per slot.
  struct W {
    double v = 0.0;
  };
  static_assert(sizeof(W) == sizeof(double));
  EdgeArray<W> arr;
  arr.resize(2);  // own entries 0 and 1
  arr[0].v = 1.0;
  arr[1].v = 2.0;
  EdgeStore<W> a(3), b(2);
  CHECK(a.stride() == sizeof(W));  // packed
  const Index fa[] = {2, 3, 0};
  const std::uint64_t sa[] = {0, 1, 2};
  arr.lend(fa, sa, 3, a);  // 2 and 3 born in a; 0 moves into a (its value with it)
  const Index fb[] = {4};
  const std::uint64_t sb[] = {1};
  arr.lend(fb, sb, 1, b);
  CHECK(arr.size() == 5);
  CHECK(&arr[0] == &a.slot(2));
  CHECK(a.slot(2).v == 1.0);
  CHECK(&arr[4] == &b.slot(1));
  CHECK((a.live(0) && a.live(1) && a.live(2)));
  CHECK((!b.live(0) && b.live(1)));
  CHECK(a.indexOf(&a.slot(1)) == 1);
  CHECK(a.indexOf(&b.slot(0)) == EdgeStore<W>::npos);
  // Shrinking to 2 drops a's slots 0 and 1 (entries 2, 3) and b's slot 1 (entry 4); entry 1 stays
  // own, entry 0 stays a's slot 2.
  arr.resize(2);
  CHECK((!a.live(0) && !a.live(1) && a.live(2)));
  CHECK_FALSE(b.live(1));
  CHECK(arr[1].v == 2.0);
  // a gives back what it still lends: entry 0 becomes own again, with its value.
  arr[0].v = 7.0;
  arr.unlend(fa, sa, 3, a);
  CHECK_FALSE(a.live(2));
  CHECK(&arr[0] != &a.slot(2));
  CHECK(arr[0].v == 7.0);
  // Every entry is own now: shrinking frees them without asking any store.
  arr.resize(0);
  CHECK(arr.size() == 0);
  arr.resize(3);
  CHECK(arr[2].v == 0.0);
}

TEST_CASE("EdgeArray: a thousand refills use up its 2^32 addresses; the ranges are renumbered") {
  // Each store that lends to an array takes a range of the array's 32-bit address space as large
  // as the store (4M slots here); a refill drops the old store and takes a new range. After
  // ~1024 refills the space is used up and the live ranges are renumbered from 0, entries with
  // them: every value must survive that, own and lent alike.
  struct W {
    std::uint8_t v = 0;
  };
  EdgeArray<W> arr;
  arr.resize(3);
  arr[0].v = 7;
  arr[2].v = 9;
  constexpr std::size_t kSlots = std::size_t{1} << 22;
  const Index f[] = {1};
  std::size_t wrong = 0;
  for (std::size_t round = 0; round < 1100; ++round) {
    EdgeStore<W> store(kSlots);
    const std::uint64_t slot[] = {(round * 2654435761u) % kSlots};
    arr.lend(f, slot, 1, store);
    wrong += &arr[1] != &store.slot(slot[0]);
    wrong += arr[1].v != static_cast<std::uint8_t>(round);  // the value it had, moved in
    arr[1].v = static_cast<std::uint8_t>(round + 1);
    arr.unlend(f, slot, 1, store);
    wrong += arr[0].v != 7 || arr[2].v != 9 || arr[1].v != static_cast<std::uint8_t>(round + 1);
  }
  CHECK(wrong == 0);
  CHECK(arr.size() == 3);
}

TEST_CASE(
    "a fill of 1.5e6 synapses: lent in several runs, the arrays regrown in groups, values kept") {
  // Past SparseMsg::byParent's run of 2^20 entries and EdgeArray::reserveAll's group of 2^20
  // entries held: the per-row cursors carry from one run to the next, and a second message grows
  // arrays that together hold more than one group.
  Model m;
  Shell& s = m.s;
  constexpr Index kSrc = 1500, kNrn = 3000, kFan = 1000;
  const ObjId a = s.create("RandSpike", "/a", kSrc);
  const ObjId b = s.create("RandSpike", "/b", 500);
  const ObjId nrn = s.create("IntFire", "/nrn", kNrn);
  const ObjId syn = s.find("/nrn/synapse");
  std::vector<Index> ps, pd;
  ps.reserve(std::size_t{kSrc} * kFan);
  pd.reserve(std::size_t{kSrc} * kFan);
  for (Index i = 0; i < kSrc; ++i)
    for (Index j = 0; j < kFan; ++j) {  // 13 is prime to 3000: no pair twice in a row
      ps.push_back(i);
      pd.push_back((i * 7 + j * 13) % kNrn);
    }
  const std::uint32_t ma = s.addMsg("Sparse", a, "spikeOut", syn, "addSpike");
  s.pairFill(ma, ps, pd);
  // By hand: neuron d's synapses are its entries in row order (sources ascending).
  std::vector<std::vector<Index>> from(kNrn);
  for (std::size_t k = 0; k < ps.size(); ++k) from[pd[k]].push_back(ps[k]);
  std::vector<unsigned> count(kNrn);
  for (Index d = 0; d < kNrn; ++d) count[d] = static_cast<unsigned>(from[d].size());
  CHECK(Field<unsigned>::getVec(s, nrn.id, "numSynapses") == count);
  // Weights that name their synapse: source + 1e-4 x neuron.
  std::vector<double> w;
  for (Index d = 0; d < kNrn; ++d)
    for (Index src : from[d]) w.push_back(src + 1e-4 * d);
  Field<double>::setVec(s, syn.id, "weight", w);
  // Each local entry is the store's slot, in row order; the slot holds the weight of its pair.
  const SparseMsg& sm = sparse(s, ma);
  auto* fe = static_cast<const FieldElement*>(antler::test::element(syn));
  const Index lo = fe->localBegin(), hi = fe->localEnd();
  std::size_t k = 0, wrong = 0;
  for (Index r = 0; r < kSrc; ++r) {
    auto [rb, re] = sm.row(r);
    for (const Index* t = rb; t != re; ++t) {
      if (*t < lo || *t >= hi) continue;
      const char* obj = sm.store()->object(k);
      wrong += obj != fe->data(*t, sm.fieldIndices()[sm.entryOf(t)]) ||
               reinterpret_cast<const Synapse*>(obj)->weight() != r + 1e-4 * *t;
      ++k;
    }
  }
  CHECK(wrong == 0);
  CHECK(k == sm.store()->size());
  // A second message adds one synapse to each of neurons 0, 6, 12, ...: the arrays grow, the
  // first message's synapses keep their slots and values, the new ones start at the default.
  std::vector<Index> bs, bd;
  for (Index i = 0; i < 500; ++i) {
    bs.push_back(i);
    bd.push_back(6 * i);
  }
  const std::uint32_t mb = s.addMsg("Sparse", b, "spikeOut", syn, "addSpike");
  s.pairFill(mb, bs, bd);
  std::vector<double> w2;
  std::size_t at = 0;
  for (Index d = 0; d < kNrn; ++d) {
    for (std::size_t j = 0; j < from[d].size(); ++j) w2.push_back(w[at++]);
    if (d % 6 == 0) w2.push_back(Synapse().weight());
  }
  CHECK(Field<double>::getVec(s, syn.id, "weight") == w2);
  k = 0;
  wrong = 0;
  for (Index r = 0; r < kSrc; ++r) {
    auto [rb, re] = sm.row(r);
    for (const Index* t = rb; t != re; ++t)
      if (*t >= lo && *t < hi)
        wrong += sm.store()->object(k++) != fe->data(*t, sm.fieldIndices()[sm.entryOf(t)]);
  }
  CHECK(wrong == 0);
  // Erasing the first message gives its synapses back to the arrays, values and all.
  s.destroy(s.find("/a"));
  const auto left = Field<double>::getVec(s, syn.id, "weight");
  CHECK(left.size() == w2.size());
  CHECK(left == w2);
}

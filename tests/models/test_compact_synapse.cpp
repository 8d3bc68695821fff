// CompactSynapse (models/synapse.hpp): the synapses of an IntFire or a SimpleSynHandler in 8
// bytes, weight and delay in single precision. The oracle is the same network on the
// double-precision `synapse` field with its weights and delays rounded to floats by the test: Vm,
// spike times and the synapses' values must have the same bits. Runs at 1-4 nodes x 1-2 threads
// through ctest.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;
using antler::test::regular_spikes;

namespace {

// To the nearest float (weights), or toward zero (delays).
std::vector<double> to_floats(const std::vector<double>& v, bool towardZero = false) {
  std::vector<double> out;
  for (double x : v) {
    float f = static_cast<float>(x);
    if (towardZero && std::fabs(double{f}) > std::fabs(x)) f = std::nextafter(f, 0.0f);
    out.push_back(static_cast<double>(f));
  }
  return out;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

}  // namespace

TEST_CASE("compactSynapse: the bits of the synapse field with weights and delays as floats") {
  // Two copies of one network in one model: /d on the `synapse` field, /c on `compactSynapse`.
  // Each has 40 neurons fed by the same 12 inputs and by each other (recurrent, so a spike that
  // moves changes everything after it). Weights and delays are doubles no float holds; /d gets
  // them rounded to floats, /c gets them as drawn and must round them itself. The synapses are
  // IntFire's own, or (MOOSE 3/4's layout) those of 40 SimpleSynHandlers on tick 1 feeding the
  // IntFires' activation on tick 2, one to one.
  bool handlers = false;
  SUBCASE("IntFire's synapses") {}
  SUBCASE("SimpleSynHandler's synapses") {
    handlers = true;
  }
  CAPTURE(handlers);
  Model m;
  Shell& s = m.s;
  const double dt = 1e-4;
  constexpr Index kN = 40, kIn = 12;
  const ObjId in = s.create("RandSpike", "/in", kIn);
  regular_spikes(s, in, 7, dt);
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Index> inSrc, inDst, recSrc, recDst;
  for (Index i = 0; i < kIn; ++i)
    for (Index j = 0; j < kN; ++j)
      if (u(rng) < 0.4) inSrc.push_back(i), inDst.push_back(j);
  for (Index i = 0; i < kN; ++i)
    for (Index j = 0; j < kN; ++j)
      if (i != j && u(rng) < 0.2) recSrc.push_back(i), recDst.push_back(j);
  struct Net {
    ObjId nrn, syn;
  };
  auto build = [&](const char* path, const char* field) {
    const ObjId nrn = s.create("IntFire", path, kN);
    ObjId holder = nrn;
    if (handlers) {
      holder = s.create("SimpleSynHandler", std::string(path) + "/h", kN);
      s.addMsg("OneToOne", holder, "activationOut", nrn, "activation");
    }
    const ObjId syn = s.find(s.path(holder) + "/" + field);
    Field<double>::setAll(s, nrn.id, "thresh", 0.3);
    Field<double>::setAll(s, nrn.id, "tau", 0.01);
    Field<double>::setAll(s, nrn.id, "refractoryPeriod", 5 * dt);
    s.pairFill(s.addMsg("Sparse", in, "spikeOut", syn, "addSpike"), inSrc, inDst);
    s.pairFill(s.addMsg("Sparse", nrn, "spikeOut", syn, "addSpike"), recSrc, recDst);
    return Net{nrn, syn};
  };
  const Net d = build("/d", "synapse"), c = build("/c", "compactSynapse");
  const std::size_t n = inSrc.size() + recSrc.size();
  REQUIRE(Field<double>::getVec(s, c.syn.id, "weight").size() == n);
  std::vector<double> w, delay;
  for (std::size_t k = 0; k < n; ++k) {
    w.push_back(-0.05 + 0.2 * u(rng));
    // 1 to 30 steps, a third of a step short of whole (so rounding to a float cannot reach the
    // next step), times a double that is not a float.
    delay.push_back((1 + static_cast<int>(30 * u(rng)) - 0.3) * dt * (1.0 + 1e-12));
  }
  const std::vector<double> wf = to_floats(w), df = to_floats(delay, true);
  REQUIRE(wf != w);  // the rounding is real
  Field<double>::setVec(s, d.syn.id, "weight", wf);
  Field<double>::setVec(s, d.syn.id, "delay", df);
  Field<double>::setVec(s, c.syn.id, "weight", w);
  Field<double>::setVec(s, c.syn.id, "delay", delay);
  // Read back as floats hold them.
  CHECK(same_bits(Field<double>::getVec(s, c.syn.id, "weight"), wf));
  CHECK(same_bits(Field<double>::getVec(s, c.syn.id, "delay"), df));
  s.setClock(0, dt);
  s.useClock(0, "/in");
  for (unsigned tick : {0u, 1u, 2u}) s.setClock(tick, dt);
  for (const char* p : {"/d", "/c"}) {
    s.useClock(handlers ? 2 : 0, p);
    if (handlers) s.useClock(1, std::string(p) + "/h");
  }
  for (int run = 0; run < 2; ++run) {  // the second after the arrays dropped their addresses
    CAPTURE(run);
    s.reinit();
    s.start(300 * dt);
    if (handlers) {  // the handlers' sums went to the cells without messages (both copies)
      CHECK(Field<bool>::get(s, s.find("/d/h"), "directPath"));
      CHECK(Field<bool>::get(s, s.find("/c/h"), "directPath"));
    }
    const auto vd = Field<double>::getVec(s, d.nrn.id, "Vm");
    const auto vc = Field<double>::getVec(s, c.nrn.id, "Vm");
    CHECK(same_bits(vc, vd));
    CHECK(same_bits(Field<double>::getVec(s, c.nrn.id, "lastSpike"),
                    Field<double>::getVec(s, d.nrn.id, "lastSpike")));
    // The network did something worth comparing: most neurons fired.
    int fired = 0;
    for (double t : Field<double>::getVec(s, c.nrn.id, "lastSpike")) fired += t > 0;
    CHECK(fired > static_cast<int>(kN) / 2);
  }
  // The rounded values are what the run used: with the unrounded doubles, Vm differs.
  Field<double>::setVec(s, d.syn.id, "weight", w);
  s.reinit();
  s.start(300 * dt);
  CHECK_FALSE(same_bits(Field<double>::getVec(s, c.nrn.id, "Vm"),
                        Field<double>::getVec(s, d.nrn.id, "Vm")));
  CHECK(same_bits(Field<double>::getVec(s, c.syn.id, "weight"), wf));  // after runs too
}

TEST_CASE("compactSynapse: a value beyond a float's range is refused and nothing changes") {
  Model m;
  Shell& s = m.s;
  const ObjId in = s.create("RandSpike", "/in", 2);
  const ObjId nrn = s.create("IntFire", "/nrn", 3);
  const ObjId syn = s.find("/nrn/compactSynapse");
  s.pairFill(s.addMsg("Sparse", in, "spikeOut", syn, "addSpike"), {0, 0, 1, 1}, {0, 1, 1, 2});
  const std::vector<double> w{0.5, 0.25, -0.125, 2.0};
  Field<double>::setVec(s, syn.id, "weight", w);
  Field<double>::setVec(s, syn.id, "delay", {1e-3, 2e-3, 3e-3, 4e-3});
  const auto delay = Field<double>::getVec(s, syn.id, "delay");
  for (const char* field : {"weight", "delay"}) {
    CAPTURE(field);
    // One entry, then a whole vector with one bad value: refused with the field, the value and
    // the range named; every value stays.
    try {
      Field<double>::set(s, ObjId(syn.id, 1, 0), field, 1e39);
      FAIL("no error");
    } catch (const ValueError& e) {
      const std::string msg = e.what();
      CHECK(msg.find(std::string("CompactSynapse.") + field) != std::string::npos);
      CHECK(msg.find("3.4028235e38") != std::string::npos);
    }
    CHECK_THROWS_AS(Field<double>::setVec(s, syn.id, field, {0.5, 0.5, -3.5e38, 0.5}), ValueError);
    CHECK(Field<double>::getVec(s, syn.id, "weight") == w);
    CHECK(Field<double>::getVec(s, syn.id, "delay") == delay);
  }
  // The largest float and infinities are in range (a float holds them).
  const double big = std::numeric_limits<float>::max();
  Field<double>::set(s, ObjId(syn.id, 0, 0), "weight", -big);
  CHECK(Field<double>::get(s, ObjId(syn.id, 0, 0), "weight") == -big);
  Field<double>::set(s, ObjId(syn.id, 0, 0), "weight", -HUGE_VAL);
  CHECK(Field<double>::get(s, ObjId(syn.id, 0, 0), "weight") == -HUGE_VAL);
  // The two fields count their own entries.
  CHECK(Field<unsigned>::getVec(s, nrn.id, "numCompactSynapses") == std::vector<unsigned>{1, 2, 1});
  CHECK(Field<unsigned>::getVec(s, nrn.id, "numSynapses") == std::vector<unsigned>{0, 0, 0});
}

TEST_CASE("compactSynapse: delays of whole steps, 1 to 60 of them, fall due in the same steps") {
  // What a user sets: delay = k x dt in doubles. The float delay must fall due in step k as the
  // double does (rounded to the nearest float, k x 1e-4 lands above k steps by more than the
  // due step's slack for some k: one step late). Weights a float holds exactly, so the only
  // difference left would be a step.
  Model m;
  Shell& s = m.s;
  const double dt = 1e-4;
  constexpr Index kN = 60;
  const ObjId in = s.create("RandSpike", "/in", 1);
  regular_spikes(s, in, 97, dt);
  std::vector<Index> src(kN, 0), dst;
  std::vector<double> w, delay;
  for (Index k = 0; k < kN; ++k) {
    dst.push_back(k);
    w.push_back(0.125 + k / 1024.0);
    delay.push_back((k + 1) * dt);
  }
  std::vector<ObjId> nrn;
  for (const char* field : {"synapse", "compactSynapse"}) {
    const std::string path = std::string("/") + field;
    nrn.push_back(s.create("IntFire", path, kN));
    Field<double>::setAll(s, nrn.back().id, "thresh", 100.0);
    Field<double>::setAll(s, nrn.back().id, "tau", 0.02);
    const ObjId syn = s.find(path + "/" + field);
    s.pairFill(s.addMsg("Sparse", in, "spikeOut", syn, "addSpike"), src, dst);
    Field<double>::setVec(s, syn.id, "weight", w);
    Field<double>::setVec(s, syn.id, "delay", delay);
    s.useClock(0, path);
  }
  s.setClock(0, dt);
  s.useClock(0, "/in");
  s.reinit();
  // Step by step: a neuron's Vm jumps in the step its event falls due.
  for (int step = 1; step <= 80; ++step) {
    CAPTURE(step);
    s.start(dt);
    CHECK(same_bits(Field<double>::getVec(s, nrn[1].id, "Vm"),
                    Field<double>::getVec(s, nrn[0].id, "Vm")));
  }
  int got = 0;
  for (double v : Field<double>::getVec(s, nrn[1].id, "Vm")) got += v > 0;
  CHECK(got == static_cast<int>(kN));  // every synapse delivered within the 80 steps
}

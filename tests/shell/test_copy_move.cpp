// Shell::copy and Shell::move. The reference for a copy is the same subtree built by hand with the
// same commands (and, for n copies, the original's results repeated n times: each copy is a
// closed system identical to the original); the reference for a move is an unmoved twin. The
// bad-input cases compare the whole model's structure before and after.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/element.hpp"
#include "msg/msg.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

constexpr Index kCells = 13;
constexpr double kDt = 1e-3;

/// A subtree at `path`: a recurrent IntFire population wired by two Sparse messages into its
/// synapses (random, then pairs appended after it), weights and delays set per synapse, Tables
/// pulling Vm (Single reduce messages) and recording spikes (OneToOne), and two TestAdders joined
/// by OneToOne, OneToAll, Diagonal and Single messages. With withStats, a Stats element reduces
/// every cell's Vm (a Reduce message).
void build(Shell& s, const std::string& path, bool withStats) {
  s.create("Neutral", path);
  const ObjId cells = s.create("IntFire", path + "/cells", kCells);
  const ObjId syn = s.find(path + "/cells/synapse");
  const ObjId vm = s.create("Table", path + "/vm", kCells);
  const ObjId spk = s.create("Table", path + "/spk", kCells);
  const ObjId A = s.create("TestAdder", path + "/A", 5);
  const ObjId B = s.create("TestAdder", path + "/B", 5);
  std::vector<double> init(kCells), thresh(kCells);
  for (Index i = 0; i < kCells; ++i) {
    init[i] = 0.1 + 0.12 * i;  // the upper cells start above threshold and fire first
    thresh[i] = 1.0 + 0.01 * (i % 3);
  }
  Field<double>::setVec(s, cells.id, "initVm", init);
  Field<double>::setVec(s, cells.id, "thresh", thresh);
  Field<double>::setAll(s, cells.id, "tau", 0.03);
  Field<double>::setAll(s, cells.id, "refractoryPeriod", 0.004);
  Field<double>::setAll(s, cells.id, "vReset", -0.1);
  s.setRandomConnectivity(s.addMsg("Sparse", cells, "spikeOut", syn, "addSpike"), 0.35, 7);
  s.pairFill(s.addMsg("Sparse", cells, "spikeOut", syn, "addSpike"), {0, 5, 5, 12, 3},
             {1, 2, 9, 0, 3});
  const std::size_t nsyn = Field<double>::getVec(s, syn.id, "weight").size();
  std::vector<double> w(nsyn), d(nsyn);
  for (std::size_t k = 0; k < nsyn; ++k) {
    w[k] = 0.25 + 0.37 * std::fmod(0.618 * static_cast<double>(k), 1.0);
    d[k] = kDt * static_cast<double>(1 + k % 4);
  }
  Field<double>::setVec(s, syn.id, "weight", w);
  Field<double>::setVec(s, syn.id, "delay", d);
  for (Index i = 0; i < kCells; ++i)
    s.addMsg("Single", ObjId(vm.id, i), "requestOut", ObjId(cells.id, i), "getVm");
  s.addMsg("OneToOne", cells, "spikeOut", spk, "input");
  Field<double>::setVec(s, A.id, "x", {0.5, -1, 2, 0.25, 3});
  Field<double>::setVec(s, B.id, "x", {1, 2, -3, 4, 0.125});
  s.addMsg("OneToOne", A, "out", B, "add");
  s.addMsg("OneToAll", B, "out", A, "add");
  s.setStride(s.addMsg("Diagonal", A, "out", B, "add"), 2);
  s.addMsg("Single", ObjId(B.id, 4), "out", ObjId(A.id, 1), "add");
  if (withStats) {
    const ObjId st = s.create("Stats", path + "/stats");
    s.addMsg("Reduce", st, "reduce", cells, "getVm");
  }
}

void schedule(Shell& s, const std::string& path, bool withStats) {
  for (const char* e : {"/cells", "/A", "/B", "/vm"}) s.useClock(0, path + e);
  if (withStats) s.useClock(0, path + "/stats");
}

/// What a run leaves in the subtree at path (every value is compared bit for bit).
struct Result {
  std::vector<double> Vm, lastSpike, sumA, sumB, mean;
  std::vector<std::vector<double>> vm, spk;
  bool operator==(const Result&) const = default;
};

Result result(Shell& s, const std::string& path, bool withStats) {
  Result r;
  r.Vm = Field<double>::getVec(s, s.find(path + "/cells").id, "Vm");
  r.lastSpike = Field<double>::getVec(s, s.find(path + "/cells").id, "lastSpike");
  r.sumA = Field<double>::getVec(s, s.find(path + "/A").id, "sum");
  r.sumB = Field<double>::getVec(s, s.find(path + "/B").id, "sum");
  const Id vm = s.find(path + "/vm").id, spk = s.find(path + "/spk").id;
  for (Index i = 0; i < antler::test::element(vm)->numData(); ++i) {
    r.vm.push_back(Field<std::vector<double>>::get(s, ObjId(vm, i), "vector"));
    r.spk.push_back(Field<std::vector<double>>::get(s, ObjId(spk, i), "vector"));
  }
  if (withStats) r.mean.push_back(Field<double>::get(s, s.find(path + "/stats"), "mean"));
  return r;
}

/// The original's result repeated n times (copy k of entry d is entry k * numData + d).
Result tiled(const Result& a, Index n) {
  auto tile = [n](const auto& v) {
    std::decay_t<decltype(v)> out;
    for (Index k = 0; k < n; ++k) out.insert(out.end(), v.begin(), v.end());
    return out;
  };
  Result r;
  r.Vm = tile(a.Vm);
  r.lastSpike = tile(a.lastSpike);
  r.sumA = tile(a.sumA);
  r.sumB = tile(a.sumB);
  r.vm = tile(a.vm);
  r.spk = tile(a.spk);
  return r;
}

/// The subtree's structure with paths relative to its root: elements (class, entries, global)
/// and internal messages (kind, ends, fields, Sparse entries with field indices, Single ends).
std::vector<std::string> structure(Shell& s, const std::string& root) {
  std::vector<std::string> out;
  auto rel = [&](const Element* e) {
    const std::string p = e->path();
    return p.compare(0, root.size(), root) == 0 ? p.substr(root.size()) : "OUTSIDE:" + p;
  };
  for (const Element* e : antler::test::runtime().simulation().elements().all()) {
    const std::string p = e->path();
    if (p != root && p.compare(0, root.size() + 1, root + "/") != 0) continue;
    out.push_back(rel(e) + " " + e->cinfo()->name() + " " + std::to_string(e->numData()) +
                  (e->isGlobal() ? " global" : ""));
  }
  const Element* r = antler::test::element(s.find(root));
  for (const Msg* m : antler::test::runtime().simulation().msgs().all()) {
    auto in = [&](const Element* e) {
      for (; e; e = e->id() == Id::root() ? nullptr : antler::test::element(e->parent()))
        if (e == r) return true;
      return false;
    };
    if (!in(m->src()) && !in(m->dest())) continue;
    std::string t = std::string(to_string(m->kind())) + " " + rel(m->src()) + "." +
                    m->srcFinfo()->name() + " -> " + rel(m->dest()) + "." + m->destFinfo()->name();
    for (Index d = 0; d < m->src()->numData(); ++d)
      for (const Target& x : m->targets(d, 0))
        if (m->dest()->isLocal(x.data))  // field indices are exact on the owner
          t += " " + std::to_string(d) + ">" + std::to_string(x.data) + ":" +
               std::to_string(x.field);
    out.push_back(t);
  }
  return out;
}

/// The whole model: every element's path, class and size, every message's ends, the schedule.
std::vector<std::string> whole_model() {
  std::vector<std::string> out;
  for (const Element* e : antler::test::runtime().simulation().elements().all())
    out.push_back(e->path() + " " + e->cinfo()->name() + " " + std::to_string(e->numData()));
  for (const Msg* m : antler::test::runtime().simulation().msgs().all())
    out.push_back(std::to_string(m->id()) + " " + to_string(m->kind()) + " " + m->src()->path() +
                  " -> " + m->dest()->path());
  return out;
}

void run(Shell& s, unsigned threads, int steps) {
  s.setNumThreads(threads);
  s.reinit();
  s.start(steps * kDt);
}

}  // namespace

TEST_CASE("copy: a subtree with internal Sparse messages runs as the same subtree built by hand") {
  Model m;
  Shell& s = m.s;
  m.s.setClock(0, kDt);
  build(m.s, "/a", true);
  build(m.s, "/h", true);  // the hand-built twin
  m.s.create("Neutral", "/lib");
  const ObjId c = m.s.copy("/a", "/lib", "c");
  CHECK(antler::test::element(c)->path() == "/lib/c");
  // The same elements, sizes, messages (kinds, fields, Sparse entries and field indices).
  CHECK(structure(m.s, "/lib/c") == structure(m.s, "/h"));
  CHECK(Field<double>::getVec(s, m.s.find("/lib/c/cells/synapse").id, "weight") ==
        Field<double>::getVec(s, m.s.find("/h/cells/synapse").id, "weight"));
  CHECK(Field<double>::getVec(s, m.s.find("/lib/c/cells/synapse").id, "delay") ==
        Field<double>::getVec(s, m.s.find("/h/cells/synapse").id, "delay"));
  CHECK(static_cast<const FieldElement*>(antler::test::element(m.s.find("/lib/c/cells/synapse")))
            ->fieldDimension() == m.s.doSyncDataHandler("/h/cells/synapse"));
  schedule(m.s, "/a", true);
  schedule(m.s, "/h", true);
  schedule(m.s, "/lib/c", true);
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    run(m.s, threads, 80);
    const Result a = result(m.s, "/a", true);
    CHECK(result(m.s, "/h", true) == a);
    CHECK(result(m.s, "/lib/c", true) == a);
    // The run is not trivial: most cells fired, and spikes travelled through the synapses.
    int fired = 0;
    for (const auto& v : a.spk) fired += v.size() > 1;
    CHECK(fired >= static_cast<int>(kCells) / 2);
  }
}

TEST_CASE(
    "copy with n = 3: every element holds 3 x its entries and each copy runs as the original") {
  Model m;
  Shell& s = m.s;
  m.s.setClock(0, kDt);
  build(m.s, "/a", false);
  const ObjId t = m.s.copy("/a", "/", "t", 3);
  for (const char* e : {"", "/cells", "/cells/synapse", "/vm", "/spk", "/A", "/B"}) {
    CAPTURE(e);
    CHECK(antler::test::element(m.s.find(std::string("/t") + e))->numData() ==
          3 * antler::test::element(m.s.find(std::string("/a") + e))->numData());
  }
  CHECK(antler::test::element(t)->numData() == 3);
  // Synapse arrays: parent k * kCells + d holds parent d's synapses, with the same weights.
  const auto w = Field<double>::getVec(s, m.s.find("/a/cells/synapse").id, "weight");
  std::vector<double> w3;
  for (int k = 0; k < 3; ++k) w3.insert(w3.end(), w.begin(), w.end());
  CHECK(Field<double>::getVec(s, m.s.find("/t/cells/synapse").id, "weight") == w3);
  schedule(m.s, "/a", false);
  schedule(m.s, "/t", false);
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    run(m.s, threads, 60);
    CHECK(result(m.s, "/t", false) == tiled(result(m.s, "/a", false), 3));
  }
}

TEST_CASE("copy leaves messages that cross the subtree's boundary behind") {
  Model m;
  build(m.s, "/a", false);
  const ObjId out = m.s.create("TestAdder", "/out", 5);
  m.s.addMsg("OneToOne", out, "out", m.s.find("/a/A"), "add");
  m.s.addMsg("OneToOne", m.s.find("/a/B"), "out", out, "add");
  const std::size_t before = antler::test::runtime().simulation().msgs().all().size();
  m.s.copy("/a", "/", "b");
  const auto sa = structure(m.s, "/a");
  const auto sb = structure(m.s, "/b");
  CHECK(sa.size() == sb.size() + 2);  // the two crossing messages
  for (const auto& line : sb) CHECK(line.find("OUTSIDE") == std::string::npos);
  CHECK(antler::test::runtime().simulation().msgs().all().size() - before == before - 2);
}

TEST_CASE("move keeps messages, schedules and results") {
  Model m;
  m.s.setClock(0, kDt);
  build(m.s, "/a", true);
  build(m.s, "/h", true);
  m.s.create("Neutral", "/lib");
  schedule(m.s, "/a", true);
  schedule(m.s, "/h", true);
  const Id cells = m.s.find("/a/cells").id;
  const auto msgsBefore = antler::test::runtime().simulation().msgs().all().size();
  const auto structBefore = structure(m.s, "/a");
  m.s.move("/a", "/lib");
  CHECK_FALSE(m.s.exists("/a"));
  CHECK(m.s.find("/lib/a/cells").id == cells);
  CHECK(antler::test::element(m.s.find("/lib/a/cells/synapse"))->parent() == cells);
  CHECK(antler::test::runtime().simulation().msgs().all().size() == msgsBefore);
  CHECK(structure(m.s, "/lib/a") == structBefore);
  CHECK(m.s.children("/").size() == 3);  // /clock, /h and /lib
  run(m.s, 2, 50);
  CHECK(result(m.s, "/lib/a", true) == result(m.s, "/h", true));
  // Relative paths start at the current element; moving to the current parent changes nothing.
  m.s.ce("/lib");
  m.s.move("a", "/");
  m.s.move("/a", "/");
  m.s.ce("/");
  CHECK(m.s.find("/a/cells").id == cells);
  CHECK(structure(m.s, "/a") == structBefore);
  run(m.s, 1, 50);
  CHECK(result(m.s, "/a", true) == result(m.s, "/h", true));
}

TEST_CASE("copy and move: bad input is refused with a clear error and nothing changes") {
  Model m;
  build(m.s, "/a", true);
  m.s.create("Neutral", "/other");
  m.s.create("Neutral", "/a/sub");
  const auto before = whole_model();
  auto refused = [&](auto&& f, const char* needle) {
    CAPTURE(needle);
    bool threw = false;
    try {
      f();
    } catch (const Error& e) {
      threw = true;
      CHECK(std::string(e.what()).find(needle) != std::string::npos);
    }
    CHECK(threw);
    CHECK(whole_model() == before);
  };
  refused([&] { m.s.copy("/a", "/a/sub"); }, "into its own subtree");
  refused([&] { m.s.copy("/a", "/a"); }, "into its own subtree");
  refused([&] { m.s.copy("/", "/other"); }, "root");
  refused([&] { m.s.copy("/a/cells/synapse", "/other"); }, "field element");
  refused([&] { m.s.copy("/a/A", "/a/cells/synapse"); }, "field element");
  refused([&] { m.s.copy("/nope", "/other"); }, "nope");
  refused([&] { m.s.copy("/a", "/nope"); }, "nope");
  refused([&] { m.s.copy("/a/A", "/a"); }, "/a/A already exists");
  refused([&] { m.s.copy("/a", "/other", "x/y"); }, "not a valid element name");
  refused([&] { m.s.copy("/a", "/other", ".."); }, "not a valid element name");
  refused([&] { m.s.copy("/a", "/other", "b", 0); }, "n = 0");
  refused([&] { m.s.copy("/a", "/other", "b", 2); }, "Reduce message");
  refused([&] { m.s.copy("/a", "/other", "b", 0x7FFFFFFF); }, "entries per element");
  refused([&] { m.s.move("/", "/other"); }, "root");
  refused([&] { m.s.move("/a/cells/synapse", "/other"); }, "field element");
  refused([&] { m.s.move("/a", "/a/sub"); }, "into its own subtree");
  refused([&] { m.s.move("/a/A", "/a/cells/synapse"); }, "field element");
  refused([&] { m.s.move("/a/sub", "/a/sub"); }, "into its own subtree");
  m.s.create("Neutral", "/other/A");
  const auto before2 = whole_model();
  bool threw = false;
  try {
    m.s.move("/a/A", "/other");
  } catch (const PathError& e) {
    threw = std::string(e.what()).find("/other/A already exists") != std::string::npos;
  }
  CHECK(threw);
  CHECK(whole_model() == before2);
}

TEST_CASE("copy: a failure part-way deletes what was made") {
  Model m;
  m.s.create("Neutral", "/z");
  m.s.create("IntFire", "/z/big", 1000);
  const auto before = whole_model();
  // The root's copy (4e6 Neutral entries) is made; the IntFires' (4e9 entries, hundreds of GiB)
  // are refused by create: the copy's root must go again.
  CHECK_THROWS_AS(m.s.copy("/z", "/", "z2", 4000000), ValueError);
  CHECK_FALSE(m.s.exists("/z2"));
  CHECK(whole_model() == before);
}

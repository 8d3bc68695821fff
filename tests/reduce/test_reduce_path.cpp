// The full reduce path (ReduceMsg -> per-thread primary -> secondary -> one allgather ->
// tertiary -> digest) at whatever node count ctest runs this at, for 1 and 2 threads.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <ios>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "core/comm/reductions.hpp"
#include "core/element.hpp"
#include "models/stats.hpp"
#include "reduce/reduce_msg.hpp"
#include "reduce/reduce_queue.hpp"
#include "shell/clock.hpp"
#include "shell/simulation.hpp"
#include "tests/support/fsum.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

double vm_formula(std::size_t i) {
  return -0.07 + 0.01 * std::sin(0.1 * static_cast<double>(i)) + 1e-5 * static_cast<double>(i % 17);
}

struct Expected {
  double mean, sdev, sum, min, max;
};

/// Stats' results computed independently: the sum correctly rounded (the fsum oracle) and the
/// mean that sum over the count, which Stats must give bit for bit on any split; the sdev in long
/// double about that mean (checked to 1e-12).
Expected expected(const std::vector<double>& v) {
  const double s = antler::test::fsum(v), m = s / static_cast<double>(v.size());
  long double q = 0;
  for (double x : v) q += (x - static_cast<long double>(m)) * (x - static_cast<long double>(m));
  return {m, static_cast<double>(std::sqrt(q / v.size())), s, *std::min_element(v.begin(), v.end()),
          *std::max_element(v.begin(), v.end())};
}

void check_rel(double got, double want) {
  CHECK(std::abs(got - want) <= 1e-12 * std::abs(want));
}
/// The exact statistics: the same bits as the oracle.
void check_exact(double got, double want) {
  CHECK_MESSAGE(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want),
                std::hexfloat << got << " vs " << want);
}

struct StatsValues {
  double mean, sdev, sum, min, max;
  unsigned num;
  bool operator==(const StatsValues&) const = default;
};

StatsValues read_stats(Shell& sh, ObjId s) {
  return {Field<double>::get(sh, s, "mean"), Field<double>::get(sh, s, "sdev"),
          Field<double>::get(sh, s, "sum"),  Field<double>::get(sh, s, "min"),
          Field<double>::get(sh, s, "max"),  Field<unsigned>::get(sh, s, "num")};
}

// Each node's view of a FieldElement's fieldDimension (for "on every rank" checks).
void field_dim_handler(Simulation& sim, Reader& r, Writer& w) {
  w.put<Index>(static_cast<FieldElement*>(sim.elements().get(r.get<Id>()))->fieldDimension());
}
[[maybe_unused]] const bool reg =
    (Shell::registerCommand("test.fieldDimension", &field_dim_handler), true);

// Runs reductions whose set differs between nodes (node 0 one fewer): must fail, not hang.
void disagree_handler(Simulation& sim, Reader& r, Writer&) {
  const auto a = r.get<std::uint32_t>(), b = r.get<std::uint32_t>();
  std::vector<ReduceBase*> jobs{static_cast<const ReduceMsg*>(sim.msgs().get(a))->job()};
  if (sim.layout().node != 0)
    jobs.push_back(static_cast<const ReduceMsg*>(sim.msgs().get(b))->job());
  sim.reduces().runNow(jobs, 1);
}
[[maybe_unused]] const bool reg2 =
    (Shell::registerCommand("test.disagree", &disagree_handler), true);

// Each node's reduction counters: folds run, and messages its Reductions sent and received.
void counters_handler(Simulation& sim, Reader&, Writer& w) {
  const comm::Stats st = sim.reduces().reductions()->comm().stats();
  w.put<std::uint64_t>(sim.reduces().foldsRun())
      .put<std::uint64_t>(st.messagesSent + st.messagesReceived);
}
[[maybe_unused]] const bool reg3 =
    (Shell::registerCommand("test.reduceCounters", &counters_handler), true);

struct NodeCounters {
  std::uint64_t folds, messages;
};
std::vector<NodeCounters> node_counters(Shell& sh) {
  std::vector<NodeCounters> out;
  for (const ByteBuffer& b : sh.dispatchExtension("test.reduceCounters", ByteBuffer())) {
    Reader r(b);
    const auto f = r.get<std::uint64_t>();
    out.push_back({f, r.get<std::uint64_t>()});
  }
  return out;
}

}  // namespace

TEST_CASE("Stats over 1000 objects equals the formula's statistics, bit-identical across runs") {
  Model m;
  const Index n = 1000;
  const ObjId cells = m.s.create("TestRelax", "/cells", n);
  const ObjId stats = m.s.create("Stats", "/stats");
  std::vector<double> vm(n);
  for (Index i = 0; i < n; ++i) vm[i] = vm_formula(i);
  Field<double>::setVec(m.s, cells.id, "initVm", vm);
  Field<double>::setAll(m.s, cells.id, "rate", 0.0);  // Vm stays at initVm
  m.s.addMsg("Reduce", stats, "reduce", cells, "getVm");
  m.s.setClock(0, 1e-3);
  m.s.useClock(0, "/cells");
  m.s.useClock(0, "/stats");
  const Expected e = expected(vm);
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    m.s.start(0.005);
    const StatsValues a = read_stats(m.s, stats);
    CHECK(a.num == n);
    check_exact(a.mean, e.mean);
    check_rel(a.sdev, e.sdev);
    check_exact(a.sum, e.sum);
    CHECK(a.min == e.min);
    CHECK(a.max == e.max);
    m.s.reinit();
    m.s.start(0.005);
    CHECK(read_stats(m.s, stats) == a);  // bit-identical for the same split
  }
}

TEST_CASE("Stats holds the statistics of the current step") {
  Model m;
  const Index n = 257;
  const ObjId cells = m.s.create("TestRelax", "/cells", n);
  const ObjId stats = m.s.create("Stats", "/stats");
  std::vector<double> v0(n), target(n);
  for (Index i = 0; i < n; ++i) v0[i] = 0.5 * i, target[i] = -1.0 * (i % 5);
  Field<double>::setVec(m.s, cells.id, "initVm", v0);
  Field<double>::setVec(m.s, cells.id, "target", target);
  m.s.addMsg("Reduce", stats, "reduce", cells, "getVm");
  m.s.setClock(0, 1.0);
  m.s.useClock(0, "/stats");  // scheduled before the cells: the reduction still sees this step's Vm
  m.s.useClock(0, "/cells");
  m.s.setNumThreads(2);
  m.s.reinit();
  check_exact(Field<double>::get(m.s, stats, "mean"), expected(v0).mean);
  std::vector<double> v = v0;
  for (int step = 1; step <= 4; ++step) {
    m.s.start(1.0);
    for (Index i = 0; i < n; ++i) v[i] += 0.5 * (target[i] - v[i]);
    const Expected e = expected(v);
    check_exact(Field<double>::get(m.s, stats, "mean"), e.mean);
    check_rel(Field<double>::get(m.s, stats, "sdev"), e.sdev);
    CHECK(Field<double>::getVec(m.s, cells.id, "Vm") == v);
  }
}

TEST_CASE("two Stats reduce different fields of different elements in the same step") {
  Model m;
  const ObjId a = m.s.create("TestRelax", "/a", 300);
  const ObjId b = m.s.create("TestAdder", "/b", 77);
  const ObjId s1 = m.s.create("Stats", "/s1");
  const ObjId s2 = m.s.create("Stats", "/s2");
  const ObjId s3 = m.s.create("Stats", "/s3");
  std::vector<double> va(300), vb(77);
  std::vector<int> lv(300);
  for (Index i = 0; i < 300; ++i) va[i] = std::cos(0.01 * i), lv[i] = static_cast<int>(i % 11) - 5;
  for (Index i = 0; i < 77; ++i) vb[i] = 3.0 * i - 100;
  Field<double>::setVec(m.s, a.id, "initVm", va);
  Field<double>::setAll(m.s, a.id, "rate", 0.0);
  Field<int>::setVec(m.s, a.id, "level", lv);
  Field<double>::setVec(m.s, b.id, "x", vb);
  m.s.addMsg("Reduce", s1, "reduce", a, "getVm");
  m.s.addMsg("Reduce", s2, "reduce", b, "getX");
  m.s.addMsg("Reduce", s3, "reduce", a, "getLevel");  // an int field, read as double
  m.s.setClock(0, 1.0);
  m.s.useClock(0, "/##[TYPE=Stats]");
  m.s.useClock(0, "/a");
  m.s.reinit();
  m.s.start(2.0);
  check_exact(Field<double>::get(m.s, s1, "mean"), expected(va).mean);
  check_exact(Field<double>::get(m.s, s2, "mean"), expected(vb).mean);
  check_rel(Field<double>::get(m.s, s2, "sdev"), expected(vb).sdev);
  CHECK(Field<unsigned>::get(m.s, s2, "num") == 77u);
  std::vector<double> lvd(lv.begin(), lv.end());
  check_rel(Field<double>::get(m.s, s3, "sdev"), expected(lvd).sdev);
  CHECK(Field<double>::get(m.s, s3, "min") == -5.0);
}

TEST_CASE("a reduction over zero targets reports num 0 and NaN statistics") {
  Model m;
  // An element has at least one entry; zero targets are a field element whose parents hold no
  // entries.
  m.s.create("TestReceiver", "/none", 3);
  const ObjId s = m.s.create("Stats", "/s");
  m.s.addMsg("Reduce", s, "reduce", m.s.find("/none/syn"), "getWeight");
  m.s.setClock(0, 1.0);
  m.s.useClock(0, "/s");
  m.s.reinit();
  m.s.start(1.0);
  CHECK(Field<unsigned>::get(m.s, s, "num") == 0u);
  CHECK(std::isnan(Field<double>::get(m.s, s, "mean")));
  CHECK(std::isnan(Field<double>::get(m.s, s, "sdev")));
  CHECK(Field<double>::get(m.s, s, "sum") == 0.0);
}

TEST_CASE("reductions over a field element and on demand from the Shell") {
  Model m;
  const ObjId r = m.s.create("TestReceiver", "/r", 40);
  const ObjId syn = m.s.find("/r/syn");
  const ObjId s = m.s.create("Stats", "/s");
  std::vector<double> all;
  for (Index i = 0; i < 40; ++i) {
    Field<unsigned>::set(m.s, ObjId(r.id, i), "numSyn", i % 4);
    std::vector<double> w(i % 4);
    for (Index k = 0; k < w.size(); ++k) w[k] = 0.25 * i - k;
    if (!w.empty()) Field<double>::setFieldVec(m.s, ObjId(syn.id, i), "weight", w);
    all.insert(all.end(), w.begin(), w.end());
  }
  m.s.addMsg("Reduce", s, "reduce", syn, "getWeight");
  m.s.reduceNow(s, "reduce");  // no clock: the Shell asks for it
  CHECK(Field<unsigned>::get(m.s, s, "num") == all.size());
  check_exact(Field<double>::get(m.s, s, "mean"), expected(all).mean);
  CHECK(Field<double>::get(m.s, s, "max") == expected(all).max);
}

TEST_CASE("reduceNow involves only the nodes that hold the targets or the requester") {
  // Targets on the first P - 1 nodes (P - 1 entries, block-distributed), the requester on node 0:
  // the last node takes no part. Then one target (node 0) and the requester on the last node:
  // the nodes between take no part.
  Model m;
  const int P = m.s.numNodes();
  const auto nt = static_cast<Index>(std::max(1, P - 1));
  const ObjId few = m.s.create("TestAdder", "/few", nt);
  const ObjId s = m.s.create("Stats", "/s", static_cast<Index>(P));
  std::vector<double> x(nt);
  for (Index i = 0; i < nt; ++i) x[i] = std::sin(0.37 * i) * 1e3 + 1e-7 * i;
  Field<double>::setVec(m.s, few.id, "x", x);
  m.s.addMsg("Reduce", s, "reduce", few, "getX");
  const auto before = node_counters(m.s);
  m.s.reduceNow(s, "reduce");
  const auto after = node_counters(m.s);
  CHECK(Field<unsigned>::get(m.s, s, "num") == nt);
  check_exact(Field<double>::get(m.s, s, "mean"), expected(x).mean);
  CHECK(Field<double>::get(m.s, s, "min") == expected(x).min);
  CHECK(Field<double>::get(m.s, s, "max") == expected(x).max);
  REQUIRE(after.size() == static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) {
    const auto q = static_cast<std::size_t>(r);
    const bool member = r < static_cast<int>(nt) || r == 0;
    CAPTURE(r);
    CHECK(after[q].folds - before[q].folds == (member ? 1u : 0u));
    if (!member) CHECK(after[q].messages == before[q].messages);
    if (member && P > 1 && nt > 1) CHECK(after[q].messages > before[q].messages);
  }

  const ObjId one = m.s.create("TestAdder", "/one", 1);
  Field<double>::set(m.s, one, "x", 42.5);
  const ObjId t = m.s.create("Stats", "/t", static_cast<Index>(P));
  const ObjId last(t.id, static_cast<Index>(P - 1));
  m.s.addMsg("Reduce", last, "reduce", one, "getX");
  const auto mid = node_counters(m.s);
  m.s.reduceNow(last, "reduce");
  const auto end = node_counters(m.s);
  CHECK(Field<unsigned>::get(m.s, last, "num") == 1u);
  CHECK(Field<double>::get(m.s, last, "mean") == 42.5);
  for (int r = 1; r + 1 < P; ++r) {
    const auto q = static_cast<std::size_t>(r);
    CAPTURE(r);
    CHECK(end[q].folds == mid[q].folds);
    CHECK(end[q].messages == mid[q].messages);
  }
  CHECK(end[0].folds - mid[0].folds == 1u);
  CHECK(end[static_cast<std::size_t>(P - 1)].folds - mid[static_cast<std::size_t>(P - 1)].folds ==
        1u);
}

TEST_CASE("a clocked Stats over targets on some nodes reduces over those nodes only") {
  // Targets on the first P - 1 nodes, the requester on node 0 (as above), now every step from the
  // clock; and an all-node Stats beside it that keeps the usual path. The last node folds and
  // receives nothing for the first.
  Model m;
  const int P = m.s.numNodes();
  const auto nt = static_cast<Index>(std::max(1, P - 1));
  const ObjId few = m.s.create("TestAdder", "/few", nt);
  const ObjId many = m.s.create("TestAdder", "/many", 100);
  const ObjId s = m.s.create("Stats", "/s");
  const ObjId all = m.s.create("Stats", "/all");
  std::vector<double> x(nt), y(100);
  for (Index i = 0; i < nt; ++i) x[i] = 3.5 - 0.25 * i;
  for (Index i = 0; i < 100; ++i) y[i] = std::cos(0.1 * i);
  Field<double>::setVec(m.s, few.id, "x", x);
  Field<double>::setVec(m.s, many.id, "x", y);
  m.s.addMsg("Reduce", s, "reduce", few, "getX");
  m.s.addMsg("Reduce", all, "reduce", many, "getX");
  m.s.setClock(0, 1.0);
  m.s.useClock(0, "/s");
  m.s.useClock(0, "/all");
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    const auto before = node_counters(m.s);
    m.s.start(5.0);
    const auto after = node_counters(m.s);
    CHECK(Field<unsigned>::get(m.s, s, "num") == nt);
    check_exact(Field<double>::get(m.s, s, "mean"), expected(x).mean);
    CHECK(Field<double>::get(m.s, s, "max") == expected(x).max);
    CHECK(Field<unsigned>::get(m.s, all, "num") == 100u);
    check_exact(Field<double>::get(m.s, all, "mean"), expected(y).mean);
    const std::uint64_t steps = after[0].folds - before[0].folds;  // both Stats, every step
    CHECK(steps >= 10u);
    for (int r = 1; r < P; ++r) {
      const auto q = static_cast<std::size_t>(r);
      CAPTURE(r);
      const bool member = r < static_cast<int>(nt);
      // A member folds both Stats every step; the last node only the all-node one.
      CHECK(after[q].folds - before[q].folds == (member ? steps : steps / 2));
      if (!member) CHECK(after[q].messages == before[q].messages);
    }
  }
}

TEST_CASE("a Single message from a reduce field reads one object") {
  Model m;
  const ObjId a = m.s.create("TestAdder", "/a", 9);
  const ObjId s = m.s.create("Stats", "/s");
  for (Index i = 0; i < 9; ++i) Field<double>::set(m.s, ObjId(a.id, i), "x", 10.0 + i);
  m.s.addMsg("Single", s, "reduce", ObjId(a.id, 7), "getX");
  m.s.reduceNow(s, "reduce");
  CHECK(Field<unsigned>::get(m.s, s, "num") == 1u);
  CHECK(Field<double>::get(m.s, s, "mean") == 17.0);
  CHECK(Field<double>::get(m.s, s, "sdev") == 0.0);
}

TEST_CASE("doSyncDataHandler sets fieldDimension to the largest synapse count on every node") {
  Model m;
  const Index n = 1000;
  const ObjId neurons = m.s.create("TestReceiver", "/neurons", n);
  std::vector<unsigned> counts(n);
  for (Index i = 0; i < n; ++i) counts[i] = i;  // neuron i has i synapses
  Field<unsigned>::setVec(m.s, neurons.id, "numSyn", counts);
  const Id syn = m.s.find("/neurons/syn").id;
  for (unsigned threads : {1u, 2u}) {
    m.s.setNumThreads(threads);
    CHECK(m.s.doSyncDataHandler("/neurons/syn") == 999u);
    for (const ByteBuffer& b : m.s.dispatchExtension("test.fieldDimension", [&] {
           ByteBuffer a;
           Writer(a).put<Id>(syn);
           return a;
         }())) {
      Reader rd(b);
      CHECK(rd.get<Index>() == 999u);
    }
  }
  CHECK(Field<double>::getVec(m.s, syn, "weight").size() == 1000u * 999u / 2u);
  const auto sum = Field<unsigned>::getVec(m.s, neurons.id, "numSyn");
  CHECK(std::accumulate(sum.begin(), sum.end(), 0ul) == 1000ul * 999ul / 2ul);
  CHECK_THROWS_AS(m.s.doSyncDataHandler("/neurons"), ValueError);
  CHECK_THROWS_AS(m.s.doSyncDataHandler("/nothing"), PathError);
}

TEST_CASE("Reduce connections are checked at connect time") {
  Model m;
  const ObjId a = m.s.create("TestAdder", "/a", 5);
  const ObjId s = m.s.create("Stats", "/s");
  try {
    m.s.addMsg("Reduce", s, "reduce", a, "add");
    FAIL("no error");
  } catch (const FieldError& e) {
    CHECK(std::string(e.what()).find("'get' fields: getName") != std::string::npos);
  }
  try {
    m.s.addMsg("Reduce", s, "reduce", a, "getText");
    FAIL("no error");
  } catch (const TypeError& e) {
    CHECK(std::string(e.what()).find("reduces double, but TestAdder.text is string") !=
          std::string::npos);
  }
  CHECK_THROWS_AS(m.s.addMsg("Reduce", s, "mean", a, "getX"), FieldError);
  CHECK_THROWS_AS(m.s.addMsg("Reduce", a, "out", a, "getX"), FieldError);
  CHECK_THROWS_AS(m.s.addMsg("OneToAll", s, "reduce", a, "getX"),
                  MsgError);  // Reduce or Single only
  CHECK_THROWS_AS(m.s.addMsg("Single", s, "reduce", ObjId(a.id, 5), "getX"), IndexError);
  CHECK(antler::test::element(s)->msgIds().empty());
  CHECK_THROWS_AS(m.s.reduceNow(s, "mean"), FieldError);
}

TEST_CASE("nodes that disagree on pending reductions get an error, not a hang") {
  Model m;
  const ObjId a = m.s.create("TestAdder", "/a", 5);
  const ObjId s1 = m.s.create("Stats", "/s1");
  const ObjId s2 = m.s.create("Stats", "/s2");
  const auto m1 = m.s.addMsg("Reduce", s1, "reduce", a, "getX");
  const auto m2 = m.s.addMsg("Reduce", s2, "reduce", a, "getX");
  ByteBuffer args;
  Writer(args).put<std::uint32_t>(m1).put<std::uint32_t>(m2);
  if (m.s.numNodes() == 1) {
    m.s.dispatchExtension("test.disagree", args);  // one node cannot disagree with itself
    CHECK(Field<unsigned>::get(m.s, s1, "num") == 5u);
  } else {
    try {
      m.s.dispatchExtension("test.disagree", args);
      FAIL("no error");
    } catch (const CommError& e) {
      CHECK(std::string(e.what()).find("disagree on the pending reductions") != std::string::npos);
    }
    m.s.reduceNow(s2, "reduce");  // still in lockstep afterwards
    CHECK(Field<unsigned>::get(m.s, s2, "num") == 5u);
  }
}

TEST_CASE("a Reduce message over a getter field reads every object, in order, across blocks") {
  // TestAdder's `doubled` is computed by a member function (2 x), so the fold reads it a block
  // of 512 at a time (reduce/reduce_finfo.hpp); 1300 objects make three blocks on one node.
  Model m;
  const Index n = 1300;
  const ObjId cells = m.s.create("TestAdder", "/cells", n);
  const ObjId order = m.s.create("TestOrder", "/order", 1, true);
  std::vector<double> x(n);
  for (Index i = 0; i < n; ++i) x[i] = static_cast<double>(i);
  Field<double>::setVec(m.s, cells.id, "x", x);
  m.s.addMsg("Reduce", order, "reduceTrace", cells, "getDoubled");
  m.s.addMsg("Reduce", order, "reduceSum", cells, "getDoubled");
  m.s.setClock(0, 1e-3);
  m.s.useClock(0, "/order");
  for (unsigned threads : {1u, 2u, 3u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    m.s.start(1e-3);
    // The trace joins the values of each thread's slice in order (',' within, ';' between
    // threads, brackets between nodes): in index order, the values read are 0, 2, 4, ...
    std::string trace = Field<std::string>::get(m.s, order, "trace");
    for (char& ch : trace)
      if (ch == ';' || ch == '(' || ch == ')' || ch == ' ') ch = ',';
    std::vector<long> got;
    std::size_t pos = 0;
    while (pos < trace.size()) {
      const std::size_t next = trace.find(',', pos);
      const std::string tok =
          trace.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
      if (!tok.empty()) got.push_back(std::stol(tok));
      if (next == std::string::npos) break;
      pos = next + 1;
    }
    REQUIRE(got.size() == n);
    for (Index i = 0; i < n; ++i) {
      CAPTURE(i);
      CHECK(got[i] == 2 * static_cast<long>(i));
    }
    CHECK(Field<double>::get(m.s, order, "sum") == static_cast<double>(n) * (n - 1));  // exact
  }
}

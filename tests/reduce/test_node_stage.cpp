// The node stage of a reduction (reduce/reduce_queue.hpp): allgather, tree and recursive doubling
// give the same bits — the canonical fold order, written out here independently — on the clock's
// predicted path and on demand, for requesters on one node and on every node; automatic chooses
// by the declared size bound; a fold that fails on one node is an error on the driver, not a hang.
// Run by ctest at 1-4 nodes x 1-2 threads.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "reduce/reduce_queue.hpp"
#include "shell/simulation.hpp"
#include "tests/support/model.hpp"
#include "tests/support/test_classes.hpp"

using namespace antler;
using antler::test::Model;

namespace {

// Sets the node stage on every node (the stage must be the same everywhere).
void stage_handler(Simulation& sim, Reader& r, Writer&) {
  sim.reduces().setNodeStage(static_cast<NodeStage>(r.get<std::uint8_t>()));
}
// Reports every node's last stage.
void last_stage_handler(Simulation& sim, Reader&, Writer& w) {
  w.put<std::uint8_t>(static_cast<std::uint8_t>(sim.reduces().lastNodeStage()));
}
[[maybe_unused]] const bool reg =
    (Shell::registerCommand("test.nodeStage", &stage_handler),
     Shell::registerCommand("test.lastNodeStage", &last_stage_handler), true);

void set_stage(Shell& s, NodeStage st) {
  ByteBuffer args;
  Writer(args).put<std::uint8_t>(static_cast<std::uint8_t>(st));
  s.dispatchExtension("test.nodeStage", args);
}

/// Sizes n / parts, the first n % parts one longer (a running sum, not antler's block_range).
std::pair<std::size_t, std::size_t> part_of(std::size_t n, std::size_t parts, std::size_t part) {
  std::size_t b = 0;
  for (std::size_t k = 0; k < part; ++k) b += n / parts + (k < n % parts ? 1 : 0);
  return {b, b + n / parts + (part < n % parts ? 1 : 0)};
}

// Values whose floating-point sum depends on how it is associated.
double tricky(std::size_t i) {
  return (i % 2 ? -1e16 : 1e16) * (i % 3 == 0 ? 1.0 : 0.5) + 0.1 * static_cast<double>(i) +
         1.0 / static_cast<double>(i + 3);
}

/// What node p holds after its threads' folds: the trace and the plain sum.
struct NodePart {
  std::string trace;
  double sum = 0;
  bool any = false;
};

NodePart node_part(std::size_t n, std::size_t P, std::size_t T, std::size_t p,
                   const std::vector<double>& traced, const std::vector<double>& sums) {
  NodePart out;
  const auto [nb, ne] = part_of(n, P, p);
  for (std::size_t t = 0; t < T; ++t) {
    const auto [b, e] = part_of(ne - nb, T, t);
    std::string th;
    double s = 0;
    for (std::size_t i = nb + b; i < nb + e; ++i) {
      th += (th.empty() ? "" : ",") + std::to_string(static_cast<long>(traced[i]));
      s += sums[i];
    }
    if (!th.empty()) out.trace += (out.trace.empty() ? "" : ";") + th;
    out.sum = t == 0 ? s : out.sum + s;
  }
  out.any = ne > nb;
  return out;
}

/// fold[a, a + m) in the canonical order: fold[a, a + m/2) . fold[a + m/2, a + m), clipped at P.
NodePart canonical(const std::vector<NodePart>& parts, std::size_t a, std::size_t m) {
  if (m == 1) return parts[a];
  const std::size_t h = m / 2;
  if (a + h >= parts.size()) return canonical(parts, a, h);
  NodePart l = canonical(parts, a, h), r = canonical(parts, a + h, h);
  NodePart out;
  out.sum = l.sum + r.sum;
  out.trace = !r.trace.empty() && !l.trace.empty() ? "(" + l.trace + " " + r.trace + ")"
                                                   : l.trace + r.trace;
  return out;
}

NodePart expected(std::size_t n, std::size_t P, std::size_t T, const std::vector<double>& traced,
                  const std::vector<double>& sums) {
  std::vector<NodePart> parts;
  for (std::size_t p = 0; p < P; ++p) parts.push_back(node_part(n, P, T, p, traced, sums));
  std::size_t m = 1;
  while (m < P) m *= 2;
  return canonical(parts, 0, m);
}

}  // namespace

TEST_CASE("every node stage folds in the canonical order, on the clock and on demand") {
  Model m;
  Shell& s = m.s;
  const auto P = static_cast<std::size_t>(m.s.numNodes());
  for (bool global : {false, true})
    for (unsigned T : {1u, 2u})
      for (std::size_t n : {P * T, 5 * P + 3}) {
        CAPTURE(global);
        CAPTURE(T);
        CAPTURE(n);
        m.s.setNumThreads(T);
        // The requester on the last node (a tree must forward the result there), or on all.
        const ObjId order = m.s.create("TestOrder", "/order", static_cast<Index>(P), global);
        const ObjId req(order.id, static_cast<Index>(P - 1));
        const ObjId a = m.s.create("TestAdder", "/a", static_cast<Index>(n));
        const ObjId b = m.s.create("TestAdder", "/b", static_cast<Index>(n));
        std::vector<double> idx(n), sums(n);
        for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<double>(i), sums[i] = tricky(i);
        Field<double>::setVec(s, a.id, "x", idx);
        Field<double>::setVec(s, b.id, "x", sums);
        m.s.addMsg("Reduce", req, "reduceTrace", a, "getX");
        m.s.addMsg("Reduce", req, "reduceSum", b, "getX");
        const NodePart want = expected(n, P, T, idx, sums);
        // The clock runs read other values, so a stale digest cannot pass for a fresh one.
        std::vector<double> idx2(n), sums2(n);
        for (std::size_t i = 0; i < n; ++i) idx2[i] = idx[i] + 1000, sums2[i] = tricky(i + 7);
        const NodePart want2 = expected(n, P, T, idx2, sums2);
        m.s.setClock(0, 1.0);
        m.s.useClock(0, "/order");
        for (NodeStage st : {NodeStage::allgather, NodeStage::tree, NodeStage::recursive_doubling,
                             NodeStage::automatic}) {
          CAPTURE(to_string(st));
          set_stage(m.s, st);
          // On demand (the long path).
          m.s.reduceNow(req, "reduceTrace");
          m.s.reduceNow(req, "reduceSum");
          CHECK(Field<std::string>::get(s, req, "trace") == want.trace);
          CHECK(Field<double>::get(s, req, "sum") == want.sum);
          // On the clock: the first step runs the long way, the others the predicted path.
          Field<double>::setVec(s, a.id, "x", idx2);
          Field<double>::setVec(s, b.id, "x", sums2);
          m.s.reinit();
          m.s.start(3.0);
          CHECK(Field<std::string>::get(s, req, "trace") == want2.trace);
          CHECK(Field<double>::get(s, req, "sum") == want2.sum);
          Field<double>::setVec(s, a.id, "x", idx);
          Field<double>::setVec(s, b.id, "x", sums);
        }
        set_stage(m.s, NodeStage::automatic);
        m.s.destroy("/order");
        m.s.destroy("/a");
        m.s.destroy("/b");
      }
}

TEST_CASE("automatic: bounded small partials ride in the exchange; unbounded ones take a tree") {
  const comm::CostModel cm;  // the defaults (alpha 2 us, beta 0.1 ns/B, copies 0.1 ns/B)
  for (int P : {4, 5, 8, 64, 1000}) {
    CAPTURE(P);
    // No bound: assumed large, so P copies of it on every node lose to log2 P.
    CHECK(choose_node_stage(P, 0, kEveryNode, true, cm) != NodeStage::allgather);
    CHECK(choose_node_stage(P, 0, kEveryNode, false, cm) != NodeStage::allgather);
    CHECK(choose_node_stage(P, 0, 0, false, cm) != NodeStage::allgather);
    CHECK(choose_node_stage(P, 1 << 20, kEveryNode, false, cm) != NodeStage::allgather);
  }
  // 48 bytes (a ReduceStats): the exchange's extra bytes cost less than any extra round.
  for (int P : {2, 3, 4, 16, 64, 256}) {
    CAPTURE(P);
    CHECK(choose_node_stage(P, 48, kEveryNode, true, cm) == NodeStage::allgather);
    CHECK(choose_node_stage(P, 48, 3, true, cm) == NodeStage::allgather);
  }
  // A requester on node 0 is the tree's own root: no forwarding, so the tree wins there.
  CHECK(choose_node_stage(16, 1 << 20, 0, false, cm) == NodeStage::tree);
  CHECK(choose_node_stage(1, 0, kEveryNode, false, cm) == NodeStage::allgather);
  CHECK(parse_node_stage("recursive_doubling") == NodeStage::recursive_doubling);
  CHECK_THROWS_AS(parse_node_stage("ring"), ValueError);
}

TEST_CASE("every node runs the stage the model picks, the same on every node") {
  Model m;
  const int P = m.s.numNodes();
  const ObjId order = m.s.create("TestOrder", "/order", 1, true);
  const ObjId a = m.s.create("TestAdder", "/a", 10);
  m.s.addMsg("Reduce", order, "reduceTrace", a, "getX");
  set_stage(m.s, NodeStage::automatic);
  m.s.reduceNow(order, "reduceTrace");                  // the long path: no exchange to ride in
  const NodeStage want = P == 1 ? NodeStage::automatic  // one node: no node stage runs
                                : choose_node_stage(P, 0, kEveryNode, false, comm::cost_model());
  if (P >= 4) CHECK(want != NodeStage::allgather);  // an unbounded class at P >= 4
  const auto replies = m.s.dispatchExtension("test.lastNodeStage", {});
  for (const ByteBuffer& r : replies)
    CHECK(static_cast<NodeStage>(Reader(r).get<std::uint8_t>()) == want);
}

TEST_CASE("a node fold that fails is an error on the driver, and the model runs on, any stage") {
  Model m;
  Shell& s = m.s;
  const auto P = static_cast<std::size_t>(m.s.numNodes());
  const ObjId order = m.s.create("TestOrder", "/order", 1, true);
  const ObjId a = m.s.create("TestAdder", "/a", static_cast<Index>(2 * P));
  m.s.addMsg("Reduce", order, "reduceTrace", a, "getX");
  m.s.setClock(0, 1.0);
  m.s.useClock(0, "/order");
  for (NodeStage st : {NodeStage::allgather, NodeStage::tree, NodeStage::recursive_doubling}) {
    CAPTURE(to_string(st));
    set_stage(m.s, st);
    std::vector<double> x(2 * P);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i);
    const double last = x.back();
    if (P > 1) {
      m.s.reinit();
      x.back() = -1;  // on the last node: its partial cannot be folded in
      Field<double>::setVec(s, a.id, "x", x);
      CHECK_THROWS(m.s.reduceNow(order, "reduceTrace"));
      CHECK_THROWS(m.s.start(2.0));
      CHECK_THROWS(m.s.reinit());  // reinit asks too
    }
    x.back() = last;
    Field<double>::setVec(s, a.id, "x", x);
    m.s.reinit();
    m.s.start(2.0);
    CHECK(Field<std::string>::get(s, order, "trace") == expected(x.size(), P, 1, x, x).trace);
  }
  set_stage(m.s, NodeStage::automatic);
}

TEST_CASE("nodes that disagree on the pending set get an error at every stage, not a hang") {
  Model m;
  Shell& s = m.s;
  if (m.s.numNodes() == 1) return;  // one node cannot disagree with itself
  const ObjId a = m.s.create("TestAdder", "/a", 5);
  const ObjId s1 = m.s.create("Stats", "/s1");
  const ObjId s2 = m.s.create("Stats", "/s2");
  const auto m1 = m.s.addMsg("Reduce", s1, "reduce", a, "getX");
  const auto m2 = m.s.addMsg("Reduce", s2, "reduce", a, "getX");
  for (NodeStage st : {NodeStage::allgather, NodeStage::tree, NodeStage::recursive_doubling}) {
    CAPTURE(to_string(st));
    set_stage(m.s, st);
    ByteBuffer args;
    Writer(args).put<std::uint32_t>(m1).put<std::uint32_t>(m2);
    // "test.disagree" (tests/reduce/test_reduce_path.cpp): node 0 runs one job, the others two.
    CHECK_THROWS_WITH_AS(m.s.dispatchExtension("test.disagree", args),
                         doctest::Contains("disagree on the pending reductions"), CommError);
    m.s.reduceNow(s2, "reduce");  // still in lockstep afterwards
    CHECK(Field<unsigned>::get(s, s2, "num") == 5u);
  }
  set_stage(m.s, NodeStage::automatic);
}

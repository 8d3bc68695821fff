// Simulations as objects: two in one process, run interleaved, give the answers each gives alone;
// and one simulation spread over a comm::Local group of simulated nodes (P up to 64, threads of
// this process) gives the one-node answers, through its real post office (every step's exchange)
// and reduce queue (every node stage). No MPI: this program makes its own Simulations.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "antler/antler.hpp"
#include "core/comm/local.hpp"

using namespace antler;

namespace {

constexpr double kDt = 1e-4;

/// A small spiking network: RandSpike inputs and recurrent IntFires on Sparse messages (random
/// connectivity from `seed`), a Stats reduction over Vm, on the default ticks.
struct Shape {
  Index inputs = 30, neurons = 40;
  std::uint64_t seed = 7;
  double weight = 0.3;
};

void build(Shell& s, const Shape& sh) {
  s.create("Neutral", "/net");
  const ObjId in = s.create("RandSpike", "/net/in", sh.inputs);
  const ObjId n = s.create("IntFire", "/net/n", sh.neurons);
  const ObjId st = s.create("Stats", "/net/st");
  Field<double>::setAll(s, in.id, "rate", 400.0);
  Field<double>::setAll(s, in.id, "refractT", 0.0);
  Field<double>::setAll(s, n.id, "thresh", 0.8);
  Field<double>::setAll(s, n.id, "tau", 0.01);
  Field<double>::setAll(s, n.id, "refractoryPeriod", 2e-4);
  const ObjId syn = s.find("/net/n/synapse");
  s.setRandomConnectivity(s.addMsg("Sparse", in, "spikeOut", syn, "addSpike"), 0.3, sh.seed);
  s.setRandomConnectivity(s.addMsg("Sparse", n, "spikeOut", syn, "addSpike"), 0.1, sh.seed + 1);
  Field<double>::setAll(s, syn.id, "weight", sh.weight);
  Field<double>::setAll(s, syn.id, "delay", 3e-4);
  s.addMsg("Reduce", st, "reduce", n, "getVm");
  s.setClock(0, kDt);
  s.useClock(0, "/net/in,/net/n,/net/st");
  s.seed(sh.seed * 31);
}

struct Result {
  std::vector<double> vm, lastSpike;
  double mean = 0, sdev = 0;
  unsigned num = 0;
};

Result read(Shell& s) {
  const ObjId n = s.find("/net/n"), st = s.find("/net/st");
  return {Field<double>::getVec(s, n.id, "Vm"), Field<double>::getVec(s, n.id, "lastSpike"),
          Field<double>::get(s, st, "mean"), Field<double>::get(s, st, "sdev"),
          Field<unsigned>::get(s, st, "num")};
}

/// Bit for bit: the model's state on any split (DESIGN.md's promise).
void check_same_state(const Result& a, const Result& b) {
  REQUIRE(a.vm.size() == b.vm.size());
  for (std::size_t i = 0; i < a.vm.size(); ++i) {
    CAPTURE(i);
    CHECK(a.vm[i] == b.vm[i]);
    CHECK(a.lastSpike[i] == b.lastSpike[i]);
  }
  CHECK(a.num == b.num);
}

/// One simulation, alone, on one node: `runs` starts of `steps` steps each.
Result alone(const Shape& sh, int runs, int steps, unsigned threads) {
  Simulation sim;
  Shell& s = sim.shell();
  s.setNumThreads(threads);
  build(s, sh);
  s.reinit();
  for (int r = 0; r < runs; ++r) s.start(steps * kDt);
  return read(s);
}

}  // namespace

TEST_CASE("two simulations in one process, run interleaved, give the answers of each alone") {
  const Shape sa{30, 40, 7, 0.3}, sb{12, 25, 11, 0.45};
  Simulation a, b;
  a.shell().setNumThreads(2);
  b.shell().setNumThreads(1);
  build(a.shell(), sa);
  build(b.shell(), sb);
  // The same paths, and the same ids, name different elements of different sizes.
  CHECK(a.shell().find("/net/n") == b.shell().find("/net/n"));
  CHECK(a.elements().get(a.shell().find("/net/n").id)->numData() == 40);
  CHECK(b.elements().get(b.shell().find("/net/n").id)->numData() == 25);
  a.shell().reinit();
  b.shell().reinit();
  for (int r = 0; r < 4; ++r) {
    a.shell().start(25 * kDt);
    b.shell().start(25 * kDt);
  }
  CHECK(a.clock().currentTime() == doctest::Approx(100 * kDt));
  CHECK(b.clock().currentTime() == doctest::Approx(100 * kDt));
  const Result ra = read(a.shell()), rb = read(b.shell());
  const Result wa = alone(sa, 4, 25, 2), wb = alone(sb, 4, 25, 1);
  check_same_state(ra, wa);
  check_same_state(rb, wb);
  // Same split: the statistics too, bit for bit.
  CHECK(ra.mean == wa.mean);
  CHECK(ra.sdev == wa.sdev);
  CHECK(rb.mean == wb.mean);
  // The networks spiked (the comparison is not between two resting models).
  int spiked = 0;
  for (double t : ra.lastSpike) spiked += t > 0;
  CHECK(spiked > 0);

  // What one does to its model leaves the other's alone.
  a.shell().destroy("/net");
  CHECK_FALSE(a.shell().exists("/net"));
  CHECK(b.shell().exists("/net/n"));
  b.shell().start(10 * kDt);
  check_same_state(read(b.shell()), alone(sb, 1, 110, 1));
  a.shell().seed(5);
  CHECK(a.seed() == 5);
  CHECK(b.seed() == sb.seed * 31);
}

TEST_CASE("a simulation on a Local group of P nodes gives the one-node state, P up to 64") {
  const Shape sh;
  const Result one = alone(sh, 2, 20, 1);
  for (int P : {2, 3, 5, 8, 64}) {
    CAPTURE(P);
    const unsigned T = P <= 3 ? 2 : 1;
    Result got;
    comm::run_local(P, [&](comm::Comm& c) {
      Simulation sim(c);
      CHECK(sim.layout().numNodes == P);
      CHECK(sim.layout().node == c.rank());
      if (c.rank() != 0) {
        sim.shell().serve();
        return;
      }
      Shell& s = sim.shell();
      s.setNumThreads(T);
      build(s, sh);
      // Each node holds its block of the neurons, no more.
      const Element* n = sim.elements().get(s.find("/net/n").id);
      CHECK(n->numLocal() == block_range(sh.neurons, P, 0).second);
      s.reinit();
      s.start(20 * kDt);
      s.start(20 * kDt);
      got = read(s);
      s.quitWorkers(0);
    });
    check_same_state(got, one);
    // The statistics over the nodes' partials: the same bits as on one node (exact sums).
    CHECK(got.mean == one.mean);
    CHECK(got.sdev == one.sdev);
  }
}

TEST_CASE("the reduce queue's node stages fold in one canonical order on Local nodes") {
  const Shape sh;
  for (int P : {3, 6}) {
    std::vector<Result> results;
    const Result one = alone(sh, 1, 40, 1);
    for (NodeStage stage : {NodeStage::allgather, NodeStage::tree, NodeStage::recursive_doubling}) {
      CAPTURE(P);
      CAPTURE(std::string(to_string(stage)));
      Result got;
      NodeStage ran = NodeStage::automatic;
      std::uint64_t reduceMessages = 0;
      comm::run_local(P, [&](comm::Comm& c) {
        Simulation sim(c);
        sim.reduces().setNodeStage(stage);  // every node the same, before any command
        if (c.rank() != 0) {
          sim.shell().serve();
          return;
        }
        Shell& s = sim.shell();
        s.setNumThreads(1);
        build(s, sh);
        s.reinit();
        // The reduce queue's own traffic in a run of 10 steps and in one of 20: each run's first
        // rounds settle its prediction (reduce_queue.hpp), the rest is the steady state.
        auto traffic = [&](int steps) {
          const comm::Stats a = sim.reduces().comm().stats();
          s.start(steps * kDt);
          const comm::Stats b = sim.reduces().comm().stats();
          return b.messagesSent + b.messagesReceived - a.messagesSent - a.messagesReceived;
        };
        // The first run after reinit also pays the reinit round's miss: compare two later runs
        // (40 steps in all, as the one-node reference).
        (void)traffic(10);
        const std::uint64_t shortRun = traffic(10);
        reduceMessages = traffic(20) - shortRun;  // 10 steady-state steps' worth
        got = read(s);
        ran = sim.reduces().lastNodeStage();
        s.quitWorkers(0);
      });
      CHECK(ran == stage);
      // In the steady state, allgather's partials ride in the step's exchange (the post office's
      // comm); the tree and recursive doubling take rounds of their own on the reduce queue's.
      if (stage == NodeStage::allgather)
        CHECK(reduceMessages == 0);
      else
        CHECK(reduceMessages > 0);
      results.push_back(got);
    }
    for (const Result& r : results) {
      check_same_state(r, one);
      CHECK(r.mean == results[0].mean);  // the same bits whichever stage ran
      CHECK(r.sdev == results[0].sdev);
    }
  }
}

// ---- the targeted exchange ----

namespace {

/// A locally connected network: IntFire i feeds i+1 .. i+kReach (no wrap), RandSpike i drives
/// IntFire i, and a Table per neuron records its spikes (OneToOne: on the neuron's own node).
constexpr Index kLocalNeurons = 160;
constexpr Index kReach = 5;

void build_local(Shell& s) {
  s.create("Neutral", "/loc");
  const ObjId in = s.create("RandSpike", "/loc/in", kLocalNeurons);
  const ObjId n = s.create("IntFire", "/loc/n", kLocalNeurons);
  const ObjId tab = s.create("Table", "/loc/spikes", kLocalNeurons);
  Field<double>::setAll(s, in.id, "rate", 300.0);
  Field<double>::setAll(s, n.id, "thresh", 0.8);
  Field<double>::setAll(s, n.id, "tau", 0.01);
  const ObjId syn = s.find("/loc/n/synapse");
  std::vector<Index> src, dest;
  for (Index i = 0; i < kLocalNeurons; ++i) {
    src.push_back(i);
    dest.push_back(i);
  }
  s.pairFill(s.addMsg("Sparse", in, "spikeOut", syn, "addSpike"), src, dest);
  src.clear();
  dest.clear();
  for (Index i = 0; i < kLocalNeurons; ++i)
    for (Index j = i + 1; j <= i + kReach && j < kLocalNeurons; ++j) {
      src.push_back(i);
      dest.push_back(j);
    }
  s.pairFill(s.addMsg("Sparse", n, "spikeOut", syn, "addSpike"), src, dest);
  Field<double>::setAll(s, syn.id, "weight", 0.5);
  Field<double>::setAll(s, syn.id, "delay", 2e-4);
  s.addMsg("OneToOne", n, "spikeOut", tab, "spike");
  s.setClock(0, kDt);
  s.useClock(0, "/loc/in,/loc/n,/loc/spikes");
  s.seed(3);
}

struct LocalRun {
  std::vector<double> vm;
  std::vector<std::vector<double>> spikes;  // per neuron
};

LocalRun read_local(Shell& s) {
  LocalRun r;
  r.vm = Field<double>::getVec(s, s.find("/loc/n").id, "Vm");
  const Id tab = s.find("/loc/spikes").id;
  for (Index i = 0; i < kLocalNeurons; ++i)
    r.spikes.push_back(Field<std::vector<double>>::get(s, ObjId(tab, i), "vector"));
  return r;
}

struct NodeCounts {
  ExchangeMode mode = ExchangeMode::allgather;
  ExchangeStats xs;
  std::uint64_t bytesReceived = 0;  // every byte the node's post office received
};

/// The local network on P Local nodes: the state, and each node's exchange counters.
LocalRun run_local_network(int P, std::vector<NodeCounts>& counts) {
  LocalRun got;
  counts.assign(static_cast<std::size_t>(P), {});
  comm::run_local(P, [&](comm::Comm& c) {
    Simulation sim(c);
    if (c.rank() == 0) {
      Shell& s = sim.shell();
      build_local(s);
      s.reinit();
      s.start(60 * kDt);
      got = read_local(s);
      s.quitWorkers(0);
    } else {
      sim.shell().serve();
    }
    NodeCounts& n = counts[static_cast<std::size_t>(c.rank())];
    n.mode = sim.post().exchangeMode();
    n.xs = sim.post().exchangeStats();
    n.bytesReceived = sim.post().bytesReceived();
  });
  return got;
}

}  // namespace

TEST_CASE("the targeted exchange: a node receives only the records its targets need") {
  LocalRun one;
  {
    Simulation sim;
    build_local(sim.shell());
    sim.shell().reinit();
    sim.shell().start(60 * kDt);
    one = read_local(sim.shell());
  }
  std::size_t total = 0;
  for (auto& v : one.spikes) total += v.size();
  REQUIRE(total > 100);  // the network is active
  for (int P : {4, 8, 16}) {
    CAPTURE(P);
    std::vector<NodeCounts> counts;
    const LocalRun got = run_local_network(P, counts);
    // The state of one node, bit for bit.
    CHECK(got.vm == one.vm);
    CHECK(got.spikes == one.spikes);
    // Every node chose the targeted path (each node's sources reach at most one other node).
    for (auto& n : counts) CHECK(n.mode == ExchangeMode::targeted);
    // Node q receives one record per spike of a neuron on another node with a target on q:
    // nothing else (computed here from the one-node spike raster and the connectivity).
    for (int q = 0; q < P; ++q) {
      std::uint64_t want = 0;
      for (Index i = 0; i < kLocalNeurons; ++i) {
        if (block_owner(kLocalNeurons, P, i) == q) continue;
        bool reaches = false;
        for (Index j = i + 1; j <= i + kReach && j < kLocalNeurons; ++j)
          reaches = reaches || block_owner(kLocalNeurons, P, j) == q;
        if (reaches) want += one.spikes[i].size();
      }
      CAPTURE(q);
      CHECK(counts[static_cast<std::size_t>(q)].xs.recordsReceived == want);
    }
    // The point-to-point part of a round runs only in the rounds where some node has records for
    // another: the steps in which a neuron with a target on another node spiked (from the
    // one-node raster). Every node counts the same; the other rounds are one collective.
    std::set<long> crossing;
    for (Index i = 0; i < kLocalNeurons; ++i) {
      bool crosses = false;
      for (Index j = i + 1; j <= i + kReach && j < kLocalNeurons; ++j)
        crosses = crosses || block_owner(kLocalNeurons, P, j) != block_owner(kLocalNeurons, P, i);
      if (crosses)
        for (double t : one.spikes[i]) crossing.insert(std::lround(t / kDt));
    }
    REQUIRE(!crossing.empty());
    for (auto& n : counts) {
      CHECK(n.xs.forestRounds == crossing.size());
      CHECK(n.xs.forestRounds + n.xs.forestRoundsSkipped == n.xs.steps);
    }
    MESSAGE("P = " << P << ": " << crossing.size() << " rounds with records between nodes of "
                   << counts[0].xs.steps);
  }
  // Against the allgather on the same network at P = 8: what a node receives in all.
  setenv("ANTLER_EXCHANGE", "allgather", 1);
  std::vector<NodeCounts> all;
  const LocalRun viaAll = run_local_network(8, all);
  unsetenv("ANTLER_EXCHANGE");
  CHECK(viaAll.vm == one.vm);
  std::vector<NodeCounts> tgt;
  run_local_network(8, tgt);
  for (int q = 0; q < 8; ++q) {
    CAPTURE(q);
    CHECK(all[static_cast<std::size_t>(q)].mode == ExchangeMode::allgather);
    MESSAGE("node " << q << ": allgather " << all[static_cast<std::size_t>(q)].bytesReceived
                    << " B, targeted " << tgt[static_cast<std::size_t>(q)].bytesReceived << " B");
    CHECK(tgt[static_cast<std::size_t>(q)].bytesReceived <
          all[static_cast<std::size_t>(q)].bytesReceived);
  }
}

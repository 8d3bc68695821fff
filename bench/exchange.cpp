// exchange: what each node receives per step, the allgather against the targeted exchange
// (msg/post_office.hpp), on two networks:
//
//   local  N IntFire + N RandSpike (rate 100 Hz); IntFire i feeds i+1 .. i+10 (no wrap), RandSpike
//   i
//          feeds IntFire i; weights 0.3, delays 1 ms; dt 1e-4. (The measurement: every
//          node needs only its neighbour's boundary spikes.)
//   demo   the shape of examples/population_stats.py (scripts/demo): N IntFire, N/10 RandSpike
//          inputs at 10 Hz, inputs -> neurons p = 100 / (N/10), neurons -> neurons p = 100 / N
//          (random: every node talks to every node once P is well below the fan-out).
//
// On MPI (the ranks it runs on), for each network: the model is built anew for each path (the
// path is chosen when the routes are built: ANTLER_EXCHANGE, set on every rank), and timed in
// alternation, R times each; printed: bytes received per node per step (mean and largest node,
// every byte of the step's exchanges), ms per step (best of R), the ratio targeted / allgather.
// On comm::Local (--local P,P,...): the same networks with `per-node` neurons on every one of P
// simulated nodes (weak scaling), counted exactly: bytes received per node per step on each path,
// and the routing table's entries on the largest node (its memory for the exchange). (Each
// simulated node holds every Sparse message's whole matrix, as a real node does: the demo network
// at P = 1024 needs more memory than a small machine has.)
//
// Usage: mpirun -n 2 exchange [--network local|demo|both] [--neurons N] [--steps S] [--reps R]
//        exchange --local 8,64,256,1024 [--per-node n] [--steps S] [--network ...]
//        (defaults: both, N 40000, 500 steps, 3 repetitions; Local: 20 neurons per node, 40 steps)
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "antler/antler.hpp"
#include "bench/machine.hpp"
#include "core/comm/local.hpp"
#include "core/comm/mpi.hpp"

using namespace antler;

namespace {

constexpr double kDt = 1e-4;

void build(Shell& s, const std::string& network, Index N) {
  s.create("Neutral", "/net");
  const bool local = network == "local";
  const Index inputs = local ? N : std::max<Index>(1, N / 10);
  const ObjId in = s.create("RandSpike", "/net/in", inputs);
  const ObjId n = s.create("IntFire", "/net/n", N);
  Field<double>::setAll(s, in.id, "rate", local ? 100.0 : 10.0);
  Field<double>::setAll(s, in.id, "refractT", 0.0);
  Field<double>::setAll(s, n.id, "thresh", 1.0);
  Field<double>::setAll(s, n.id, "tau", 0.02);
  Field<double>::setAll(s, n.id, "refractoryPeriod", 0.002);
  const ObjId syn = s.find("/net/n/synapse");
  if (local) {
    std::vector<Index> src, dest;
    for (Index i = 0; i < N; ++i) {
      src.push_back(i);
      dest.push_back(i);
    }
    s.pairFill(s.addMsg("Sparse", in, "spikeOut", syn, "addSpike"), src, dest);
    src.clear();
    dest.clear();
    for (Index i = 0; i < N; ++i)
      for (Index j = i + 1; j <= i + 10 && j < N; ++j) {
        src.push_back(i);
        dest.push_back(j);
      }
    s.pairFill(s.addMsg("Sparse", n, "spikeOut", syn, "addSpike"), src, dest);
    Field<double>::setAll(s, syn.id, "weight", 0.3);
  } else {
    s.setRandomConnectivity(s.addMsg("Sparse", in, "spikeOut", syn, "addSpike"),
                            std::min(1.0, 100.0 / inputs), 11);
    s.setRandomConnectivity(s.addMsg("Sparse", n, "spikeOut", syn, "addSpike"),
                            std::min(1.0, 100.0 / N), 12);
    Field<double>::setAll(s, syn.id, "weight", 0.05);
  }
  Field<double>::setAll(s, syn.id, "delay", 1e-3);
  s.setClock(0, kDt);
  s.useClock(0, "/net/in,/net/n");
  s.seed(5);
}

struct Measure {
  double msPerStep = 0;
  std::vector<double> bytesPerStep;  // per node
  std::vector<std::size_t> routes;   // per node: routing-table entries
  std::string mode;
};

/// One model on the nodes of c, path `mode`: rank 0 drives, the others serve. Collective.
Measure run_once(comm::Comm& c, const std::string& network, Index N, int steps,
                 const std::string& mode) {
  setenv("ANTLER_EXCHANGE", mode.c_str(), 1);
  Measure m;
  double ms = 0;
  std::uint64_t bytes = 0;
  {
    Simulation sim(c);
    if (c.rank() == 0) {
      Shell& s = sim.shell();
      build(s, network, N);
      s.reinit();
      s.start(5 * kDt);  // warm: routes built, buffers grown
      auto t0 = std::chrono::steady_clock::now();
      s.start(steps * kDt);
      ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
          steps;
      s.quitWorkers(0);
    } else {
      sim.shell().serve();
    }
    bytes = sim.post().runBytesReceived();  // the timed run's, on every node
    m.mode = to_string(sim.post().exchangeMode());
    m.routes.push_back(sim.post().routeEntries());
  }
  unsetenv("ANTLER_EXCHANGE");
  m.msPerStep = ms;
  m.bytesPerStep.push_back(static_cast<double>(bytes) / steps);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::string network = "both", localList;
  Index N = 40000, perNode = 20;
  int steps = 500, reps = 3;
  bool stepsGiven = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--network")
      network = next();
    else if (a == "--neurons")
      N = static_cast<Index>(std::stoul(next()));
    else if (a == "--steps")
      steps = std::stoi(next()), stepsGiven = true;
    else if (a == "--reps")
      reps = std::stoi(next());
    else if (a == "--local")
      localList = next();
    else if (a == "--per-node")
      perNode = static_cast<Index>(std::stoul(next()));
    else {
      std::fprintf(stderr, "exchange: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  std::vector<std::string> networks =
      network == "both" ? std::vector<std::string>{"local", "demo"} : std::vector{network};
  comm::Environment env(&argc, &argv);
  comm::Comm world = comm::Comm::world();
  const int P = world.size(), me = world.rank();
  if (me == 0) std::printf("%s\n", bench::machine().c_str());

  if (!localList.empty()) {
    if (me != 0) return 0;
    if (!stepsGiven) steps = 40;
    std::printf("comm::Local, %u neurons per node, %d steps: bytes received per node per step\n",
                perNode, steps);
    std::printf("%-6s %6s %8s | %14s %14s | %14s %14s | %8s %12s\n", "net", "P", "neurons",
                "allgather mean", "max", "targeted mean", "max", "ratio", "route max");
    std::vector<int> Ps;
    for (std::size_t at = 0; at < localList.size();) {
      const std::size_t comma = localList.find(',', at);
      Ps.push_back(std::stoi(localList.substr(at, comma - at)));
      at = comma == std::string::npos ? localList.size() : comma + 1;
    }
    for (const std::string& net : networks)
      for (int LP : Ps) {
        const Index n = perNode * static_cast<Index>(LP);
        double mean[2] = {0, 0}, mx[2] = {0, 0};
        std::size_t routeMax = 0;
        std::string modes[2];
        for (int k = 0; k < 2; ++k) {
          const std::string mode = k == 0 ? "allgather" : "targeted";
          std::vector<Measure> per(static_cast<std::size_t>(LP));
          comm::run_local(LP, [&](comm::Comm& c) {
            per[static_cast<std::size_t>(c.rank())] = run_once(c, net, n, steps, mode);
          });
          for (auto& m : per) {
            mean[k] += m.bytesPerStep[0] / LP;
            mx[k] = std::max(mx[k], m.bytesPerStep[0]);
            if (k == 1) routeMax = std::max(routeMax, m.routes[0]);
          }
          modes[k] = per[0].mode;
        }
        std::printf("%-6s %6d %8u | %14.0f %14.0f | %14.0f %14.0f | %8.3f %12zu%s\n", net.c_str(),
                    LP, n, mean[0], mx[0], mean[1], mx[1], mean[1] / mean[0], routeMax,
                    modes[1] == "targeted" ? "" : "  (targeted not taken)");
        std::fflush(stdout);
      }
    return 0;
  }

  if (me == 0)
    std::printf(
        "MPI, %d ranks%s, %u neurons, %d steps, best of %d: bytes received per node per "
        "step, ms per step\n",
        P,
        P > static_cast<int>(std::thread::hardware_concurrency())
            ? " (OVERSUBSCRIBED: more ranks than cores, times measure the scheduler)"
            : "",
        N, steps, reps);
  for (const std::string& net : networks) {
    double best[2] = {1e30, 1e30}, bytes[2] = {0, 0}, bytesMax[2] = {0, 0};
    std::string modes[2];
    for (int r = 0; r < reps; ++r)
      for (int k = 0; k < 2; ++k) {
        Measure m = run_once(world, net, N, steps, k == 0 ? "allgather" : "targeted");
        // Every rank's bytes to rank 0.
        double mine = m.bytesPerStep[0];
        std::vector<double> all(static_cast<std::size_t>(P));
        MPI_Gather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, comm::mpi_handle(world));
        if (me != 0) continue;
        best[k] = std::min(best[k], m.msPerStep);
        double sum = 0, mx = 0;
        for (double b : all) {
          sum += b;
          mx = std::max(mx, b);
        }
        bytes[k] = sum / P;
        bytesMax[k] = mx;
        modes[k] = m.mode;
      }
    // Which path the automatic choice takes here (a short run).
    const std::string picked = run_once(world, net, N, std::max(1, steps / 10), "automatic").mode;
    if (me == 0) {
      std::printf("%-6s automatic takes the %s path\n", net.c_str(), picked.c_str());
      std::printf("%-6s allgather: %10.0f B/step/node (max %10.0f), %8.4f ms/step\n", net.c_str(),
                  bytes[0], bytesMax[0], best[0]);
      std::printf("%-6s targeted:  %10.0f B/step/node (max %10.0f), %8.4f ms/step%s\n", net.c_str(),
                  bytes[1], bytesMax[1], best[1],
                  modes[1] == "targeted" ? "" : "  (not taken: the routes reach every node)");
      std::printf("%-6s targeted / allgather: bytes %.3f, time %.3f\n", net.c_str(),
                  bytes[1] / bytes[0], best[1] / best[0]);
      std::fflush(stdout);
    }
  }
  return 0;
}

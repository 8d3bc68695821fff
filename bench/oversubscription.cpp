// bench/oversubscription: how much slower is a step when a node runs more threads than it has
// free cores?
//
// The clock's threads meet at three barriers per step (shell/detail/spin_barrier.hpp). A small
// model does a few microseconds of work per step, so the barriers are most of the step; with more
// threads than cores a waiting thread that holds on to its core keeps the thread it waits for from
// running. This program times the same small network at several thread counts in the same run,
// interleaved (repetition r runs every count once, the order rotating), and reports each count's
// median time per step and its ratio to the first count of the list, the baseline. The clock runs
// a node's threads on at most as many OS threads as the rank has cores (Clock::workers: the "OS
// threads" column, node 0's); ANTLER_CORES_PER_RANK=1024 in the environment gives every thread an
// OS thread of its own, as before that mapping existed.
//
//   ./build/bench/oversubscription 200 20000 7 2,4        # (a) 4 threads on 2 cores vs 2
//   mpirun --oversubscribe --bind-to none -n 2 ./build/bench/oversubscription 200 20000 7 1,2
//                                                         # (b) 2 ranks x 2 threads vs x 1
//
// The model: N IntFire neurons (tau 20 ms, thresh 1, refractory 2 ms, initVm uniform in [0, 1)),
// N/10 RandSpike inputs at 100 Hz through a Sparse message (p = 0.2), a Sparse recurrent message
// (p = 0.02) into the same synapses, every weight 0.15 and delay 1 ms, and a Stats reduction of Vm
// on tick 1; dt 0.1 ms. Check: Vm after each run equals the first count's Vm bit for
// bit (results do not depend on the split); the program exits with 1 if not.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/args.hpp"
#include "bench/machine.hpp"
#include "core/random.hpp"
#include "shell/clock.hpp"
#include "shell/field.hpp"
#include "shell/runtime.hpp"

using namespace antler;

namespace {

using WallClock = std::chrono::steady_clock;
constexpr double kDt = 1e-4;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// argv[i] as a count >= 1, dflt if absent, 0 if malformed.
unsigned count_arg(int argc, char** argv, int i, unsigned dflt) {
  if (argc <= i) return dflt;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  return (*end == '\0' && v >= 1 && v <= 100000000) ? static_cast<unsigned>(v) : 0;
}

void build(Shell& s, Index n) {
  s.create("Neutral", "/net");
  const ObjId neurons = s.create("IntFire", "/net/neurons", n);
  const Index numInputs = std::max<Index>(1, n / 10);
  const ObjId input = s.create("RandSpike", "/net/input", numInputs);
  const ObjId stats = s.create("Stats", "/net/stats");
  Field<double>::setAll(s, neurons.id, "tau", 0.02);
  Field<double>::setAll(s, neurons.id, "thresh", 1.0);
  Field<double>::setAll(s, neurons.id, "refractoryPeriod", 0.002);
  std::vector<double> initVm(n);
  for (Index i = 0; i < n; ++i) initVm[i] = Rng(7, i).uniform();
  Field<double>::setVec(s, neurons.id, "initVm", initVm);
  Field<double>::setAll(s, input.id, "rate", 100.0);
  const ObjId syn = s.find("/net/neurons/synapse");
  const std::uint32_t in = s.addMsg("Sparse", input, "spikeOut", syn, "addSpike");
  s.setRandomConnectivity(in, 0.2, 2026);
  const std::uint32_t rec = s.addMsg("Sparse", neurons, "spikeOut", syn, "addSpike");
  s.setRandomConnectivity(rec, 0.02, 2027);
  s.doSyncDataHandler(syn.id);
  Field<double>::setAll(s, syn.id, "weight", 0.15);
  Field<double>::setAll(s, syn.id, "delay", 1e-3);
  s.addMsg("Reduce", stats, "reduce", neurons, "getVm");
  s.setClock(0, kDt);
  s.setClock(1, kDt);
  s.useClock(0, "/net/input", "process");
  s.useClock(0, "/net/neurons", "process");
  s.useClock(1, "/net/stats", "process");
}

}  // namespace

int main(int argc, char** argv) {
  bench::print_machine();
  Runtime rt(argc, argv);
  Shell& s = rt.shell();
  const unsigned n = count_arg(argc, argv, 1, 200);
  const unsigned steps = count_arg(argc, argv, 2, 20000);
  const unsigned reps = count_arg(argc, argv, 3, 7);
  const std::vector<unsigned> threads = bench::count_list(argc > 4 ? argv[4] : "2,4");
  if (n == 0 || steps == 0 || reps == 0 || threads.empty() || argc > 5) {
    std::fprintf(stderr,
                 "usage: %s [N >= 1 [steps >= 1 [repetitions >= 1 [threads per node, e.g. 2,4 "
                 "(1..64); the first is the baseline]]]]\n",
                 argv[0]);
    return rt.finish(2);
  }
  std::printf(
      "question: time per step of %u IntFire neurons (+ Poisson input, Sparse synapses, a Stats "
      "reduction) at %d node(s) x each thread count, relative to the first count, measured in the "
      "same run; %u steps, median of %u interleaved repetitions\n",
      n, s.numNodes(), steps, reps);
  build(s, n);

  const ObjId neurons = s.find("/net/neurons");
  std::vector<std::vector<double>> perStep(threads.size());
  std::vector<double> reference;
  bool same = true;
  for (unsigned r = 0; r < reps; ++r)
    for (std::size_t k = 0; k < threads.size(); ++k) {
      const std::size_t i = (r + k) % threads.size();
      s.setNumThreads(threads[i]);
      s.reinit();
      const auto t0 = WallClock::now();
      s.start(steps * kDt);
      perStep[i].push_back(std::chrono::duration<double>(WallClock::now() - t0).count() / steps);
      const std::vector<double> vm = Field<double>::getVec(s, neurons.id, "Vm");
      if (reference.empty())
        reference = vm;
      else
        same = same && vm == reference;
    }

  const double base = median(perStep[0]);
  std::printf("%8s %8s %11s %14s %14s %14s %10s\n", "threads", "x nodes", "OS threads",
              "median us/step", "min us/step", "max us/step", "ratio");
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const double med = median(perStep[i]);
    std::printf("%8u %8d %11u %14.2f %14.2f %14.2f %10.2f\n", threads[i], s.numNodes(),
                antler::Clock::workers(threads[i]), 1e6 * med,
                1e6 * *std::min_element(perStep[i].begin(), perStep[i].end()),
                1e6 * *std::max_element(perStep[i].begin(), perStep[i].end()), med / base);
  }
  std::printf("Vm identical for every thread count: %s\n", same ? "yes" : "NO");
  s.clearModel();
  return rt.finish(same ? 0 : 1);
}

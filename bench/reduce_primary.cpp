// bench/reduce_primary: how fast is a Stats reduction of Vm through the full reduce path?
//
// N neuron objects (80 bytes each, Vm one field among several). One Stats object reduces their Vm
// every step; only the Stats object is scheduled, so a step costs the clock round plus the reduce
// path (request, primary fold over every object, secondary/tertiary folds, digest). Baselines,
// timed in the same run over the same objects' memory:
//   hand (block)  the same arithmetic as ReduceStats written by hand: a block of 512 Vm copied to
//                 a buffer, two passes over it, Chan merge: what antler's path costs beyond it is
//                 the framework's overhead. The goal (ratio <= 1.15) is against this one.
//   hand (Welford) the textbook one-pass stable loop, for context.
//   hand (exact)  ReduceStats' own arithmetic since its sums became exact (reduce/exact_sum.hpp):
//                 every Vm and its square (rounded square plus the fma's error) into two
//                 superaccumulators, by hand: the floor for an exact Stats; antler must give its
//                 bits.
// ReduceStats is exact (the same bits on any split): its ratio to hand (block), the fast inexact
// loop, is the cost of exactness plus the framework's (goal <= 2 at 1e6 objects, <= 1.5 at 1e7).
// Also: antler at 2 threads vs 1.
//
// Two sets of Vm: "smooth" (-0.07 + 0.01 sin(i / 1000): a few binades, the exact sums' easy case)
// and "spiking" (a leaky integrate-and-fire population after 300 steps of random kicks: Vm
// spread over a dozen binades under the threshold, and the neurons just reset sitting at a tiny
// vReset of -1e-7, as in examples/population_stats.py: the exact sums' common hard case).
//
// Usage: reduce_primary [N ...] [--data smooth|spiking|both]   (default: 1000000 10000000, both)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "bench/machine.hpp"
#include "core/class_builder.hpp"
#include "core/element.hpp"
#include "models/stats.hpp"
#include "reduce/exact_sum.hpp"
#include "shell/field.hpp"
#include "shell/runtime.hpp"

using namespace antler;

namespace {

class BenchNeuron {
 public:
  void process(const Eref&, ProcPtr) {}
  void reinit(const Eref&, ProcPtr) {}
  static const Cinfo* initCinfo() {
    static const Cinfo* c = ClassBuilder<BenchNeuron>("BenchNeuron", "a neuron-sized object")
                                .value("Vm", &BenchNeuron::Vm_)
                                .value("thresh", &BenchNeuron::thresh_)
                                .proc<&BenchNeuron::process, &BenchNeuron::reinit>()
                                .build();
    return c;
  }
  double Vm_ = 0, thresh_ = 0.02, tau_ = 0.01, refractory_ = 0.002, lastSpike_ = -1, Em_ = -0.07,
         Rm_ = 1e8, Cm_ = 1e-10, inject_ = 0, initVm_ = -0.07;
};
static const Cinfo* registered = BenchNeuron::initCinfo();

using WallClock = std::chrono::steady_clock;

double seconds(WallClock::time_point a) {
  return std::chrono::duration<double>(WallClock::now() - a).count();
}

struct Result {
  double mean, sdev, min, max;
};

// The same arithmetic as ReduceStats, by hand, over the raw objects.
Result hand_block(const BenchNeuron* p, std::size_t n) {
  std::uint64_t count = 0;
  double mean = 0, m2 = 0, mn = std::numeric_limits<double>::infinity(), mx = -mn;
  double buf[512];
  for (std::size_t i = 0; i < n; i += 512) {
    const std::size_t m = std::min<std::size_t>(512, n - i);
    for (std::size_t k = 0; k < m; ++k) buf[k] = p[i + k].Vm_;
    double s[4] = {0, 0, 0, 0};
    std::size_t k = 0;
    for (; k + 4 <= m; k += 4)
      for (int j = 0; j < 4; ++j) {
        s[j] += buf[k + j];
        mn = buf[k + j] < mn ? buf[k + j] : mn;
        mx = buf[k + j] > mx ? buf[k + j] : mx;
      }
    for (; k < m; ++k)
      s[0] += buf[k], mn = buf[k] < mn ? buf[k] : mn, mx = buf[k] > mx ? buf[k] : mx;
    const double bm = ((s[0] + s[1]) + (s[2] + s[3])) / static_cast<double>(m);
    double q[4] = {0, 0, 0, 0};
    k = 0;
    for (; k + 4 <= m; k += 4)
      for (int j = 0; j < 4; ++j) {
        const double d = buf[k + j] - bm;
        q[j] += d * d;
      }
    for (; k < m; ++k) q[0] += (buf[k] - bm) * (buf[k] - bm);
    const double bq = (q[0] + q[1]) + (q[2] + q[3]);
    if (count == 0) {
      mean = bm, m2 = bq;
    } else {
      const double na = static_cast<double>(count), nb = static_cast<double>(m), nn = na + nb,
                   d = bm - mean;
      mean += d * (nb / nn);
      m2 += bq + d * d * (na * nb / nn);
    }
    count += m;
  }
  return {mean, std::sqrt(m2 / static_cast<double>(count)), mn, mx};
}

// ReduceStats' exact arithmetic, by hand: the sums of Vm and Vm^2 in superaccumulators.
Result hand_exact(const BenchNeuron* p, std::size_t n) {
  ExactSum sum, sq;
  double mn = std::numeric_limits<double>::infinity(), mx = -mn;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = p[i].Vm_;
    sum.add(v);
    sq.addProduct(v, v);
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
  }
  const double nn = static_cast<double>(n), m = sum.value() / nn;
  ExactSum m2 = sq;
  m2.addProduct(-2 * m, sum.value());
  m2.addProduct(-2 * m, sum.rest());
  const double mm = m * m;
  m2.addProduct(nn, mm);
  m2.addProduct(nn, std::fma(m, m, -mm));
  return {m, std::sqrt(std::max(0.0, m2.value()) / nn), mn, mx};
}

// The textbook one-pass (Welford) loop.
Result hand_welford(const BenchNeuron* p, std::size_t n) {
  double mean = 0, m2 = 0, mn = std::numeric_limits<double>::infinity(), mx = -mn;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = p[i].Vm_;
    const double d = v - mean;
    mean += d / static_cast<double>(i + 1);
    m2 += d * (v - mean);
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  return {mean, std::sqrt(m2 / static_cast<double>(n)), mn, mx};
}

// A leaky integrate-and-fire population's Vm: tau 20 ms, dt 0.1 ms, threshold 1, reset to -1e-7
// with 2 ms refractory, kicks of +0.25 (rate 0.012 a step) and -0.2 (0.004), from U[0, 0.9): about
// 5 % of the values sit at the reset, as in the demo.
std::vector<double> spiking_vm(std::size_t n) {
  std::vector<double> vm(n);
  std::vector<int> hold(n, 0);
  std::uint64_t g = 0x9E3779B97F4A7C15ull;
  const auto uniform = [&g] {  // xorshift64*, in [0, 1)
    g ^= g >> 12;
    g ^= g << 25;
    g ^= g >> 27;
    return static_cast<double>((g * 0x2545F4914F6CDD1Dull) >> 11) * 0x1p-53;
  };
  for (double& v : vm) v = 0.9 * uniform();
  for (int step = 0; step < 300; ++step)
    for (std::size_t i = 0; i < n; ++i) {
      vm[i] *= 1 - 1e-4 / 0.02;
      if (hold[i] > 0) {
        --hold[i];
        continue;
      }
      const double r = uniform();
      vm[i] += r < 0.012 ? 0.25 : r < 0.016 ? -0.2 : 0.0;
      if (vm[i] > 1.0) {
        vm[i] = -1e-7;
        hold[i] = 20;
      }
    }
  return vm;
}

template <class F>
double best_of(int reps, F&& f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t = WallClock::now();
    f();
    best = std::min(best, seconds(t));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  bench::print_machine();
  Runtime rt(argc, argv);
  Shell& s = rt.shell();
  std::vector<std::size_t> sizes;
  std::vector<std::string> sets = {"smooth", "spiking"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--data" && i + 1 < argc) {
      const std::string d = argv[++i];
      if (d != "smooth" && d != "spiking" && d != "both") {
        std::fprintf(stderr, "--data: smooth, spiking or both, not '%s'\n", d.c_str());
        return rt.finish(2);
      }
      sets = d == "both" ? sets : std::vector<std::string>{d};
    } else {
      sizes.push_back(std::strtoull(argv[i], nullptr, 10));
    }
  }
  if (sizes.empty()) sizes = {1000000, 10000000};
  if (s.numNodes() != 1) std::printf("note: run at one node for the single-thread question\n");

  std::printf(
      "Question: ns per value of a Stats reduction of Vm through the full reduce path, one "
      "thread,\n"
      "next to hand-written loops over the same objects (object size %zu bytes).\n\n",
      sizeof(BenchNeuron));
  std::printf("%8s %10s %12s %12s %12s %12s %9s %9s %9s %12s %9s\n", "data", "N", "antler ns",
              "hand(blk) ns", "hand(Wf) ns", "hand(ex) ns", "ratio", "ratio Wf", "ratio ex",
              "antler 2t ns", "2t speedup");
  for (const std::string& set : sets)
    for (std::size_t n : sizes) {
      s.clearModel();
      const ObjId cells = s.create("BenchNeuron", "/cells", static_cast<Index>(n));
      const ObjId stats = s.create("Stats", "/stats");
      std::vector<double> vm(n);
      if (set == "spiking")
        vm = spiking_vm(n);
      else
        for (std::size_t i = 0; i < n; ++i)
          vm[i] = -0.07 + 0.01 * std::sin(0.001 * static_cast<double>(i));
      Field<double>::setVec(s, cells.id, "Vm", vm);
      s.addMsg("Reduce", stats, "reduce", cells, "getVm");
      s.setClock(0, 1e-4);
      s.useClock(0, "/stats");
      auto* de = static_cast<DataElement*>(rt.simulation().elements().get(cells.id));
      const auto* objs = reinterpret_cast<const BenchNeuron*>(de->base());
      const int steps = n >= 10000000 ? 5 : 20, reps = 5;

      s.setNumThreads(1);
      s.reinit();
      const double tA = best_of(reps, [&] { s.start(steps * 1e-4); }) / steps;
      Result hb{}, hw{}, he{};
      const double tB = best_of(reps,
                                [&] {
                                  for (int k = 0; k < steps; ++k) hb = hand_block(objs, n);
                                }) /
                        steps;
      const double tW = best_of(reps,
                                [&] {
                                  for (int k = 0; k < steps; ++k) hw = hand_welford(objs, n);
                                }) /
                        steps;
      const double tE = best_of(reps,
                                [&] {
                                  for (int k = 0; k < steps; ++k) he = hand_exact(objs, n);
                                }) /
                        steps;
      const double mean = Field<double>::get(s, stats, "mean"),
                   sdev = Field<double>::get(s, stats, "sdev");
      s.setNumThreads(2);
      s.reinit();
      const double t2 = best_of(reps, [&] { s.start(steps * 1e-4); }) / steps;
      const double ns = 1e9 / static_cast<double>(n);
      std::printf("%8s %10zu %12.3f %12.3f %12.3f %12.3f %9.3f %9.3f %9.3f %12.3f %9.2f\n",
                  set.c_str(), n, tA * ns, tB * ns, tW * ns, tE * ns, tA / tB, tA / tW, tA / tE,
                  t2 * ns, tA / t2);
      const bool same = mean == he.mean && sdev == he.sdev &&
                        std::abs(hb.mean - mean) <= 1e-12 * std::abs(mean) &&
                        std::abs(hb.sdev - sdev) <= 1e-9 * sdev &&
                        std::abs(hw.mean - mean) <= 1e-12 * std::abs(mean) &&
                        std::abs(hw.sdev - sdev) <= 1e-8 * sdev;
      std::printf("%19s results agree with the hand loops: %s\n", "", same ? "yes" : "NO");
    }
  std::printf(
      "\nratio = antler / hand (block), the fast inexact loop: the goal is <= 2 at 1e6 and <= 1.5 "
      "at "
      "1e7 (the exact Stats);\nratio Wf = antler / hand (Welford); ratio ex = antler / hand "
      "(exact), "
      "the same arithmetic as antler's (bit for bit).\n");
  return rt.finish(0);
}

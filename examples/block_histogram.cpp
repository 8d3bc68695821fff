// Block rounds, 1: a merge-reduce of per-block histograms of a neuron population (DIY's
// merge-reduce over the entries of an Element; shell/blocks.hpp).
//
// A population of 6000 noisy leaky cells lives in 12 blocks: the entries of /pop, a PopBlock
// element, each holding 500 cells and advancing them every step (antler's clock, on its threads
// and nodes). After the run each block histograms its own cells' Vm, and the blocks' declared
// "merge" function sums the histograms up a 4-ary tree (12 blocks: a round of 4, then one of 3)
// to block 0, then "allMerge" gives every block the total. The driver recomputes every cell
// serially and checks both against a plain histogram.
//
// Run: mpirun -n 2 block_histogram
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/class_builder.hpp"
#include "shell/field.hpp"
#include "shell/runtime.hpp"

using namespace antler;

namespace {

constexpr int kBins = 32;
constexpr double kLow = -0.080, kHigh = -0.040;  // V

/// A uniform number in [-1, 1) from (block, cell, step): the same on any node or thread.
double noise(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t z = a * 0x9E3779B97F4A7C15ull ^
                    (b + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull ^
                    (c + 1) * 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

/// One step of cell i of block g: relax towards its own target, with noise.
double step(double v, std::uint64_t g, std::uint64_t i, std::uint64_t n, double dt) {
  const double target = -0.065 + 0.012 * std::sin(0.37 * static_cast<double>(g * 1000 + i));
  return v + dt / 0.02 * (target - v) + 0.004 * std::sqrt(dt / 0.02) * noise(g, i, n);
}

int bin_of(double v) {
  const int b = static_cast<int>(std::floor((v - kLow) / (kHigh - kLow) * kBins));
  return b < 0 ? 0 : b >= kBins ? kBins - 1 : b;
}

using Counts = std::vector<std::uint64_t>;

}  // namespace

class PopBlock {
 public:
  void reinit(const Eref&, ProcPtr) {
    vm_.assign(cells_, -0.070);
    steps_ = 0;
  }
  void process(const Eref& e, ProcPtr p) {
    for (unsigned i = 0; i < cells_; ++i) vm_[i] = step(vm_[i], e.dataIndex(), i, steps_, p->dt);
    ++steps_;
  }
  /// Merge-reduce: round 0 histograms this block's cells; each later round sums what the group
  /// sent (the block's own partial included, in group order); the group's root sends the sum on.
  void merge(comm::ReduceProxy& rp, const comm::Partners&) {
    if (rp.round() == 0) {
      counts_.assign(kBins, 0);
      for (double v : vm_) ++counts_[static_cast<std::size_t>(bin_of(v))];
    }
    if (!rp.in_link().empty()) {
      Counts sum(kBins, 0);
      for (int from : rp.in_link()) {
        const auto c = rp.dequeue<Counts>(from);
        for (int b = 0; b < kBins; ++b)
          sum[static_cast<std::size_t>(b)] += c[static_cast<std::size_t>(b)];
      }
      counts_ = std::move(sum);
    }
    for (int to : rp.out_link()) rp.enqueue(to, counts_);
  }
  /// All-reduce: merge up to gid 0 (rounds 0..R), then take what comes down.
  void allMerge(comm::ReduceProxy& rp, const comm::Partners& p) {
    if (rp.round() <= static_cast<int>(p.factored().size())) return merge(rp, p);
    counts_ = rp.dequeue<Counts>(rp.in_link().front());
    for (int to : rp.out_link()) rp.enqueue(to, counts_);
  }
  static const Cinfo* initCinfo() {
    static const Cinfo* c =
        ClassBuilder<PopBlock>("PopBlock", "a block of noisy leaky cells")
            .value("cells", &PopBlock::cells_, "cells in this block")
            .readOnly("histogram", &PopBlock::counts_, "Vm histogram the last rounds left here")
            .proc<&PopBlock::process, &PopBlock::reinit>()
            .blocks("merge", &PopBlock::merge, "sums the blocks' Vm histograms to block 0")
            .blocks("allMerge", &PopBlock::allMerge, "sums them and gives every block the sum")
            .build();
    return c;
  }

 private:
  unsigned cells_ = 0;
  std::uint64_t steps_ = 0;
  std::vector<double> vm_;
  Counts counts_;
};

static const Cinfo* registered = PopBlock::initCinfo();

int main(int argc, char** argv) {
  Runtime rt(argc, argv);
  Shell& s = rt.shell();
  const int blocks = 12, cells = 500, steps = 200;
  const double dt = 1e-4;
  const ObjId pop = s.create("PopBlock", "/pop", blocks);
  Field<unsigned>::setAll(s, pop.id, "cells", cells);
  s.setClock(0, dt);
  s.useClock(0, "/pop");
  s.reinit();
  s.start(steps * dt);

  s.blockReduce("/pop", "merge", {comm::Pattern::merge, 4, true, {}, {}});
  const auto atRoot = Field<Counts>::get(s, ObjId(pop.id, 0), "histogram");
  s.blockReduce("/pop", "allMerge", {comm::Pattern::allReduce, 4, true, {}, {}});
  const auto atLast = Field<Counts>::get(s, ObjId(pop.id, blocks - 1), "histogram");

  // The same cells, serially, and a plain histogram of them.
  Counts serial(kBins, 0);
  for (int g = 0; g < blocks; ++g)
    for (int i = 0; i < cells; ++i) {
      double v = -0.070;
      for (int n = 0; n < steps; ++n) v = step(v, g, i, n, dt);
      ++serial[static_cast<std::size_t>(bin_of(v))];
    }
  std::printf("antler block rounds: %d blocks of %d cells, %d node(s), %u thread(s) per node\n",
              blocks, cells, s.numNodes(), s.numThreads());
  std::printf("Vm histogram (%d bins, %.0f to %.0f mV) merged to block 0 (k = 4):\n", kBins,
              kLow * 1e3, kHigh * 1e3);
  std::uint64_t total = 0;
  std::printf("result:");
  for (std::uint64_t c : atRoot) {
    std::printf(" %llu", static_cast<unsigned long long>(c));
    total += c;
  }
  std::printf(" (total %llu)\n", static_cast<unsigned long long>(total));
  const bool ok = atRoot == serial && atLast == serial;
  std::printf("check against a serial run and histogram of every cell: %s\n",
              ok ? "OK" : "MISMATCH");
  return rt.finish(ok ? 0 : 1);
}

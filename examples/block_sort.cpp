// Block rounds, 2: a swap-based sample sort of spike times (DIY's all-reduce and swap-reduce over
// the entries of an Element; shell/blocks.hpp).
//
// 16 blocks of neurons (the entries of /spikes, a SpikeBlock element) each hold their neurons'
// spike times, at rates that differ from block to block. Sorting all of them across the blocks
// takes two block rounds, each a function the class declares:
//   "splitters" (all-reduce, k = 2): every block sends up every 16th of its own times, in order;
//       block 0 sorts the samples, picks 15 splitters at their quantiles, and they come back down
//       to every block;
//   "sort" (swap, k = 4, distance halving): in each round a block splits what it holds among its
//       group by the splitters, so that after the last round block g holds exactly the times
//       between splitters g - 1 and g, which it sorts.
// Block 0's times, then block 1's, ... are then every spike time in order; the driver checks that
// against a serial sort, and prints how evenly the samples spread the load.
//
// Run: mpirun -n 2 block_sort
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/class_builder.hpp"
#include "shell/field.hpp"
#include "shell/runtime.hpp"

using namespace antler;

namespace {

constexpr int kNeurons = 40;        // per block
constexpr double kT = 2.0;          // seconds of spikes
constexpr std::size_t kEvery = 16;  // one sample per 16 times: a block's weight is its size

double uniform(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t z = (a + 1) * 0x9E3779B97F4A7C15ull ^ (b + 7) * 0xBF58476D1CE4E5B9ull ^
                    (c + 3) * 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (static_cast<double>(z >> 11) + 0.5) * 0x1.0p-53;  // (0, 1)
}

/// Block g's spike times: each neuron a Poisson train; block g fires at 2 + 3 (g % 5) Hz.
std::vector<double> spikes_of(int g) {
  std::vector<double> t;
  const double rate = 2.0 + 3.0 * (g % 5);
  for (int j = 0; j < kNeurons; ++j) {
    double now = 0;
    for (std::uint64_t k = 0;; ++k) {
      now += -std::log(uniform(static_cast<std::uint64_t>(g), static_cast<std::uint64_t>(j), k)) /
             rate;
      if (now >= kT) break;
      t.push_back(now);
    }
  }
  return t;
}

}  // namespace

class SpikeBlock {
 public:
  void reinit(const Eref& e, ProcPtr) {
    times_ = spikes_of(static_cast<int>(e.dataIndex()));
    splitters_.clear();
  }
  /// All-reduce of samples: up the tree the groups' samples are concatenated in group order; at
  /// the middle round block 0 turns them into splitters; down the tree they are passed on.
  void splitters(comm::ReduceProxy& rp, const comm::Partners& p) {
    const int R = static_cast<int>(p.factored().size());
    if (rp.round() == 0) {
      std::vector<double> sorted = times_;
      std::sort(sorted.begin(), sorted.end());
      samples_.clear();
      for (std::size_t i = kEvery / 2; i < sorted.size(); i += kEvery)
        samples_.push_back(sorted[i]);
    }
    if (rp.round() > 0 && rp.round() <= R) {  // gathering
      std::vector<double> all;
      for (int from : rp.in_link()) {
        const auto s = rp.dequeue<std::vector<double>>(from);
        all.insert(all.end(), s.begin(), s.end());
      }
      samples_ = std::move(all);
    }
    if (rp.round() == R) {  // block 0: the splitters, at the samples' quantiles
      std::sort(samples_.begin(), samples_.end());
      splitters_.clear();
      for (int b = 1; b < rp.nblocks(); ++b)
        splitters_.push_back(samples_[static_cast<std::size_t>(b) * samples_.size() /
                                      static_cast<std::size_t>(rp.nblocks())]);
      samples_ = splitters_;
    }
    if (rp.round() > R) {  // spreading
      splitters_ = rp.dequeue<std::vector<double>>(rp.in_link().front());
      samples_ = splitters_;
    }
    for (int to : rp.out_link()) rp.enqueue(to, samples_);
  }
  /// Swap with distance halving: a time bound for block d goes to the group member whose
  /// coordinate has d's digit in this round; after the last round d holds its own.
  void sort(comm::ReduceProxy& rp, const comm::Partners& p) {
    if (!rp.in_link().empty()) {
      times_.clear();
      for (int from : rp.in_link()) {
        const auto t = rp.dequeue<std::vector<double>>(from);
        times_.insert(times_.end(), t.begin(), t.end());
      }
    }
    if (rp.out_link().empty()) {
      std::sort(times_.begin(), times_.end());
      return;
    }
    const auto& kv = p.factored()[static_cast<std::size_t>(rp.round())];
    std::vector<std::vector<double>> parts(static_cast<std::size_t>(kv.size));
    for (double t : times_) {
      const auto d = std::upper_bound(splitters_.begin(), splitters_.end(), t) - splitters_.begin();
      parts[static_cast<std::size_t>(d / p.step(rp.round()) % kv.size)].push_back(t);
    }
    for (std::size_t j = 0; j < parts.size(); ++j) rp.enqueue(rp.out_link()[j], parts[j]);
  }
  static const Cinfo* initCinfo() {
    static const Cinfo* c =
        ClassBuilder<SpikeBlock>("SpikeBlock", "a block of neurons' spike times")
            .readOnly("times", &SpikeBlock::times_, "the spike times this block holds")
            .readOnly("splitterTimes", &SpikeBlock::splitters_, "the splitters it was given")
            .proc<&SpikeBlock::process, &SpikeBlock::reinit>()
            .blocks("splitters", &SpikeBlock::splitters, "samples up, splitters down (allReduce)")
            .blocks("sort", &SpikeBlock::sort, "times to the block of their range (swap, halving)")
            .build();
    return c;
  }
  void process(const Eref&, ProcPtr) {}

 private:
  std::vector<double> times_, samples_, splitters_;
};

static const Cinfo* registered = SpikeBlock::initCinfo();

int main(int argc, char** argv) {
  Runtime rt(argc, argv);
  Shell& s = rt.shell();
  const int blocks = 16;
  const ObjId b = s.create("SpikeBlock", "/spikes", blocks);
  s.useClock(0, "/spikes");
  s.reinit();  // each block makes its spike times
  s.blockReduce("/spikes", "splitters", {comm::Pattern::allReduce, 2, true, {}, {}});
  s.blockReduce("/spikes", "sort", {comm::Pattern::swap, 4, false, {}, {}});

  std::vector<double> got, serial;
  std::size_t most = 0, least = ~std::size_t{0}, most_before = 0, least_before = ~std::size_t{0};
  for (int g = 0; g < blocks; ++g) {
    const auto t = Field<std::vector<double>>::get(s, ObjId(b.id, static_cast<Index>(g)), "times");
    got.insert(got.end(), t.begin(), t.end());
    most = std::max(most, t.size());
    least = std::min(least, t.size());
    const auto mine = spikes_of(g);
    serial.insert(serial.end(), mine.begin(), mine.end());
    most_before = std::max(most_before, mine.size());
    least_before = std::min(least_before, mine.size());
  }
  std::sort(serial.begin(), serial.end());
  std::printf("antler block rounds: %zu spike times in %d blocks, %d node(s), %u thread(s)\n",
              serial.size(), blocks, s.numNodes(), s.numThreads());
  std::printf("times per block: %zu to %zu before, %zu to %zu after the sort\n", least_before,
              most_before, least, most);
  std::printf("result: %zu times sorted; first %.9f, median %.9f, last %.9f; largest block %zu\n",
              got.size(), got.front(), got[got.size() / 2], got.back(), most);
  const bool ok = got == serial;
  std::printf("check against a serial sort of every spike time: %s\n", ok ? "OK" : "MISMATCH");
  return rt.finish(ok ? 0 : 1);
}

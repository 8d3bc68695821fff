// intfire_network: cost per step of a network of N IntFire neurons (default 1e5) with ~100
// synapses each, driven by RandSpike Poisson inputs, with a Stats reduction of Vm every step, on
// one thread, next to a hand-written loop doing the same neuron and synapse updates over plain
// arrays, timed in the same run. Also antler at 2 threads against 1.
//
// Usage: intfire_network [N [steps [repetitions [antler|hand]]]]   (defaults: 100000 1000 3)
//        Naming a side times only that side on one thread, without the checks (for profiling).
//
// The model, built through the Shell (shape for N neurons):
//   /net/input     N/10 RandSpike, rate 10 Hz, refractT 0                  (tick 0)
//   /net/neurons   N IntFire: tau 0.02, thresh 1.0, refractoryPeriod 0.002, vReset 0,
//                  initVm uniform in [0, 1)                                (tick 0, after input)
//   /net/stats     Stats, Reduce message to /net/neurons getVm            (tick 1)
//   input.spikeOut   -> neurons/synapse addSpike  Sparse, p = 90 / (N/10): ~90 input synapses each
//   neurons.spikeOut -> neurons/synapse addSpike  Sparse, p = 10 / N:      ~10 recurrent synapses each
//   synapse weights (Field<double>::setVec over /net/neurons/synapse): input uniform in
//   [0.02, 0.08], recurrent uniform in [-0.2, 0.1]; delays uniform in [1, 5] ms. Both ticks dt 1e-4.
//
// The hand-written baseline keeps Vm and lastSpike in std::vector<double>, one min-heap of
// pending (time, weight) events per neuron (std::priority_queue, ordered as IntFire's own
// heap), and the two CSR matrices copied from the very SparseMsgs antler delivers through, each
// entry carrying its synapse's weight and delay (in row order, next to the column index). Each
// step it draws the inputs (the same SplitMix64 keys as RandSpike, so the spike trains are the
// same), updates the neurons by IntFire's rule, computes mean and sdev of Vm (two passes), and
// pushes every spike's events onto its targets' heaps. Due events are added to Vm in (time,
// weight) order on both sides, so Vm must come out bit-identical.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "core/element.hpp"
#include "core/random.hpp"
#include "models/step_time.hpp"
#include "msg/msg.hpp"
#include "shell/field.hpp"
#include "shell/runtime.hpp"

namespace {

using namespace antler;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---- the model's parameters (both sides use these) ----

constexpr double kDt = 1e-4;
constexpr double kTau = 0.02, kThresh = 1.0, kRefractory = 0.002, kVReset = 0.0;
constexpr double kInputRate = 10.0;  // Hz per RandSpike
constexpr double kInputRefractT = 0.0;
constexpr double kInputSynapses = 90.0, kRecurrentSynapses = 10.0;  // expected per neuron
constexpr std::uint64_t kSeedIn = 2026, kSeedRec = 2027, kSeedValues = 7;

/// U[a, b) from a keyed stream: the same numbers for a given (key, i) on any run.
double uniform(std::uint64_t key, std::uint64_t i, double a, double b) {
  Rng r(kSeedValues, key * 0x100000001b3ull + i);
  return a + (b - a) * r.uniform();
}

/// One Sparse message as plain arrays: CSR rows of target neuron indices, each entry with the
/// weight and delay of the synapse it feeds.
struct Csr {
  std::vector<std::uint64_t> rowStart{0};
  std::vector<Index> col;
  std::vector<double> weight, delay;
};

/// Copies the message's rows; entry (d, f) feeds synapse synStart[d] + f of the flat synapse
/// arrays (the order of Field::setVec over the synapse FieldElement: parent by parent).
Csr copy_csr(const SparseMsg& m, const std::vector<std::uint64_t>& synStart, const std::vector<double>& w,
             const std::vector<double>& delay) {
  Csr c;
  c.col.reserve(m.numEntries());
  c.weight.reserve(m.numEntries());
  c.delay.reserve(m.numEntries());
  for (Index r = 0; r < m.numRows(); ++r) {
    auto [b, e] = m.row(r);
    for (const Target* t = b; t != e; ++t) {
      c.col.push_back(t->data);
      c.weight.push_back(w[synStart[t->data] + t->field]);
      c.delay.push_back(delay[synStart[t->data] + t->field]);
    }
    c.rowStart.push_back(c.col.size());
  }
  return c;
}

/// FNV-1a of a path, as RandSpike keys its streams (models/rand_spike.cpp).
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ull;
  return h;
}

// ---- the hand-written baseline ----

class HandNetwork {
 public:
  HandNetwork(const std::vector<double>& initVm, const std::string& inputPath, Index numInputs, Csr in, Csr rec)
      : initVm_(initVm), in_(std::move(in)), rec_(std::move(rec)), inStream_(numInputs), inLastEvent_(numInputs) {
    // RandSpike's per-object key: mix64(mix64(fnv1a(path)) + data index).
    const std::uint64_t h = mix64(fnv1a(inputPath));
    for (Index i = 0; i < numInputs; ++i) inStream_[i] = mix64(h + i);
    Vm_.resize(initVm.size());
    lastSpike_.resize(initVm.size());
    pending_.resize(initVm.size());
    reinit();
  }

  void reinit() {
    Vm_ = initVm_;
    std::fill(lastSpike_.begin(), lastSpike_.end(), -std::numeric_limits<double>::infinity());
    for (auto& q : pending_) q = {};
    std::fill(inLastEvent_.begin(), inLastEvent_.end(), -kInputRefractT);
    step_ = 0;
    spikes_ = inputSpikes_ = 0;
    perStep_.clear();
  }

  /// One step of the whole network (not inlined, so that steps cannot be fused).
  [[gnu::noinline]] void step() {
    const double t = static_cast<double>(step_ + 1) * kDt;  // the clock's time at the end of the step
    const double slack = detail::step_slack(kDt);

    // Inputs: RandSpike's draw. The probability and the step's key part are the same for all.
    firedIn_.clear();
    const double lost = kInputRate * kInputRefractT;
    const double prob = (lost < 1.0 ? kInputRate / (1.0 - lost) : kInputRate) * kDt;
    const auto key = static_cast<std::uint64_t>(std::llround(t / kDt));
    const std::uint64_t seed = global_seed();
    for (std::size_t i = 0; i < inStream_.size(); ++i) {
      if (t - inLastEvent_[i] + slack < kInputRefractT) continue;
      Rng rng(seed, inStream_[i] + key);
      if (prob >= 1.0 || rng.uniform() < prob) {
        firedIn_.push_back(static_cast<Index>(i));
        inLastEvent_[i] = t;
      }
    }

    // Neurons: IntFire's rule (models/int_fire.cpp).
    fired_.clear();
    const double due = t + slack;
    const double decay = 1.0 - kDt / kTau;
    const std::size_t n = Vm_.size();
    for (std::size_t i = 0; i < n; ++i) {
      double vm = Vm_[i];
      auto& q = pending_[i];
      while (!q.empty() && q.top().first <= due) {
        vm += q.top().second;
        q.pop();
      }
      if (vm > kThresh && t - lastSpike_[i] + slack >= kRefractory) {
        fired_.push_back(static_cast<Index>(i));
        vm = kVReset;
        lastSpike_[i] = t;
      } else {
        vm *= decay;
      }
      Vm_[i] = vm;
    }

    // Population statistics of Vm: mean, then population sdev around it.
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += Vm_[i];
    mean_ = sum / static_cast<double>(n);
    double m2 = 0;
    for (std::size_t i = 0; i < n; ++i) m2 += (Vm_[i] - mean_) * (Vm_[i] - mean_);
    sdev_ = std::sqrt(m2 / static_cast<double>(n));

    // Synaptic events: each spike schedules its synapses' weights at t + delay.
    deliver(in_, firedIn_, t);
    deliver(rec_, fired_, t);
    spikes_ += fired_.size();
    inputSpikes_ += firedIn_.size();
    if (record_) perStep_.push_back({static_cast<unsigned>(fired_.size()), mean_, sdev_});
    ++step_;
  }

  struct StepRecord {
    unsigned spikes;
    double mean, sdev;
  };
  void setRecord(bool r) { record_ = r; }
  const std::vector<StepRecord>& perStep() const { return perStep_; }
  const std::vector<double>& Vm() const { return Vm_; }
  const std::vector<double>& lastSpike() const { return lastSpike_; }
  std::uint64_t spikes() const { return spikes_; }
  std::uint64_t inputSpikes() const { return inputSpikes_; }
  double mean() const { return mean_; }
  double sdev() const { return sdev_; }

 private:
  using Event = std::pair<double, double>;  // (time, weight), popped in lexicographic order
  using Heap = std::priority_queue<Event, std::vector<Event>, std::greater<Event>>;

  void deliver(const Csr& c, const std::vector<Index>& fired, double t) {
    for (Index s : fired)
      for (std::uint64_t k = c.rowStart[s]; k < c.rowStart[s + 1]; ++k)
        pending_[c.col[k]].push({t + c.delay[k], c.weight[k]});
  }

  std::vector<double> initVm_;
  Csr in_, rec_;
  std::vector<std::uint64_t> inStream_;
  std::vector<double> inLastEvent_;
  std::vector<double> Vm_, lastSpike_;
  std::vector<Heap> pending_;
  std::vector<Index> fired_, firedIn_;
  std::uint64_t step_ = 0, spikes_ = 0, inputSpikes_ = 0;
  double mean_ = 0, sdev_ = 0;
  bool record_ = false;
  std::vector<StepRecord> perStep_;
};

// ---- the antler model ----

struct Model {
  Index n = 0, numInputs = 0;
  ObjId neurons, input, stats;
  Id synapses;
  std::uint32_t msgIn = 0, msgRec = 0;
  std::vector<double> initVm;
  std::size_t entriesIn = 0, entriesRec = 0;
  unsigned minSyn = 0, maxSyn = 0;
  std::unique_ptr<HandNetwork> hand;  // the baseline's copy of the same network
};

/// Builds the network through the Shell and the baseline's copy of it.
Model build(Shell& s, Index n) {
  Model m;
  m.n = n;
  m.numInputs = std::max<Index>(1, n / 10);
  s.create("Neutral", "/net");
  m.neurons = s.create("IntFire", "/net/neurons", n);
  m.input = s.create("RandSpike", "/net/input", m.numInputs);
  m.stats = s.create("Stats", "/net/stats");
  const ObjId syn = s.find("/net/neurons/synapse");
  m.synapses = syn.id;

  Field<double>::setAll(m.neurons.id, "tau", kTau);
  Field<double>::setAll(m.neurons.id, "thresh", kThresh);
  Field<double>::setAll(m.neurons.id, "refractoryPeriod", kRefractory);
  Field<double>::setAll(m.neurons.id, "vReset", kVReset);
  m.initVm.resize(n);
  for (Index i = 0; i < n; ++i) m.initVm[i] = uniform(1, i, 0.0, 1.0);
  Field<double>::setVec(m.neurons.id, "initVm", m.initVm);
  Field<double>::setAll(m.input.id, "rate", kInputRate);
  Field<double>::setAll(m.input.id, "refractT", kInputRefractT);

  // Inputs first: each neuron's synapse array holds its input synapses, then its recurrent ones.
  m.msgIn = s.addMsg("Sparse", m.input, "spikeOut", syn, "addSpike");
  s.setRandomConnectivity(m.msgIn, std::min(1.0, kInputSynapses / m.numInputs), kSeedIn);
  m.msgRec = s.addMsg("Sparse", m.neurons, "spikeOut", syn, "addSpike");
  s.setRandomConnectivity(m.msgRec, std::min(1.0, kRecurrentSynapses / n), kSeedRec);
  s.doSyncDataHandler(m.synapses);

  // Weights and delays over the whole synapse field element, parent by parent.
  const std::vector<unsigned> numSyn = Field<unsigned>::getVec(m.neurons.id, "numSynapses");
  std::vector<std::uint64_t> synStart(n + 1, 0);
  for (Index i = 0; i < n; ++i) synStart[i + 1] = synStart[i] + numSyn[i];
  m.minSyn = *std::min_element(numSyn.begin(), numSyn.end());
  m.maxSyn = *std::max_element(numSyn.begin(), numSyn.end());
  const auto* in = static_cast<const SparseMsg*>(s.msg(m.msgIn));
  const auto* rec = static_cast<const SparseMsg*>(s.msg(m.msgRec));
  m.entriesIn = in->numEntries();
  m.entriesRec = rec->numEntries();
  std::vector<Index> numIn(n, 0);  // input synapses come first in each array
  for (Index r = 0; r < in->numRows(); ++r)
    for (auto [b, e] = in->row(r); b != e; ++b) ++numIn[b->data];
  std::vector<double> w(synStart[n]), delay(synStart[n]);
  for (Index i = 0; i < n; ++i)
    for (std::uint64_t k = synStart[i]; k < synStart[i + 1]; ++k) {
      const bool input = k - synStart[i] < numIn[i];
      w[k] = input ? uniform(2, k, 0.02, 0.08) : uniform(3, k, -0.2, 0.1);
      delay[k] = uniform(4, k, 1e-3, 5e-3);
    }
  Field<double>::setVec(m.synapses, "weight", w);
  Field<double>::setVec(m.synapses, "delay", delay);

  s.addMsg("Reduce", m.stats, "reduce", m.neurons, "getVm");
  s.setClock(0, kDt);
  s.setClock(1, kDt);
  s.useClock(0, "/net/input", "process");
  s.useClock(0, "/net/neurons", "process");
  s.useClock(1, "/net/stats", "process");

  m.hand = std::make_unique<HandNetwork>(m.initVm, m.input.element()->path(), m.numInputs, copy_csr(*in, synStart, w, delay),
                         copy_csr(*rec, synStart, w, delay));
  return m;
}

/// Positions where two arrays differ, and the largest difference.
std::pair<std::size_t, double> compare(const std::vector<double>& a, const std::vector<double>& b) {
  std::size_t bad = a.size() == b.size() ? 0 : std::max(a.size(), b.size());
  double worst = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (a[i] != b[i]) {
      ++bad;
      worst = std::max(worst, std::abs(a[i] - b[i]));
    }
  return {bad, worst};
}

/// argv[i] as a count >= 1, dflt if absent, 0 if malformed.
unsigned arg(int argc, char** argv, int i, unsigned dflt) {
  if (argc <= i) return dflt;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  return (*end == '\0' && v >= 1) ? static_cast<unsigned>(v) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  antler::Runtime rt(argc, argv);
  Shell& s = rt.shell();
  const unsigned n = arg(argc, argv, 1, 100000);
  const unsigned steps = arg(argc, argv, 2, 1000);
  const unsigned reps = arg(argc, argv, 3, 3);
  const std::string only = argc > 4 ? argv[4] : "";
  if (n == 0 || steps == 0 || reps == 0 || argc > 5 || (!only.empty() && only != "antler" && only != "hand")) {
    std::fprintf(stderr, "usage: %s [N >= 1 [steps >= 1 [repetitions >= 1 [antler|hand]]]]\n", argv[0]);
    return rt.finish(2);
  }

  std::printf(
      "question: cost per step of %u IntFire neurons with ~100 synapses each, Poisson input and a Stats "
      "reduction, one thread, next to a hand-written C++ loop doing the same neuron and synapse updates over "
      "plain arrays in the same run (goal: ratio <= 2); also antler at 2 threads vs 1\n",
      n);
  if (rt.numNodes() != 1) std::printf("note: this benchmark's question is about one node; run it without mpirun\n");

  const auto tb = Clock::now();
  const Model m = build(s, n);
  HandNetwork& hand = *m.hand;
  std::printf(
      "shape: %u IntFire, %u RandSpike at %g Hz; Sparse input->synapse p = %.3g (%zu entries), "
      "Sparse neuron->synapse p = %.3g (%zu entries); %.2f synapses per neuron (min %u, max %u); "
      "dt %g, %u steps, best of %u; built in %.1f s\n",
      n, m.numInputs, kInputRate, std::min(1.0, kInputSynapses / m.numInputs), m.entriesIn,
      std::min(1.0, kRecurrentSynapses / n), m.entriesRec,
      static_cast<double>(m.entriesIn + m.entriesRec) / n, m.minSyn, m.maxSyn, kDt, steps, reps,
      seconds_since(tb));

  // ---- one thread: antler and the hand loop, alternating which goes first ----
  s.setNumThreads(1);
  double tAntler = 1e300, tHand = 1e300;
  auto run_antler = [&] {
    s.reinit();
    const auto t0 = Clock::now();
    s.start(steps * kDt);
    return seconds_since(t0);
  };
  auto run_hand = [&] {
    hand.reinit();
    const auto t0 = Clock::now();
    for (unsigned k = 0; k < steps; ++k) hand.step();
    return seconds_since(t0);
  };
  if (!only.empty()) {
    // Profiling: one side only, no checks.
    const bool a = only == "antler";
    double best = 1e300;
    for (unsigned r = 0; r < reps; ++r) best = std::min(best, a ? run_antler() : run_hand());
    std::printf("  %s, 1 thread: %.4f s  %.3f ms/step  %.2f ns/neuron-step\n", a ? "antler" : "hand loop", best,
                1e3 * best / steps, 1e9 * best / steps / n);
    s.clearModel();
    return rt.finish(0);
  }
  for (unsigned r = 0; r < reps; ++r) {
    if (r % 2 == 0) {
      tAntler = std::min(tAntler, run_antler());
      tHand = std::min(tHand, run_hand());
    } else {
      tHand = std::min(tHand, run_hand());
      tAntler = std::min(tAntler, run_antler());
    }
  }
  // Both sides now hold the state after `steps` steps from reinit.
  const std::vector<double> vm1 = Field<double>::getVec(m.neurons.id, "Vm");
  const std::vector<double> last1 = Field<double>::getVec(m.neurons.id, "lastSpike");
  const auto [vmBad, vmWorst] = compare(vm1, hand.Vm());
  const auto [lastBad, lastWorst] = compare(last1, hand.lastSpike());
  const double mean = Field<double>::get(m.stats, "mean"), sdev = Field<double>::get(m.stats, "sdev");
  const bool statsClose = std::abs(mean - hand.mean()) <= 1e-12 * std::max(1.0, std::abs(mean)) &&
                          std::abs(sdev - hand.sdev()) <= 1e-9 * std::max(1.0, sdev);

  // ---- two threads ----
  s.setNumThreads(2);
  double tAntler2 = 1e300;
  for (unsigned r = 0; r < reps; ++r) tAntler2 = std::min(tAntler2, run_antler());
  const auto [vm2Bad, vm2Worst] = compare(Field<double>::getVec(m.neurons.id, "Vm"), vm1);
  (void)vm2Worst;

  // ---- spike counts, step by step (untimed): a SpikeStats on the neurons' spike flags ----
  s.setNumThreads(1);
  const ObjId spikeStats = s.create("SpikeStats", "/net/spikes");
  s.addMsg("Reduce", spikeStats, "reduce", m.neurons, "getSpiked");
  s.useClock(1, "/net/spikes", "process");
  s.reinit();
  hand.reinit();
  hand.setRecord(true);
  std::uint64_t antlerSpikes = 0;
  std::size_t countBad = 0, statsBad = 0;
  for (unsigned k = 0; k < steps; ++k) {
    s.start(kDt);
    hand.step();
    const unsigned c = Field<unsigned>::get(spikeStats, "count");
    const double mk = Field<double>::get(m.stats, "mean"), sk = Field<double>::get(m.stats, "sdev");
    const auto& h = hand.perStep().back();
    antlerSpikes += c;
    countBad += c != h.spikes;
    statsBad += !(std::abs(mk - h.mean) <= 1e-12 * std::max(1.0, std::abs(mk)) &&
                  std::abs(sk - h.sdev) <= 1e-9 * std::max(1.0, sk));
  }
  const auto [vm3Bad, vm3Worst] = compare(Field<double>::getVec(m.neurons.id, "Vm"), hand.Vm());
  (void)vm3Worst;
  s.destroy(spikeStats);

  // ---- report ----
  const double perStepA = tAntler / steps, perStepH = tHand / steps, perStepA2 = tAntler2 / steps;
  const double ratio = tAntler / tHand;
  std::printf("activity: %llu neuron spikes (%.1f Hz per neuron), %llu input spikes in %u steps\n",
              static_cast<unsigned long long>(hand.spikes()),
              static_cast<double>(hand.spikes()) / (static_cast<double>(n) * steps * kDt),
              static_cast<unsigned long long>(hand.inputSpikes()), steps);
  std::printf("  hand loop           %9.4f s  %8.3f ms/step  %8.2f ns/neuron-step\n", tHand, 1e3 * perStepH,
              1e9 * perStepH / n);
  std::printf("  antler, 1 thread    %9.4f s  %8.3f ms/step  %8.2f ns/neuron-step\n", tAntler, 1e3 * perStepA,
              1e9 * perStepA / n);
  std::printf("  antler, 2 threads   %9.4f s  %8.3f ms/step  %8.2f ns/neuron-step\n", tAntler2,
              1e3 * perStepA2, 1e9 * perStepA2 / n);
  std::printf("  ratio (antler 1 thread / hand loop): %.2f   goal <= 2: %s\n", ratio, ratio <= 2 ? "met" : "NOT met");
  std::printf("  speedup (antler 1 thread / 2 threads): %.2f\n", tAntler / tAntler2);
  const bool match = vmBad == 0 && lastBad == 0 && vm2Bad == 0 && countBad == 0 && vm3Bad == 0 &&
                     antlerSpikes == hand.spikes() && statsClose && statsBad == 0;
  std::printf("check: Vm after %u steps, antler vs hand loop: %s\n", steps,
              vmBad == 0 ? "bit-identical (all neurons)" : "MISMATCH");
  if (vmBad) std::printf("       %zu neurons differ, max |difference| %g\n", vmBad, vmWorst);
  std::printf("       lastSpike: %s\n", lastBad == 0 ? "bit-identical" : "MISMATCH");
  if (lastBad) std::printf("       %zu neurons differ, max |difference| %g\n", lastBad, lastWorst);
  std::printf("       Vm at 2 threads vs 1 thread: %s\n", vm2Bad == 0 ? "bit-identical" : "MISMATCH");
  std::printf("       spikes per step (SpikeStats vs hand loop, %u steps): %s, total %llu vs %llu\n", steps,
              countBad == 0 ? "all equal" : "MISMATCH", static_cast<unsigned long long>(antlerSpikes),
              static_cast<unsigned long long>(hand.spikes()));
  std::printf("       Stats mean/sdev vs the hand loop's two-pass loop (rel. 1e-12 / 1e-9), every step: %s\n",
              statsClose && statsBad == 0 ? "agree" : "DISAGREE");
  std::printf("result: %s\n", match ? "antler and the hand loop match" : "MISMATCH");
  s.clearModel();
  return rt.finish(match ? 0 : 1);
}

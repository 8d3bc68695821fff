// intfire_network: cost per step of a network of N IntFire neurons (default 1e5) with ~100
// synapses each, driven by RandSpike Poisson inputs, with a Stats reduction of Vm every step, on
// one thread, next to hand-written loops doing the same neuron and synapse updates over plain
// arrays, timed in the same run. Also antler at 2 threads against 1, and at the thread counts that
// ANTLER_BENCH_THREADS lists (e.g. ANTLER_BENCH_THREADS=4,8,16: thread scaling on a larger
// machine).
//
// Usage: intfire_network [N [steps [repetitions [antler|handler|ring|queue|heap]]]]
//        (defaults: 100000 1000 3). Naming one side times only that side on one thread, without
//        the checks (for profiling); antler and handler then also print where a step goes.
//
// The model, built through the Shell (shape for N neurons):
//   /net/input     N/10 RandSpike, rate 10 Hz, refractT 0                       (tick 0)
//   /net/neurons   N IntFire: tau 0.02, thresh 1.0, refractoryPeriod 0.002, vReset 0,
//                  initVm uniform in [0, 1)                                     (tick 0, after
//                  input)
//   /net/stats     Stats, Reduce message to /net/neurons getVm                  (tick 1)
//   input.spikeOut   -> /net/neurons/synapse addSpike: Sparse, p = 90 / (N/10), ~90 synapses each
//   neurons.spikeOut -> /net/neurons/synapse addSpike: Sparse, p = 10 / N,      ~10 synapses each
//   Synapse weights and delays: Field<double>::setVec over the whole /net/neurons/synapse element;
//   input weights uniform in [0.02, 0.08], recurrent in [-0.2, 0.1], delays uniform in [1, 5] ms.
//   Both ticks have dt 1e-4.
//
// The hand-written loops keep Vm and lastSpike in std::vector<double> and the two CSR matrices
// copied from the very SparseMsgs antler delivers through, each entry carrying the weight and
// delay of the synapse it feeds (in row order, next to its column index). Each step they draw the
// inputs (RandSpike's own SplitMix64 keys, so the spike trains are the same), update the neurons
// by IntFire's rule, compute the mean and sdev of Vm (two passes), and schedule every spike's
// synaptic events. They differ only in where pending events wait:
//   ring  a time-bucketed ring buffer: slot (step mod D) holds, per neuron, the sum of the weights
//         due at that step, and a neuron adds its slot once per step (every event's add lands
//         at random in D x N doubles).
//   queue Brian2's and NEST's layout: per step a queue of (neuron, weight) that events are
//         appended to (written in order), added up into one sum per neuron as the step begins
//         (an array that stays in cache). IntFire does the same since 2026-11 (per step and
//         clock thread; before, it had the ring, with a count next to each sum). The weights
//         are summed in delivery order, which is the order of these loops (input spikes, then
//         neuron spikes, each by source index and row), in all three, so Vm must come out
//         bit-identical. The ratio goal is against the faster of ring and queue: antler / that
//         is the cost of the framework around the best hand algorithm here.
//   heap  IntFire's data structure before issue 9: a min-heap of (time, weight) per neuron, due
//         events added to Vm one by one in (time, weight) order. It rounds differently, so Vm
//         agrees to rounding (checked to 1e-12).
//
// Then the same network in MOOSE 3/4's layout (issue 17's goal: as fast as the synapses on
// IntFire), built again at the same paths (so the same input spike trains and connectivity):
//   /net/h         N SimpleSynHandler holding the synapses, weights times dt     (tick 1)
//   /net/neurons   N IntFire, activation <- /net/h activationOut, OneToOne       (tick 2)
//   /net/stats                                                                   (tick 3)
// and timed in alternation with a ring loop that keeps the handler's arithmetic (each step's
// weights summed, then divided by dt and added to Vm), which its Vm must match bit for bit. The
// handler layout's cost is compared with the IntFire layout's through their ratios to the two
// ring loops (each alternated in its own phase, so a drift between phases cancels).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "bench/args.hpp"
#include "bench/machine.hpp"
#include "core/element.hpp"
#include "core/random.hpp"
#include "models/step_time.hpp"
#include "msg/msg.hpp"
#include "shell/field.hpp"
#include "shell/runtime.hpp"

namespace {

using namespace antler;

using WallClock = std::chrono::steady_clock;

double seconds_since(WallClock::time_point t0) {
  return std::chrono::duration<double>(WallClock::now() - t0).count();
}

// ---- the model's parameters (every side uses these) ----

constexpr double kDt = 1e-4;
constexpr double kTau = 0.02, kThresh = 1.0, kRefractory = 0.002, kVReset = 0.0;
constexpr double kInputRate = 10.0;  // Hz per RandSpike
constexpr double kInputRefractT = 0.0;
constexpr double kInputSynapses = 90.0, kRecurrentSynapses = 10.0;  // expected per neuron
constexpr std::uint64_t kSeedIn = 2026, kSeedRec = 2027, kSeedValues = 7;
constexpr double kHeapTolerance = 1e-12;  // |Vm(antler) - Vm(heap)|, see the header comment

/// U[a, b) from a keyed stream: the same numbers for a given (key, i) on any run.
double uniform(std::uint64_t key, std::uint64_t i, double a, double b) {
  Rng r(kSeedValues, key * 0x100000001b3ull + i);
  return a + (b - a) * r.uniform();
}

/// FNV-1a of a path, as RandSpike keys its streams (models/rand_spike.cpp).
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ull;
  return h;
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
Csr copy_csr(const SparseMsg& m, const std::vector<std::uint64_t>& synStart,
             const std::vector<double>& w, const std::vector<double>& delay) {
  Csr c;
  c.col.reserve(m.numEntries());
  c.weight.reserve(m.numEntries());
  c.delay.reserve(m.numEntries());
  const Index* field = m.fieldIndices();
  for (Index r = 0; r < m.numRows(); ++r) {
    auto [b, e] = m.row(r);
    for (const Index* t = b; t != e; ++t) {
      const Index f = field[m.entryOf(t)];
      c.col.push_back(*t);
      c.weight.push_back(w[synStart[*t] + f]);
      c.delay.push_back(delay[synStart[*t] + f]);
    }
    c.rowStart.push_back(c.col.size());
  }
  return c;
}

// ---- the two ways the hand-written loops keep pending events ----

/// IntFire's way before issue 9: one min-heap of (time, weight) per neuron.
class HeapQueue {
 public:
  HeapQueue(std::size_t n, double /*maxDelay*/) : heaps_(n) {}
  void reinit() {
    for (auto& q : heaps_) q = {};
  }
  void beginStep(std::uint64_t /*step*/) {}
  /// Vm after adding neuron i's events due by `due`, one by one in (time, weight) order.
  double addDue(std::size_t i, double due, double vm) {
    auto& q = heaps_[i];
    while (!q.empty() && q.top().first <= due) {
      vm += q.top().second;
      q.pop();
    }
    return vm;
  }
  /// Schedules weight on neuron i at `time` (sent in step `step`).
  void push(Index i, std::uint64_t /*step*/, double time, double weight) {
    heaps_[i].push({time, weight});
  }

 private:
  using Event = std::pair<double, double>;
  std::vector<std::priority_queue<Event, std::vector<Event>, std::greater<Event>>> heaps_;
};

/// The step an event at `time` sent in step `step` is due in: the first later step s whose end
/// s * dt (plus the clock's slack) is not before its time, as antler's rings put it
/// (models/step_time.hpp, due_step).
std::uint64_t due_step(std::uint64_t step, double time) {
  const double slack = detail::step_slack(kDt);
  std::uint64_t s = std::max<std::uint64_t>(
      step + 1, static_cast<std::uint64_t>(std::ceil((time - slack) / kDt)));
  while (static_cast<double>(s) * kDt + slack < time) ++s;
  while (s > step + 1 && static_cast<double>(s - 1) * kDt + slack >= time) --s;
  return s;
}

/// A time-bucketed ring buffer: slot (s mod D) holds, per neuron, the weights due at step s.
class RingQueue {
 public:
  RingQueue(std::size_t n, double maxDelay)
      : n_(n),
        slots_(static_cast<std::uint64_t>(std::ceil(maxDelay / kDt)) + 2),
        ring_(slots_ * n) {}
  void reinit() { std::fill(ring_.begin(), ring_.end(), 0.0); }
  void beginStep(std::uint64_t step) { cur_ = ring_.data() + (step % slots_) * n_; }
  double addDue(std::size_t i, double /*due*/, double vm) {
    vm += cur_[i];
    cur_[i] = 0.0;
    return vm;
  }
  void push(Index i, std::uint64_t step, double time, double weight) {
    ring_[(due_step(step, time) % slots_) * n_ + i] += weight;
  }

 private:
  std::size_t n_;
  std::uint64_t slots_;
  std::vector<double> ring_;
  double* cur_ = nullptr;
};

/// Per step a queue of (neuron, weight), appended to in delivery order and added up into one sum
/// per neuron when the step begins: the same additions in the same order as the ring's.
class StepQueue {
 public:
  StepQueue(std::size_t n, double maxDelay)
      : rows_(static_cast<std::size_t>(std::ceil(maxDelay / kDt)) + 2), sums_(n) {}
  void reinit() {
    for (auto& q : rows_) q.clear();
    std::fill(sums_.begin(), sums_.end(), 0.0);
  }
  void beginStep(std::uint64_t step) {
    auto& q = rows_[step % rows_.size()];  // no event of this step can come any more
    for (const Event& e : q) sums_[e.i] += e.w;
    q.clear();
  }
  double addDue(std::size_t i, double /*due*/, double vm) {
    vm += sums_[i];
    sums_[i] = 0.0;
    return vm;
  }
  void push(Index i, std::uint64_t step, double time, double weight) {
    rows_[due_step(step, time) % rows_.size()].push_back({i, weight});
  }

 private:
  struct Event {
    Index i;
    double w;
  };
  std::vector<std::vector<Event>> rows_;
  std::vector<double> sums_;
};

/// The ring with the SimpleSynHandler layout's arithmetic: a step's weights (already times dt)
/// are summed in arrival order, with their count; if there were any and the sum is not 0, the
/// sum over dt is added to Vm.
class HandlerRingQueue {
 public:
  HandlerRingQueue(std::size_t n, double maxDelay)
      : n_(n),
        slots_(static_cast<std::uint64_t>(std::ceil(maxDelay / kDt)) + 2),
        ring_(slots_ * n) {}
  void reinit() { std::fill(ring_.begin(), ring_.end(), Slot{}); }
  void beginStep(std::uint64_t step) { cur_ = ring_.data() + (step % slots_) * n_; }
  double addDue(std::size_t i, double /*due*/, double vm) {
    if (cur_[i].count && cur_[i].sum != 0.0) vm += cur_[i].sum / kDt;
    cur_[i] = Slot{};
    return vm;
  }
  void push(Index i, std::uint64_t step, double time, double weight) {
    Slot& x = ring_[(due_step(step, time) % slots_) * n_ + i];
    x.sum += weight;
    ++x.count;
  }

 private:
  struct Slot {
    double sum = 0.0;
    unsigned count = 0;
  };
  std::size_t n_;
  std::uint64_t slots_;
  std::vector<Slot> ring_;
  Slot* cur_ = nullptr;
};

// ---- the hand-written loops ----

template <class Queue>
class HandNetwork {
 public:
  HandNetwork(const std::vector<double>& initVm, const std::string& inputPath, Index numInputs,
              const Csr& in, const Csr& rec)
      : initVm_(initVm),
        in_(in),
        rec_(rec),
        queue_(initVm.size(), std::max(max_delay(in), max_delay(rec))),
        inStream_(numInputs),
        inLastEvent_(numInputs),
        Vm_(initVm.size()),
        lastSpike_(initVm.size()) {
    // RandSpike's per-object key: mix64(mix64(fnv1a(path)) + data index).
    const std::uint64_t h = mix64(fnv1a(inputPath));
    for (Index i = 0; i < numInputs; ++i) inStream_[i] = mix64(h + i);
    reinit();
  }

  void reinit() {
    Vm_ = initVm_;
    std::fill(lastSpike_.begin(), lastSpike_.end(), -std::numeric_limits<double>::infinity());
    std::fill(inLastEvent_.begin(), inLastEvent_.end(), -kInputRefractT);
    queue_.reinit();
    step_ = 0;
    spikes_ = inputSpikes_ = 0;
  }

  /// Phase timers for the breakdown run (off in the timed runs): seconds summed over steps.
  struct Phases {
    double inputs = 0, neurons = 0, stats = 0, deliver = 0;
  };
  void setTimed(bool on) {
    timed_ = on;
    phases_ = Phases{};
  }
  const Phases& phases() const { return phases_; }

  /// One step of the whole network (not inlined, so that steps cannot be fused).
  [[gnu::noinline]] void step() {
    WallClock::time_point last;
    auto lap = [&](double& to) {
      if (!timed_) return;
      const WallClock::time_point now = WallClock::now();
      to += std::chrono::duration<double>(now - last).count();
      last = now;
    };
    if (timed_) last = WallClock::now();
    ++step_;
    const double t = static_cast<double>(step_) * kDt;  // the clock's time at the end of the step
    const double slack = detail::step_slack(kDt);

    // Inputs: RandSpike's draw. The probability and the step's part of the key are the same for
    // every input.
    firedIn_.clear();
    const double lost = kInputRate * kInputRefractT;
    const double prob = (lost < 1.0 ? kInputRate / (1.0 - lost) : kInputRate) * kDt;
    const auto key = static_cast<std::uint64_t>(std::llround(t / kDt));
    const std::uint64_t seed = 0;  // the model's seed: this bench never sets one
    // The draws a chunk at a time, eight streams at once where the CPU can (first_draws, as
    // RandSpike does), else one at a time for the inputs that may fire.
    constexpr std::size_t kChunk = 256;
    std::uint64_t draws[kChunk];
    const bool batch = first_draws_vectorised();
    for (std::size_t c = 0; c < inStream_.size(); c += kChunk) {
      const std::size_t m = std::min(kChunk, inStream_.size() - c);
      if (batch) {
        for (std::size_t i = 0; i < m; ++i) draws[i] = inStream_[c + i] + key;
        first_draws(seed, draws, draws, m);
      }
      for (std::size_t i = c; i < c + m; ++i) {
        if (t - inLastEvent_[i] + slack < kInputRefractT) continue;
        const std::uint64_t bits = batch ? draws[i - c] : Rng(seed, inStream_[i] + key).next();
        if (prob >= 1.0 || Rng::toUniform(bits) < prob) {
          firedIn_.push_back(static_cast<Index>(i));
          inLastEvent_[i] = t;
        }
      }
    }
    lap(phases_.inputs);

    // Neurons: IntFire's rule (models/int_fire.cpp).
    fired_.clear();
    queue_.beginStep(step_);
    const double due = t + slack;
    const double decay = 1.0 - kDt / kTau;
    const std::size_t n = Vm_.size();
    for (std::size_t i = 0; i < n; ++i) {
      double vm = queue_.addDue(i, due, Vm_[i]);
      if (vm > kThresh && t - lastSpike_[i] + slack >= kRefractory) {
        fired_.push_back(static_cast<Index>(i));
        vm = kVReset;
        lastSpike_[i] = t;
      } else {
        vm *= decay;
      }
      Vm_[i] = vm;
    }
    lap(phases_.neurons);

    // Population statistics of Vm: the mean, then the population sdev around it.
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += Vm_[i];
    mean_ = sum / static_cast<double>(n);
    double m2 = 0;
    for (std::size_t i = 0; i < n; ++i) m2 += (Vm_[i] - mean_) * (Vm_[i] - mean_);
    sdev_ = std::sqrt(m2 / static_cast<double>(n));
    lap(phases_.stats);

    // Synaptic events: each spike schedules its synapses' weights at t + delay.
    deliver(in_, firedIn_, t);
    deliver(rec_, fired_, t);
    spikes_ += fired_.size();
    inputSpikes_ += firedIn_.size();
    lap(phases_.deliver);
  }

  const std::vector<double>& Vm() const { return Vm_; }
  const std::vector<double>& lastSpike() const { return lastSpike_; }
  /// Spikes in the last step.
  std::size_t stepSpikes() const { return fired_.size(); }
  std::uint64_t spikes() const { return spikes_; }
  std::uint64_t inputSpikes() const { return inputSpikes_; }
  double mean() const { return mean_; }
  double sdev() const { return sdev_; }

 private:
  static double max_delay(const Csr& c) {
    return c.delay.empty() ? 0.0 : *std::max_element(c.delay.begin(), c.delay.end());
  }
  void deliver(const Csr& c, const std::vector<Index>& fired, double t) {
    for (Index s : fired)
      for (std::uint64_t k = c.rowStart[s]; k < c.rowStart[s + 1]; ++k)
        queue_.push(c.col[k], step_, t + c.delay[k], c.weight[k]);
  }

  const std::vector<double>& initVm_;
  const Csr& in_;
  const Csr& rec_;
  Queue queue_;
  std::vector<std::uint64_t> inStream_;
  std::vector<double> inLastEvent_;
  std::vector<double> Vm_, lastSpike_;
  std::vector<Index> fired_, firedIn_;
  std::uint64_t step_ = 0, spikes_ = 0, inputSpikes_ = 0;
  double mean_ = 0, sdev_ = 0;
  bool timed_ = false;
  Phases phases_;
};

// ---- the antler model ----

struct Model {
  Index n = 0, numInputs = 0;
  ObjId neurons, input, stats, handlers;  // handlers: the SimpleSynHandler layout only
  Id synapses;
  std::vector<double> initVm;
  Csr in, rec;  // the two Sparse messages with their synapses' weights and delays
  unsigned minSyn = 0, maxSyn = 0;
};

/// Builds the network through the Shell, and copies it as plain arrays for the hand loops.
/// handler: MOOSE 3/4's layout, the synapses on /net/h (see the top of the file).
Model build(Shell& s, Index n, bool handler) {
  Model m;
  m.n = n;
  m.numInputs = std::max<Index>(1, n / 10);
  s.create("Neutral", "/net");
  m.neurons = s.create("IntFire", "/net/neurons", n);
  m.input = s.create("RandSpike", "/net/input", m.numInputs);
  m.stats = s.create("Stats", "/net/stats");
  if (handler) m.handlers = s.create("SimpleSynHandler", "/net/h", n);
  const ObjId holder = handler ? m.handlers : m.neurons;  // the synapses' parent
  const ObjId syn = s.find(s.path(holder.id) + "/synapse");
  m.synapses = syn.id;

  Field<double>::setAll(s, m.neurons.id, "tau", kTau);
  Field<double>::setAll(s, m.neurons.id, "thresh", kThresh);
  Field<double>::setAll(s, m.neurons.id, "refractoryPeriod", kRefractory);
  Field<double>::setAll(s, m.neurons.id, "vReset", kVReset);
  m.initVm.resize(n);
  for (Index i = 0; i < n; ++i) m.initVm[i] = uniform(1, i, 0.0, 1.0);
  Field<double>::setVec(s, m.neurons.id, "initVm", m.initVm);
  Field<double>::setAll(s, m.input.id, "rate", kInputRate);
  Field<double>::setAll(s, m.input.id, "refractT", kInputRefractT);

  // Inputs first: each neuron's synapse array holds its input synapses, then its recurrent ones.
  const std::uint32_t msgIn = s.addMsg("Sparse", m.input, "spikeOut", syn, "addSpike");
  s.setRandomConnectivity(msgIn, std::min(1.0, kInputSynapses / m.numInputs), kSeedIn);
  const std::uint32_t msgRec = s.addMsg("Sparse", m.neurons, "spikeOut", syn, "addSpike");
  s.setRandomConnectivity(msgRec, std::min(1.0, kRecurrentSynapses / n), kSeedRec);
  s.doSyncDataHandler(m.synapses);

  // Weights and delays over the whole synapse field element, parent by parent.
  const std::vector<unsigned> numSyn = Field<unsigned>::getVec(s, holder.id, "numSynapses");
  std::vector<std::uint64_t> synStart(n + 1, 0);
  for (Index i = 0; i < n; ++i) synStart[i + 1] = synStart[i] + numSyn[i];
  m.minSyn = *std::min_element(numSyn.begin(), numSyn.end());
  m.maxSyn = *std::max_element(numSyn.begin(), numSyn.end());
  const auto* in = static_cast<const SparseMsg*>(s.msg(msgIn));
  const auto* rec = static_cast<const SparseMsg*>(s.msg(msgRec));
  std::vector<Index> numIn(n, 0);  // input synapses come first in each array
  for (Index r = 0; r < in->numRows(); ++r)
    for (auto [b, e] = in->row(r); b != e; ++b) ++numIn[*b];
  std::vector<double> w(synStart[n]), delay(synStart[n]);
  for (Index i = 0; i < n; ++i)
    for (std::uint64_t k = synStart[i]; k < synStart[i + 1]; ++k) {
      const bool input = k - synStart[i] < numIn[i];
      w[k] = input ? uniform(2, k, 0.02, 0.08) : uniform(3, k, -0.2, 0.1);
      if (handler) w[k] *= kDt;  // the handler sends sum(w) / dt, which IntFire adds to Vm
      delay[k] = uniform(4, k, 1e-3, 5e-3);
    }
  Field<double>::setVec(s, m.synapses, "weight", w);
  Field<double>::setVec(s, m.synapses, "delay", delay);
  m.in = copy_csr(*in, synStart, w, delay);
  m.rec = copy_csr(*rec, synStart, w, delay);

  s.addMsg("Reduce", m.stats, "reduce", m.neurons, "getVm");
  for (unsigned t = 0; t < 4; ++t) s.setClock(t, kDt);
  s.useClock(0, "/net/input", "process");
  if (handler) {
    s.addMsg("OneToOne", m.handlers, "activationOut", m.neurons, "activation");
    s.useClock(1, "/net/h", "process");
    s.useClock(2, "/net/neurons", "process");
    s.useClock(3, "/net/stats", "process");
  } else {
    s.useClock(0, "/net/neurons", "process");
    s.useClock(1, "/net/stats", "process");
  }
  return m;
}

/// How two arrays differ: entries not bit-identical, entries further apart than tol, largest gap.
struct Diff {
  std::size_t differ = 0, beyond = 0;
  double worst = 0;
};
Diff compare(const std::vector<double>& a, const std::vector<double>& b, double tol = 0) {
  Diff d;
  if (a.size() != b.size()) return {std::max(a.size(), b.size()), std::max(a.size(), b.size()), 0};
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) {
      ++d.differ;
      const double gap = std::abs(a[i] - b[i]);
      d.beyond += !(gap <= tol);
      d.worst = std::max(d.worst, gap);
    }
  return d;
}

bool close_stats(double mean, double sdev, double handMean, double handSdev) {
  return std::abs(mean - handMean) <= 1e-12 * std::max(1.0, std::abs(mean)) &&
         std::abs(sdev - handSdev) <= 1e-9 * std::max(1.0, sdev);
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
  bench::print_machine();
  antler::Runtime rt(argc, argv);
  Shell& s = rt.shell();
  const unsigned n = arg(argc, argv, 1, 100000);
  const unsigned steps = arg(argc, argv, 2, 1000);
  const unsigned reps = arg(argc, argv, 3, 3);
  const std::string only = argc > 4 ? argv[4] : "";
  if (n == 0 || steps == 0 || reps == 0 || argc > 5 ||
      (!only.empty() && only != "antler" && only != "handler" && only != "ring" &&
       only != "queue" && only != "heap")) {
    std::fprintf(
        stderr,
        "usage: %s [N >= 1 [steps >= 1 [repetitions >= 1 [antler|handler|ring|queue|heap]]]]\n",
        argv[0]);
    return rt.finish(2);
  }

  std::printf(
      "question: cost per step of %u IntFire neurons with ~100 synapses each, Poisson input and a "
      "Stats reduction, one thread, next to a hand-written C++ loop doing the same neuron and "
      "synapse updates over plain arrays in the same run (goal: ratio <= 1.3 against the faster "
      "hand loop); also antler at 2 "
      "threads vs 1\n",
      n);
  if (rt.numNodes() != 1)
    std::printf("note: this benchmark's question is about one node; run it without mpirun\n");

  const auto tb = WallClock::now();
  const Model m = build(s, n, only == "handler");
  const std::string inputPath = s.path(m.input.id);
  HandNetwork<RingQueue> ring(m.initVm, inputPath, m.numInputs, m.in, m.rec);
  HandNetwork<StepQueue> queue(m.initVm, inputPath, m.numInputs, m.in, m.rec);
  HandNetwork<HeapQueue> heap(m.initVm, inputPath, m.numInputs, m.in, m.rec);
  std::printf(
      "shape: %u IntFire, %u RandSpike at %g Hz; Sparse input->synapse p = %.3g (%zu entries), "
      "Sparse neuron->synapse p = %.3g (%zu entries); %.2f synapses per neuron (min %u, max %u); "
      "dt %g; %u steps, best of %u; built in %.1f s\n",
      n, m.numInputs, kInputRate, std::min(1.0, kInputSynapses / m.numInputs), m.in.col.size(),
      std::min(1.0, kRecurrentSynapses / n), m.rec.col.size(),
      static_cast<double>(m.in.col.size() + m.rec.col.size()) / n, m.minSyn, m.maxSyn, kDt, steps,
      reps, seconds_since(tb));

  // Each run starts from reinit, so every repetition computes the same steps.
  auto run_antler = [&] {
    s.reinit();
    const auto t0 = WallClock::now();
    s.start(steps * kDt);
    return seconds_since(t0);
  };
  auto run_hand = [&](auto& net) {
    net.reinit();
    const auto t0 = WallClock::now();
    for (unsigned k = 0; k < steps; ++k) net.step();
    return seconds_since(t0);
  };
  s.setNumThreads(1);
  const char* more = std::getenv("ANTLER_BENCH_THREADS");
  const std::vector<unsigned> listed = bench::count_list(more ? more : "");
  if (more && listed.empty()) {
    std::fprintf(
        stderr, "ANTLER_BENCH_THREADS='%s': expected thread counts such as 4,8,16 (1..64)\n", more);
    return rt.finish(2);
  }

  // One more run of antler at k threads with the clock's phase timers on, after an untimed run
  // (see "where a step goes" below): its lines, per OS thread and per Element, appended to out.
  auto antler_phases = [&](unsigned k, std::vector<std::string>& out) {
    s.setNumThreads(k);
    run_antler();
    s.reinit();
    rt.simulation().clock().setPhaseTimers(true);
    const double t = run_antler();
    const PhaseTimes& pt = rt.simulation().clock().phaseTimes();
    rt.simulation().clock().setPhaseTimers(false);
    const double us = 1e6 / steps;
    for (std::size_t w = 0; w < pt.threads.size(); ++w) {
      const PhaseTimes::Phases& p = pt.threads[w];
      char buf[512];
      std::snprintf(
          buf, sizeof buf,
          "  antler, %u thread(s), OS thread %zu: process %.1f, predicted reductions %.1f, "
          "exchange %.1f, primary reductions %.1f, deliver %.1f, reduce %.1f, barriers "
          "%.1f; sum %.1f of %.1f",
          k, w, p.process * us, p.predicted * us, p.exchange * us, p.primary * us, p.deliver * us,
          p.reduce * us, p.wait * us, p.total() * us, t * us);
      out.emplace_back(buf);
    }
    std::string el = "    process by Element (all threads):";
    for (const auto& [id, sec] : pt.elements) {
      char buf[128];
      std::snprintf(buf, sizeof buf, " %s %.1f", s.path(id).c_str(), sec * us);
      el += buf;
    }
    out.push_back(el);
  };

  if (!only.empty()) {
    // Profiling: one side only, no checks; antler at the first count ANTLER_BENCH_THREADS lists.
    const unsigned threads = (only == "antler" || only == "handler") && more ? listed[0] : 1;
    s.setNumThreads(threads);
    double best = 1e300;
    for (unsigned r = 0; r < reps; ++r)
      best = std::min(best, only == "antler" || only == "handler" ? run_antler()
                            : only == "ring"                      ? run_hand(ring)
                            : only == "queue"                     ? run_hand(queue)
                                                                  : run_hand(heap));
    std::printf("  %s, %u thread(s): %.4f s  %.3f ms/step  %.2f ns/neuron-step\n", only.c_str(),
                threads, best, 1e3 * best / steps, 1e9 * best / steps / n);
    if (only == "antler" || only == "handler") {
      // Where its step goes: one more run with the phase timers on (us per step).
      std::vector<std::string> lines;
      antler_phases(threads, lines);
      for (const std::string& l : lines) std::printf("%s\n", l.c_str());
    }
    s.clearModel();
    return rt.finish(0);
  }

  // ---- one thread: antler and both hand loops, rotating which goes first ----
  double tAntler = 1e300, tRing = 1e300, tQueue = 1e300, tHeap = 1e300;
  for (unsigned r = 0; r < reps; ++r)
    for (unsigned k = 0; k < 4; ++k) switch ((r + k) % 4) {
        case 0:
          tAntler = std::min(tAntler, run_antler());
          break;
        case 1:
          tRing = std::min(tRing, run_hand(ring));
          break;
        case 2:
          tQueue = std::min(tQueue, run_hand(queue));
          break;
        default:
          tHeap = std::min(tHeap, run_hand(heap));
          break;
      }
  // All three now hold the state after `steps` steps from reinit.
  const std::vector<double> vm1 = Field<double>::getVec(s, m.neurons.id, "Vm");
  const std::vector<double> last1 = Field<double>::getVec(s, m.neurons.id, "lastSpike");
  const Diff ringVm = compare(vm1, ring.Vm()), ringLast = compare(last1, ring.lastSpike());
  const Diff queueVm = compare(vm1, queue.Vm()), queueLast = compare(last1, queue.lastSpike());
  const Diff heapVm = compare(vm1, heap.Vm(), kHeapTolerance);
  const Diff heapLast = compare(last1, heap.lastSpike());
  const double mean = Field<double>::get(s, m.stats, "mean");
  const double sdev = Field<double>::get(s, m.stats, "sdev");
  bool statsClose = close_stats(mean, sdev, ring.mean(), ring.sdev());

  // ---- more threads: 2, then any counts ANTLER_BENCH_THREADS lists (e.g. 4,8,16) ----
  std::vector<unsigned> counts{2};
  for (unsigned k : listed)
    if (k > 1 && std::find(counts.begin(), counts.end(), k) == counts.end()) counts.push_back(k);
  std::vector<double> tThreads;
  std::size_t threadsDiffer = 0;
  for (unsigned k : counts) {
    s.setNumThreads(k);
    double t = 1e300;
    for (unsigned r = 0; r < reps; ++r) t = std::min(t, run_antler());
    tThreads.push_back(t);
    threadsDiffer += compare(Field<double>::getVec(s, m.neurons.id, "Vm"), vm1).differ;
  }
  const double tAntler2 = tThreads[0];

  // ---- where a step goes: one more run of antler (1 and 2 threads) and of the queue loop with
  // phase timers on (Clock::setPhaseTimers; not the timed runs above). Each after an untimed run
  // at its thread count: a run at a new count grows the new threads' event queues (IntFire's, a
  // queue per thread and delay row) during its first pass through the rows, which the timed
  // runs' best of `reps` leaves out and one timed run would not (2 threads after 1: the second
  // thread's delivery took twice the first's) ----
  std::vector<std::string> phaseLines;
  for (unsigned k : {1u, 2u}) antler_phases(k, phaseLines);
  s.setNumThreads(1);
  {
    queue.setTimed(true);
    const double t = run_hand(queue);
    const auto& p = queue.phases();
    const double us = 1e6 / steps;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "  hand loop (queue): inputs %.1f, neurons (due events added) %.1f, stats %.1f, "
                  "deliver %.1f; sum %.1f of %.1f",
                  p.inputs * us, p.neurons * us, p.stats * us, p.deliver * us,
                  (p.inputs + p.neurons + p.stats + p.deliver) * us, t * us);
    phaseLines.emplace_back(buf);
    queue.setTimed(false);
  }

  // ---- spike counts, step by step (untimed): a SpikeStats sums the neurons' spike flags ----
  s.setNumThreads(1);
  const ObjId spikeStats = s.create("SpikeStats", "/net/spikes");
  s.addMsg("Reduce", spikeStats, "reduce", m.neurons, "getSpiked");
  s.useClock(1, "/net/spikes", "process");
  s.reinit();
  ring.reinit();
  queue.reinit();
  heap.reinit();
  std::uint64_t antlerSpikes = 0;
  std::size_t heapStepsBad = 0, ringStepsBad = 0;
  for (unsigned k = 0; k < steps; ++k) {
    s.start(kDt);
    ring.step();
    queue.step();
    heap.step();
    const unsigned c = Field<unsigned>::get(s, spikeStats, "count");
    antlerSpikes += c;
    heapStepsBad += c != heap.stepSpikes();
    ringStepsBad += c != ring.stepSpikes() || c != queue.stepSpikes();
    statsClose =
        statsClose && close_stats(Field<double>::get(s, m.stats, "mean"),
                                  Field<double>::get(s, m.stats, "sdev"), ring.mean(), ring.sdev());
  }
  s.destroy(spikeStats);

  // ---- report ----
  auto line = [&](const char* what, double t) {
    std::printf("  %-26s %9.4f s  %8.3f ms/step  %8.2f ns/neuron-step\n", what, t, 1e3 * t / steps,
                1e9 * t / steps / n);
  };
  std::printf("activity: %llu neuron spikes (%.1f Hz per neuron), %llu input spikes in %u steps\n",
              static_cast<unsigned long long>(heap.spikes()),
              static_cast<double>(heap.spikes()) / (static_cast<double>(n) * steps * kDt),
              static_cast<unsigned long long>(heap.inputSpikes()), steps);
  line("hand loop (ring)", tRing);
  line("hand loop (queue)", tQueue);
  line("hand loop (heap)", tHeap);
  line("antler, 1 thread", tAntler);
  for (std::size_t i = 0; i < counts.size(); ++i)
    line(("antler, " + std::to_string(counts[i]) + " threads").c_str(), tThreads[i]);
  const double tBest = std::min(tRing, tQueue);
  const double ratio = tAntler / tBest, ratioHeap = tAntler / tHeap;
  std::printf("  ratio (antler 1 thread / the faster hand loop, %s): %.2f   goal <= 1.3: %s\n",
              tQueue < tRing ? "queue" : "ring", ratio, ratio <= 1.3 ? "met" : "NOT met");
  std::printf("  ratio (antler 1 thread / hand loop, ring): %.2f; queue %.2f\n", tAntler / tRing,
              tAntler / tQueue);
  std::printf(
      "  ratio (antler 1 thread / hand loop, heap): %.2f   (IntFire's queue before issue 9)\n",
      ratioHeap);
  std::printf("  speedup (antler 1 thread / 2 threads): %.2f   goal >= 1.8: %s\n",
              tAntler / tAntler2, tAntler / tAntler2 >= 1.8 ? "met" : "NOT met");
  for (std::size_t i = 1; i < counts.size(); ++i)
    std::printf("  speedup (antler 1 thread / %u threads): %.2f   (parallel efficiency %.2f)\n",
                counts[i], tAntler / tThreads[i], tAntler / tThreads[i] / counts[i]);
  std::printf("where a step goes (one more run of each, phase timers on; us per step):\n");
  for (const std::string& l : phaseLines) std::printf("%s\n", l.c_str());

  const bool ringOk = ringVm.differ == 0 && ringLast.differ == 0 && ringStepsBad == 0 &&
                      antlerSpikes == ring.spikes() && queueVm.differ == 0 &&
                      queueLast.differ == 0 && antlerSpikes == queue.spikes();
  const bool heapOk = heapVm.beyond == 0 && heapLast.differ == 0 && heapStepsBad == 0 &&
                      antlerSpikes == heap.spikes();
  std::printf("check after %u steps (antler vs the hand loops):\n", steps);
  std::printf("  ring: Vm %s; lastSpike %s\n",
              ringVm.differ == 0 ? "bit-identical (all neurons)" : "MISMATCH",
              ringLast.differ == 0 ? "bit-identical" : "MISMATCH");
  std::printf("  queue: Vm %s; lastSpike %s\n",
              queueVm.differ == 0 ? "bit-identical (all neurons)" : "MISMATCH",
              queueLast.differ == 0 ? "bit-identical" : "MISMATCH");
  if (ringVm.differ)
    std::printf("        %zu neurons differ, max |difference| %g\n", ringVm.differ, ringVm.worst);
  std::printf(
      "  heap: Vm %s (%zu neurons not bit-identical, max |difference| %.3g, tolerance %g); "
      "lastSpike %s\n",
      heapVm.beyond == 0 ? "within tolerance" : "MISMATCH", heapVm.differ, heapVm.worst,
      kHeapTolerance, heapLast.differ == 0 ? "bit-identical" : "MISMATCH");
  std::printf(
      "  spikes in each of %u steps (antler's SpikeStats): ring and queue %s, heap %s; total %llu, "
      "ring %llu, heap %llu\n",
      steps, ringStepsBad == 0 ? "equal" : "MISMATCH", heapStepsBad == 0 ? "equal" : "MISMATCH",
      static_cast<unsigned long long>(antlerSpikes), static_cast<unsigned long long>(ring.spikes()),
      static_cast<unsigned long long>(heap.spikes()));
  std::printf("  Stats mean/sdev vs the hand loop's two-pass loop, every step: %s\n",
              statsClose ? "agree (rel. 1e-12 / 1e-9)" : "DISAGREE");
  std::printf("  Vm at every thread count vs 1 thread: %s\n",
              threadsDiffer == 0 ? "bit-identical" : "MISMATCH");
  // The exit status follows the exact checks. The heap loop rounds differently (see the top), so
  // in a long enough run one neuron may cross its threshold a step apart and the runs diverge.
  bool match = ringOk && statsClose && threadsDiffer == 0;
  if (match && !heapOk)
    std::printf(
        "  note: the heap loop differs beyond rounding: a threshold crossing must have "
        "flipped on a rounding difference (the ring loop, same order as IntFire, matches)\n");
  std::printf("result: %s\n",
              !match   ? "MISMATCH"
              : heapOk ? "antler and both hand loops match"
                       : "antler and the ring loop match exactly; the heap loop diverged");

  // ---- the SimpleSynHandler layout (one thread), against the rings ----
  s.clearModel();
  const Model mh = build(s, n, true);
  HandNetwork<HandlerRingQueue> hring(mh.initVm, s.path(mh.input.id), mh.numInputs, mh.in, mh.rec);
  double tHandler = 1e300, tHRing = 1e300, tRing2 = 1e300;
  for (unsigned r = 0; r < reps; ++r)
    for (unsigned k = 0; k < 3; ++k) switch ((r + k) % 3) {
        case 0:
          tHandler = std::min(tHandler, run_antler());
          break;
        case 1:
          tHRing = std::min(tHRing, run_hand(hring));
          break;
        default:
          tRing2 = std::min(tRing2, run_hand(ring));
          break;
      }
  const Diff hVm = compare(Field<double>::getVec(s, mh.neurons.id, "Vm"), hring.Vm());
  const Diff hLast =
      compare(Field<double>::getVec(s, mh.neurons.id, "lastSpike"), hring.lastSpike());
  const bool hStats =
      close_stats(Field<double>::get(s, mh.stats, "mean"), Field<double>::get(s, mh.stats, "sdev"),
                  hring.mean(), hring.sdev());
  const bool direct = Field<bool>::get(s, ObjId(mh.handlers.id, 0), "directPath");
  std::printf("SimpleSynHandler layout (/net/h -> /net/neurons activation, weights x dt):\n");
  line("hand loop (ring)", tRing2);
  line("hand loop (handler ring)", tHRing);
  line("antler, 1 thread", tHandler);
  const double layoutRatio = (tHandler / tRing2) / (tAntler / tRing);
  std::printf("  ratio (antler / hand loop, handler ring): %.2f\n", tHandler / tHRing);
  std::printf(
      "  ratio (handler layout / synapses on IntFire, each over the ring loop of its phase): %.2f"
      "   goal <= 1.05: %s  (direct path: %s)\n",
      layoutRatio, layoutRatio <= 1.05 ? "met" : "NOT met", direct ? "yes" : "no");
  std::printf("  check: Vm vs the handler ring loop %s; lastSpike %s; Stats %s\n",
              hVm.differ == 0 ? "bit-identical" : "MISMATCH",
              hLast.differ == 0 ? "bit-identical" : "MISMATCH", hStats ? "agree" : "DISAGREE");
  match = match && hVm.differ == 0 && hLast.differ == 0 && hStats;
  std::printf("result (handler layout): %s\n",
              hVm.differ == 0 && hLast.differ == 0 && hStats ? "match" : "MISMATCH");
  s.clearModel();
  return rt.finish(match ? 0 : 1);
}

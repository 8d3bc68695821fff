// The scheduler loop.
//
// A run is one OpenMP parallel region. Every thread walks the same sequence of rounds: for each
// stride (the smallest step of the ticks in use, in base dts; see clock.hpp), one round per tick
// that is due at its end (its step divides the end's base step), in tick order; an Element's
// init phase and its process phase are separate entries of their ticks. A round is:
//
//   Process   Each thread calls process on its contiguous slice of every Element of the tick, in
//             the tick's order, marking a segment end in its process queue after each Element.
//             Sends go to that queue; nothing is delivered yet, so no thread ever touches an
//             object outside its own slice.
//   Barrier 1 The threads fold the reductions this tick is predicted to request; then the master
//             thread (the only one that calls MPI) exchanges queues, flags and what the other
//             layers contribute — the reduce queue's requests and those partials (msg/
//             post_office.hpp: ExchangeContributor) — with the other nodes (when the prediction
//             holds, the reductions are finished here, in the same collective), hands each
//             contributor every node's part, and builds the delivery plan: deferred
//             sends sorted by source, then for each Element segment, node by node, thread by thread
//             — the serial order. Every node now knows the same pending reductions.
//   Deliver   Each thread first folds its own slice of every pending reduction's targets
//             (primaryReduce: values as process left them), then walks the whole delivery plan and
//             calls destination functions only on targets in its own slice of each destination,
//             so no two threads ever touch one object.
//   Barrier 2 The master clears the delivered queues and clears the reduce queue: thread partials
//             folded in thread order, one collective for every node's partials, node partials
//             folded in node order, digests called (reduce/reduce_queue.hpp).
//   Barrier 3 Everyone reads the flags the master published: an error anywhere (any thread, any
//             node) ends the run on every node at the same round; a stop request ends it at the
//             end of the step.
//
// Flags are exchanged in collectives every node makes in the same order, so a failure on one node
// ends the run everywhere instead of leaving the others waiting in a collective. Only flags that
// came out of a collective may end a run on more than one node: an exception that one node raises
// during delivery, a reduction's fold or a digest is known to that node alone, so it does not end
// the loop there (the others would wait for it in the next exchange). The node keeps taking part
// in the rounds — its failed threads process nothing — and the flag rides in the next Barrier 1
// exchange, where every node sees it and stops at that same round. A run's last round has no next
// exchange, so every run ends with one agreement (an all-reduce of the error flag): a run that
// failed anywhere fails on every node, and the node that raised reports its exception.
#include "shell/clock.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "core/comm/algorithms.hpp"
#include "core/element.hpp"
#include "core/error.hpp"
#include "core/proc_info.hpp"
#include "shell/detail/spin_barrier.hpp"
#include "shell/simulation.hpp"

namespace antler {

const std::array<double, Clock::kNumTicks>& Clock::defaultDts() {
  // MOOSE 4.1's table (scheduling/Clock.cpp, buildDefaultTick): 0-7 electrical (50 us), 8 the
  // tables that record them, 10-17 chemistry, 18-20 chemical tables and streamers, 30 file
  // writers, 31 MOOSE's post master.
  static const std::array<double, kNumTicks> d = [] {
    std::array<double, kNumTicks> a{};
    for (unsigned k = 0; k < 8; ++k) a[k] = 50e-6;
    a[8] = 1e-4;
    a[10] = 0.01;
    for (unsigned k = 11; k < 18; ++k) a[k] = 0.1;
    a[18] = 1;
    a[19] = 1;
    a[20] = 10;
    a[30] = 1;
    a[31] = 0.01;
    return a;
  }();
  return d;
}

Clock::Clock(Simulation& sim) : sim_(sim) {
  numThreads_ = static_cast<unsigned>(std::max(1, omp_get_max_threads()));
  clear();
}

void Clock::checkTick(unsigned tick, const char* op) const {
  if (tick >= kNumTicks)
    throw IndexError(std::string(op) + ": tick " + std::to_string(tick) +
                     " out of range (ticks 0.." + std::to_string(kNumTicks - 1) + ")");
}

void Clock::checkIdle(const char* op) const {
  if (running_) throw StateError(std::string(op) + ": the clock is running");
}

void Clock::setTickDt(unsigned tick, double dt) {
  checkTick(tick, "setClock");
  if (!(dt >= kMinimumDt) || !std::isfinite(dt))
    throw ValueError("setClock: dt of tick " + std::to_string(tick) +
                     " must be a finite number of seconds >= " + format_double(kMinimumDt) +
                     " (MOOSE's smallest dt), got " + format_double(dt));
  checkIdle("setClock");
  // MOOSE's rule (Clock::setTickDt): a dt below the base dt becomes the base, and the ticks in
  // use keep their dts, rounded to whole steps of it.
  if (std::all_of(steps_.begin(), steps_.end(), [](std::uint64_t x) { return x == 0; })) {
    dt_ = dt;  // no tick in use: the new dt is the base
  } else if (dt < dt_) {
    for (auto& s : steps_)
      if (s) s = static_cast<std::uint64_t>(std::llround(static_cast<double>(s) * dt_ / dt));
    dt_ = dt;
  }
  steps_[tick] = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(dt / dt_)));
}

void Clock::setTickStep(unsigned tick, std::uint64_t steps) {
  checkTick(tick, "tickStep");
  checkIdle("tickStep");
  if (steps > kMaxSteps)
    throw ValueError("tickStep: " + std::to_string(steps) + " base steps for tick " +
                     std::to_string(tick) + " (at most 2^53)");
  steps_[tick] = steps;
}

void Clock::setDt(double dt) {
  if (!(dt >= kMinimumDt) || !std::isfinite(dt))
    throw ValueError("clock dt: must be a finite number of seconds >= " +
                     format_double(kMinimumDt) + ", got " + format_double(dt));
  checkIdle("clock dt");
  dt_ = dt;
}

std::vector<double> Clock::dts() const {
  std::vector<double> out(kNumTicks);
  for (unsigned k = 0; k < kNumTicks; ++k) out[k] = tickDt(k);
  return out;
}

void Clock::schedule(unsigned tick, Id e, Phase phase) {
  checkTick(tick, "useClock");
  unschedule(e, phase);
  elements_[tick].push_back({e, phase});
}

void Clock::unschedule(Id e, Phase phase) {
  for (auto& v : elements_)
    std::erase_if(v, [&](const Entry& x) { return x.id == e && x.phase == phase; });
}

int Clock::tickOf(Id e, Phase phase) const {
  for (unsigned k = 0; k < kNumTicks; ++k)
    for (const Entry& x : elements_[k])
      if (x.id == e && x.phase == phase) return static_cast<int>(k);
  return -1;
}

void Clock::dropElement(Id e) {
  for (auto& v : elements_) std::erase_if(v, [&](const Entry& x) { return x.id == e; });
  std::erase_if(phaseTimes_.elements, [&](const auto& x) { return x.first == e; });
}

void Clock::clear() {
  dt_ = kDefaultBaseDt;
  const auto& d = defaultDts();
  for (unsigned k = 0; k < kNumTicks; ++k)
    steps_[k] = static_cast<std::uint64_t>(std::llround(d[k] / dt_));
  for (auto& v : elements_) v.clear();
  currentTime_ = 0;
  step_ = 0;
  nsteps_ = 0;
  phaseTimes_ = PhaseTimes{};  // (its Elements are gone; the timers stay on or off)
}

std::uint64_t Clock::stride() const {
  std::uint64_t s = 0;
  for (unsigned k = 0; k < kNumTicks; ++k)
    if (steps_[k] > 0 && !elements_[k].empty() && (s == 0 || steps_[k] < s)) s = steps_[k];
  return s;
}

double Clock::baseDt() const {
  return static_cast<double>(stride()) * dt_;
}

void Clock::checkNumThreads(unsigned n) {
  if (n == 0 || n > kMaxThreads)
    throw ValueError("setNumThreads: " + std::to_string(n) + " threads per node (valid: 1.." +
                     std::to_string(kMaxThreads) + ")");
}

unsigned Clock::workers(unsigned T) {
  return std::max(1u, std::min(T, comm::cores_per_rank()));
}

void Clock::setNumThreads(unsigned n) {
  checkNumThreads(n);
  if (running_) throw StateError("setNumThreads: the clock is running");
  numThreads_ = n;
}

void Clock::reinit() {
  if (running_) throw StateError("reinit: the clock is running");
  currentTime_ = 0;
  step_ = 0;
  nsteps_ = 0;
  // Sends still queued from the previous run belong to it: reinit starts afresh without them.
  sim_.post().clear();
  runSteps(1, true);
  currentTime_ = 0;
  step_ = 0;
  nsteps_ = 0;
}

void Clock::start(double runtime) {
  if (running_) throw StateError("start: the clock is already running");
  if (!(runtime >= 0) || !std::isfinite(runtime))
    throw ValueError("start: runtime must be a non-negative finite number of seconds, got " +
                     format_double(runtime));
  const std::uint64_t stride = this->stride();
  if (stride == 0) {
    // Nothing scheduled: time still advances, but there is nothing to run.
    currentTime_ += runtime;
    return;
  }
  // MOOSE's step count: whole strides, rounded. Refused before anything runs: a step count past
  // kMaxSteps would wrap or lose exactness.
  const double base = static_cast<double>(stride) * dt_;
  const double n = std::round(runtime / base);
  if (!(n * static_cast<double>(stride) <= static_cast<double>(kMaxSteps - step_)))
    throw ValueError("start: runtime " + format_double(runtime) + " s is " + format_double(n) +
                     " steps of " + format_double(base) + " s; a run may take at most " +
                     std::to_string((kMaxSteps - step_) / stride) +
                     " more steps (2^53 base steps since reinit)");
  nsteps_ = step_ + static_cast<std::uint64_t>(n) * stride;  // MOOSE's nsteps: what was asked
  runSteps(static_cast<std::uint64_t>(n), false);
}

namespace {

struct Sched {
  const Element* e;
  const ProcFinfoBase* proc;
};
using Ticks = std::array<std::vector<Sched>, Clock::kNumTicks>;

/// What the prepare hooks may ask about a run (core/proc_info.hpp): where the others run.
class ScheduleView final : public RunSchedule {
 public:
  ScheduleView(const Ticks& t, const std::array<std::uint64_t, Clock::kNumTicks>& steps)
      : ticks_(t), steps_(steps) {}
  int tickOf(const Element* e) const override {
    for (unsigned k = 0; k < Clock::kNumTicks; ++k)
      for (const Sched& sc : ticks_[k])
        if (sc.e == e && sc.proc && sc.proc == e->cinfo()->proc()) return static_cast<int>(k);
    return -1;
  }
  std::uint64_t tickStep(unsigned tick) const override {
    return tick < Clock::kNumTicks ? steps_[tick] : 0;
  }

 private:
  const Ticks& ticks_;
  const std::array<std::uint64_t, Clock::kNumTicks>& steps_;
};

}  // namespace

/// One run of Clock::runSteps: what every OS thread shares, and one function per phase of a
/// round (the top of this file). Thread t's errors go to errors[t]; every failure also sets
/// kFlagError in nodeFlags, which the next exchange publishes.
class Clock::Run {
 public:
  Run(Clock& c, std::uint64_t nsteps, bool reinit)
      : c_(c),
        nsteps_(nsteps),
        reinit_(reinit),
        stride_(std::max<std::uint64_t>(1, c.stride())),
        step0_(c.step_),
        po_(c.sim_.post()),
        rq_(c.sim_.reduces()),
        T_(c.numThreads_),
        W_(workers(T_)),
        layout_(c.sim_.layout()),
        multiNode_(layout_.numNodes > 1),
        errors_(T_),
        barrier_(W_),
        timed_(c.phaseTimers_ && !reinit) {
    // The ticks in use (a step and at least one Element) and what they call, in run order.
    for (unsigned k = 0; k < kNumTicks; ++k) {
      if (c.steps_[k] == 0) continue;
      tickDt_[k] = c.tickDt(k);
      for (const Entry& x : c.elements_[k])
        if (const Element* e = c.sim_.elements().get(x.id))
          ticks_[k].push_back(
              {e, x.phase == Phase::init ? e->cinfo()->init() : e->cinfo()->proc()});
      if (!ticks_[k].empty()) inUse_[numInUse_++] = k;
    }
    if (timed_) {
      std::size_t n = 0;
      for (unsigned k = 0; k < kNumTicks; ++k) {
        firstSched_[k] = n;
        n += ticks_[k].size();
      }
      timers_.resize(W_);
      for (Timer& tm : timers_) tm.element.assign(n, 0.0);
    }
  }

  /// The queues for T threads and the comms' waits; then the classes' prepare hooks, on one
  /// thread, once per Element (at its first tick). A failure is this node's alone: it rides in
  /// the first exchange like any other, so every node ends the run at the same round.
  void prepare() {
    if (po_.numThreads() != T_) po_.setNumThreads(T_);
    rq_.prepare(T_);
    // Collective on several nodes; a failure is every node's (its errors are agreed).
    if (multiNode_) guarded(0, [&] { po_.prepareRun(); });
    if (multiNode_ && c_.yieldDecidedFor_ != T_) {
      // The master's MPI waits give the core away when this run's OS threads outnumber the
      // cores (every rank must agree: a blocking collective does not match a nonblocking one).
      const bool y = comm::algo::any(po_.comm(), comm::threads_exceed_cores(W_));
      po_.comm().setYielding(y);
      rq_.comm().setYielding(y);
      if (comm::Reductions* r = rq_.reductions()) r->comm().setYielding(y);  // subset reductions
      c_.yieldDecidedFor_ = T_;
    }
    const ScheduleView view(ticks_, c_.steps_);
    std::vector<const Element*> prepared;
    for (unsigned k = 0; k < kNumTicks; ++k)
      for (const Sched& sc : ticks_[k]) {
        if (!sc.proc || sc.proc != sc.e->cinfo()->proc() ||
            std::find(prepared.begin(), prepared.end(), sc.e) != prepared.end())
          continue;  // (the init phase has no prepare)
        prepared.push_back(sc.e);
        ProcInfo p = info(k, reinit_ ? 0.0 : static_cast<double>(step0_) * c_.dt_);
        p.schedule = &view;
        if (!errors_[0]) guarded(0, [&] { sc.proc->prepare(sc.e, p, reinit_); });
      }
    // The run reads synapse stores in message order: the arrays' addresses can go until needed
    // (core/edge_array.hpp). After the hooks, which may read entries (IntFire's longest delay).
    if (!errors_[0]) guarded(0, [&] { c_.sim_.msgs().compactEdgeArrays(); });
  }

  /// Every OS thread: the run in one OpenMP team of W (T threads' slices, each OS thread taking
  /// the slices t = w, w + W, ... in turn: the results are those of T threads, and T threads on
  /// fewer cores do not make every barrier a context switch). OS thread 0 is the master, the
  /// thread that called MPI_Init, so MPI stays on one thread (MPI_THREAD_FUNNELED).
  void runAll() {
    if (W_ == 1) {
      body(0);  // no team, no barriers
      return;
    }
#pragma omp parallel num_threads(W_)
    {
      // With dynamic adjustment off OpenMP gives exactly W threads; if it ever did not, the
      // barriers could never complete, so refuse instead of hanging.
      if (static_cast<unsigned>(omp_get_num_threads()) == W_) {
        body(static_cast<unsigned>(omp_get_thread_num()));
      } else if (omp_get_thread_num() == 0) {
        errors_[0] = std::make_exception_ptr(
            StateError("start: OpenMP gave " + std::to_string(omp_get_num_threads()) +
                       " threads, " + std::to_string(W_) + " were asked for"));
      }
    }
  }

  /// Adds this run's phase times to the clock's totals (Clock::setPhaseTimers).
  void addTimes() {
    if (!timed_) return;
    PhaseTimes& to = c_.phaseTimes_;
    if (to.threads.size() < W_) to.threads.resize(W_);
    for (unsigned w = 0; w < W_; ++w) {
      PhaseTimes::Phases& a = to.threads[w];
      const PhaseTimes::Phases& b = timers_[w].phases;
      a.process += b.process;
      a.predicted += b.predicted;
      a.exchange += b.exchange;
      a.primary += b.primary;
      a.deliver += b.deliver;
      a.reduce += b.reduce;
      a.wait += b.wait;
    }
    to.rounds += timers_[0].rounds;
    for (unsigned k = 0; k < kNumTicks; ++k)
      for (std::size_t i = 0; i < ticks_[k].size(); ++i) {
        double s = 0;
        for (const Timer& tm : timers_) s += tm.element[firstSched_[k] + i];
        const Id id = ticks_[k][i].e->id();
        auto it = std::find_if(to.elements.begin(), to.elements.end(),
                               [&](const auto& x) { return x.first == id; });
        if (it == to.elements.end())
          to.elements.emplace_back(id, s);
        else
          it->second += s;
      }
  }

  /// The agreement that ends every run: did any node fail? (See the top of this file.)
  void finish() {
    bool failed = false;
    for (auto& e : errors_) failed = failed || static_cast<bool>(e);
    if (multiNode_) failed = comm::algo::any(po_.comm(), failed);
    if (!failed) return;
    // Sends and reductions still queued belong to the failed run, on every node.
    po_.clear();
    rq_.clear();
    for (auto& e : errors_)
      if (e) std::rethrow_exception(e);
    throw FailedElsewhere("the run");
  }

 private:
  /// OS thread w's strides: in each, a round per tick due at its end, in tick order.
  void body(unsigned w) {
    bool done = false;
    for (std::uint64_t s = 0; s < nsteps_ && !done; ++s) {
      // MOOSE's time: the end of the stride, in base steps, times the base dt.
      const std::uint64_t endStep = step0_ + (s + 1) * stride_;
      for (unsigned i = 0; i < numInUse_ && !done; ++i) {
        const unsigned k = inUse_[i];
        if (!reinit_ && endStep % c_.steps_[k] != 0) continue;
        done = !round(w, k, endStep);
      }
      if (w == 0 && !reinit_) {
        c_.step_ = endStep;
        c_.currentTime_ = static_cast<double>(endStep) * c_.dt_;
      }
      if (stopAll_) done = true;  // every thread read stopAll after the same barrier
    }
    PostOffice::setThread(-1);
  }

  /// One round of tick k: false if the run ends at it (a published error).
  bool round(unsigned w, unsigned k, std::uint64_t endStep) {
    if (timed_) timers_[w].start(w == 0);
    process(w, k, info(k, reinit_ ? 0.0 : static_cast<double>(endStep) * c_.dt_));
    // Read before Barrier 1: the master may change the prediction right after it.
    const bool predicted = rq_.predicted(k);
    wait(w);  // ---- Barrier 1: exchange ----
    exchange(w, k, predicted);
    lap(w, &PhaseTimes::Phases::exchange);
    wait(w);
    if (published_ & kFlagError) return false;
    deliver(w);
    wait(w);  // ---- Barrier 2: clear queues, reduce ----
    if (w == 0) reduce();
    lap(w, &PhaseTimes::Phases::reduce);
    wait(w);  // ---- Barrier 3 ----
    return !(published_ & kFlagError);
  }

  /// Phase timers (Clock::setPhaseTimers): OS thread w's time since its last lap goes to
  /// `phase` (nothing when they are off).
  void lap(unsigned w, double PhaseTimes::Phases::*phase) {
    if (timed_) timers_[w].lap(phase);
  }
  /// A barrier, its wait timed (with anything since the last lap: reading the prediction).
  void wait(unsigned w) {
    barrier_.wait(w);
    lap(w, &PhaseTimes::Phases::wait);
  }

  /// Process: each of w's threads calls process (or reinit) on its slice of every Element of the
  /// tick, in the tick's order, marking a segment end in its process queue after each Element.
  void process(unsigned w, unsigned k, ProcInfo p) {
    for (unsigned t = w; t < T_; t += W_) {
      p.threadIndex = t;
      PostOffice::setThread(static_cast<int>(t));
      Outbox& ob = po_.processOutbox(t);
      std::size_t marked = 0;
      PostOffice::setCurrent(&ob);
      if (!errors_[t])
        guarded(t, [&] {
          for (const Sched& sc : ticks_[k]) {
            auto [lo, hi] = thread_slice(sc.e, t, T_);
            if (lo < hi) {
              if (reinit_)
                sc.proc->reinit(sc.e, lo, hi, p);
              else
                sc.proc->process(sc.e, lo, hi, p);
            }
            ob.mark();
            if (timed_) timers_[w].lapElement(firstSched_[k] + marked);
            ++marked;
          }
        });
      PostOffice::setCurrent(nullptr);
      for (; marked < ticks_[k].size(); ++marked) ob.mark();
    }
  }

  /// Exchange: the threads fold the reductions the tick is predicted to request (their partials
  /// ride in the exchange: reduce/reduce_queue.hpp); then the master exchanges queues, flags,
  /// requests and partials with the other nodes and publishes the agreed flags.
  void exchange(unsigned w, unsigned k, bool predicted) {
    if (predicted) {  // (every thread read the same prediction)
      for (unsigned t = w; t < T_; t += W_) {
        PostOffice::setThread(static_cast<int>(t));
        if (!errors_[t]) guarded(t, [&] { rq_.predictPrimary(k, t, T_); });
      }
      lap(w, &PhaseTimes::Phases::predicted);
      wait(w);
    }
    if (w != 0) return;
    PostOffice::setThread(0);
    const std::uint32_t f = nodeFlags_.load() | (c_.stopRequested_.load() ? kFlagStop : 0u);
    // Agreed: every node gets the same flags (and the same verdict on the same bytes).
    if (!masterGuarded([&] { published_ = po_.exchange(f, k); })) published_ = f | kFlagError;
    if (po_.hasError()) [[unlikely]] {  // this node's alone: the next round tells all
      if (!errors_[0]) errors_[0] = po_.takeError();
      nodeFlags_.fetch_or(kFlagError);
    }
    // What rode in the exchange (the reduce queue's requests and partials), to its layer. A
    // digest's failure is known here only: the next exchange carries it.
    if (!(published_ & kFlagError) && !masterGuarded([&] { po_.unpackContributions(k); }) &&
        !multiNode_)
      published_ |= kFlagError;
    if (published_ & kFlagStop) stopAll_ = true;
  }

  /// Deliver: each thread folds its slice of the pending reductions' targets (primaryReduce:
  /// values as process left them), then walks the delivery plan, calling destination functions
  /// on the targets in its own slice.
  void deliver(unsigned w) {
    for (unsigned t = w; t < T_; t += W_) {
      PostOffice::setThread(static_cast<int>(t));
      if (!errors_[t])
        guarded(t, [&] {
          rq_.primary(t, T_);
          lap(w, &PhaseTimes::Phases::primary);
          po_.deliver(t);
          lap(w, &PhaseTimes::Phases::deliver);
        });
    }
  }

  /// Reduce (the master): the delivered queues cleared; thread partials folded in thread order,
  /// one collective for every node's partials, node partials in node order, digests called.
  void reduce() {
    PostOffice::setThread(0);
    po_.finishDelivery();
    std::uint32_t f = nodeFlags_.load();
    if (!masterGuarded([&] { f = rq_.finish(f); })) f |= kFlagError;
    // On one node these flags are the whole truth; on several, an error here is this node's
    // alone and ends the run at the next exchange (see the top of this file).
    if (!multiNode_) published_ = f;
  }

  /// Runs f for thread t; an exception becomes errors_[t] and raises the node's error flag.
  template <class F>
  void guarded(unsigned t, F&& f) {
    try {
      f();
    } catch (...) {
      errors_[t] = std::current_exception();
      nodeFlags_.fetch_or(kFlagError);
    }
  }
  /// The master's guarded call: keeps the first error of thread 0; false if f threw.
  template <class F>
  bool masterGuarded(F&& f) {
    try {
      f();
      return true;
    } catch (...) {
      if (!errors_[0]) errors_[0] = std::current_exception();
      nodeFlags_.fetch_or(kFlagError);
      return false;
    }
  }

  ProcInfo info(unsigned k, double time) const {
    ProcInfo p;
    p.dt = tickDt_[k];
    p.currTime = time;
    p.tick = k;
    p.numThreads = T_;
    p.node = layout_.node;
    p.numNodes = layout_.numNodes;
    return p;
  }

  Clock& c_;
  const std::uint64_t nsteps_;
  const bool reinit_;
  const std::uint64_t stride_, step0_;
  PostOffice& po_;
  ReduceQueue& rq_;
  const unsigned T_, W_;
  const NodeLayout layout_;
  const bool multiNode_;
  Ticks ticks_;
  std::array<unsigned, kNumTicks> inUse_{};  // the ticks with Elements, in tick order
  unsigned numInUse_ = 0;
  std::array<double, kNumTicks> tickDt_{};
  std::vector<std::exception_ptr> errors_;
  std::atomic<std::uint32_t> nodeFlags_{0};
  std::uint32_t published_ = 0;  // written by the master between barriers, read by all after
  bool stopAll_ = false;
  detail::SpinBarrier barrier_;

  /// One OS thread's phase timers, on cache lines of its own.
  struct alignas(64) Timer {
    using Clk = std::chrono::steady_clock;
    PhaseTimes::Phases phases;
    std::vector<double> element;  // process time per scheduled entry (firstSched_ + index)
    std::uint64_t rounds = 0;
    Clk::time_point last;
    void start(bool count) {
      last = Clk::now();
      rounds += count;
    }
    double since() {
      const Clk::time_point now = Clk::now();
      const double s = std::chrono::duration<double>(now - last).count();
      last = now;
      return s;
    }
    void lap(double PhaseTimes::Phases::*phase) { phases.*phase += since(); }
    void lapElement(std::size_t i) {
      const double s = since();
      phases.process += s;
      element[i] += s;
    }
  };
  const bool timed_;
  std::array<std::size_t, kNumTicks> firstSched_{};
  std::vector<Timer> timers_;
};

void Clock::setPhaseTimers(bool on) {
  checkIdle("setPhaseTimers");
  phaseTimers_ = on;
  if (on) phaseTimes_ = PhaseTimes{};
}

void Clock::runSteps(std::uint64_t nsteps, bool reinit) {
  if (nsteps == 0) return;
  Run run(*this, nsteps, reinit);
  run.prepare();
  running_ = true;
  stopRequested_.store(false);
  omp_set_dynamic(0);
  run.runAll();
  running_ = false;
  run.addTimes();
  run.finish();
}

}  // namespace antler

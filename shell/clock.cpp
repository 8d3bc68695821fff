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
//             thread (the only one that calls MPI) exchanges queues, flags, reduction requests
//             and those partials with the other nodes (when the prediction holds, the reductions
//             are finished here, in the same collective) and builds the delivery plan: deferred
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
#include <cmath>
#include <exception>

#include "core/comm/algorithms.hpp"
#include "core/element.hpp"
#include "core/error.hpp"
#include "core/proc_info.hpp"
#include "msg/post_office.hpp"
#include "reduce/reduce_queue.hpp"
#include "shell/spin_barrier.hpp"

namespace antler {

Clock& Clock::instance() {
  static Clock c;
  return c;
}

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

Clock::Clock() {
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
  PostOffice::instance().clear();
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

void Clock::runSteps(std::uint64_t nsteps, bool reinit) {
  if (nsteps == 0) return;
  struct Sched {
    const Element* e;
    const ProcFinfoBase* proc;
  };
  // The ticks in use (a step and at least one Element) and what they call, in run order.
  std::array<std::vector<Sched>, kNumTicks> sched;
  std::array<double, kNumTicks> tickDt{};
  for (unsigned k = 0; k < kNumTicks; ++k) {
    if (steps_[k] == 0) continue;
    tickDt[k] = this->tickDt(k);
    for (const Entry& x : elements_[k]) {
      const Element* e = x.id.element();
      if (!e) continue;
      sched[k].push_back({e, x.phase == Phase::init ? e->cinfo()->init() : e->cinfo()->proc()});
    }
  }
  const std::uint64_t stride = std::max<std::uint64_t>(1, this->stride());

  auto& po = PostOffice::instance();
  auto& rq = ReduceQueue::instance();
  const unsigned T = numThreads_;
  if (po.numThreads() != T) po.setNumThreads(T);
  rq.prepare(T);
  const NodeLayout layout = node_layout();
  const bool multiNode = layout.numNodes > 1;
  if (multiNode && yieldDecidedFor_ != T) {
    // The master's MPI waits give the core away when this run's OS threads outnumber the cores
    // (every rank must agree: a blocking collective does not match a nonblocking one).
    const bool y = comm::algo::any(po.comm(), comm::threads_exceed_cores(workers(T)));
    po.comm().setYielding(y);
    rq.comm().setYielding(y);
    yieldDecidedFor_ = T;
  }

  std::vector<std::exception_ptr> errors(T);
  std::atomic<std::uint32_t> nodeFlags{0};
  std::uint32_t published = 0;  // written by the master between barriers, read by all after
  bool stopAll = false;
  const std::uint64_t step0 = step_;

  // Classes that keep state for a whole Element set it up here, on one thread, once per Element
  // (at its first tick). A failure is this node's alone: it rides in the first exchange like any
  // other, so every node ends the run at the same round.
  {
    // What the hooks may ask about the run (core/proc_info.hpp): where the others run.
    struct Schedule final : RunSchedule {
      const std::array<std::vector<Sched>, kNumTicks>& sched;
      const std::array<std::uint64_t, kNumTicks>& steps;
      Schedule(const std::array<std::vector<Sched>, kNumTicks>& s,
               const std::array<std::uint64_t, kNumTicks>& st)
          : sched(s), steps(st) {}
      int tickOf(const Element* e) const override {
        for (unsigned k = 0; k < kNumTicks; ++k)
          for (const Sched& sc : sched[k])
            if (sc.e == e && sc.proc && sc.proc == e->cinfo()->proc()) return static_cast<int>(k);
        return -1;
      }
      std::uint64_t tickStep(unsigned tick) const override {
        return tick < kNumTicks ? steps[tick] : 0;
      }
    } schedule(sched, steps_);
    std::vector<const Element*> prepared;
    for (unsigned k = 0; k < kNumTicks; ++k)
      for (const Sched& sc : sched[k]) {
        if (!sc.proc || sc.proc != sc.e->cinfo()->proc() ||
            std::find(prepared.begin(), prepared.end(), sc.e) != prepared.end())
          continue;  // (the init phase has no prepare)
        prepared.push_back(sc.e);
        ProcInfo p;
        p.dt = tickDt[k];
        p.currTime = reinit ? 0.0 : static_cast<double>(step0) * dt_;
        p.tick = k;
        p.numThreads = T;
        p.node = layout.node;
        p.numNodes = layout.numNodes;
        p.schedule = &schedule;
        try {
          if (!errors[0]) sc.proc->prepare(sc.e, p, reinit);
        } catch (...) {
          errors[0] = std::current_exception();
          nodeFlags.fetch_or(kFlagError);
        }
      }
  }

  running_ = true;
  stopRequested_.store(false);
  omp_set_dynamic(0);

  // T threads cut the model into T slices (and keep T queues); W OS threads run them. W = T
  // unless this rank has fewer cores than that: then each OS thread runs the slices t = w, w + W,
  // ... in turn, in every phase, and the barriers are among the W. The slices, queues and so the
  // results are those of T threads; what changes is that T threads on fewer cores no longer make
  // every barrier a context switch.
  const unsigned W = workers(T);
  detail::SpinBarrier barrier(W);
  // The body every OS thread runs. OS thread 0 is the master: the thread that called MPI_Init
  // (the region's primary thread), so MPI stays on one thread (MPI_THREAD_FUNNELED).
  auto body = [&](unsigned w) {
    bool done = false;
    for (std::uint64_t s = 0; s < nsteps && !done; ++s) {
      // MOOSE's time: the end of the stride, in base steps, times the base dt.
      const std::uint64_t endStep = step0 + (s + 1) * stride;
      for (unsigned k = 0; k < kNumTicks && !done; ++k) {
        if (sched[k].empty()) continue;
        if (!reinit && endStep % steps_[k] != 0) continue;

        // ---- Process ----
        ProcInfo p;
        p.dt = tickDt[k];
        p.currTime = reinit ? 0.0 : static_cast<double>(endStep) * dt_;
        p.tick = k;
        p.numThreads = T;
        p.node = layout.node;
        p.numNodes = layout.numNodes;
        for (unsigned t = w; t < T; t += W) {
          p.threadIndex = t;
          PostOffice::setThread(static_cast<int>(t));
          Outbox& ob = po.processOutbox(t);
          std::size_t marked = 0;
          PostOffice::setCurrent(&ob);
          if (!errors[t]) {
            try {
              for (const Sched& sc : sched[k]) {
                auto [lo, hi] = thread_slice(sc.e, t, T);
                if (lo < hi) {
                  if (reinit)
                    sc.proc->reinit(sc.e, lo, hi, p);
                  else
                    sc.proc->process(sc.e, lo, hi, p);
                }
                ob.mark();
                ++marked;
              }
            } catch (...) {
              errors[t] = std::current_exception();
              nodeFlags.fetch_or(kFlagError);
            }
          }
          PostOffice::setCurrent(nullptr);
          for (; marked < sched[k].size(); ++marked) ob.mark();
        }

        // Read before Barrier 1: the master may change the prediction right after it.
        const bool predicted = rq.predicted(k);
        barrier.wait(w);  // ---- Barrier 1: exchange ----
        // Fold the reductions this tick is predicted to request, so that their partials can ride
        // in the exchange (reduce/reduce_queue.hpp). Every thread read the same prediction.
        if (predicted) {
          for (unsigned t = w; t < T; t += W) {
            PostOffice::setThread(static_cast<int>(t));
            if (errors[t]) continue;
            try {
              rq.predictPrimary(k, t, T);
            } catch (...) {
              errors[t] = std::current_exception();
              nodeFlags.fetch_or(kFlagError);
            }
          }
          barrier.wait(w);
        }
        if (w == 0) {
          PostOffice::setThread(0);
          std::uint32_t f = nodeFlags.load() | (stopRequested_.load() ? kFlagStop : 0u);
          try {
            // Agreed: every node gets the same flags (and the same verdict on the same bytes).
            published = po.exchange(f, rq.attachment(k));
          } catch (...) {
            if (!errors[0]) errors[0] = std::current_exception();
            nodeFlags.fetch_or(kFlagError);
            published = f | kFlagError;
          }
          if (!(published & kFlagError)) {
            try {
              rq.afterExchange(k, po.attachments(), T);
            } catch (...) {
              // Known here only (a digest may fail on one node): carried by the next exchange.
              if (!errors[0]) errors[0] = std::current_exception();
              nodeFlags.fetch_or(kFlagError);
              if (!multiNode) published |= kFlagError;
            }
          }
          if (published & kFlagStop) stopAll = true;
        }
        barrier.wait(w);
        if (published & kFlagError) {
          done = true;
          break;
        }

        // ---- Deliver: reduction partials first, then messages ----
        for (unsigned t = w; t < T; t += W) {
          PostOffice::setThread(static_cast<int>(t));
          if (errors[t]) continue;
          try {
            rq.primary(t, T);
            po.deliver(t);
          } catch (...) {
            errors[t] = std::current_exception();
            nodeFlags.fetch_or(kFlagError);
          }
        }

        barrier.wait(w);  // ---- Barrier 2: clear queues, reduce ----
        if (w == 0) {
          PostOffice::setThread(0);
          po.finishDelivery();
          std::uint32_t f = nodeFlags.load();
          try {
            f = rq.finish(f);
          } catch (...) {
            if (!errors[0]) errors[0] = std::current_exception();
            nodeFlags.fetch_or(kFlagError);
            f |= kFlagError;
          }
          // On one node these flags are the whole truth; on several, an error here is this
          // node's alone and ends the run at the next exchange (see the top of this file).
          if (!multiNode) published = f;
        }
        barrier.wait(w);  // ---- Barrier 3 ----
        if (published & kFlagError) done = true;
      }
      if (w == 0) {
        if (!reinit) {
          step_ = endStep;
          currentTime_ = static_cast<double>(step_) * dt_;
        }
      }
      if (stopAll) done = true;  // every thread read stopAll after the same barrier
    }
    PostOffice::setThread(-1);
  };
  if (W == 1) {
    body(0);  // no team, no barriers
  } else {
#pragma omp parallel num_threads(W)
    {
      // With dynamic adjustment off OpenMP gives exactly W threads; if it ever did not, the
      // barriers could never complete, so refuse instead of hanging.
      if (static_cast<unsigned>(omp_get_num_threads()) == W) {
        body(static_cast<unsigned>(omp_get_thread_num()));
      } else if (omp_get_thread_num() == 0) {
        errors[0] = std::make_exception_ptr(
            StateError("start: OpenMP gave " + std::to_string(omp_get_num_threads()) +
                       " threads, " + std::to_string(W) + " were asked for"));
      }
    }
  }
  running_ = false;
  // The agreement that ends every run: did any node fail? (See the top of this file.)
  bool failed = false;
  for (auto& e : errors) failed = failed || static_cast<bool>(e);
  if (multiNode) failed = comm::algo::any(po.comm(), failed);
  if (!failed) return;
  // Sends and reductions still queued belong to the failed run, on every node.
  po.clear();
  rq.clear();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  throw FailedElsewhere("the run");
}

}  // namespace antler

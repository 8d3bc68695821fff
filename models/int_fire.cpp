#include "models/int_fire.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <memory>
#include <new>
#include <string>

#include "core/huge_pages.hpp"
#include "core/prefetch.hpp"
#include "models/simple_syn_handler.hpp"
#include "models/step_queues.hpp"
#include "models/step_time.hpp"
#include "msg/context.hpp"
#include "msg/msg.hpp"
#include "reduce/reduce_msg.hpp"

namespace antler {

/// The Element's pending events (see the header comment): per step, per clock thread, a queue of
/// the events due in that step (models/step_queues.hpp), added up in the step into `sums`, one
/// entry per neuron of this node, and then the neurons are walked. Set up by prepare (one thread,
/// between runs); `last` is written by every thread that processes the Element with the same
/// value.
/// A clock thread's record of its last sweep: the slice and the neurons in it that fired (their
/// indices in the slice). See Ring::fired.
struct alignas(64) IntFire::Fired {
  std::vector<Index> at;
  Index lo = 0, n = 0;
  bool valid = false;
  // The stamp of this thread's last sweep if it fed sinks (Ring::sinks) and Vm is still as it
  // left it, else 0 (ElementState::sweepStamp); the sinks it is feeding.
  std::uint64_t fedStamp = 0;
  std::vector<SweepSink*> feeding;
};

class IntFire::Ring final : public ElementState, public detail::StepQueues {
 public:
  double dt = 0.0;                       // the step length the rows count in (0: not set up)
  double invDt = 0.0;                    // 1 / dt: a first guess of an event's step
  std::atomic<std::uint64_t> last{0};    // the last step processed (or being processed)
  std::uint32_t slots = 1;               // steps ahead an event may wait in: last + 1 .. + slots
  Index begin = 0, n = 0;                // the node's neurons: data indices begin .. begin + n - 1
  std::atomic<std::uint64_t> wanted{0};  // most steps ahead an event that did not fit asked for
  // This step: each neuron's events' weights, summed in arrival order from -0.0, the one value x
  // with x + w == w for every w (0.0 + -0.0 is 0.0). So a step with no events adds -0.0 to Vm,
  // which leaves every Vm as it was, and the neuron loop adds without asking whether any came;
  // 8 bytes a neuron (the array the events write at random, which is what must stay in cache).
  // (Against a sum from 0.0 with a count, which skipped a step without events: the same bits
  // except where every weight of the step was -0.0 and Vm was -0.0, which then stays -0.0.)
  static constexpr double kNoEvents = -0.0;
  std::vector<double, HugeAllocator<double>> sums;
  // The SimpleSynHandler Element that feeds it directly. Followed only by processBlock, which
  // runs only in a run whose prepare set it (the clock prepares every Element it processes,
  // every run; prepare only compares the old pointer): unlike the sinks it is never followed
  // after a prepare that did not reach this Element.
  const DataElement* feed = nullptr;
  // With a feed: true if the queues are empty and no neuron has events aside, so that a step
  // need read only the feed. Found at a run's start (a scan, when not known). During a fed run
  // nothing adds to the queues (IntFire::quiet); between runs only a Shell call can (an
  // activation, a spike straight to a synapse), and it clears this (calledOutsideRun), so the
  // event path itself pays nothing for it.
  bool onlyFeed = false;
  void calledOutsideRun() override {
    onlyFeed = false;
    paramsValid = false;
    vmWritten.store(false, std::memory_order_relaxed);
    for (Fired& f : fired) f.fedStamp = 0;
  }
  // Vm as the last process left it, one per neuron, written by the sweep when a Reduce message
  // reads Vm and nothing but process sets it during the run (prepare decides): a Stats of Vm
  // then folds this array, not a strided pass over the 16-byte neurons (at 1e6 neurons, a
  // second pass of 32 MB from memory a step). Valid from the run's first step until a Shell
  // command writes to the neurons (calledOutsideRun; between runs nothing else changes Vm: an
  // Element off the clock is neither prepared, processed nor reinit).
  std::vector<double, HugeAllocator<double>> vm;
  bool writeVm = false;
  // The jobs of the Reduce messages that read Vm which the sweep feeds as it goes, a chunk at a
  // time while the chunk's Vm is in L1 (core/element.hpp, SweepSink): a Stats of Vm then reads
  // neither the neurons nor a copy (at 1e6 neurons, 8 MB a step less written and read again).
  // Set by prepare, on the same condition as writeVm, which then holds only for readers that
  // cannot be fed (a Single message's, another type's). A sweep stamps what it fed (stamps).
  // The sinks, the copy and the stamps hold only for the messages prepare saw: a run whose
  // prepare did not reach this Element (one off the clock; one after an earlier prepare failed)
  // may follow a message into setVm, or a reader's deletion. So each is used only while the
  // context's topology (bumped by any message or Element made or deleted) is the one of the
  // last prepare.
  std::vector<SweepSink*> sinks;
  std::atomic<std::uint64_t> stamps{0};
  const Context* context = nullptr;
  std::uint64_t topology = 0;
  bool current() const { return context->topology() == topology; }
  std::uint64_t sweepStamp(unsigned t) const override {
    return t < fired.size() && current() ? fired[t].fedStamp : 0;
  }
  std::atomic<bool> vmWritten{false};
  const void* memberCopy(std::ptrdiff_t offset) const override {
    return writeVm && offset == vmOffset() && vmWritten.load(std::memory_order_relaxed) && current()
               ? vm.data()
               : nullptr;
  }
  // (A function, not a static data member: libraries loaded beside libantler may hold a copy of
  // this file's code, and two definitions of one global are an ODR violation to the sanitizer.)
  static std::ptrdiff_t vmOffset() { return offsetof(IntFire, Vm_); }

  // The neurons' thresh and decay (1 - dt / tau, the decay of a step without a spike: the same
  // expression as before, so the same bits), as the sweep reads them: `thresh` and `decay` when
  // every neuron of the node has the same (bit for bit), else the arrays (one entry per neuron,
  // kept either way). Loaded from the neurons by prepare when not valid: the first run, after a
  // Shell command wrote to the neurons (calledOutsideRun), when dt changed. A setter (a message
  // during a run, or a Shell set) writes its neuron's entries too, and where it makes them
  // differ from the shared values the sweep reads the arrays from the next step on (several
  // threads may store `shared` at once: they store the same).
  bool paramsValid = false;
  // Per clock thread, the neurons (indices in its slice) that fired in its last sweep of the
  // run, so that its next sweep of the same slice clears their spike flags up front and, when no
  // neuron has events aside (anyFar false), tests no flag a neuron and empties the step sums
  // after it in wide stores (the sweep's common path: the hand loop's instructions and the Vm
  // copy's store). Invalid between runs (prepare): the first sweep of a run tests every neuron's
  // flags, and so does a sweep of another slice.
  std::vector<Fired> fired;
  // False only if no neuron has events aside: found by a scan at prepare when it was true (at
  // first), set by any event put aside (putAside, on any thread: they store the same).
  mutable std::atomic<bool> anyFar{true};
  double paramsDt = 0.0;  // the dt the decays were computed for
  std::atomic<bool> shared{true};
  double thresh = 0.0, decay = 1.0;
  std::vector<double> threshs, decays;

  explicit Ring(const DataElement* e)
      : begin(e->localBegin()), n(e->numLocal()), context(&e->context()) {}
  void want(std::uint64_t s) {
    std::uint64_t w = wanted.load(std::memory_order_relaxed);
    while (w < s && !wanted.compare_exchange_weak(w, s, std::memory_order_relaxed)) {
    }
  }
  void setDt(double d) {
    dt = d;
    invDt = 1.0 / d;
  }
  void setLast(std::uint64_t s) { last.store(s, std::memory_order_relaxed); }
  /// The calling clock thread's Fired during a run, else nullptr.
  Fired* firedOf() {
    if (!PostOffice::inRun()) return nullptr;
    const auto t = static_cast<std::size_t>(PostOffice::thread());
    return t < fired.size() ? &fired[t] : nullptr;
  }
  /// Empty rows for events up to `s` steps ahead, and every sum empty.
  void reset(std::size_t s, unsigned threads) {
    slots = static_cast<std::uint32_t>(s);
    resetRows(s, threads);
    sums.assign(n, kNoEvents);
  }
};

IntFire::Ring* IntFire::ring_of(const DataElement* e) {
  return static_cast<Ring*>(e->state());  // only IntFire sets the state of an IntFire Element
}

IntFire::Cold* IntFire::makeCold() {
  // From the pool: every neuron's block sits in a few huge pages, not scattered over the heap.
  static_assert(sizeof(Cold) % 64 == 0 && alignof(Cold) == 64);
  return new (SmallBlockPool::instance().allocate(sizeof(Cold))) Cold();
}

void IntFire::freeCold(Cold* c) {
  if (!c) return;
  c->~Cold();
  SmallBlockPool::instance().deallocate(c, sizeof(Cold));
}

IntFire::IntFire(const IntFire& o) {
  *this = o;
}

IntFire& IntFire::operator=(const IntFire& o) {
  // The events in the Element's queues stay there; the object's own (its side list) come along.
  if (this != &o) {
    *cold() = *o.cold();
    Vm_ = o.Vm_;
    tagged_ = reinterpret_cast<std::uintptr_t>(cold()) | (o.tagged_ & kTags);
  }
  return *this;
}

inline bool IntFire::placeIn(Ring& r, unsigned t, Index col, std::uint64_t last, double time,
                             double weight, unsigned count) {
  if (!(r.dt > 0)) return false;
  const std::uint64_t due = detail::due_step(time, r.dt, r.invDt, last, last + 1 + kMaxSlots);
  const std::uint64_t ahead = due - last - 1;
  if (ahead >= r.slots) {
    if (ahead < kMaxSlots) r.want(ahead + 1);  // the rows grow before the next run
    return false;
  }
  if (due == r.last.load(std::memory_order_relaxed)) {
    // The step being processed (an event aside that falls due in it, placed by its neuron's
    // thread after the queues were added up): straight into its sum.
    (void)count;  // (the count matters to the queues' introspection only: numPending)
    r.sums[col] += weight;
    return true;
  }
  if (t == ~0u)
    r.add(due, col, weight, count);
  else
    r.addOn(t, due, col, weight, count);
  return true;
}

bool IntFire::placeIn(Ring& r, Index col, std::uint64_t last, double time, double weight,
                      unsigned count) {
  return placeIn(r, ~0u, col, last, time, weight, count);
}

void IntFire::place(Ring* r, Index col, std::uint64_t last, double time, double weight,
                    unsigned count) {
  if (!r || !placeIn(*r, col, last, time, weight, count)) putAside(r, time, weight, count);
}

void IntFire::putAside(const Ring* r, double time, double weight, unsigned count) {
  // It may fit the rows once the last processed step is within `slots` steps of its step
  // (never, for NaN or +infinity; at the next process if there are no queues yet).
  std::uint64_t at = 0;
  if (r && r->dt > 0) {
    const double s = std::floor(time / r->dt) - static_cast<double>(r->slots) - 2.0;
    at = std::isnan(s) || s >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max()
         : s > 0                      ? static_cast<std::uint64_t>(s)
                                      : 0;
  }
  if (r) r->anyFar.store(true, std::memory_order_relaxed);
  Far& far = cold()->far;
  far.next = far.events.empty() ? at : std::min(far.next, at);
  far.events.push_back({time, weight, count});
  setFlag(kHasFar, true);
}

void IntFire::placeAside(Ring& r, Index col, std::uint64_t last) {
  std::vector<Event> aside;
  aside.swap(cold()->far.events);
  setFlag(kHasFar, false);
  for (const Event& ev : aside) place(&r, col, last, ev.time, ev.weight, ev.count);
}

void IntFire::addEvent(const DataElement* e, Index d, double time, double weight) {
  Ring* r = ring_of(e);
  if (r && placeIn(*r, d - r->begin, r->last.load(std::memory_order_relaxed), time, weight, 1))
      [[likely]]
    return;
  reinterpret_cast<IntFire*>(e->localData(d))->putAside(r, time, weight, 1);
}

template <class Syn>
void IntFire::addEvents(const DataElement* e, const Index* d, const Syn* syn, std::size_t n,
                        double time) {
  // addEvent for each, in order, with what it looks up per event looked up once: the queues, the
  // last step, the thread's queue (the arithmetic, time + delay, is addSpike's).
  Ring* r = ring_of(e);
  if (!r || !(r->dt > 0)) {
    for (std::size_t i = 0; i < n; ++i) addEvent(e, d[i], time + syn[i].delay(), syn[i].weight());
    return;
  }
  const unsigned t = r->queueThread();
  const std::uint64_t last = r->last.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < n; ++i) {
    const double at = time + syn[i].delay();
    if (!placeIn(*r, t, d[i] - r->begin, last, at, syn[i].weight(), 1)) [[unlikely]]
      reinterpret_cast<IntFire*>(e->localData(d[i]))->putAside(r, at, syn[i].weight(), 1);
  }
}

template void IntFire::addEvents(const DataElement*, const Index*, const Synapse*, std::size_t,
                                 double);
template void IntFire::addEvents(const DataElement*, const Index*, const CompactSynapse*,
                                 std::size_t, double);

void IntFire::activation(const Eref& e, double v) {
  // With the events of the next step the neuron will process. Without queues yet, aside until
  // the first step.
  const auto* de = static_cast<const DataElement*>(e.element());
  Ring* r = ring_of(de);
  if (r && r->dt > 0) {
    r->add(r->last.load(std::memory_order_relaxed) + 1, e.dataIndex() - r->begin, v, 1);
    return;
  }
  putAside(r, 0.0, v, 1);
}

void IntFire::process(const Eref& e, ProcPtr p) {
  processBlock(static_cast<const DataElement*>(e.element()), e.dataIndex(), this, 1, p);
}

void IntFire::processBlock(const DataElement* e, Index lo, IntFire* objs, Index n, ProcPtr p) {
  Ring* r = ring_of(e);
  if (!r || r->dt != p->dt) [[unlikely]]
    throw StateError("IntFire " + e->path() + ": processed with dt " + format_double(p->dt) +
                     (r ? " but its event queues count steps of " + format_double(r->dt)
                        : std::string(" before the clock prepared its event queues")) +
                     " (schedule an IntFire Element on one tick, and run it through the clock)");
  // The sweep's variants, chosen once a slice: what it reads (Rows), whether the neurons share
  // thresh and decay (kSharedParams), whether it writes the Vm copy (kCopyVm), whether it tests
  // the neurons' flags (kNoFlagTest: only where it reads its own queues alone).
  using Sweep = void (*)(const DataElement*, Ring*, Index, IntFire*, Index, ProcPtr, Fired*);
  static constexpr Sweep kSweeps[3][8] = {
      {&processRows<Rows::own, 0>, &processRows<Rows::own, 1>, &processRows<Rows::own, 2>,
       &processRows<Rows::own, 3>, &processRows<Rows::own, 4>, &processRows<Rows::own, 5>,
       &processRows<Rows::own, 6>, &processRows<Rows::own, 7>},
      {&processRows<Rows::both, 0>, &processRows<Rows::both, 1>, &processRows<Rows::both, 2>,
       &processRows<Rows::both, 3>, &processRows<Rows::both, 0>, &processRows<Rows::both, 1>,
       &processRows<Rows::both, 2>, &processRows<Rows::both, 3>},
      {&processRows<Rows::feed, 0>, &processRows<Rows::feed, 1>, &processRows<Rows::feed, 2>,
       &processRows<Rows::feed, 3>, &processRows<Rows::feed, 0>, &processRows<Rows::feed, 1>,
       &processRows<Rows::feed, 2>, &processRows<Rows::feed, 3>}};
  const Rows rows = !r->feed ? Rows::own : r->onlyFeed ? Rows::feed : Rows::both;
  unsigned flags = (r->shared.load(std::memory_order_relaxed) ? kSharedParams : 0u) |
                   (r->writeVm || !r->sinks.empty() ? kCopyVm : 0u);
  Fired* const fired = r->firedOf();
  if (fired && fired->valid && fired->lo == lo && fired->n == n &&
      !r->anyFar.load(std::memory_order_relaxed))
    flags |= kNoFlagTest;
  kSweeps[static_cast<unsigned>(rows)][flags](e, r, lo, objs, n, p, fired);
}

template <IntFire::Rows kRows, unsigned kFlags>
void IntFire::processRows(const DataElement* e, Ring* r, Index lo, IntFire* objs, Index n,
                          ProcPtr p, Fired* fired) {
  const long long k = std::llround(p->currTime / p->dt);
  const std::uint64_t step = k > 1 ? static_cast<std::uint64_t>(k) : 1;
  r->setLast(step);  // for the events delivered after this phase (same values on every thread)
  const Index first = lo - r->begin;  // this slice's columns: first .. first + n - 1
  double* sums = r->sums.data();
  if constexpr (kRows != Rows::feed) {
    // This step's events of this slice, queue by queue, each in the order it was filled: a
    // neuron's weights are summed in the order they arrived (see the header comment).
    r->addUp(step, first, n, sums);
  }
  const double slack = detail::step_slack(p->dt);
  double* const sum = sums + first;  // this slice's (indexed like objs: fewer instructions)
  const double* threshs = r->threshs.data() + first;
  const double* decays = r->decays.data() + first;
  const double sharedThresh = r->thresh, sharedDecay = r->decay;  // (in registers)
  constexpr bool kShared = kFlags & kSharedParams, kCopy = kFlags & kCopyVm;
  constexpr bool kTest = !(kFlags & kNoFlagTest);
  if (fired) {
    // The flags of the neurons this thread's last sweep of this slice fired: cleared here, or
    // (a sweep that tests the flags) as each neuron comes.
    if constexpr (!kTest)
      for (Index i : fired->at) objs[i].tagged_ &= ~kSpiked;
    fired->at.clear();
  }
  // Vm written out (kCopy): to the copy (Ring::vm) where the Ring keeps one, and to the sinks
  // that take this sweep's values (Ring::sinks), a chunk at a time, from the copy or a buffer.
  double* const vm = kCopy && r->writeVm ? r->vm.data() + first : nullptr;
  unsigned feeds = 0;
  const unsigned t = static_cast<unsigned>(PostOffice::thread());
  if (fired) {
    fired->fedStamp = 0;  // (Vm changes from here)
    if constexpr (kCopy) {
      fired->feeding.clear();
      if (r->current())
        for (SweepSink* k : r->sinks)
          if (k->sweepBegin(t, lo, lo + n)) fired->feeding.push_back(k);
      feeds = static_cast<unsigned>(fired->feeding.size());
    }
  } else if constexpr (kCopy) {
    for (Fired& f : r->fired) f.fedStamp = 0;
  }
  double* fed = nullptr;
  if constexpr (kRows != Rows::own) {
    // The handlers' activations of this step (they ran it on an earlier tick with the same step).
    fed = SimpleSynHandler::feedActivations(r->feed) + first;
  }
  // The sweep runs in chunks. A neuron above threshold fires unless it is refractory, which only
  // its cold block tells (lastSpike): such neurons (those in their refractory period that input
  // pushed over threshold, ~1 in 200 here) are set aside with their cold block asked for, and
  // settled, in order, at the end of their chunk, so that those cache misses overlap instead of
  // stalling the sweep one by one (at 1e6 neurons they were a quarter of its time). Neurons fire
  // only there, in index order, as before.
  constexpr Index kChunk = 512;
  Index above[kChunk];
  double chunkVm[kCopy ? kChunk : 1];
  for (Index c0 = 0; c0 < n; c0 += kChunk) {
    const Index c1 = std::min(n, c0 + kChunk);
    double* const out = kCopy && vm ? vm + c0 : chunkVm;  // this chunk's Vm written out
    unsigned na = 0;
    for (Index i = c0; i < c1; ++i) {
      IntFire& x = objs[i];
      const Index col = first + i;
      const double thresh = kShared ? sharedThresh : threshs[i];
      const double decay = kShared ? sharedDecay : decays[i];
      double v;
      if constexpr (kRows != Rows::own) {
        // What the handler's activation message would have added, where it would have: after the
        // events already in this step's sum, before the side list's (a handler that would send
        // nothing left -0.0, which adds nothing). With nothing else, the sum would have been
        // -0.0 + the activation, which Vm takes directly.
        if constexpr (kRows == Rows::feed) {
          if (x.tagged_ & kSpiked) [[unlikely]]
            x.tagged_ &= ~kSpiked;  // (fire sets it again)
          v = x.Vm_ + fed[i];
          fed[i] = SimpleSynHandler::kNoEvents;
        } else {
          sum[i] += fed[i];
          fed[i] = SimpleSynHandler::kNoEvents;
        }
      }
      if constexpr (kRows != Rows::feed) {
        // This step's weights, summed as they arrived (see the header comment); a step without
        // events adds -0.0, which leaves Vm untouched (Ring::sums). One test of the flags a
        // neuron for the rare cases: it fired in the last step, or it has events aside.
        if (kTest && (x.tagged_ & (kSpiked | kHasFar))) [[unlikely]] {
          x.tagged_ &= ~kSpiked;  // (fire sets it again)
          // Events aside that fall due now join this step's sum before it is read; those whose
          // step is further ahead go to their step's queue, before this step's deliveries could.
          if (x.hasFar() && step - 1 >= x.cold()->far.next) x.placeAside(*r, col, step - 1);
          v = x.Vm_ + sum[i];
          sum[i] = Ring::kNoEvents;
          if (x.hasFar() && step >= x.cold()->far.next)
            x.placeAside(*r, col, step);  // (to the queues and sums: Vm is not read)
        } else {
          v = x.Vm_ + sum[i];
          // (Without the flags' test nothing else writes the sums in the sweep: all are emptied
          // after it, in wide stores, not one store a neuron.)
          if constexpr (kTest) sum[i] = Ring::kNoEvents;
        }
      }
      if (v > thresh) [[unlikely]] {
        x.Vm_ = v;
        prefetch(x.cold());
        above[na++] = i;
        continue;
      }
      v *= decay;  // decay == 1.0 - p->dt / tau
      x.Vm_ = v;
      if constexpr (kCopy) out[i - c0] = v;
    }
    for (unsigned k = 0; k < na; ++k) {
      const Index i = above[k];
      IntFire& x = objs[i];
      const double thresh = kShared ? sharedThresh : threshs[i];
      const double decay = kShared ? sharedDecay : decays[i];
      const double v = x.fireOrDecay(e, lo, objs, p, slack, thresh, decay, x.Vm_, fired);
      x.Vm_ = v;
      if constexpr (kCopy) out[i - c0] = v;
    }
    if constexpr (kCopy)
      for (unsigned k = 0; k < feeds; ++k) fired->feeding[k]->sweepBlock(t, out, c1 - c0, lo + c0);
  }
  if constexpr (!kTest) std::fill(sum, sum + n, Ring::kNoEvents);
  if (fired) {
    fired->lo = lo;
    fired->n = n;
    fired->valid = true;
  }
  if (kCopy && vm) r->vmWritten.store(true, std::memory_order_relaxed);  // read after the barrier
  if (feeds) {
    const std::uint64_t stamp = r->stamps.fetch_add(1, std::memory_order_relaxed) + 1;
    for (SweepSink* k : fired->feeding) k->sweepEnd(t, stamp);
    fired->fedStamp = stamp;
  }
}

[[gnu::always_inline]] inline double IntFire::fireOrDecay(const DataElement* e, Index lo,
                                                          const IntFire* objs, ProcPtr p,
                                                          double slack, double thresh, double decay,
                                                          double v, Fired* fired) {
  // v > thresh first: lastSpike and refractoryPeriod are behind the pointer.
  if (v > thresh && p->currTime - cold()->lastSpike - slack > cold()->refractoryPeriod)
      [[unlikely]] {
    fire(e, lo, objs, p, fired);  // (sets Vm to vReset)
    return Vm_;
  }
  return v * decay;  // decay == 1.0 - p->dt / tau
}

void IntFire::fire(const DataElement* e, Index lo, const IntFire* objs, ProcPtr p, Fired* fired) {
  // (Its index found here, not carried through the sweep: the common path keeps one counter.)
  const auto i = static_cast<Index>(this - objs);
  if (fired) fired->at.push_back(i);
  spikeOut.send(Eref(e, lo + i), p->currTime);
  Vm_ = cold()->vReset;
  cold()->lastSpike = p->currTime;
  setFlag(kSpiked, true);
}

unsigned IntFire::numPending(const Eref& e) const {
  unsigned n = 0;
  for (const Event& ev : cold()->far.events) n += ev.count;
  Ring* r = ring_of(static_cast<const DataElement*>(e.element()));
  const Index d = e.dataIndex();
  if (r && d >= r->begin && d - r->begin < r->n) {
    const std::uint64_t last = r->last.load();
    n += r->pending(d - r->begin, last + 1, last + r->slots);
  }
  return n;
}

void IntFire::reinit(const Eref&, ProcPtr) {
  Vm_ = cold()->initVm;
  cold()->lastSpike = -std::numeric_limits<double>::infinity();
  cold()->far = Far{};
  setFlag(kSpiked | kHasFar, false);
}

bool IntFire::quiet(const Element* e) {
  for (const char* field : {"synapse", "compactSynapse"}) {
    const Element* syn = e->child(field);
    if (syn && !syn->msgIds().empty()) return false;
  }
  return true;
}

namespace {
// The Reduce messages that read e's Vm, if no message sets it (so that during a run only
// process changes Vm): the jobs the sweep can feed to `sinks`; true if any other reads it
// (IntFire::Ring::vm and sinks).
bool vm_readers(const DataElement* e, std::vector<SweepSink*>& sinks) {
  sinks.clear();
  bool other = false;
  for (std::uint32_t id : e->msgIds()) {
    const Msg* m = msg_context(*e).msgs().get(id);
    if (!m || m->dest() != e) continue;
    if (m->kind() == MsgKind::reduce) {
      const auto* rm = static_cast<const ReduceMsg*>(m);
      if (rm->getter()->name() != "Vm") continue;
      SweepSink* k = rm->job() ? rm->job()->sweepSink(typeid(double)) : nullptr;
      if (k)
        sinks.push_back(k);
      else
        other = true;
    } else if (m->destFinfo() && m->destFinfo()->name() == "setVm") {
      sinks.clear();
      return false;
    }
  }
  return other;
}
}  // namespace

void IntFire::prepare(const DataElement* e, const ProcInfo& p, bool reinit) {
  Ring* r = make_state<Ring>(e);
  // Until the run's first step writes it, a reduction reads the neurons themselves.
  r->vmWritten.store(false);
  r->writeVm = vm_readers(e, r->sinks);
  r->topology = e->context().topology();
  r->vm.resize(r->writeVm ? r->n : 0);
  const DataElement* feed = SimpleSynHandler::directFeed(e, p);
  const bool newFeed = feed != r->feed;
  r->feed = feed;
  prepareRing(e, p, reinit);
  if (!r->paramsValid || r->paramsDt != r->dt)
    loadParams(*r, reinterpret_cast<const IntFire*>(e->base()));
  r->fired.assign(std::max(1u, p.numThreads), Fired{});
  if (r->anyFar.load()) {
    const IntFire* objs = reinterpret_cast<const IntFire*>(e->base());
    r->anyFar.store(std::any_of(objs, objs + r->n, [](const IntFire& x) { return x.hasFar(); }));
  }
  if (!feed || reinit) {
    r->onlyFeed = false;  // (at reinit, the neurons' side lists go after this: see next run)
  } else if (newFeed || !r->onlyFeed) {
    const IntFire* objs = reinterpret_cast<const IntFire*>(e->base());
    bool empty = std::none_of(objs, objs + r->n, [](const IntFire& x) { return x.hasFar(); });
    const std::uint64_t last = r->last.load();
    r->onlyFeed = empty && r->empty(last + 1, last + r->slots);
  }
}

void IntFire::prepareRing(const DataElement* e, const ProcInfo& p, bool reinit) {
  Ring* r = ring_of(e);
  IntFire* objs = reinterpret_cast<IntFire*>(e->base());
  const Index n = r->n;
  // Rows for the longest synaptic delay, plus one (a spike sent in step s before a neuron ran
  // step s lands up to that many steps past its last step), and for what events asked for; at
  // most kMaxSlots, and beyond the delays the synapses need, at most kMaxRingEntries entries or
  // four per synapse of the node.
  auto rowsFor = [&](double dt, std::uint64_t asked) {
    std::uint64_t synapses = 0;
    std::vector<const EdgeArray<Synapse>*> arrays(n);
    std::vector<const EdgeArray<CompactSynapse>*> compact(n);
    for (Index i = 0; i < n; ++i) {
      arrays[i] = &objs[i].cold()->synapses;
      compact[i] = &objs[i].cold()->compactSynapses;
      synapses += arrays[i]->size() + compact[i]->size();
    }
    const double longest =
        std::max(longest_delay(e, arrays), longest_delay(e, compact, "compactSynapse"));
    const std::uint64_t need = detail::due_step(longest, dt, 0, kMaxSlots) + 1;
    const std::uint64_t cap =
        std::max<std::uint64_t>(1, std::max(kMaxRingEntries, 4 * synapses) / std::max<Index>(n, 1));
    return static_cast<std::size_t>(
        std::min<std::uint64_t>(kMaxSlots, std::max(need, std::min(asked, cap))));
  };
  const unsigned threads = std::max(1u, p.numThreads);
  if (reinit) {
    // The neurons' reinit drops their side lists.
    r->setDt(p.dt);
    r->wanted.store(0);
    r->reset(rowsFor(p.dt, 0), threads);
    r->setLast(0);
    return;
  }
  const std::uint64_t asked = r->wanted.exchange(0);
  if (!r->rows.empty()) {
    r->prepareQueues(threads, r->last.load());  // merged, a queue per thread of this run
    // (Empty unless an error stopped a run between a step's add-up and its sweep.)
    std::fill(r->sums.begin(), r->sums.end(), Ring::kNoEvents);
  }
  if (r->dt == p.dt && asked <= r->slots) return;  // the common case: nothing more to do
  // The step length changed (a first run without reinit, or setClock between runs without
  // reinit), or events asked for more rows. Every pending event goes to its neuron's side list,
  // in the order the neuron would add them (the side list first, then the queues by step), with
  // the time of its step under the old step length, and is placed again.
  // One side-list event per neuron and step: the step's weights summed in arrival order (as the
  // step would have summed them), so that placed again they add up to the same bits.
  const bool retime = r->dt != p.dt;
  const std::uint64_t last = r->last.load();
  const std::uint32_t slots = r->slots;
  if (r->dt > 0 && !r->rows.empty()) {
    std::vector<Slot> due(n);
    for (std::uint32_t j = 0; j < slots; ++j) {
      for (const Ring::Pending& ev : r->row(last + 1 + j)[0]) {  // merged: all in queue 0
        due[ev.col].sum += ev.weight;
        ++due[ev.col].count;  // (an event of count c is c entries: StepQueues::Pending)
      }
      for (Index c = 0; c < n; ++c)
        if (due[c].count) {
          objs[c].cold()->far.events.push_back(
              {static_cast<double>(last + 1 + j) * r->dt, due[c].sum, due[c].count});
          due[c] = Slot{};
        }
    }
  }
  for (Index c = 0; c < n; ++c) {
    IntFire& x = objs[c];
    if (!x.cold()->far.events.empty()) x.setFlag(kHasFar, true);
  }
  std::uint64_t now = last;
  if (retime) {
    const long long s = std::llround(p.currTime / p.dt);
    now = s > 0 ? static_cast<std::uint64_t>(s) : 0;
    r->setDt(p.dt);
  }
  r->reset(rowsFor(p.dt, std::max<std::uint64_t>(asked, retime ? 0 : slots)), threads);
  r->setLast(now);
  for (Index c = 0; c < n; ++c)
    if (objs[c].hasFar()) objs[c].placeAside(*r, c, now);
}

void IntFire::setTau(const Eref& e, double tau) {
  if (!(tau > 0) || !std::isfinite(tau))
    throw ValueError("IntFire.tau must be a positive finite number, got " + std::to_string(tau));
  cold()->tau = tau;
  storeParams(e);
}

void IntFire::setThresh(const Eref& e, double thresh) {
  cold()->thresh = thresh;
  storeParams(e);
}

namespace {
bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}
}  // namespace

void IntFire::loadParams(Ring& r, const IntFire* objs) {
  r.threshs.resize(r.n);
  r.decays.resize(r.n);
  bool shared = true;
  for (Index c = 0; c < r.n; ++c) {
    r.threshs[c] = objs[c].cold()->thresh;
    r.decays[c] = 1.0 - r.dt / objs[c].cold()->tau;
    shared = shared && same_bits(r.threshs[c], r.threshs[0]) && same_bits(r.decays[c], r.decays[0]);
  }
  r.thresh = r.n ? r.threshs[0] : 0.0;
  r.decay = r.n ? r.decays[0] : 1.0;
  r.shared.store(shared, std::memory_order_relaxed);
  r.paramsDt = r.dt;
  r.paramsValid = true;
}

void IntFire::storeParams(const Eref& e) const {
  Ring* r = ring_of(static_cast<const DataElement*>(e.element()));
  if (!r || !r->paramsValid) return;  // (loaded from the neurons before the next run)
  const Index d = e.dataIndex();
  if (d < r->begin || d - r->begin >= r->n) return;
  const Index c = d - r->begin;
  r->threshs[c] = cold()->thresh;
  r->decays[c] = 1.0 - r->paramsDt / cold()->tau;
  if (!same_bits(r->threshs[c], r->thresh) || !same_bits(r->decays[c], r->decay))
    r->shared.store(false, std::memory_order_relaxed);
}

const Cinfo* IntFire::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<IntFire>("IntFire", "leaky integrate-and-fire neuron with a synapse array")
          .value("Vm", &IntFire::Vm_, "membrane potential")
          .value("thresh", &IntFire::thresh, &IntFire::setThresh,
                 "firing threshold: fires when Vm > thresh")
          .value("tau", &IntFire::tau, &IntFire::setTau, "membrane time constant (> 0)")
          .value("refractoryPeriod", &IntFire::refractoryPeriod, &IntFire::setRefractoryPeriod,
                 "minimum time between two spikes")
          .value("vReset", &IntFire::vReset, &IntFire::setVReset,
                 "Vm after a spike (default -1e-7, MOOSE's reset)")
          .value("initVm", &IntFire::initVm, &IntFire::setInitVm, "Vm set by reinit (default 0)")
          .readOnly("lastSpike", &IntFire::lastSpike,
                    "time of the last spike (-inf before the first)")
          // A lambda, not a member pointer, so that a Reduce message's block read (SpikeStats
          // sums it every step) inlines it.
          .readOnlyFn<double>(
              "spiked", [](const IntFire& x) { return x.spiked(); },
              "1 if the neuron fired in the last step, else 0")
          .readOnlyFn<unsigned>(
              "numPending", [](const Eref& e, const IntFire& x) { return x.numPending(e); },
              "synaptic events not yet added to Vm")
          .fieldElement("synapse", &IntFire::synapses, "the synapses (entries: Synapse)",
                        "numSynapses")
          .fieldElement("compactSynapse", &IntFire::compactSynapses,
                        "synapses in 8 bytes each, weight and delay in single precision (entries: "
                        "CompactSynapse); they add to Vm as the synapse field's do",
                        "numCompactSynapses")
          .dest<&IntFire::activation>(
              "activation",
              "added to Vm in the next step (from a SimpleSynHandler's activationOut)")
          .src(IntFire::spikeOut)
          .proc<&IntFire::process, &IntFire::reinit>()
          .defaultTick(2)  // MOOSE's default tick for IntFire
          .build();
  SimpleSynHandler::acceptDirect(c, c->findFinfo("activation"), &IntFire::quiet);
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = IntFire::initCinfo();
}

}  // namespace antler

static_assert(sizeof(antler::IntFire) == 16, "IntFire is meant to fill a quarter of a cache line");

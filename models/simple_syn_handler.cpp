#include "models/simple_syn_handler.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>

#include "core/huge_pages.hpp"
#include "models/step_queues.hpp"
#include "models/step_time.hpp"
#include "msg/context.hpp"
#include "msg/msg.hpp"

namespace antler {

/// The Element's queues (see the header comment): detail::StepQueues for the node's handlers
/// (data index begin + i at column i), rows for the largest R_i; handler i takes an event only if
/// it is due within its own R_i steps (the rest wait in its heap), so which events wait where
/// depends on its synapses alone, not on the node's other handlers. Set up by prepare (one
/// thread, between runs); during a run each thread touches only its handlers' sums; `last` is
/// written by every thread that processes the Element, with the same value, and read after the
/// barrier that ends the process phase.
class SimpleSynHandler::Ring final : public ElementState, public detail::StepQueues {
 public:
  double dt = 0.0, invDt = 0.0;
  std::atomic<std::uint64_t> last{0};  // the last step processed
  Index begin = 0, n = 0;
  std::uint32_t longest = 0;        // the largest R_i
  std::uint32_t shortest = 0;       // the smallest R_i
  std::vector<std::uint32_t> own;   // R_i
  std::vector<std::uint8_t> aside;  // 1 if handler i's heap may hold events (a step need not
                                    // read the handler itself otherwise)
  // This step's sum per handler, from kNoEvents: the queues' weights in arrival order, then the
  // heap's due ones. Emptied by the handler's process as it sends or, on the direct path, as it
  // turns the sum into the activation the cell reads in a later round of the step.
  std::vector<double, HugeAllocator<double>> sums;
  const DataElement* fed = nullptr;  // the cell Element this run feeds directly, or nullptr
  // On the direct path: this step's activation per handler, what its message would carry (sum /
  // dt), or kNoEvents where it would send none (no events, or a sum of 0). The cell adds it,
  // without a test or a division, and empties it.
  std::vector<double, HugeAllocator<double>> act;

  explicit Ring(const DataElement* e) : begin(e->localBegin()), n(e->numLocal()) {}
  /// Queues an event for handler col on queue t if it is due within the handler's R_i steps
  /// after step `last`; false if not (then it waits in the heap).
  /// (An event within the shortest R_i fits every handler's queues: only the others read
  /// their handler's R_i, a read at random the common event skips.)
  bool place(unsigned t, Index col, std::uint64_t last, double time, double weight) {
    const std::uint64_t due = detail::due_step(time, dt, invDt, last, last + 1 + longest);
    const std::uint64_t ahead = due - last - 1;
    if (ahead >= shortest && ahead >= own[col]) [[unlikely]]
      return false;
    addOn(t, due, col, weight, 1);
    return true;
  }
};

SimpleSynHandler::Ring* SimpleSynHandler::ring_of(const DataElement* e) {
  return static_cast<Ring*>(e->state());  // only SimpleSynHandler sets a handler Element's state
}

void SimpleSynHandler::putAside(double time, double weight) {
  heap_.push_back({time, weight, seq_++});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

void SimpleSynHandler::addEvent(const DataElement* e, Index d, double time, double weight) {
  Ring* r = ring_of(e);
  if (r && r->dt > 0 &&
      r->place(r->queueThread(), d - r->begin, r->last.load(std::memory_order_relaxed), time,
               weight)) [[likely]]
    return;
  reinterpret_cast<SimpleSynHandler*>(e->localData(d))->putAside(time, weight);
  if (r && !r->aside.empty()) r->aside[d - r->begin] = 1;
}

template <class Syn>
void SimpleSynHandler::addEvents(const DataElement* e, const Index* d, const Syn* syn,
                                 std::size_t n, double time) {
  // addEvent for each, in order, with the queues, the last step and the thread's queue looked
  // up once (the arithmetic, time + delay, is addSpike's: a CompactSynapse's float values are
  // read as the doubles they are).
  Ring* r = ring_of(e);
  if (!r || !(r->dt > 0)) {
    for (std::size_t i = 0; i < n; ++i) addEvent(e, d[i], time + syn[i].delay(), syn[i].weight());
    return;
  }
  const unsigned t = r->queueThread();
  const std::uint64_t last = r->last.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < n; ++i) {
    const double at = time + syn[i].delay();
    if (!r->place(t, d[i] - r->begin, last, at, syn[i].weight())) [[unlikely]] {
      reinterpret_cast<SimpleSynHandler*>(e->localData(d[i]))->putAside(at, syn[i].weight());
      r->aside[d[i] - r->begin] = 1;
    }
  }
}

template void SimpleSynHandler::addEvents(const DataElement*, const Index*, const Synapse*,
                                          std::size_t, double);
template void SimpleSynHandler::addEvents(const DataElement*, const Index*, const CompactSynapse*,
                                          std::size_t, double);

void SimpleSynHandler::process(const Eref& e, ProcPtr p) {
  processBlock(static_cast<const DataElement*>(e.element()), e.dataIndex(), this, 1, p);
}

void SimpleSynHandler::processBlock(const DataElement* e, Index lo, SimpleSynHandler* objs, Index n,
                                    ProcPtr p) {
  Ring* r = ring_of(e);
  if (!r || r->dt != p->dt) [[unlikely]]
    throw StateError("SimpleSynHandler " + e->path() + ": processed with dt " +
                     format_double(p->dt) + " before the clock prepared its queues for it");
  const long long k = std::llround(p->currTime / p->dt);
  const std::uint64_t step = k > 0 ? static_cast<std::uint64_t>(k) : 0;
  r->last.store(step, std::memory_order_relaxed);
  const double due = p->currTime + detail::step_slack(p->dt);
  const Index first = lo - r->begin;
  r->addUp(step, first, n, r->sums.data());
  double* sum = r->sums.data() + first;
  std::uint8_t* aside = r->aside.data() + first;
  // The heap's events that fall due, in (time, arrival) order, after the queued ones.
  auto takeDue = [&](Index j) {
    SimpleSynHandler& h = objs[j];
    while (!h.heap_.empty() && h.heap_.front().time <= due) {
      sum[j] += h.heap_.front().weight;
      std::pop_heap(h.heap_.begin(), h.heap_.end(), later);
      h.heap_.pop_back();
    }
    if (h.heap_.empty()) {
      h.seq_ = 0;
      aside[j] = 0;
    }
  };
  constexpr auto kEmpty = std::bit_cast<std::uint64_t>(kNoEvents);
  if (r->fed) {
    // The direct path: the cell reads the activations later in this step. Only the handlers
    // with events have one to compute (the step's queues name them, a handler once per event:
    // the first turns its sum into the activation and empties it), and those with heap events.
    double* act = r->act.data() + first;
    auto activate = [&](Index j) {
      const double v = sum[j];
      if (std::bit_cast<std::uint64_t>(v) == kEmpty) return;  // done, or only -0.0 weights
      sum[j] = kNoEvents;
      act[j] = v != 0.0 ? v / p->dt : kNoEvents;
    };
    for (auto* a = aside; (a = static_cast<std::uint8_t*>(std::memchr(a, 1, aside + n - a))); ++a) {
      takeDue(static_cast<Index>(a - aside));
      activate(static_cast<Index>(a - aside));
    }
    for (const auto& q : r->row(step))
      for (const Ring::Pending& ev : q)
        if (ev.col - first < n) activate(ev.col - first);
    return;
  }
  for (Index j = 0; j < n; ++j) {
    if (aside[j]) [[unlikely]]
      takeDue(j);
    const double v = sum[j];
    if (std::bit_cast<std::uint64_t>(v) == kEmpty) continue;  // the common case: no events
    sum[j] = kNoEvents;
    if (v != 0.0) activationOut.send(Eref(e, lo + j), v / p->dt);
  }
}

namespace {
struct DirectCell {
  const Cinfo* cinfo;
  const Finfo* activation;
  bool (*quiet)(const Element*);
};
std::vector<DirectCell>& direct_cells() {
  static std::vector<DirectCell> cells;
  return cells;
}
}  // namespace

void SimpleSynHandler::acceptDirect(const Cinfo* cell, const Finfo* activation,
                                    bool (*quiet)(const Element*)) {
  direct_cells().push_back({cell, activation, quiet});
}

const DataElement* SimpleSynHandler::directTarget(const DataElement* h, const ProcInfo& p) {
  // See "The direct path" in the header: every condition, from the handler's side.
  if (h->cinfo() != initCinfo() || !p.schedule) return nullptr;
  const std::vector<Conn>& out = h->conns(activationOut.bindIndex());
  if (out.size() != 1 || out[0].msg->kind() != MsgKind::oneToOne) return nullptr;
  Element* c = out[0].msg->dest();
  const Finfo* act = out[0].msg->destFinfo();
  if (c->isField() || c->numData() != h->numData() || c->localBegin() != h->localBegin() ||
      c->numLocal() != h->numLocal())
    return nullptr;
  const auto& cells = direct_cells();
  const auto cell = std::find_if(cells.begin(), cells.end(), [&](const DirectCell& x) {
    return x.cinfo == c->cinfo() && x.activation == act;
  });
  if (cell == cells.end() || !cell->quiet(c)) return nullptr;
  unsigned into = 0;  // messages into the cell's activation: this one only
  for (std::uint32_t id : c->msgIds())
    if (const Msg* m = msg_context(*c).msgs().get(id); m && m->dest() == c && m->destFinfo() == act)
      ++into;
  if (into != 1) return nullptr;
  const int th = p.schedule->tickOf(h), tc = p.schedule->tickOf(c);
  if (th < 0 || tc <= th ||
      p.schedule->tickStep(static_cast<unsigned>(th)) !=
          p.schedule->tickStep(static_cast<unsigned>(tc)))
    return nullptr;
  return static_cast<const DataElement*>(c);
}

const DataElement* SimpleSynHandler::directFeed(const DataElement* cell, const ProcInfo& p) {
  for (std::uint32_t id : cell->msgIds()) {
    const Msg* m = msg_context(*cell).msgs().get(id);
    if (!m || m->dest() != cell || m->kind() != MsgKind::oneToOne ||
        m->src()->cinfo() != initCinfo())
      continue;
    const auto* h = static_cast<const DataElement*>(m->src());
    // The handler was prepared first (its tick is earlier) and chose this cell for the run.
    if (const Ring* r = ring_of(h); r && r->fed == cell && directTarget(h, p) == cell) return h;
  }
  return nullptr;
}

double* SimpleSynHandler::feedActivations(const DataElement* h) {
  return ring_of(h)->act.data();
}

void SimpleSynHandler::reinit(const Eref&, ProcPtr) {
  heap_.clear();
  seq_ = 0;
}

void SimpleSynHandler::prepare(const DataElement* e, const ProcInfo& p, bool reinit) {
  Ring* r = ring_of(e);
  const DataElement* fed = directTarget(e, p);
  const unsigned threads = std::max(1u, p.numThreads);
  if (r && !reinit && r->dt == p.dt) {  // the common case: at most the direct path changes
    r->fed = fed;
    // (A run ends after its step's cell round, which empties both: these only matter after a
    // run that an error stopped between the handler's round and the cell's.)
    r->sums.assign(r->n, kNoEvents);
    r->act.assign(fed ? r->n : 0, kNoEvents);
    r->prepareQueues(threads, r->last.load());
    return;
  }
  auto* objs = reinterpret_cast<SimpleSynHandler*>(e->base());
  if (!r) {
    r = make_state<Ring>(e);
  } else if (!reinit && r->dt > 0) {
    // The dt changed without reinit: each handler's queued events of a step go to its heap as
    // one event at the time of the step, their weights summed in arrival order (as the step
    // would have summed them), in step order; the queues are sized again for the new dt.
    const std::uint64_t last = r->last.load();
    r->prepareQueues(threads, last);  // merged: all in queue 0
    std::vector<double> due(r->n, 0.0);
    std::vector<std::uint8_t> any(r->n, 0);
    for (std::uint64_t s = last + 1; s <= last + r->longest; ++s) {
      for (const Ring::Pending& ev : r->row(s)[0]) {
        due[ev.col] += ev.weight;
        any[ev.col] = 1;
      }
      for (Index i = 0; i < r->n; ++i)
        if (any[i]) {
          objs[i].putAside(static_cast<double>(s) * r->dt, due[i]);
          due[i] = 0.0;
          any[i] = 0;
        }
    }
  }
  // Handler i's queues: its longest delay in steps, plus two (a spike may arrive in the step it
  // was sent in, before or after the handler ran), rounded up to a power of two: handlers whose
  // delays differ a little then take events as far ahead, and an event need not read its own
  // handler's R_i (Ring::place).
  r->dt = p.dt;
  r->invDt = 1.0 / p.dt;
  r->own.assign(r->n, 0);
  std::uint64_t longest = 1, shortest = kMaxSlots;
  std::vector<const EdgeArray<Synapse>*> arrays(r->n);
  std::vector<const EdgeArray<CompactSynapse>*> compact(r->n);
  for (Index i = 0; i < r->n; ++i) {
    arrays[i] = &objs[i].synapses_;
    compact[i] = &objs[i].compactSynapses_;
  }
  const std::vector<double> each = longest_delays(e, arrays);
  const std::vector<double> eachCompact = longest_delays(e, compact, "compactSynapse");
  for (Index i = 0; i < r->n; ++i) {
    const double delay = std::max(each[i], eachCompact[i]);
    const std::uint64_t R = std::min<std::uint64_t>(
        kMaxSlots, std::bit_ceil(detail::due_step(delay, p.dt, r->invDt, 0, kMaxSlots) + 2));
    r->own[i] = static_cast<std::uint32_t>(R);
    longest = std::max(longest, R);
    shortest = std::min(shortest, R);
  }
  r->longest = static_cast<std::uint32_t>(longest);
  r->shortest = static_cast<std::uint32_t>(std::min(shortest, longest));
  r->fed = fed;
  r->resetRows(longest, threads);
  r->sums.assign(r->n, kNoEvents);
  r->act.assign(fed ? r->n : 0, kNoEvents);
  // At reinit the heaps are about to be cleared (each handler's reinit runs next); otherwise the
  // ones that hold events (sent before the first run, or moved aside above) are marked.
  r->aside.assign(r->n, 0);
  if (!reinit)
    for (Index i = 0; i < r->n; ++i) r->aside[i] = objs[i].heap_.empty() ? 0 : 1;
  const long long s = std::llround(p.currTime / p.dt);
  r->last.store(reinit || s < 0 ? 0 : static_cast<std::uint64_t>(s));
}

unsigned SimpleSynHandler::numPending(const Eref& e) const {
  unsigned n = static_cast<unsigned>(heap_.size());
  Ring* r = ring_of(static_cast<const DataElement*>(e.element()));
  const Index d = e.dataIndex();
  if (r && d >= r->begin && d - r->begin < r->n) {
    const std::uint64_t last = r->last.load();
    n += r->pending(d - r->begin, last + 1, last + r->longest);
  }
  return n;
}

const Cinfo* SimpleSynHandler::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<SimpleSynHandler>(
          "SimpleSynHandler",
          "holds synapses and sends the weights of the spikes due each step to a cell's "
          "activation (MOOSE's synapse layout since 2014)")
          .fieldElement("synapse", &SimpleSynHandler::synapses_, "the synapses (entries: Synapse)",
                        "numSynapses")
          .fieldElement("compactSynapse", &SimpleSynHandler::compactSynapses_,
                        "synapses in 8 bytes, weight and delay in single precision (entries: "
                        "CompactSynapse); their weights are summed with the synapse field's",
                        "numCompactSynapses")
          .readOnlyFn<unsigned>(
              "numPending",
              [](const Eref& e, const SimpleSynHandler& h) { return h.numPending(e); },
              "events queued, not yet sent")
          .readOnlyFn<bool>(
              "directPath",
              [](const Eref& e, const SimpleSynHandler&) {
                const Ring* r = ring_of(static_cast<const DataElement*>(e.element()));
                return r && r->fed;
              },
              "true if the last run on this node fed the cell's activation directly, without "
              "messages (the result is the same either way)")
          .src(SimpleSynHandler::activationOut)
          .proc<&SimpleSynHandler::process, &SimpleSynHandler::reinit>()
          .defaultTick(1)  // MOOSE's default tick for SimpleSynHandler
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = SimpleSynHandler::initCinfo();
}

}  // namespace antler

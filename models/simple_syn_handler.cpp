#include "models/simple_syn_handler.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>

#include "core/huge_pages.hpp"
#include "core/prefetch.hpp"
#include "models/step_time.hpp"

namespace antler {

/// The Element's slots (see the header comment), in rows: row s % R holds step s's slot of every
/// handler of the node (data index begin + i at column i), R being the largest R_i, so that a
/// step walks one row in handler order. Handler i takes an event only if it is less than its own
/// R_i steps ahead (the rest of its column stays empty): which events wait in its heap depends on
/// its synapses alone, not on the node's other handlers. Set up by prepare (one thread, between
/// runs); during a run each thread touches only its handlers' columns; `last` is written by every
/// thread that processes the Element, with the same value, and read after the barrier that ends
/// the process phase.
class SimpleSynHandler::Ring final : public ElementState {
 public:
  struct Slot {
    double sum = 0.0;
    unsigned count = 0;
  };
  double dt = 0.0, invDt = 0.0;
  std::atomic<std::uint64_t> last{0};  // the last step processed
  Index begin = 0, n = 0;
  std::uint32_t rows = 0;           // R
  std::vector<std::uint32_t> own;   // R_i
  std::vector<std::uint8_t> aside;  // 1 if handler i's heap may hold events (a step need not
                                    // read the handler itself otherwise)
  std::vector<Slot, HugeAllocator<Slot>> slots;

  explicit Ring(const DataElement* e) : begin(e->localBegin()), n(e->numLocal()) {}
  std::uint32_t size(Index i) const { return own[i]; }
  Slot* row(std::uint64_t step) { return slots.data() + (step % rows) * n; }
  Slot& slot(Index i, std::uint64_t step) { return row(step)[i]; }
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
  if (r && r->dt > 0) [[likely]] {
    const Index i = d - r->begin;
    const std::uint32_t R = r->size(i);
    const std::uint64_t last = r->last.load(std::memory_order_relaxed);
    const std::uint64_t due = detail::due_step(time, r->dt, r->invDt, last, last + 1 + R);
    if (due - last - 1 < R) [[likely]] {
      Ring::Slot& s = r->slot(i, due);
      s.sum += weight;
      ++s.count;
      return;
    }
  }
  reinterpret_cast<SimpleSynHandler*>(e->localData(d))->putAside(time, weight);
  if (r && !r->aside.empty()) r->aside[d - r->begin] = 1;
}

void SimpleSynHandler::prefetchEvent(const DataElement* e, Index d, double time) {
  Ring* r = ring_of(e);
  if (!r || !(r->dt > 0)) return;
  const Index i = d - r->begin;
  const double ahead =
      std::ceil(time * r->invDt) - static_cast<double>(r->last.load(std::memory_order_relaxed) + 1);
  if (!(ahead >= 0 && ahead < static_cast<double>(r->size(i)))) return;
  prefetch(
      &r->slot(i, r->last.load(std::memory_order_relaxed) + 1 + static_cast<std::uint64_t>(ahead)));
}

void SimpleSynHandler::process(const Eref& e, ProcPtr p) {
  processBlock(static_cast<const DataElement*>(e.element()), e.dataIndex(), this, 1, p);
}

void SimpleSynHandler::processBlock(const DataElement* e, Index lo, SimpleSynHandler* objs, Index n,
                                    ProcPtr p) {
  Ring* r = ring_of(e);
  if (!r || r->dt != p->dt) [[unlikely]]
    throw StateError("SimpleSynHandler " + e->path() + ": processed with dt " +
                     format_double(p->dt) + " before the clock prepared its slots for it");
  const long long k = std::llround(p->currTime / p->dt);
  const std::uint64_t step = k > 0 ? static_cast<std::uint64_t>(k) : 0;
  r->last.store(step, std::memory_order_relaxed);
  const double slack = detail::step_slack(p->dt);
  Ring::Slot* row = r->row(step) + (lo - r->begin);
  std::uint8_t* aside = r->aside.data() + (lo - r->begin);
  for (Index j = 0; j < n; ++j) {
    Ring::Slot& s = row[j];
    if (!s.count && !aside[j]) continue;  // the common case: nothing due, nothing aside
    double sum = s.sum;
    unsigned count = s.count;
    s = Ring::Slot{};
    if (aside[j]) [[unlikely]] {
      SimpleSynHandler& h = objs[j];
      const double due = p->currTime + slack;
      while (!h.heap_.empty() && h.heap_.front().time <= due) {
        sum += h.heap_.front().weight;
        ++count;
        std::pop_heap(h.heap_.begin(), h.heap_.end(), later);
        h.heap_.pop_back();
      }
      if (h.heap_.empty()) {
        h.seq_ = 0;
        aside[j] = 0;
      }
    }
    if (count && sum != 0.0) activationOut.send(Eref(e, lo + j), sum / p->dt);
  }
}

void SimpleSynHandler::reinit(const Eref&, ProcPtr) {
  heap_.clear();
  seq_ = 0;
}

void SimpleSynHandler::prepare(const DataElement* e, const ProcInfo& p, bool reinit) {
  Ring* r = ring_of(e);
  if (r && !reinit && r->dt == p.dt) return;  // the common case: nothing to do
  auto* objs = reinterpret_cast<SimpleSynHandler*>(e->base());
  if (!r) {
    r = make_state<Ring>(e);
  } else if (!reinit && r->dt > 0) {
    // The dt changed without reinit: every waiting event goes to its handler's heap at the time
    // of its step, in step order, and the slots are sized again for the new dt.
    const std::uint64_t last = r->last.load();
    for (Index i = 0; i < r->n; ++i)
      for (std::uint64_t s = last + 1; s <= last + r->size(i); ++s) {
        const Ring::Slot& x = r->slot(i, s);
        if (x.count) objs[i].putAside(static_cast<double>(s) * r->dt, x.sum);
      }
  }
  // Handler i's slots: its longest delay in steps, plus two (a spike may arrive in the step it
  // was sent in, before or after the handler ran).
  r->dt = p.dt;
  r->invDt = 1.0 / p.dt;
  r->own.assign(r->n, 0);
  std::uint64_t rows = 1;
  for (Index i = 0; i < r->n; ++i) {
    double longest = 0.0;
    const EdgeArray<Synapse>& syn = objs[i].synapses_;
    for (std::size_t j = 0; j < syn.size(); ++j) longest = std::max(longest, syn[j].delay());
    const std::uint64_t R = std::min<std::uint64_t>(
        kMaxSlots, detail::due_step(longest, p.dt, r->invDt, 0, kMaxSlots) + 2);
    r->own[i] = static_cast<std::uint32_t>(R);
    rows = std::max(rows, R);
  }
  if (rows * std::max<std::uint64_t>(r->n, 1) > (std::uint64_t{1} << 32))
    throw ValueError("SimpleSynHandler " + e->path() + ": the delays need " + std::to_string(rows) +
                     " steps of slots for " + std::to_string(r->n) +
                     " handlers on this node (at most 2^32 slots)");
  r->rows = static_cast<std::uint32_t>(rows);
  r->slots.assign(rows * r->n, Ring::Slot{});
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
  if (r && r->rows && d >= r->begin && d - r->begin < r->n)
    for (std::uint32_t k = 0; k < r->rows; ++k) n += r->slot(d - r->begin, k).count;
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
          .readOnlyFn<unsigned>(
              "numPending",
              [](const Eref& e, const SimpleSynHandler& h) { return h.numPending(e); },
              "events queued, not yet sent")
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

#include "models/simple_syn_handler.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>

#include "core/huge_pages.hpp"
#include "core/prefetch.hpp"
#include "models/step_time.hpp"

namespace antler {

/// The Element's slots (see the header comment): handler i of the node (data index begin + i)
/// owns slots offset[i] .. offset[i + 1] - 1, the one of step s being offset[i] + s % R_i. Set up
/// by prepare (one thread, between runs); during a run each thread touches only its handlers'
/// slots; `last` is written by every thread that processes the Element, with the same value,
/// and read after the barrier that ends the process phase.
class SimpleSynHandler::Ring final : public ElementState {
 public:
  struct Slot {
    double sum = 0.0;
    unsigned count = 0;
  };
  double dt = 0.0, invDt = 0.0;
  std::atomic<std::uint64_t> last{0};  // the last step processed
  Index begin = 0, n = 0;
  std::vector<std::uint32_t> offset;  // n + 1
  std::vector<Slot, HugeAllocator<Slot>> slots;

  std::uint32_t size(Index i) const { return offset[i + 1] - offset[i]; }
  Slot& slot(Index i, std::uint64_t step) { return slots[offset[i] + step % size(i)]; }
};

SimpleSynHandler::Ring* SimpleSynHandler::ring_of(const DataElement* e) {
  return static_cast<Ring*>(e->state());  // only SimpleSynHandler sets a handler Element's state
}

void SimpleSynHandler::putAside(double time, double weight, unsigned count) {
  (void)count;
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
  reinterpret_cast<SimpleSynHandler*>(e->localData(d))->putAside(time, weight, 1);
}

void SimpleSynHandler::prefetchEvent(const DataElement* e, Index d, double time) {
  Ring* r = ring_of(e);
  if (!r || !(r->dt > 0)) return;
  const Index i = d - r->begin;
  const double ahead = std::ceil(time * r->invDt) -
                       static_cast<double>(r->last.load(std::memory_order_relaxed) + 1);
  if (!(ahead >= 0 && ahead < static_cast<double>(r->size(i)))) return;
  prefetch(&r->slot(i, r->last.load(std::memory_order_relaxed) + 1 +
                           static_cast<std::uint64_t>(ahead)));
}

void SimpleSynHandler::process(const Eref& e, ProcPtr p) {
  processBlock(static_cast<const DataElement*>(e.element()), e.dataIndex(), this, 1, p);
}

void SimpleSynHandler::processBlock(const DataElement* e, Index lo, SimpleSynHandler* objs,
                                    Index n, ProcPtr p) {
  Ring* r = ring_of(e);
  if (!r || r->dt != p->dt) [[unlikely]]
    throw StateError("SimpleSynHandler " + e->path() + ": processed with dt " +
                     format_double(p->dt) + " before the clock prepared its slots for it");
  const long long k = std::llround(p->currTime / p->dt);
  const std::uint64_t step = k > 0 ? static_cast<std::uint64_t>(k) : 0;
  r->last.store(step, std::memory_order_relaxed);
  const double slack = detail::step_slack(p->dt);
  for (Index j = 0; j < n; ++j) {
    SimpleSynHandler& h = objs[j];
    Ring::Slot& s = r->slot(lo + j - r->begin, step);
    double sum = s.sum;
    unsigned count = s.count;
    s = Ring::Slot{};
    if (!h.heap_.empty()) [[unlikely]] {
      const double due = p->currTime + slack;
      while (!h.heap_.empty() && h.heap_.front().time <= due) {
        sum += h.heap_.front().weight;
        ++count;
        std::pop_heap(h.heap_.begin(), h.heap_.end(), later);
        h.heap_.pop_back();
      }
      if (h.heap_.empty()) h.seq_ = 0;
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
    auto made = std::make_unique<Ring>();
    r = made.get();
    r->begin = e->localBegin();
    r->n = e->numLocal();
    e->setState(std::move(made));
  } else if (!reinit && r->dt > 0) {
    // The dt changed without reinit: every waiting event goes to its handler's heap at the time
    // of its step, in step order, and the slots are sized again for the new dt.
    const std::uint64_t last = r->last.load();
    for (Index i = 0; i < r->n; ++i)
      for (std::uint64_t s = last + 1; s <= last + r->size(i); ++s) {
        const Ring::Slot& x = r->slot(i, s);
        if (x.count) objs[i].putAside(static_cast<double>(s) * r->dt, x.sum, x.count);
      }
  }
  // Handler i's slots: its longest delay in steps, plus two (a spike may arrive in the step it
  // was sent in, before or after the handler ran).
  r->dt = p.dt;
  r->invDt = 1.0 / p.dt;
  r->offset.assign(r->n + 1, 0);
  std::uint64_t total = 0;
  for (Index i = 0; i < r->n; ++i) {
    double longest = 0.0;
    const EdgeArray<Synapse>& syn = objs[i].synapses_;
    for (std::size_t j = 0; j < syn.size(); ++j) longest = std::max(longest, syn[j].delay());
    const std::uint64_t R = std::min<std::uint64_t>(
        kMaxSlots, detail::due_step(longest, p.dt, r->invDt, 0, kMaxSlots) + 2);
    total += R;
    if (total > 0xFFFFFFFFu)
      throw ValueError("SimpleSynHandler " + e->path() + ": the delays need " +
                       std::to_string(total) + " slots on this node (at most 2^32)");
    r->offset[i + 1] = static_cast<std::uint32_t>(total);
  }
  r->slots.assign(total, Ring::Slot{});
  const long long s = std::llround(p.currTime / p.dt);
  r->last.store(reinit || s < 0 ? 0 : static_cast<std::uint64_t>(s));
}

unsigned SimpleSynHandler::numPending(const Eref& e) const {
  unsigned n = static_cast<unsigned>(heap_.size());
  Ring* r = ring_of(static_cast<const DataElement*>(e.element()));
  const Index d = e.dataIndex();
  if (r && d >= r->begin && d - r->begin < r->n)
    for (std::uint32_t k = r->offset[d - r->begin]; k < r->offset[d - r->begin + 1]; ++k)
      n += r->slots[k].count;
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

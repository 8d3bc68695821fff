#include "models/simple_syn_handler.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>

#include "core/fast_mod.hpp"
#include "core/huge_pages.hpp"
#include "core/prefetch.hpp"
#include "models/step_time.hpp"
#include "msg/context.hpp"
#include "msg/msg.hpp"

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
  double dt = 0.0, invDt = 0.0;
  std::atomic<std::uint64_t> last{0};  // the last step processed
  Index begin = 0, n = 0;
  std::uint32_t rows = 0;           // R (plus one on the direct path: see below)
  FastMod rowOf;                    // step % rows, without a division (setRows keeps it)
  std::uint32_t longest = 0;        // the largest R_i
  std::vector<std::uint32_t> own;   // R_i
  std::vector<std::uint8_t> aside;  // 1 if handler i's heap may hold events (a step need not
                                    // read the handler itself otherwise)
  std::vector<Slot, HugeAllocator<Slot>> slots;
  // The cell Element this run feeds directly, or nullptr. Then a step's row is cleared by the
  // cell, in a later round of the step, so the rows are one more than the longest R_i: events
  // that arrive in between (at most R_i steps ahead) never reach the row still to be read.
  const DataElement* fed = nullptr;

  explicit Ring(const DataElement* e) : begin(e->localBegin()), n(e->numLocal()) {}
  std::uint32_t size(Index i) const { return own[i]; }
  Slot* row(std::uint64_t step) { return slots.data() + rowOf(step) * n; }
  void setRows(std::uint32_t r) {
    rows = r;
    rowOf = FastMod(r ? r : 1);
  }
  Slot& slot(Index i, std::uint64_t step) { return row(step)[i]; }
  /// Lays the slots out in `r` rows, each waiting event staying at its step.
  void relayout(std::uint32_t r) {
    std::vector<Slot, HugeAllocator<Slot>> next(static_cast<std::size_t>(r) * n);
    const std::uint64_t l = last.load();
    for (Index i = 0; i < n; ++i)
      for (std::uint64_t s = l + 1; s <= l + own[i]; ++s) next[(s % r) * n + i] = slot(i, s);
    slots.swap(next);
    setRows(r);
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
  if (r && r->dt > 0) [[likely]] {
    const Index i = d - r->begin;
    const std::uint32_t R = r->size(i);
    const std::uint64_t last = r->last.load(std::memory_order_relaxed);
    const std::uint64_t due = detail::due_step(time, r->dt, r->invDt, last, last + 1 + R);
    if (due - last - 1 < R) [[likely]] {
      Slot& s = r->slot(i, due);
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
  const double due = p->currTime + detail::step_slack(p->dt);
  Slot* row = r->row(step) + (lo - r->begin);
  std::uint8_t* aside = r->aside.data() + (lo - r->begin);
  // The heap's events that fall due, in (time, arrival) order, after the slot's.
  auto takeDue = [&](Index j, double& sum, unsigned& count) {
    SimpleSynHandler& h = objs[j];
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
  };
  if (r->fed) {
    // The direct path: the cell reads the row later in this step; only the heaps are ours.
    for (auto* a = aside; (a = static_cast<std::uint8_t*>(std::memchr(a, 1, aside + n - a))); ++a) {
      Slot& s = row[a - aside];
      takeDue(static_cast<Index>(a - aside), s.sum, s.count);
    }
    return;
  }
  for (Index j = 0; j < n; ++j) {
    Slot& s = row[j];
    if (!s.count && !aside[j]) continue;  // the common case: nothing due, nothing aside
    double sum = s.sum;
    unsigned count = s.count;
    s = Slot{};
    if (aside[j]) [[unlikely]]
      takeDue(j, sum, count);
    if (count && sum != 0.0) activationOut.send(Eref(e, lo + j), sum / p->dt);
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

SimpleSynHandler::Slot* SimpleSynHandler::feedRow(const DataElement* h, std::uint64_t step) {
  return ring_of(h)->row(step);
}

void SimpleSynHandler::reinit(const Eref&, ProcPtr) {
  heap_.clear();
  seq_ = 0;
}

void SimpleSynHandler::prepare(const DataElement* e, const ProcInfo& p, bool reinit) {
  Ring* r = ring_of(e);
  const DataElement* fed = directTarget(e, p);
  if (r && !reinit && r->dt == p.dt) {  // the common case: at most the direct path changes
    r->fed = fed;
    const std::uint32_t rows = r->longest + (fed ? 1 : 0);
    if (rows != r->rows) r->relayout(rows);
    return;
  }
  auto* objs = reinterpret_cast<SimpleSynHandler*>(e->base());
  if (!r) {
    r = make_state<Ring>(e);
  } else if (!reinit && r->dt > 0) {
    // The dt changed without reinit: every waiting event goes to its handler's heap at the time
    // of its step, in step order, and the slots are sized again for the new dt.
    const std::uint64_t last = r->last.load();
    for (Index i = 0; i < r->n; ++i)
      for (std::uint64_t s = last + 1; s <= last + r->size(i); ++s) {
        const Slot& x = r->slot(i, s);
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
  if ((rows + (fed ? 1 : 0)) * std::max<std::uint64_t>(r->n, 1) > (std::uint64_t{1} << 32))
    throw ValueError("SimpleSynHandler " + e->path() + ": the delays need " + std::to_string(rows) +
                     " steps of slots for " + std::to_string(r->n) +
                     " handlers on this node (at most 2^32 slots)");
  r->longest = static_cast<std::uint32_t>(rows);
  r->fed = fed;
  if (fed) ++rows;
  r->setRows(static_cast<std::uint32_t>(rows));
  r->slots.assign(rows * r->n, Slot{});
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

#include "models/synapse.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "models/int_fire.hpp"
#include "models/simple_syn_handler.hpp"
#include "msg/context.hpp"

namespace antler {

namespace {
// The classes that hold synapses, looked up once: addSpike and its prefetch compare per event.
const Cinfo* const kIntFire = IntFire::initCinfo();
const Cinfo* const kHandler = SimpleSynHandler::initCinfo();
}  // namespace

void Synapse::addSpike(const Eref& e, double time) {
  // A Synapse is an entry of an IntFire's or a SimpleSynHandler's array field: e is
  // (FieldElement, parent index, entry), and the event goes to the parent object, which the
  // delivering thread owns with its entries.
  const Element* el = e.element();
  const DataElement* parent =
      el->isField() ? static_cast<const FieldElement*>(el)->parentData() : nullptr;
  if (parent && parent->cinfo() == kIntFire) [[likely]] {
    IntFire::addEvent(parent, e.dataIndex(), time + delay_, weight_);
  } else if (parent && (parent->cinfo() == kHandler || parent->cinfo()->isA("SimpleSynHandler"))) {
    SimpleSynHandler::addEvent(parent, e.dataIndex(), time + delay_, weight_);
  } else {
    throw ValueError("Synapse.addSpike: " + el->path() +
                     " is not the synapse field of an IntFire or a SimpleSynHandler (connect "
                     "spikes to <intfire>/synapse or <handler>/synapse)");
  }
}

template <class F>
std::vector<double> longest_delays(const DataElement* e,
                                   const std::vector<const EdgeArray<F>*>& arrays,
                                   const char* field) {
  std::vector<double> out(arrays.size(), 0.0);
  bool compacted = false;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const EdgeArray<F>& syn = *arrays[i];
    if (syn.compacted()) {
      compacted = true;
      continue;
    }
    for (std::size_t j = 0; j < syn.size(); ++j) out[i] = std::max(out[i], syn[j].delay());
  }
  const Element* fe = compacted ? e->child(field) : nullptr;
  if (!fe) return out;
  const Index lo = e->localBegin();
  for (std::uint32_t id : fe->msgIds()) {
    const Msg* m = msg_context(*fe).msgs().get(id);
    if (!m || m->dest() != fe || m->kind() != MsgKind::sparse) continue;
    const auto* sm = static_cast<const SparseMsg*>(m);
    const EdgeStoreBase* st = sm->store();
    if (!st) continue;
    // (Every live slot is an entry of some local array; those of arrays read above again.)
    sm->forEachSlot([&](Index d, std::uint64_t k) {
      if (!st->live(k)) return;
      double& o = out[d - lo];
      o = std::max(o, reinterpret_cast<const F*>(st->object(k))->delay());
    });
  }
  return out;
}

template std::vector<double> longest_delays(const DataElement*,
                                            const std::vector<const EdgeArray<Synapse>*>&,
                                            const char*);
template std::vector<double> longest_delays(const DataElement*,
                                            const std::vector<const EdgeArray<CompactSynapse>*>&,
                                            const char*);

template <class F>
double longest_delay(const DataElement* e, const std::vector<const EdgeArray<F>*>& arrays,
                     const char* field) {
  // An array that holds entries of its own is read through its addresses; one whose entries are
  // all slots of stores (the common case: filled by Sparse messages), compacted or not, is read
  // in its stores, in slot order (through the addresses a synapse is a cache miss: the first
  // reinit of the 1e5 network read 1e7 of them).
  double out = 0.0;
  bool stores = false;
  for (const EdgeArray<F>* a : arrays) {
    if (a->compacted() || a->allLent()) {
      stores = stores || a->size() > 0;
      continue;
    }
    for (std::size_t j = 0; j < a->size(); ++j) out = std::max(out, (*a)[j].delay());
  }
  const Element* fe = stores ? e->child(field) : nullptr;
  if (!fe) return out;
  for (std::uint32_t id : fe->msgIds()) {
    const Msg* m = msg_context(*fe).msgs().get(id);
    if (!m || m->dest() != fe || m->kind() != MsgKind::sparse) continue;
    const EdgeStoreBase* st = static_cast<const SparseMsg*>(m)->store();
    if (!st) continue;
    // Every live slot is an entry of some local array (those of arrays read above again): the
    // store in slot order, a word of live bits at a time, into four maxima held in registers
    // (one, through memory, made the pass a chain of dependent loads and stores: ~4 ns a slot).
    const std::size_t n = st->size(), stride = st->stride();
    const char* base = st->object(0);
    double top[4] = {out, out, out, out};
    for (std::size_t k = 0; k < n; k += 64) {
      const std::size_t w = std::min<std::size_t>(64, n - k);
      const char* at = base + k * stride;
      if (st->allLive(k, w)) {
        std::size_t j = 0;
        for (; j + 4 <= w; j += 4)
          for (std::size_t u = 0; u < 4; ++u) {
            const double d = reinterpret_cast<const F*>(at + (j + u) * stride)->delay();
            top[u] = d > top[u] ? d : top[u];
          }
        for (; j < w; ++j) {
          const double d = reinterpret_cast<const F*>(at + j * stride)->delay();
          top[0] = d > top[0] ? d : top[0];
        }
      } else {
        for (std::size_t j = 0; j < w; ++j) {
          if (!st->live(k + j)) continue;
          const double d = reinterpret_cast<const F*>(at + j * stride)->delay();
          top[0] = d > top[0] ? d : top[0];
        }
      }
    }
    out = std::max(std::max(top[0], top[1]), std::max(top[2], top[3]));
  }
  return out;
}

template double longest_delay(const DataElement*, const std::vector<const EdgeArray<Synapse>*>&,
                              const char*);
template double longest_delay(const DataElement*,
                              const std::vector<const EdgeArray<CompactSynapse>*>&, const char*);

void CompactSynapse::addSpike(const Eref& e, double time) {
  const Element* el = e.element();
  const DataElement* parent =
      el->isField() ? static_cast<const FieldElement*>(el)->parentData() : nullptr;
  const double at = time + double{delay_};
  if (parent && parent->cinfo() == kIntFire) [[likely]] {
    IntFire::addEvent(parent, e.dataIndex(), at, double{weight_});
  } else if (parent && (parent->cinfo() == kHandler || parent->cinfo()->isA("SimpleSynHandler"))) {
    SimpleSynHandler::addEvent(parent, e.dataIndex(), at, double{weight_});
  } else {
    throw ValueError("CompactSynapse.addSpike: " + el->path() +
                     " is not the compactSynapse field of an IntFire or a SimpleSynHandler "
                     "(connect spikes to <intfire>/compactSynapse or <handler>/compactSynapse)");
  }
}

namespace {
// v rounded to the nearest float; an error naming the field if v is finite and beyond a float.
// (The check is of the value alone: a setVec checks every value first and writes no undo log,
// which for 1e7 synapses would be as large as their objects: ClassBuilder::checkedValue.)
float to_float(const char* field, double v) {
  if (std::isfinite(v) && std::fabs(v) > double{std::numeric_limits<float>::max()}) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%.17g", v);
    throw ValueError("CompactSynapse." + std::string(field) + ": " + shown +
                     " is beyond a float's range (|v| <= 3.4028235e38: the class holds weight and "
                     "delay in single precision; use a Synapse for doubles)");
  }
  return static_cast<float>(v);
}
}  // namespace

void CompactSynapse::setWeight(double v) {
  weight_ = to_float("weight", v);
}
void CompactSynapse::setDelay(double v) {
  // Toward zero, not to the nearest: a delay of whole steps computed in doubles (k x dt, within
  // an ulp of k steps) must stay due in step k, and a float rounded up by up to 6e-8 x k steps
  // would pass the due step's slack (1e-6 of a step) from k ~ 17 on and fall a step late.
  float f = to_float("delay", v);
  if (std::fabs(double{f}) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  delay_ = f;
}

bool DestRun<&CompactSynapse::addSpike>::accepts(const Element* dest) {
  if (!dest->isField()) return false;
  const Cinfo* c = static_cast<const FieldElement*>(dest)->parentData()->cinfo();
  return c == kIntFire || c == kHandler;
}

void DestRun<&CompactSynapse::addSpike>::call(const Element* dest, const Index* data,
                                              const CompactSynapse* objs, std::size_t n,
                                              double time) {
  const DataElement* parent = static_cast<const FieldElement*>(dest)->parentData();
  if (parent->cinfo() == kIntFire)
    IntFire::addEvents(parent, data, objs, n, time);
  else
    SimpleSynHandler::addEvents(parent, data, objs, n, time);
}

const Cinfo* CompactSynapse::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<CompactSynapse>(
          "CompactSynapse",
          "one synapse of an IntFire or a SimpleSynHandler in 8 bytes: weight and delay in "
          "single precision (an entry of its compactSynapse field)")
          .checkedValue("weight", &CompactSynapse::weight, &CompactSynapse::setWeight,
                        "added to the parent's Vm per spike (rounded to a float)")
          .checkedValue("delay", &CompactSynapse::delay, &CompactSynapse::setDelay,
                        "time from spike to effect (rounded to a float, toward zero)")
          .dest<&CompactSynapse::addSpike>("addSpike", "a spike at this time arrives")
          .build();
  return c;
}

bool DestRun<&Synapse::addSpike>::accepts(const Element* dest) {
  if (!dest->isField()) return false;
  const Cinfo* c = static_cast<const FieldElement*>(dest)->parentData()->cinfo();
  return c == kIntFire || c == kHandler;
}

void DestRun<&Synapse::addSpike>::call(const Element* dest, const Index* data, const Synapse* objs,
                                       std::size_t n, double time) {
  const DataElement* parent = static_cast<const FieldElement*>(dest)->parentData();
  if (parent->cinfo() == kIntFire)
    IntFire::addEvents(parent, data, objs, n, time);
  else
    SimpleSynHandler::addEvents(parent, data, objs, n, time);
}

const Cinfo* Synapse::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Synapse>("Synapse",
                            "one synapse of an IntFire or a SimpleSynHandler (an entry of its "
                            "synapse field)")
          .value("weight", &Synapse::weight_, "added to the parent's Vm per spike")
          .value("delay", &Synapse::delay_, "time from spike to effect")
          .dest<&Synapse::addSpike>("addSpike", "a spike at this time arrives")
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = Synapse::initCinfo();
[[maybe_unused]] const Cinfo* registered_compact = CompactSynapse::initCinfo();
}  // namespace

}  // namespace antler

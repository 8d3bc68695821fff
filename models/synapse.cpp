#include "models/synapse.hpp"

#include <algorithm>

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

std::vector<double> longest_delays(const DataElement* e,
                                   const std::vector<const EdgeArray<Synapse>*>& arrays) {
  std::vector<double> out(arrays.size(), 0.0);
  bool compacted = false;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const EdgeArray<Synapse>& syn = *arrays[i];
    if (syn.compacted()) {
      compacted = true;
      continue;
    }
    for (std::size_t j = 0; j < syn.size(); ++j) out[i] = std::max(out[i], syn[j].delay());
  }
  const Element* fe = compacted ? e->child("synapse") : nullptr;
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
      o = std::max(o, reinterpret_cast<const Synapse*>(st->object(k))->delay());
    });
  }
  return out;
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
}

}  // namespace antler

#include "models/synapse.hpp"

#include "models/int_fire.hpp"

namespace antler {

namespace {
// IntFire's class, looked up once: addSpike and its prefetch compare against it per event.
const Cinfo* const kIntFire = IntFire::initCinfo();
}  // namespace

void Synapse::addSpike(const Eref& e, double time) {
  // A Synapse is an entry of an IntFire's array field: e is (FieldElement, parent index, entry),
  // and the event goes to the parent object, which the delivering thread owns with its entries.
  const Element* el = e.element();
  const DataElement* parent =
      el->isField() ? static_cast<const FieldElement*>(el)->parentData() : nullptr;
  if (!parent || parent->cinfo() != kIntFire)
    throw ValueError(
        "Synapse.addSpike: " + el->path() +
        " is not the synapse field of an IntFire (connect spikes to <intfire>/synapse)");
  IntFire::addEvent(parent, e.dataIndex(), time + delay_, weight_);
}

void DestPrefetch<&Synapse::addSpike>::fetch(const Eref& e, const Synapse& s, double time) {
  const DataElement* parent = static_cast<const FieldElement*>(e.element())->parentData();
  if (parent->cinfo() != kIntFire) return;
  IntFire::prefetchEvent(parent, e.dataIndex(), time + s.delay());
}

const Cinfo* Synapse::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Synapse>("Synapse", "one synapse of an IntFire (an entry of its synapse field)")
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

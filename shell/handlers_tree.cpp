// The Shell's handlers for the element tree: create and destroy (see shell/detail/handlers.hpp).
#include "core/detail/path.hpp"
#include "core/limits.hpp"
#include "msg/msg.hpp"
#include "reduce/reduce_msg.hpp"
#include "shell/clock.hpp"
#include "shell/detail/handlers.hpp"

namespace antler::shell_detail {

namespace {
/// A new Element goes on its class's default tick (MOOSE's default scheduling): process on the
/// tick, init (for classes that have it) on the tick before. useClock moves it.
void schedule_default(Simulation& sim, const DataElement* de) {
  const Cinfo* c = de->cinfo();
  const int t = c->defaultTick();
  if (t < 0 || t >= static_cast<int>(Clock::kNumTicks)) return;
  if (c->init() && t > 0)
    sim.clock().schedule(static_cast<unsigned>(t - 1), de->id(), Clock::Phase::init);
  if (c->proc()) sim.clock().schedule(static_cast<unsigned>(t), de->id());
}
}  // namespace

ObjId do_create(Simulation& sim, const std::string& cls, const std::string& path, Index n,
                bool global) {
  const Cinfo* c = Cinfo::require(cls, "create");
  auto [pe, name] =
      resolve_new_path(sim.elements(), path, n, "create");  // n >= 1, a name, an unambiguous parent
  if (pe->isField())
    throw PathError("create: cannot create '" + name + "' under the field element " + pe->path());
  if (pe->isSystem())
    throw PathError("create: cannot create '" + name + "' under antler's own element " +
                    pe->path());
  if (Element* old = pe->child(name))
    throw PathError("create: " + old->path() + " already exists (a " + old->cinfo()->name() + ")");
  if (n == 0xFFFFFFFFu)
    throw ValueError("create: " + std::to_string(n) + " entries for " + quoted(path) +
                     " (at most " + std::to_string(0xFFFFFFFEu) + " entries per element)");
  // This node's share (every entry, for a global element) must fit in its memory.
  const NodeLayout& nl = sim.layout();
  const Index share = global ? n
                             : block_range(n, nl.numNodes, nl.node).second -
                                   block_range(n, nl.numNodes, nl.node).first;
  check_allocation("create " + quoted(path) + " with " + std::to_string(n) + " entries (" +
                       std::to_string(share) + " on node " + std::to_string(nl.node) + ")",
                   c->name(), share, c->dinfo().footprint());
  auto& t = sim.elements();
  auto* de = static_cast<DataElement*>(
      t.insert(std::make_unique<DataElement>(sim, t.nextId(), name, c, pe->id(), n, global)));
  for (const FieldElementFinfoBase* ff : c->fieldElementFinfos())
    t.insert(std::make_unique<FieldElement>(t.nextId(), ff->name(), ff->fieldCinfo(), de, ff));
  schedule_default(sim, de);
  return ObjId(de->id());
}

void do_destroy(Simulation& sim, ObjId o) {
  Element* e = require_element(sim, o, "delete");
  if (o.id == Id::root()) throw ValueError("delete: cannot delete the root element '/'");
  if (e->isSystem())
    throw ValueError("delete: " + e->path() + " is antler's own " + e->cinfo()->name() +
                     " element; it cannot be deleted");
  if (e->isField())
    throw ValueError("delete: " + e->path() + " is a field element, part of its parent " +
                     sim.elements().path(e->parent()) + "; delete the parent instead");
  // Unschedule the whole subtree, drop every message touching it, then the elements.
  std::vector<Element*> stack{e};
  while (!stack.empty()) {
    Element* x = stack.back();
    stack.pop_back();
    sim.clock().dropElement(x->id());
    for (Id c : x->children())
      if (Element* k = sim.elements().get(c)) stack.push_back(k);
  }
  sim.msgs().eraseTouching(e);
  sim.elements().erase(o.id);
}

}  // namespace antler::shell_detail

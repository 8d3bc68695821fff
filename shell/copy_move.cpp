// Shell::copy and Shell::move: editing the element tree.
//
// copy is built from other Shell commands, issued by the driver: create, addMsg, pairFill,
// setStride, getVec/setVec of packed values and doSyncDataHandler. Each of them already runs on
// every node in lockstep, moves values to the nodes that own them and keeps the determinism
// promise, so copy inherits all three. It reads only what every node holds alike (the tree, the
// classes' fields, message metadata), never a class's private layout.
//
// The order of the steps matters:
//   1. every data element of the subtree is created (its field elements come with it);
//   2. the internal messages are re-made in message-id order. A Sparse fill into a field element
//      appends entries to each parent's array in fill order, so re-filling in the original order
//      gives every entry the field index it had (when the arrays were filled by messages, which is
//      how they are built; an array sized by hand before a fill is copied by position);
//   3. the value fields of the data elements (array sizes such as numSynapses included: after
//      step 2 they are either already right or are set to the original's size);
//   4. the value fields of the field elements (synapse weights, delays), parent by parent;
//   5. the field elements' fieldDimension is synced.
// A failure in any step deletes the new subtree (and with it every message made), so a failed
// copy leaves the model as it was.
//
// move is one command: every node checks the same replicated metadata and re-links the element.
// Messages, schedules and the current element refer to elements by Id or pointer, never by path,
// so they all survive a move untouched.
#include <algorithm>
#include <map>
#include <set>

#include "core/detail/path.hpp"
#include "core/element.hpp"
#include "core/error.hpp"
#include "msg/msg.hpp"
#include "reduce/reduce_msg.hpp"
#include "shell/shell.hpp"
#include "shell/simulation.hpp"

namespace antler {

namespace {

constexpr Index kMaxEntries = 0xFFFFFFFEu;  // create's limit

Element* require(const ElementTable& t, ObjId o, const char* op, const char* role) {
  Element* e = t.get(o.id);
  if (!e)
    throw PathError(std::string(op) + ": the " + role + " element (id " +
                    std::to_string(o.id.value) + ") does not exist");
  return e;
}

/// True if e is `root` or lies below it.
bool inside(const Element* e, const Element* root) {
  for (;;) {
    if (e == root) return true;
    if (e->id() == Id::root()) return false;
    e = e->context().elements().get(e->parent());
    if (!e) return false;
  }
}

/// The checks move makes, identically on every node (metadata every node holds).
void check_move(const Element* se, const Element* pe) {
  if (se->id() == Id::root()) throw ValueError("move: cannot move the root element '/'");
  if (se->isSystem())
    throw ValueError("move: " + se->path() + " is antler's own " + se->cinfo()->name() +
                     " element; it cannot be moved");
  if (se->isField())
    throw ValueError("move: " + se->path() + " is a field element, part of its parent " +
                     se->context().elements().path(se->parent()) + "; move the parent instead");
  if (pe->isField())
    throw PathError("move: cannot move " + se->path() + " under the field element " + pe->path() +
                    " (field elements have no children)");
  if (inside(pe, se))
    throw ValueError("move: cannot move " + se->path() + " into its own subtree (" + pe->path() +
                     " is inside it)");
  if (se->parent() == pe->id()) return;  // already there: nothing to do
  if (const Element* old = pe->child(se->name()))
    throw PathError("move: " + old->path() + " already exists (a " + old->cinfo()->name() +
                    "); cannot move " + se->path() + " there");
}

void do_move(Simulation& sim, Reader& r, Writer&) {
  const auto src = r.get<Id>();
  const auto parent = r.get<Id>();
  Element* se = require(sim.elements(), ObjId(src), "move", "source");
  Element* pe = require(sim.elements(), ObjId(parent), "move", "destination parent");
  check_move(se, pe);
  if (se->parent() == pe->id()) return;
  if (Element* old = sim.elements().get(se->parent())) old->removeChild(se->id());
  se->setParent(pe->id());
  pe->addChild(se->id());
}

[[maybe_unused]] const bool registered = [] {
  Shell::registerCommand("move", &do_move);
  return true;
}();

/// The settable value fields of a class, in declaration order.
std::vector<const ValueFinfoBase*> settable_fields(const Cinfo* c) {
  std::vector<const ValueFinfoBase*> out;
  for (const Finfo* f : c->finfos())
    if (f->kind() == FinfoKind::value) out.push_back(static_cast<const ValueFinfoBase*>(f));
  return out;
}

/// Copies every settable value field of `from` onto `to` (n copies of each value, copy after
/// copy). Works alike for data elements (one value per entry) and field elements (every field
/// entry of every parent, parent by parent).
void copy_values(Shell& s, const Element* from, const Element* to, Index n) {
  for (const ValueFinfoBase* vf : settable_fields(from->cinfo())) {
    ByteBuffer one = s.getVecPacked(ObjId(from->id()), vf->name(), vf->valueType(), true);
    // Count the values (a field element's total over all parents is not known on one node).
    std::uint64_t count = 0;
    Reader rd(one);
    while (rd.left() > 0) {
      vf->skip(rd);
      ++count;
    }
    if (count == 0) continue;
    ByteBuffer all;
    all.reserve(one.size() * n);
    for (Index k = 0; k < n; ++k) all.append(one.data(), one.size());
    s.setVecPacked(ObjId(to->id()), vf->name(), vf->valueType(), all, count * n, true);
  }
}

/// Pairs (source data index, destination data index) of a message, in row order.
struct Pairs {
  std::vector<Index> src, dest;
  void add(Index a, Index b) {
    src.push_back(a);
    dest.push_back(b);
  }
};

/// The pairs of one copy of a OneToAll, Diagonal or Sparse message (row by row, each row in the
/// order the message delivers it).
Pairs pairs_of(const Msg* m) {
  Pairs p;
  const Index ns = m->src()->numData(), nd = m->dest()->numData();
  switch (m->kind()) {
    case MsgKind::oneToAll:
      for (Index i = 0; i < ns; ++i)
        for (Index j = 0; j < nd; ++j) p.add(i, j);
      break;
    case MsgKind::diagonal: {
      const long stride = static_cast<const DiagonalMsg*>(m)->stride();
      for (Index i = 0; i < ns; ++i) {
        const long j = static_cast<long>(i) + stride;
        if (j >= 0 && j < static_cast<long>(nd)) p.add(i, static_cast<Index>(j));
      }
      break;
    }
    case MsgKind::sparse: {
      auto* sm = static_cast<const SparseMsg*>(m);
      for (Index i = 0; i < sm->numRows(); ++i) {
        auto [b, e] = sm->row(i);
        for (const Index* t = b; t != e; ++t) p.add(i, *t);
      }
      break;
    }
    default:
      break;
  }
  return p;
}

/// Why message m cannot be replicated n > 1 times, or "" if it can.
std::string unreplicable(const Msg* m) {
  const std::string what = std::string(to_string(m->kind())) + " message from " + m->src()->path() +
                           "." + m->srcFinfo()->name() + " to " + m->dest()->path() + "." +
                           m->destFinfo()->name();
  if (m->kind() == MsgKind::reduce && !static_cast<const ReduceMsg*>(m)->isSingle())
    return "the " + what + " reads every entry of its target, which cannot be split per copy";
  if ((m->kind() == MsgKind::oneToAll || m->kind() == MsgKind::diagonal) && m->dest()->isField())
    return "the " + what +
           " targets a field element, and its per-copy form (Sparse) would "
           "resize the field arrays";
  return "";
}

}  // namespace

namespace {
/// A destination parent must be a whole element: children belong to every entry of an array.
void check_whole_parent(const ElementTable& t, ObjId p, const char* op) {
  const Element* e = t.get(p.id);
  // (A field element as destination is refused by its own check, with its own message.)
  if (e && !e->isField() && (p.dataIndex != 0 || p.fieldIndex != 0) && e->numData() > 1)
    throw ValueError(std::string(op) + ": the destination '" + t.path(p) + "' names one entry of " +
                     e->path() + "; a new element is a child of a " +
                     "whole element (its children are shared by its " +
                     std::to_string(e->numData()) + " entries): use '" + e->path() + "'");
}
}  // namespace

ObjId Shell::copy(std::string_view src, std::string_view newParent, std::string_view name,
                  Index n) {
  return copy(resolve_path(sim_.elements(), absolute(src), "copy"),
              resolve_path(sim_.elements(), absolute(newParent), "copy"), name, n);
}

void Shell::move(std::string_view src, std::string_view newParent) {
  move(resolve_path(sim_.elements(), absolute(src), "move"),
       resolve_path(sim_.elements(), absolute(newParent), "move"));
}

void Shell::move(ObjId src, ObjId newParent) {
  checkIdle("move");
  const ElementTable& t = sim_.elements();
  check_whole_parent(t, newParent, "move");
  // Checked here too, so that the error reads as one (the same on every node).
  check_move(require(t, src, "move", "source"),
             require(t, newParent, "move", "destination parent"));
  ByteBuffer args;
  Writer(args).put<Id>(src.id).put<Id>(newParent.id);
  dispatchExtension("move", args);
}

namespace {

/// What a copy copies, found and checked before anything changes: the subtree (parents before
/// children) and the messages with both ends inside it, in id order (the order they were made
/// and filled).
struct CopyPlan {
  const Element* src = nullptr;
  const Element* parent = nullptr;
  std::string name;
  Index n = 1;
  std::vector<Element*> elems;
  std::vector<const Msg*> msgs;
};

/// copy's checks on the source, the destination parent, the name and n (the same on every node:
/// metadata every node holds).
void check_copy(const Element* se, const Element* pe, const std::string& name, Index n) {
  const ElementTable& t = se->context().elements();
  if (se->id() == Id::root()) throw ValueError("copy: cannot copy the root element '/'");
  if (se->isSystem())
    throw ValueError("copy: " + se->path() + " is antler's own " + se->cinfo()->name() +
                     " element; it cannot be copied");
  if (se->isField())
    throw ValueError("copy: " + se->path() + " is a field element, part of its parent " +
                     t.path(se->parent()) + "; copy the parent instead");
  if (pe->isField())
    throw PathError("copy: cannot copy " + se->path() + " under the field element " + pe->path() +
                    " (field elements have no children)");
  if (inside(pe, se))
    throw ValueError("copy: cannot copy " + se->path() + " into its own subtree (" + pe->path() +
                     " is inside it)");
  if (!valid_name(name))
    throw ValueError("copy: " + quoted(name) +
                     " is not a valid element name (letters, digits, '_', '-', '.'; not '.' or "
                     "'..')");
  if (const Element* old = pe->child(name))
    throw PathError("copy: " + old->path() + " already exists (a " + old->cinfo()->name() + ")");
  if (n == 0) throw ValueError("copy: n = 0 copies of " + se->path() + " (n must be at least 1)");
}

/// The plan of copying se under pe as `name`, n times; throws (changing nothing) if it cannot be.
CopyPlan plan_copy(Simulation& sim, Element* se, const Element* pe, std::string name, Index n) {
  check_copy(se, pe, name, n);
  const ElementTable& t = sim.elements();
  CopyPlan plan{se, pe, std::move(name), n, {}, {}};
  std::set<const Element*> inTree;
  std::vector<Element*> stack{se};
  while (!stack.empty()) {
    Element* e = stack.back();
    stack.pop_back();
    plan.elems.push_back(e);
    inTree.insert(e);
    const auto& kids = e->children();
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      if (Element* k = t.get(*it)) stack.push_back(k);
  }
  for (const Element* e : plan.elems)
    if (static_cast<std::uint64_t>(e->numData()) * n > kMaxEntries)
      throw ValueError("copy: n = " + std::to_string(n) + " copies of " + e->path() + " (" +
                       std::to_string(e->numData()) + " entries) would exceed " +
                       std::to_string(kMaxEntries) + " entries per element");
  std::set<std::uint32_t> ids;
  for (const Element* e : plan.elems)
    for (std::uint32_t id : e->msgIds()) {
      const Msg* m = sim.msgs().get(id);
      if (m && inTree.count(m->src()) && inTree.count(m->dest())) ids.insert(id);
    }
  for (std::uint32_t id : ids) plan.msgs.push_back(sim.msgs().get(id));
  if (n > 1)
    for (const Msg* m : plan.msgs)
      if (std::string why = unreplicable(m); !why.empty())
        throw MsgError("copy: cannot make n = " + std::to_string(n) + " copies of " + se->path() +
                       ": " + why + " (copy with n = 1, or connect the copies by hand)");
  return plan;
}

/// Makes the copy of every element of the plan (field elements come with their parents); the
/// map from original to copy is filled as they are made, the new root first.
void copy_elements(Shell& s, const CopyPlan& plan, std::map<const Element*, Element*>& made) {
  const ElementTable& t = plan.src->context().elements();
  for (const Element* e : plan.elems) {
    if (e->isField()) continue;  // made with its parent
    const Element* p = e == plan.src ? plan.parent : made.at(t.get(e->parent()));
    const std::string pp = p->path();
    const std::string path = (pp == "/" ? "" : pp) + "/" + (e == plan.src ? plan.name : e->name());
    const ObjId o = s.create(e->cinfo()->name(), path, e->numData() * plan.n, e->isGlobal());
    Element* c = t.get(o.id);
    made[e] = c;
    for (Id k : e->children())
      if (const Element* ke = t.get(k); ke && ke->isField()) made[ke] = c->child(ke->name());
  }
}

/// Connects the copies as the originals are connected, n times over (each copy to itself).
void copy_message(Shell& s, const Msg* m, const std::map<const Element*, Element*>& made, Index n) {
  const Element* os = m->src();
  const Element* od = m->dest();
  const Id cs = made.at(os)->id(), cd = made.at(od)->id();
  const Index ns = os->numData(), nd = od->numData();
  const std::string sf = m->srcFinfo()->name(), df = m->destFinfo()->name();
  switch (m->kind()) {
    case MsgKind::single: {
      auto* sm = static_cast<const SingleMsg*>(m);
      for (Index k = 0; k < n; ++k)
        s.addMsg("Single", ObjId(cs, k * ns + sm->from().data, sm->from().field), sf,
                 ObjId(cd, k * nd + sm->to().data, sm->to().field), df);
      return;
    }
    case MsgKind::reduce: {
      auto* rm = static_cast<const ReduceMsg*>(m);
      if (!rm->isSingle()) {
        s.addMsg("Reduce", ObjId(cs, rm->requester()), sf, ObjId(cd), df);  // n == 1 here
        return;
      }
      for (Index k = 0; k < n; ++k)
        s.addMsg("Single", ObjId(cs, k * ns + rm->requester()), sf,
                 ObjId(cd, k * nd + rm->singleTarget().data, rm->singleTarget().field), df);
      return;
    }
    case MsgKind::oneToOne:
      s.addMsg("OneToOne", ObjId(cs), sf, ObjId(cd), df);
      return;
    case MsgKind::oneToAll:
    case MsgKind::diagonal:
      if (n == 1) {
        const auto id = s.addMsg(to_string(m->kind()), ObjId(cs), sf, ObjId(cd), df);
        if (m->kind() == MsgKind::diagonal)
          s.setStride(id, static_cast<const DiagonalMsg*>(m)->stride());
        return;
      }
      [[fallthrough]];  // n > 1: the same connectivity per copy, as one Sparse message
    case MsgKind::sparse: {
      const Pairs one = pairs_of(m);
      Pairs all;
      all.src.reserve(one.src.size() * n);
      all.dest.reserve(one.dest.size() * n);
      for (Index k = 0; k < n; ++k)
        for (std::size_t q = 0; q < one.src.size(); ++q)
          all.add(k * ns + one.src[q], k * nd + one.dest[q]);
      s.pairFill(s.addMsg("Sparse", ObjId(cs), sf, ObjId(cd), df), all.src, all.dest);
      return;
    }
  }
}

}  // namespace

ObjId Shell::copy(ObjId src, ObjId newParent, std::string_view nameArg, Index n) {
  checkIdle("copy");
  const ElementTable& t = sim_.elements();
  check_whole_parent(t, newParent, "copy");
  Element* se = require(t, src, "copy", "source");
  const Element* pe = require(t, newParent, "copy", "destination parent");
  const CopyPlan plan =
      plan_copy(sim_, se, pe, nameArg.empty() ? se->name() : std::string(nameArg), n);

  // ---- nothing has changed so far; from here on, a failure deletes what was made ----
  std::map<const Element*, Element*> made;  // original -> copy
  try {
    copy_elements(*this, plan, made);
    for (const Msg* m : plan.msgs) copy_message(*this, m, made, n);
    for (bool fields : {false, true})  // data elements first: they size the field arrays
      for (const Element* e : plan.elems)
        if (e->isField() == fields) copy_values(*this, e, made.at(e), n);
    for (const Element* e : plan.elems)
      if (e->isField()) doSyncDataHandler(made.at(e)->id());
  } catch (...) {
    if (auto it = made.find(se); it != made.end()) {
      try {
        destroy(ObjId(it->second->id()));
      } catch (...) {
        // The original error says what went wrong; a failed clean-up must not hide it.
      }
    }
    throw;
  }
  return ObjId(made.at(se)->id());
}

}  // namespace antler

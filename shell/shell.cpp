#include "shell/shell.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include "core/comm/algorithms.hpp"
#include "core/element.hpp"
#include "core/error.hpp"
#include "core/layout.hpp"
#include "core/limits.hpp"
#include "core/path.hpp"
#include "core/random.hpp"
#include "core/value_finfo.hpp"
#include "msg/msg.hpp"
#include "msg/post_office.hpp"
#include "reduce/reduce_msg.hpp"
#include "reduce/reduce_queue.hpp"
#include "reduce/sync_data_handler.hpp"
#include "shell/clock.hpp"
#include "shell/clock_element.hpp"

namespace antler {

namespace {

std::map<std::string, Shell::Handler>& extensions() {
  static std::map<std::string, Shell::Handler> m;
  return m;
}

// ---- argument helpers shared by the handlers ----

Element* require_element(const ObjId& o, const char* op) {
  Element* e = o.element();
  if (!e)
    throw PathError(std::string(op) + ": element " + std::to_string(o.id.value) +
                    " does not exist");
  return e;
}

void check_data_index(const Element* e, Index d, const char* op) {
  if (d >= e->numData())
    throw IndexError(std::string(op) + ": index " + std::to_string(d) + " out of range for " +
                     e->path() + ", which has " + std::to_string(e->numData()) + " entries");
}

/// Checks (d, f) on the owner: for a FieldElement, f must be below the parent's entry count.
void check_field_index(const Element* e, Index d, Index f, const char* op) {
  if (e->isField() && f >= e->numField(d))
    throw IndexError(std::string(op) + ": index " + std::to_string(f) + " out of range for " +
                     e->name() + " of " + e->parent().path() + "[" + std::to_string(d) +
                     "], which has " + std::to_string(e->numField(d)) + " entries");
}

std::vector<std::string> value_fields(const Cinfo* c) {
  auto v = c->fieldNames(FinfoKind::value);
  auto r = c->fieldNames(FinfoKind::readOnlyValue);
  v.insert(v.end(), r.begin(), r.end());
  return v;
}

const ValueFinfoBase* require_value(const Element* e, std::string_view field, const char* op,
                                    bool writable) {
  const Finfo* f = e->cinfo()->findFinfo(field);
  if (!f || (f->kind() != FinfoKind::value && f->kind() != FinfoKind::readOnlyValue))
    throw FieldError(std::string(op) + ": '" + std::string(field) + "' is not a field of " +
                     e->cinfo()->name() + " (fields: " + join_names(value_fields(e->cinfo())) +
                     ")");
  auto* vf = static_cast<const ValueFinfoBase*>(f);
  if (writable && vf->readOnly())
    throw FieldError(std::string(op) + ": field '" + std::string(field) + "' of " +
                     e->cinfo()->name() + " is read-only");
  return vf;
}

void check_type(const std::type_info& want, const std::string& gotMangled,
                const std::string& gotName, const char* op, const std::string& what) {
  if (gotMangled != want.name())
    throw TypeError(std::string(op) + ": " + what + " has type " + type_name(want) + ", not " +
                    gotName);
}

struct TypeTag {
  std::string mangled, name;
};
void put_type(Writer& w, const std::type_info& t) {
  w.put<std::string>(t.name()).put<std::string>(type_name(t));
}
TypeTag get_type(Reader& r) {
  TypeTag t;
  t.mangled = r.get<std::string>();
  t.name = r.get<std::string>();
  return t;
}

/// Visits every local entry (d, f) of e: all data entries, or all field entries of local parents.
template <class Fn>
void for_each_local(const Element* e, Fn&& fn) {
  for (Index d = e->localBegin(); d < e->localEnd(); ++d) {
    const Index nf = e->isField() ? e->numField(d) : 1;
    for (Index f = 0; f < nf; ++f) fn(d, f);
  }
}

// ---- handlers: each runs on every node ----

/// A new Element goes on its class's default tick (MOOSE's default scheduling): process on the
/// tick, init (for classes that have it) on the tick before. useClock moves it.
void schedule_default(const DataElement* de) {
  const Cinfo* c = de->cinfo();
  const int t = c->defaultTick();
  if (t < 0 || t >= static_cast<int>(Clock::kNumTicks)) return;
  if (c->init() && t > 0)
    Clock::instance().schedule(static_cast<unsigned>(t - 1), de->id(), Clock::Phase::init);
  if (c->proc()) Clock::instance().schedule(static_cast<unsigned>(t), de->id());
}

void do_create(Reader& r, Writer& w) {
  const auto cls = r.get<std::string>();
  const auto path = r.get<std::string>();
  const auto n = r.get<Index>();
  const auto global = r.get<bool>();
  const Cinfo* c = Cinfo::require(cls, "create");
  auto [pe, name] = resolve_new_path(path, n, "create");  // n >= 1, a name, an unambiguous parent
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
  const NodeLayout& nl = node_layout();
  const Index share = global ? n
                             : block_range(n, nl.numNodes, nl.node).second -
                                   block_range(n, nl.numNodes, nl.node).first;
  check_allocation("create " + quoted(path) + " with " + std::to_string(n) + " entries (" +
                       std::to_string(share) + " on node " + std::to_string(nl.node) + ")",
                   c->name(), share, c->dinfo().size());
  auto& t = ElementTable::instance();
  auto* de = static_cast<DataElement*>(
      t.insert(std::make_unique<DataElement>(t.nextId(), name, c, pe->id(), n, global)));
  for (const FieldElementFinfoBase* ff : c->fieldElementFinfos())
    t.insert(std::make_unique<FieldElement>(t.nextId(), ff->name(), ff->fieldCinfo(), de, ff));
  schedule_default(de);
  w.put<ObjId>(ObjId(de->id()));
}

void do_destroy(Reader& r, Writer&) {
  const auto o = r.get<ObjId>();
  Element* e = require_element(o, "delete");
  if (o.id == Id::root()) throw ValueError("delete: cannot delete the root element '/'");
  if (e->isSystem())
    throw ValueError("delete: " + e->path() + " is antler's own " + e->cinfo()->name() +
                     " element; it cannot be deleted");
  if (e->isField())
    throw ValueError("delete: " + e->path() + " is a field element, part of its parent " +
                     e->parent().path() + "; delete the parent instead");
  // Unschedule the whole subtree, drop every message touching it, then the elements.
  std::vector<Element*> stack{e};
  while (!stack.empty()) {
    Element* x = stack.back();
    stack.pop_back();
    Clock::instance().dropElement(x->id());
    for (Id c : x->children())
      if (Element* k = c.element()) stack.push_back(k);
  }
  MsgTable::instance().eraseTouching(e);
  ElementTable::instance().erase(o.id);
}

/// A shared message (MOOSE's raxial to axial): the source's sources to the destination's
/// destinations and back, in order, all checked before any is made. Returns the first message.
Msg* connect_shared(const std::string& kindName, MsgKind kind, const ObjId& src,
                    const SharedMsgFinfo* ss, const ObjId& dest, const std::string& df) {
  const Cinfo* dc = dest.element()->cinfo();
  const auto* ds = dynamic_cast<const SharedMsgFinfo*>(dc->findFinfo(df));
  const Cinfo* sc = src.element()->cinfo();
  if (!ds) {
    std::vector<std::string> shared;
    for (const Finfo* f : dc->finfos())
      if (dynamic_cast<const SharedMsgFinfo*>(f)) shared.push_back(f->name());
    throw FieldError("addMsg: '" + ss->name() + "' of " + sc->name() +
                     " is a shared message field; connect it to a shared field of " + dc->name() +
                     ", not '" + df + "' (shared fields: " +
                     (shared.empty() ? std::string("none") : join_names(shared)) + ")");
  }
  if (kind != MsgKind::single && kind != MsgKind::oneToOne)
    throw MsgError("addMsg: the shared fields " + sc->name() + "." + ss->name() + " and " +
                   dc->name() + "." + ds->name() +
                   " connect both ways, with a Single or a OneToOne message, not " + kindName);
  if (ss->srcs().size() != ds->dests().size() || ds->srcs().size() != ss->dests().size())
    throw MsgError("addMsg: the shared fields " + sc->name() + "." + ss->name() + " (" +
                   ss->type() + ") and " + dc->name() + "." + ds->name() + " (" + ds->type() +
                   ") do not match");
  auto types = [](const Cinfo* c, const std::string& name) {
    const Finfo* f = c->findFinfo(name);
    if (auto* s = dynamic_cast<const SrcFinfoBase*>(f)) return &s->argTypes();
    if (auto* d = dynamic_cast<const DestFinfoBase*>(f)) return &d->argTypes();
    throw InternalError("shared field member '" + name + "' of " + c->name() + " is not a field");
  };
  auto same = [](const std::vector<const std::type_info*>* a,
                 const std::vector<const std::type_info*>* b) {
    if (a->size() != b->size()) return false;
    for (std::size_t i = 0; i < a->size(); ++i)
      if (*(*a)[i] != *(*b)[i]) return false;
    return true;
  };
  for (std::size_t i = 0; i < ss->srcs().size(); ++i)
    if (!same(types(sc, ss->srcs()[i]), types(dc, ds->dests()[i])))
      throw MsgError("addMsg: " + sc->name() + "." + ss->srcs()[i] + " does not match " +
                     dc->name() + "." + ds->dests()[i] + " in the shared fields " + ss->name() +
                     " and " + ds->name());
  for (std::size_t i = 0; i < ds->srcs().size(); ++i)
    if (!same(types(dc, ds->srcs()[i]), types(sc, ss->dests()[i])))
      throw MsgError("addMsg: " + dc->name() + "." + ds->srcs()[i] + " does not match " +
                     sc->name() + "." + ss->dests()[i] + " in the shared fields " + ds->name() +
                     " and " + ss->name());
  Msg* first = nullptr;
  for (std::size_t i = 0; i < ss->srcs().size(); ++i) {
    Msg* m = connect(kindName, src, ss->srcs()[i], dest, ds->dests()[i]);
    if (!first) first = m;
  }
  for (std::size_t i = 0; i < ds->srcs().size(); ++i) {
    Msg* m = connect(kindName, dest, ds->srcs()[i], src, ss->dests()[i]);
    if (!first) first = m;
  }
  if (!first) throw MsgError("addMsg: the shared field " + ss->name() + " has no members");
  return first;
}

void do_add_msg(Reader& r, Writer& w) {
  const auto kind = r.get<std::string>();
  const auto src = r.get<ObjId>();
  const auto sf = r.get<std::string>();
  const auto dest = r.get<ObjId>();
  const auto df = r.get<std::string>();
  require_element(src, "addMsg");
  require_element(dest, "addMsg");
  Msg* m = nullptr;
  const MsgKind k = parse_msg_kind(kind, "addMsg");
  const Finfo* srcFinfo = src.element()->cinfo()->findFinfo(sf);
  if (k == MsgKind::reduce || (srcFinfo && srcFinfo->kind() == FinfoKind::reduce)) {
    // A reduce field reads every entry of an Element (Reduce) or one object (Single); OneToOne
    // (MOOSE's array of Tables reading an array) is a Single message per entry pair, d to d.
    if (k != MsgKind::reduce && k != MsgKind::single && k != MsgKind::oneToOne)
      throw MsgError("addMsg: the reduce field '" + sf +
                     "' connects with a Reduce message (every entry), a Single message (one " +
                     "object) or OneToOne (entry i of each to entry i of the other), not " + kind);
    if (k == MsgKind::oneToOne) {
      const Element* se = src.element();
      const Element* de = dest.element();
      if (se->numData() != de->numData() || de->isField())
        throw MsgError("addMsg: OneToOne from " + se->path() + "." + sf + " (" +
                       std::to_string(se->numData()) +
                       " entries) needs an element of as many "
                       "entries, not " +
                       de->path() + " (" + std::to_string(de->numData()) +
                       (de->isField() ? ", a field element)" : ")"));
      for (Index d = 0; d < se->numData(); ++d) {
        Msg* one = reduce_connect(ObjId(src.id, d), sf, ObjId(dest.id, d), df, true);
        if (!m) m = one;
      }
      if (!m) throw MsgError("addMsg: OneToOne between empty elements");
    } else {
      m = reduce_connect(src, sf, dest, df, k == MsgKind::single);
    }
  } else if (const auto* ss = dynamic_cast<const SharedMsgFinfo*>(srcFinfo)) {
    m = connect_shared(kind, k, src, ss, dest, df);
  } else {
    m = connect(kind, src, sf, dest, df);
  }
  w.put<std::uint32_t>(m->id());
}

Msg* require_msg(std::uint32_t id, MsgKind kind, const char* op) {
  Msg* m = MsgTable::instance().get(id);
  if (!m) throw MsgError(std::string(op) + ": no message with id " + std::to_string(id));
  if (m->kind() != kind)
    throw MsgError(std::string(op) + ": message " + std::to_string(id) + " is a " +
                   to_string(m->kind()) + " message, not " + to_string(kind));
  return m;
}

void do_random(Reader& r, Writer&) {
  const auto id = r.get<std::uint32_t>();
  const auto p = r.get<double>();
  const auto seed = r.get<std::uint64_t>();
  static_cast<SparseMsg*>(require_msg(id, MsgKind::sparse, "setRandomConnectivity"))
      ->setRandomConnectivity(p, seed);
}

void do_pair_fill(Reader& r, Writer&) {
  const auto id = r.get<std::uint32_t>();
  const auto s = r.get<std::vector<Index>>();
  const auto d = r.get<std::vector<Index>>();
  static_cast<SparseMsg*>(require_msg(id, MsgKind::sparse, "pairFill"))->pairFill(s, d);
}

void do_set_stride(Reader& r, Writer&) {
  const auto id = r.get<std::uint32_t>();
  const auto s = r.get<long>();
  static_cast<DiagonalMsg*>(require_msg(id, MsgKind::diagonal, "setStride"))->setStride(s);
}

void do_set(Reader& r, Writer&) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const TypeTag t = get_type(r);
  Element* e = require_element(o, "set");
  auto* vf = require_value(e, field, "set", true);
  check_type(vf->valueType(), t.mangled, t.name, "set", e->cinfo()->name() + "." + field);
  check_data_index(e, o.dataIndex, "set");
  if (!e->isLocal(o.dataIndex)) return;
  check_field_index(e, o.dataIndex, o.fieldIndex, "set");
  vf->set(e, o.dataIndex, o.fieldIndex, r);
}

void do_get(Reader& r, Writer& w) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const TypeTag t = get_type(r);
  Element* e = require_element(o, "get");
  auto* vf = require_value(e, field, "get", false);
  check_type(vf->valueType(), t.mangled, t.name, "get", e->cinfo()->name() + "." + field);
  check_data_index(e, o.dataIndex, "get");
  if (!e->isLocal(o.dataIndex)) return;
  check_field_index(e, o.dataIndex, o.fieldIndex, "get");
  vf->get(e, o.dataIndex, o.fieldIndex, w);
}

void do_get_vec(Reader& r, Writer& w) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const TypeTag t = get_type(r);
  const auto whole = r.get<bool>();
  Element* e = require_element(o, "getVec");
  auto* vf = require_value(e, field, "getVec", false);
  check_type(vf->valueType(), t.mangled, t.name, "getVec", e->cinfo()->name() + "." + field);
  if (whole || !e->isField()) {
    vf->getRange(e, e->localBegin(), e->localEnd(), w);
  } else {
    check_data_index(e, o.dataIndex, "getVec");
    if (!e->isLocal(o.dataIndex)) return;
    for (Index f = 0; f < e->numField(o.dataIndex); ++f) vf->get(e, o.dataIndex, f, w);
  }
}

/// A multi-entry write, all or nothing on every node: validate, agree, commit.
///
/// Checks that depend only on metadata every node holds (field, type, entry counts) throw before
/// anything is written, identically on every node. A setter that cannot be undone by setting the
/// old value again (a count that resizes an array) is run first on a scratch object over every
/// value on every node (validate_values). Any other failure — a setter refusing its value
/// (IntFire.tau = nan), one whose verdict depends on the object's state, memory — is captured,
/// not thrown: every node then takes part in one agreement (an all-reduce), and if any node
/// failed, every node puts back the old values it saved (read through the field's getter before
/// writing) and the command fails everywhere. A field that is a plain data member (assignsOnly)
/// cannot fail and needs neither. The agreement is skipped on one node, for elements every node
/// holds whole (each node sees the same values and reaches the same verdict alone) and when only
/// one node writes (one parent's field entries).
///
/// `each(fn)` calls fn(d, f) for every local target in the order of the values in r.
/// `range`, if not empty: the targets are the local entries [lo, hi) of a DataElement, written in
/// one loop with no per-entry virtual call (ValueFinfoBase::writeRange).
template <class Each>
void atomic_write(const Element* e, const ValueFinfoBase* vf, Reader& r, Each&& each, bool agree,
                  const char* op, std::pair<Index, Index> range = {1, 0}) {
  const bool isRange = range.first <= range.second && !e->isField();
  if (vf->assignsOnly()) {
    if (isRange) {
      std::uint64_t n = 0;
      vf->writeRange(e, range.first, range.second, r, nullptr, n);
    } else {
      each([&](Index d, Index f) { vf->set(e, d, f, r); });
    }
    return;
  }
  // The undo log is reused between commands (only the master thread runs commands): a fresh
  // buffer of a large write would cost more in page faults than the copy itself.
  thread_local ByteBuffer undo;
  undo.clear();
  undo.reserve(r.left());  // about the size of the new values
  Writer uw(undo);
  std::uint64_t written = 0;
  std::exception_ptr failure;
  try {
    // One pass over the objects: save the old value, write the new one.
    if (isRange) {
      vf->writeRange(e, range.first, range.second, r, &undo, written);
    } else {
      each([&](Index d, Index f) {
        vf->get(e, d, f, uw);
        vf->set(e, d, f, r);
        ++written;
      });
    }
  } catch (...) {
    failure = std::current_exception();
  }
  bool failed = failure != nullptr;
  if (agree && node_layout().numNodes > 1 && !e->isGlobal())
    failed = comm::algo::any(Shell::instance().comm(), failed);
  if (!failed) return;
  Reader old(undo);
  std::uint64_t k = 0;
  each([&](Index d, Index f) {
    if (k++ < written) vf->set(e, d, f, old);
  });
  if (failure) std::rethrow_exception(failure);
  throw FailedElsewhere(op);
}

/// Runs the field's setter over the next n values of r on a scratch object (r is not consumed):
/// a value the setter refuses is refused on every node alike, before anything is written.
void validate_values(const ValueFinfoBase* vf, const Reader& r, std::uint64_t n) {
  if (vf->assignsOnly() || !vf->validatesFirst()) return;
  Reader v(r.position(), r.left());
  vf->validate(v, n);
}

void do_set_vec(Reader& r, Writer&) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const TypeTag t = get_type(r);
  const auto whole = r.get<bool>();
  const auto n = r.get<std::uint64_t>();
  Element* e = require_element(o, "setVec");
  auto* vf = require_value(e, field, "setVec", true);
  check_type(vf->valueType(), t.mangled, t.name, "setVec", e->cinfo()->name() + "." + field);
  if (!e->isField()) {
    if (n != e->numData())
      throw ValueError("setVec: " + std::to_string(n) + " values for " + e->path() +
                       ", which has " + std::to_string(e->numData()) + " entries");
    validate_values(vf, r, n);
    // Values are in global order and this node's entries are one contiguous block.
    for (Index d = 0; d < e->localBegin(); ++d) vf->skip(r);
    atomic_write(e, vf, r,
                 [&](auto&& fn) {
                   for (Index d = e->localBegin(); d < e->localEnd(); ++d) fn(d, Index{0});
                 },
                 true, "setVec", {e->localBegin(), e->localEnd()});
    return;
  }
  if (whole) {
    // Every field entry of every parent, parent by parent: this node's entries start after those
    // of the nodes before it, which only they can count, so the nodes swap their totals first.
    std::uint64_t mine = 0;
    for (Index d = e->localBegin(); d < e->localEnd(); ++d) mine += e->numField(d);
    std::uint64_t before = 0, total = mine;
    if (node_layout().numNodes > 1 && !e->isGlobal()) {
      std::vector<std::size_t> counts;
      std::vector<char> all;
      comm::algo::allgather_inline(Shell::instance().comm(),
                                   {reinterpret_cast<const char*>(&mine), sizeof mine}, sizeof mine,
                                   counts, all);
      total = 0;
      for (int k = 0; k < node_layout().numNodes; ++k) {
        std::uint64_t x;
        std::memcpy(&x, all.data() + k * sizeof x, sizeof x);
        if (k < node_layout().node) before += x;
        total += x;
      }
    }
    if (n != total)
      throw ValueError("setVec: " + std::to_string(n) + " values for " + e->path() +
                       ", which has " + std::to_string(total) + " entries over all its parents");
    validate_values(vf, r, n);
    for (std::uint64_t k = 0; k < before; ++k) vf->skip(r);
    atomic_write(
        e, vf, r,
        [&](auto&& fn) {
          for (Index d = e->localBegin(); d < e->localEnd(); ++d)
            for (Index f = 0; f < e->numField(d); ++f) fn(d, f);
        },
        true, "setVec");
    return;
  }
  check_data_index(e, o.dataIndex, "setVec");
  validate_values(vf, r, n);
  // One parent's entries live on its owner only: only it checks the count and writes.
  if (!e->isLocal(o.dataIndex)) return;
  if (n != e->numField(o.dataIndex))
    throw ValueError("setVec: " + std::to_string(n) + " values for " + e->name() + " of " +
                     e->parent().path() + "[" + std::to_string(o.dataIndex) + "], which has " +
                     std::to_string(e->numField(o.dataIndex)) + " entries");
  atomic_write(
      e, vf, r,
      [&](auto&& fn) {
        for (Index f = 0; f < n; ++f) fn(o.dataIndex, f);
      },
      false, "setVec");
}

void do_set_all(Reader& r, Writer&) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const TypeTag t = get_type(r);
  Element* e = require_element(o, "setVec");
  auto* vf = require_value(e, field, "setVec", true);
  check_type(vf->valueType(), t.mangled, t.name, "setVec", e->cinfo()->name() + "." + field);
  validate_values(vf, r, 1);
  // One value for every entry: repeat it as a run of values, one per local target.
  ByteBuffer one;
  one.append(r.position(), r.left());
  std::uint64_t count = 0;
  for_each_local(e, [&](Index, Index) { ++count; });
  ByteBuffer values;
  values.reserve(one.size() * count);
  for (std::uint64_t k = 0; k < count; ++k) values.append(one.data(), one.size());
  Reader vr(values);
  atomic_write(
      e, vf, vr, [&](auto&& fn) { for_each_local(e, fn); }, true, "setVec");
}

const LookupValueFinfoBase* require_lookup(const Element* e, std::string_view field,
                                           const char* op) {
  const Finfo* f = e->cinfo()->findFinfo(field);
  if (!f || f->kind() != FinfoKind::lookupValue)
    throw FieldError(std::string(op) + ": '" + std::string(field) + "' is not a lookup field of " +
                     e->cinfo()->name() + " (lookup fields: " +
                     join_names(e->cinfo()->fieldNames(FinfoKind::lookupValue)) + ")");
  return static_cast<const LookupValueFinfoBase*>(f);
}

void do_lookup(Reader& r, Writer& w, bool set) {
  const char* op = set ? "setLookup" : "getLookup";
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const TypeTag kt = get_type(r);
  const TypeTag vt = get_type(r);
  Element* e = require_element(o, op);
  auto* lf = require_lookup(e, field, op);
  check_type(lf->keyType(), kt.mangled, kt.name, op,
             "the key of " + e->cinfo()->name() + "." + field);
  check_type(lf->valueType(), vt.mangled, vt.name, op, e->cinfo()->name() + "." + field);
  if (set && !lf->hasSetter()) throw FieldError(std::string(op) + ": " + field + " is read-only");
  check_data_index(e, o.dataIndex, op);
  if (!e->isLocal(o.dataIndex)) return;
  check_field_index(e, o.dataIndex, o.fieldIndex, op);
  const auto key = r.get<std::string>();  // packed key bytes
  Reader kr(key.data(), key.size());
  if (set)
    lf->set(e, o.dataIndex, o.fieldIndex, kr, r);
  else
    lf->get(e, o.dataIndex, o.fieldIndex, kr, w);
}

void do_call(Reader& r, Writer&) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const auto n = r.get<std::uint32_t>();
  std::vector<TypeTag> types;
  for (std::uint32_t i = 0; i < n; ++i) types.push_back(get_type(r));
  Element* e = require_element(o, "call");
  const Finfo* f = e->cinfo()->findFinfo(field);
  if (!f || f->kind() != FinfoKind::dest)
    throw FieldError("call: '" + field + "' is not a destination function of " +
                     e->cinfo()->name() +
                     " (functions: " + join_names(e->cinfo()->fieldNames(FinfoKind::dest)) + ")");
  auto* df = static_cast<const DestFinfoBase*>(f);
  const auto& want = df->argTypes();
  bool ok = want.size() == types.size();
  for (std::size_t i = 0; ok && i < want.size(); ++i) ok = types[i].mangled == want[i]->name();
  if (!ok) {
    std::string got;
    for (std::size_t i = 0; i < types.size(); ++i) got += (i ? "," : "") + types[i].name;
    throw TypeError("call: " + e->cinfo()->name() + "." + field + " takes (" +
                    (want.empty() ? std::string() : type_list_name(want)) + "), not (" + got + ")");
  }
  check_data_index(e, o.dataIndex, "call");
  if (!e->isLocal(o.dataIndex)) return;
  check_field_index(e, o.dataIndex, o.fieldIndex, "call");
  df->call(e, o.dataIndex, o.fieldIndex, r);
}

void do_set_clock(Reader& r, Writer&) {
  const auto tick = r.get<unsigned>();
  const auto dt = r.get<double>();
  Clock::instance().setTickDt(tick, dt);
}

/// The pieces of a comma-separated path list ("/a,/b/##"), spaces around them dropped.
std::vector<std::string> split_paths(const std::string& list) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = list.find(',', at);
    std::string piece =
        list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    const auto first = piece.find_first_not_of(" \t");
    const auto last = piece.find_last_not_of(" \t");
    out.push_back(first == std::string::npos ? std::string()
                                             : piece.substr(first, last - first + 1));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

/// MOOSE's names for the scheduled functions: anything starting with proc/Proc is the process
/// phase, init/Init the init phase (MOOSE's Shell::innerUseClock accepts the same).
Clock::Phase parse_phase(const std::string& field, const char* op) {
  const std::string head = field.substr(0, 4);
  if (head == "proc" || head == "Proc") return Clock::Phase::process;
  if (head == "init" || head == "Init") return Clock::Phase::init;
  throw FieldError(std::string(op) + ": unknown scheduling field '" + field +
                   "' (valid: process (or proc), init)");
}

void do_use_clock(Reader& r, Writer&) {
  const auto tick = r.get<unsigned>();
  const auto path = r.get<std::string>();
  const auto field = r.get<std::string>();
  const bool off = tick == Shell::kNoTick;
  if (!off && tick >= Clock::kNumTicks)
    throw IndexError("useClock: tick " + std::to_string(tick) + " out of range (ticks 0.." +
                     std::to_string(Clock::kNumTicks - 1) + ")");
  const Clock::Phase phase = parse_phase(field, "useClock");
  const char* fname = phase == Clock::Phase::init ? "init" : "proc";
  // Every piece of the list; a wildcard or a list may match elements that have no such phase
  // (a Neutral, a Table's parent): MOOSE skips them, and so does antler. A piece that names one
  // element without wildcards must name one that has it.
  const auto pieces = split_paths(path);
  std::vector<Id> chosen;
  for (const std::string& piece : pieces) {
    if (piece.empty()) throw PathError("useClock: empty path in the list " + quoted(path));
    const auto found = wildcard_find(piece);
    const bool pattern = piece.find('#') != std::string::npos || pieces.size() > 1;
    if (found.empty()) throw PathError("useClock: no element matches '" + piece + "'");
    for (const ObjId& o : found) {
      const Element* e = o.element();
      const bool ok =
          !e->isField() && (phase == Clock::Phase::init ? e->cinfo()->init() : e->cinfo()->proc());
      if (!ok) {
        if (pattern) continue;
        throw FieldError("useClock: " + e->path() + " (a " + e->cinfo()->name() + ") has no '" +
                         fname + "' field; only classes with one can be scheduled" +
                         (phase == Clock::Phase::init ? " in the init phase" : ""));
      }
      if (std::find(chosen.begin(), chosen.end(), o.id) == chosen.end()) chosen.push_back(o.id);
    }
  }
  for (Id id : chosen) {
    if (off)
      Clock::instance().unschedule(id, phase);
    else
      Clock::instance().schedule(tick, id, phase);
  }
}

void do_reinit(Reader&, Writer&) {
  Clock::instance().reinit();
}
void do_start(Reader& r, Writer&) {
  Clock::instance().start(r.get<double>());
}
void do_set_threads(Reader& r, Writer&) {
  const auto n = r.get<unsigned>();
  Clock::checkNumThreads(n);  // before anything changes
  PostOffice::instance().setNumThreads(n);
  Clock::instance().setNumThreads(n);
}

void do_clear(Reader&, Writer&) {
  MsgTable::instance().clear();
  ElementTable::instance().clear();
  Clock::instance().clear();
  PostOffice::instance().clear();
  ReduceQueue::instance().clear();
}

void do_sync(Reader& r, Writer& w) {
  const auto id = r.get<Id>();
  Element* e = require_element(ObjId(id), "syncDataHandler");
  if (!e->isField()) {
    std::vector<std::string> fields;
    for (auto* f : e->cinfo()->fieldElementFinfos()) fields.push_back(e->path() + "/" + f->name());
    throw ValueError(
        "syncDataHandler: " + e->path() + " is not a field element" +
        (fields.empty() ? std::string() : " (its field elements: " + join_names(fields) + ")"));
  }
  w.put<Index>(sync_data_handler(static_cast<FieldElement*>(e), Clock::instance().numThreads()));
}

void do_reduce_now(Reader& r, Writer&) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  Element* e = require_element(o, "reduceNow");
  const Finfo* f = e->cinfo()->findFinfo(field);
  if (!f || f->kind() != FinfoKind::reduce)
    throw FieldError("reduceNow: '" + field + "' is not a reduce field of " + e->cinfo()->name() +
                     " (reduce fields: " + join_names(e->cinfo()->fieldNames(FinfoKind::reduce)) +
                     ")");
  check_data_index(e, o.dataIndex, "reduceNow");
  std::vector<ReduceBase*> jobs;
  for (const Conn& c : e->conns(static_cast<const SrcFinfoBase*>(f)->bindIndex()))
    if (static_cast<const ReduceMsg*>(c.msg)->requester() == o.dataIndex)
      jobs.push_back(static_cast<const ReduceMsg*>(c.msg)->job());
  ReduceQueue::instance().runNow(jobs, Clock::instance().numThreads());
}

/// The file a dlopen handle loaded (the path as the loader resolved it), or "".
std::string loaded_file(void* h) {
  link_map* lm = nullptr;
  if (h && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name)
    return lm->l_name;
  return {};
}

/// Libraries refused for a class name clash that the loader could not unload (dlclose keeps a
/// library with unique symbols resident): a second dlopen returns the same handle without
/// running its initializers, so the refusal is remembered here and given again.
std::map<void*, std::pair<std::string, std::string>>& refused_libraries() {  // file, message
  static std::map<void*, std::pair<std::string, std::string>> m;
  return m;
}

// Loading runs the library's static initializers, which register its classes. They must not
// throw inside dlopen, so the registry records the load (Cinfo::beginLoad/endLoad) and the
// verdict comes after dlopen returns: a class name already registered (e.g. by a second copy
// of libantler) refuses the whole library, which is unregistered again and closed.
/// Refuses what dlopen cannot take safely: it blocks on a named pipe (waiting for a writer)
/// and dies with SIGBUS on a truncated library (its segments are mapped past the end of the
/// file). A path with no '/' is looked up by dlopen in the library path, and left to it.
void check_library_file(const std::string& path) {
  if (path.find('/') == std::string::npos) return;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // dlopen's own message names what is wrong
  if (!S_ISREG(st.st_mode))
    throw ValueError("loadLibrary: '" + path +
                     "' is not a regular file (a shared library of antler classes is)");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return;
  Elf64_Ehdr eh{};
  const bool header = std::fread(&eh, sizeof eh, 1, f) == 1 &&
                      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
                      eh.e_ident[EI_CLASS] == ELFCLASS64;
  bool complete = header;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (header) {
    // Every loaded segment and the section headers must lie inside the file.
    complete = eh.e_phoff + std::uint64_t{eh.e_phnum} * eh.e_phentsize <= size &&
               eh.e_shoff + std::uint64_t{eh.e_shnum} * eh.e_shentsize <= size;
    for (unsigned i = 0; complete && i < eh.e_phnum; ++i) {
      Elf64_Phdr ph{};
      complete = std::fseek(f, static_cast<long>(eh.e_phoff + i * eh.e_phentsize), SEEK_SET) == 0 &&
                 std::fread(&ph, sizeof ph, 1, f) == 1 &&
                 (ph.p_type != PT_LOAD || ph.p_offset + ph.p_filesz <= size);
    }
  }
  std::fclose(f);
  if (!header) throw ValueError("loadLibrary: '" + path + "' is not a 64-bit ELF shared library");
  if (!complete)
    throw ValueError("loadLibrary: '" + path + "' is truncated (" + std::to_string(size) +
                     " bytes: its segments reach past the end of the file)");
}

void do_load_library(Reader& r, Writer& w) {
  const auto path = r.get<std::string>();
  if (path.empty())
    throw ValueError(
        "loadLibrary: empty path (give the file of a shared library of antler "
        "classes, e.g. 'build-user/libmy_cells.so')");
  check_library_file(path);
  // Shell commands a library registers as it loads (static initialisers) are part of the load
  // transaction too: a refused library is closed, and a handler of it left registered would
  // point into unmapped code. And no library replaces a command already registered (a library
  // carrying its own copy of antler's core registers all of antler's commands again).
  struct CommandsGuard {
    std::map<std::string, Shell::Handler> before = extensions();
    bool kept = false;
    ~CommandsGuard() {
      if (!kept) {
        extensions() = before;
        return;
      }
      for (const auto& [name, h] : before) extensions()[name] = h;
    }
  } commands;
  // RTLD_GLOBAL: the library's classes may be used by later libraries too. The library links
  // against libantler, so its classes register in this process's registry as it loads.
  Cinfo::beginLoad(path);
  void* h = nullptr;
  try {
    h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  } catch (...) {
    Cinfo::endLoad(false);
    throw;
  }
  const char* why = h ? nullptr : dlerror();
  Cinfo::LoadResult res = Cinfo::endLoad(h != nullptr);
  if (!h)
    throw ValueError("loadLibrary: cannot load '" + path + "': " + (why ? why : "unknown error"));
  // A library with its own copy of antler's core (a second libantler) may bind its classes to a
  // registry of its own (when libantler was loaded without RTLD_GLOBAL, as Python loads its
  // extensions): nothing clashes, and nothing it declares would ever be usable. Refuse it too.
  void* theirs = res.clash.empty() && res.added.empty()
                     ? dlsym(h, "_ZN6antler5Cinfo13registerClassEPKS0_")
                     : nullptr;
  if (theirs) {
    Dl_info a{}, b{};
    const bool known =
        dladdr(theirs, &a) != 0 && dladdr(reinterpret_cast<void*>(&Cinfo::registerClass), &b) != 0;
    if (known && a.dli_fbase != b.dli_fbase) {
      const std::string msg =
          "loadLibrary: cannot load '" + path + "': it contains its own copy of antler's core (" +
          "antler::Cinfo is defined in " + (a.dli_fname ? a.dli_fname : path) +
          ", but antler is already loaded from " + (b.dli_fname ? b.dli_fname : "the program") +
          "), so its classes would go to a registry of their own; nothing of the library was "
          "registered (link the library against the libantler that is loaded)";
      dlclose(h);
      throw ValueError(msg);
    }
  }
  auto& refused = refused_libraries();
  if (res.clash.empty()) {
    if (res.added.empty()) {
      if (auto it = refused.find(h); it != refused.end() && it->second.first == loaded_file(h)) {
        const std::string msg = it->second.second;
        dlclose(h);
        throw ValueError(msg);
      }
    } else {
      refused.erase(h);
    }
    commands.kept = true;
    w.put(res.added);
    return;
  }
  std::string file = loaded_file(h);
  if (file.empty()) file = path;
  const std::string newLib = res.clashNewLibrary.empty() ? file : res.clashNewLibrary;
  const std::string msg =
      "loadLibrary: cannot load '" + path + "': it registers a class named '" + res.clash +
      "' (in " + newLib + "), but a class of that name is already registered (from " +
      (res.clashOldLibrary.empty() ? std::string("the program") : res.clashOldLibrary) +
      "); nothing of the library was registered (class names must be unique: rename the class, "
      "and load antler's own classes only once)";
  dlclose(h);
  if (void* still = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    refused[still] = {loaded_file(still), msg};
    dlclose(still);
  }
  throw ValueError(msg);
}

void do_extension(Reader& r, Writer& w) {
  const auto name = r.get<std::string>();
  auto it = extensions().find(name);
  if (it == extensions().end()) throw InternalError("unknown extension command " + name);
  it->second(r, w);
}

// ---- wire format helpers ----

ByteBuffer command(Op op) {
  ByteBuffer b;
  Writer(b).put<std::uint32_t>(static_cast<std::uint32_t>(op));
  return b;
}

struct Reply {
  std::uint8_t status = 0;  // 0 ok, 1 antler::Error, 2 other, 3 failed on another node
  ErrorKind kind = ErrorKind::value;
  std::string message;
  ByteBuffer payload;
};

// A reply is the payload followed by a trailer {message, kind u8, status u8, trailer bytes u32},
// so that the payload (a vector of values can be large) is never copied to strip a header.
void put_trailer(ByteBuffer& b, std::uint8_t status, ErrorKind kind, const std::string& message) {
  const std::size_t at = b.size();
  Writer(b)
      .put<std::string>(message)
      .put<std::uint8_t>(static_cast<std::uint8_t>(kind))
      .put<std::uint8_t>(status);
  Writer(b).put<std::uint32_t>(static_cast<std::uint32_t>(b.size() - at + 4));
}

/// Parses the trailer of a reply and cuts it off (payload = what is left).
Reply take_reply(ByteBuffer&& b) {
  Reply out;
  if (b.size() < 4) throw CommError("corrupted reply: " + std::to_string(b.size()) + " bytes");
  std::uint32_t tb = 0;
  std::memcpy(&tb, b.data() + b.size() - 4, 4);
  if (tb < 4 + 8 + 2 || tb > b.size()) throw CommError("corrupted reply trailer");
  Reader r(b.data() + b.size() - tb, tb - 4);
  out.message = r.get<std::string>();
  out.kind = static_cast<ErrorKind>(r.get<std::uint8_t>());
  out.status = r.get<std::uint8_t>();
  b.resize(b.size() - tb);
  out.payload = std::move(b);
  return out;
}

/// The name of a command's operation, for messages.
const char* op_name(const ByteBuffer& cmd) {
  static const char* const names[] = {
      "quit",       "create",          "delete",    "addMsg",    "setRandomConnectivity",
      "pairFill",   "setStride",       "set",       "get",       "setVec",
      "getVec",     "setVec",          "getLookup", "setLookup", "call",
      "setClock",   "useClock",        "reinit",    "start",     "setNumThreads",
      "clearModel", "syncDataHandler", "reduceNow", "seed",      "loadLibrary",
      "extension"};
  static_assert(std::size(names) == static_cast<std::size_t>(Op::extension) + 1);
  std::uint32_t op = ~0u;
  if (cmd.size() >= 4) std::memcpy(&op, cmd.data(), 4);
  return op < std::size(names) ? names[op] : "command";
}

}  // namespace

Shell& Shell::instance() {
  static Shell s;
  // /clock exists as soon as there is a Shell, made at the same point on every node.
  static const ObjId clockElement = make_clock_element();
  (void)clockElement;
  return s;
}

int Shell::numNodes() const {
  return node_layout().numNodes;
}
int Shell::myNode() const {
  return node_layout().node;
}

void Shell::checkIdle(const char* op) const {
  if (Clock::instance().running())
    throw StateError(std::string(op) +
                     ": not allowed while the clock is running (the Shell is not re-entrant)");
}

ByteBuffer Shell::execute(const ByteBuffer& cmd) {
  ByteBuffer payload;
  Writer pw(payload);
  std::uint8_t status = 0;
  ErrorKind kind = ErrorKind::value;
  std::string message;
  try {
    Reader r(cmd);
    const auto op = static_cast<Op>(r.get<std::uint32_t>());
    switch (op) {
      case Op::create:
        do_create(r, pw);
        break;
      case Op::destroy:
        do_destroy(r, pw);
        break;
      case Op::addMsg:
        do_add_msg(r, pw);
        break;
      case Op::setRandomConnectivity:
        do_random(r, pw);
        break;
      case Op::pairFill:
        do_pair_fill(r, pw);
        break;
      case Op::setStride:
        do_set_stride(r, pw);
        break;
      case Op::set:
        do_set(r, pw);
        break;
      case Op::get:
        do_get(r, pw);
        break;
      case Op::setVec:
        do_set_vec(r, pw);
        break;
      case Op::getVec:
        do_get_vec(r, pw);
        break;
      case Op::setAll:
        do_set_all(r, pw);
        break;
      case Op::lookupGet:
        do_lookup(r, pw, false);
        break;
      case Op::lookupSet:
        do_lookup(r, pw, true);
        break;
      case Op::call:
        do_call(r, pw);
        break;
      case Op::setClock:
        do_set_clock(r, pw);
        break;
      case Op::useClock:
        do_use_clock(r, pw);
        break;
      case Op::reinit:
        do_reinit(r, pw);
        break;
      case Op::start:
        do_start(r, pw);
        break;
      case Op::setNumThreads:
        do_set_threads(r, pw);
        break;
      case Op::clearModel:
        do_clear(r, pw);
        break;
      case Op::syncDataHandler:
        do_sync(r, pw);
        break;
      case Op::reduceNow:
        do_reduce_now(r, pw);
        break;
      case Op::seed:
        global_seed() = r.get<std::uint64_t>();
        break;
      case Op::loadLibrary:
        do_load_library(r, pw);
        break;
      case Op::extension:
        do_extension(r, pw);
        break;
      default:
        throw CommError("unknown command " + std::to_string(static_cast<std::uint32_t>(op)));
    }
  } catch (const FailedElsewhere& e) {
    status = 3;
    kind = e.kind();
    message = e.what();
  } catch (const Exception& e) {
    status = 1;
    kind = e.kind();
    message = e.what();
  } catch (const std::bad_alloc&) {
    // A request too large for this node's memory that no earlier check caught: the command's
    // handlers allocate before they change anything, so nothing was changed.
    status = 1;
    kind = ErrorKind::value;
    message = std::string(op_name(cmd)) + ": out of memory on node " + std::to_string(myNode()) +
              " (the request is too large)";
  } catch (const std::exception& e) {
    status = 2;
    message = e.what();
  }
  if (status != 0) payload.clear();
  put_trailer(payload, status, kind, message);
  return payload;
}

std::vector<ByteBuffer> Shell::dispatch(const ByteBuffer& cmd) {
  std::vector<Reply> replies;
  if (numNodes() == 1) {
    checkIdle("command");
    replies.push_back(take_reply(execute(cmd)));
  } else {
    if (!isDriver()) throw StateError("Shell commands are issued by the driver (node 0) only");
    checkIdle("command");
    // Out by broadcast (the first message carries the size and a small command whole; a large
    // one, such as setVec of 1e7 values, follows by the algorithm chosen for its size), replies
    // back by gather: one implementation for the driver and the workers (serve below).
    comm::algo::broadcast_any(comm_, const_cast<ByteBuffer&>(cmd), 0);  // the root only reads
    const ByteBuffer rep = execute(cmd);
    ByteBuffer all;
    std::vector<std::size_t> counts;
    comm::algo::gather(comm_, {rep.data(), rep.size()}, 0, all, counts);
    std::size_t at = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      ByteBuffer one;
      one.append(all.data() + at, counts[r]);
      at += counts[r];
      replies.push_back(take_reply(std::move(one)));
    }
  }
  // Report the first node's own error; a node that only saw another node fail (status 3) speaks
  // only if no node says why.
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t r = 0; r < replies.size(); ++r) {
      const Reply& rep = replies[r];
      if (rep.status == 0 || (pass == 0 && rep.status == 3)) continue;
      std::string msg = rep.message;
      // The same error on every node (a check on replicated metadata) reads as one error; an error
      // that only one node saw names that node.
      bool everywhere = true;
      for (const Reply& o : replies)
        everywhere = everywhere && o.status == rep.status && o.message == rep.message;
      if (!everywhere && numNodes() > 1) msg += " (on node " + std::to_string(r) + ")";
      if (rep.status == 1 || rep.status == 3) throw_error(rep.kind, msg);
      throw InternalError(msg);
    }
  std::vector<ByteBuffer> out;
  for (auto& rep : replies) out.push_back(std::move(rep.payload));
  return out;
}

int Shell::serve() {
  if (numNodes() == 1 || isDriver()) return 0;
  for (;;) {
    ByteBuffer cmd;
    comm::algo::broadcast_any(comm_, cmd, 0);
    Reader r(cmd);
    if (static_cast<Op>(r.get<std::uint32_t>()) == Op::quit) return r.get<int>();
    const ByteBuffer rep = execute(cmd);
    ByteBuffer all;
    std::vector<std::size_t> counts;
    comm::algo::gather(comm_, {rep.data(), rep.size()}, 0, all, counts);
  }
}

void Shell::quitWorkers(int exitCode) {
  if (numNodes() == 1 || !isDriver()) return;
  ByteBuffer cmd = command(Op::quit);
  Writer(cmd).put<int>(exitCode);
  comm::algo::broadcast_any(comm_, cmd, 0);
}

// ---- commands ----

ObjId Shell::create(std::string_view className, std::string_view path, Index n, bool global) {
  ByteBuffer c = command(Op::create);
  Writer(c)
      .put<std::string>(std::string(className))
      .put<std::string>(absolute(path))
      .put<Index>(n)
      .put<bool>(global);
  auto rep = dispatch(c);
  Reader r(rep[0]);
  return r.get<ObjId>();
}

void Shell::destroy(std::string_view path) {
  destroy(resolve_path(absolute(path), "delete"));
}

void Shell::destroy(ObjId obj) {
  ByteBuffer c = command(Op::destroy);
  Writer(c).put<ObjId>(obj);
  dispatch(c);
}

std::uint32_t Shell::addMsg(std::string_view kind, ObjId src, std::string_view srcField, ObjId dest,
                            std::string_view destField) {
  ByteBuffer c = command(Op::addMsg);
  Writer(c)
      .put<std::string>(std::string(kind))
      .put<ObjId>(src)
      .put<std::string>(std::string(srcField))
      .put<ObjId>(dest)
      .put<std::string>(std::string(destField));
  auto rep = dispatch(c);
  Reader r(rep[0]);
  return r.get<std::uint32_t>();
}

std::uint32_t Shell::addMsg(std::string_view kind, std::string_view src, std::string_view srcField,
                            std::string_view dest, std::string_view destField) {
  return addMsg(kind, resolve_path(absolute(src), "addMsg"), srcField,
                resolve_path(absolute(dest), "addMsg"), destField);
}

void Shell::setRandomConnectivity(std::uint32_t msg, double probability, std::uint64_t seed) {
  ByteBuffer c = command(Op::setRandomConnectivity);
  Writer(c).put<std::uint32_t>(msg).put<double>(probability).put<std::uint64_t>(seed);
  dispatch(c);
}

void Shell::pairFill(std::uint32_t msg, const std::vector<Index>& src,
                     const std::vector<Index>& dest) {
  ByteBuffer c = command(Op::pairFill);
  Writer(c).put<std::uint32_t>(msg).put(src).put(dest);
  dispatch(c);
}

void Shell::setStride(std::uint32_t msg, long stride) {
  ByteBuffer c = command(Op::setStride);
  Writer(c).put<std::uint32_t>(msg).put<long>(stride);
  dispatch(c);
}

const Msg* Shell::msg(std::uint32_t id) const {
  return MsgTable::instance().get(id);
}

void Shell::clearModel() {
  dispatch(command(Op::clearModel));
}

void Shell::ce(std::string_view path) {
  const ObjId o = resolve_path(absolute(path), "ce");
  // A field entry exists only if its parent holds that many (known on the parent's node).
  if (o.element()->isField()) {
    try {
      getPacked(o, "name", typeid(std::string));
    } catch (const IndexError& e) {
      throw IndexError("ce: '" + std::string(path) + "': " + e.what());
    }
  }
  cwe_ = o;
}

ObjId Shell::cwe() const {
  // An element that was deleted (its id no longer names an element) leaves the root current.
  const Element* e = cwe_.element();
  if (!e || cwe_.dataIndex >= e->numData()) return ObjId(Id::root());
  return cwe_;
}

std::string Shell::pwd() const {
  // The element's path, or the entry's ("/net/cells[3]") when ce named another entry than 0.
  const ObjId c = cwe();
  const Element* e = c.element();
  return c.dataIndex == 0 && !e->isField() ? e->path() : c.path();
}

std::string Shell::absolute(std::string_view path) const {
  // An empty path stays empty (and is refused by name where a path is needed).
  if (path.empty() || path.front() == '/') return std::string(path);
  const std::string base = pwd();
  // Below the current element, so that "synapse[2]" under "/net/cells[3]" is entry 3's.
  return (base == "/" ? base : base + "/") + std::string(path);
}

ObjId Shell::find(std::string_view path) const {
  return resolve_path(absolute(path), "find");
}

bool Shell::exists(std::string_view path) const {
  try {
    return find_path(absolute(path)).element() != nullptr;
  } catch (const Error&) {
    return false;
  }
}

std::vector<ObjId> Shell::children(std::string_view path) const {
  std::vector<ObjId> out;
  for (Id c : resolve_path(absolute(path), "children").element()->children()) out.emplace_back(c);
  return out;
}

std::vector<ObjId> Shell::wildcardFind(std::string_view pattern) const {
  return wildcard_find(absolute(pattern));
}

std::vector<std::string> Shell::classNames() {
  return Cinfo::classNames();
}

std::vector<Shell::FieldInfo> Shell::fieldInfo(std::string_view className) {
  const Cinfo* c = Cinfo::require(className, "getFieldNames");
  std::vector<FieldInfo> out;
  for (const Finfo* f : c->finfos())
    out.push_back({f->name(), to_string(f->kind()), f->type(), f->doc()});
  return out;
}

void Shell::setPacked(ObjId obj, std::string_view field, const std::type_info& type,
                      const ByteBuffer& value) {
  ByteBuffer c = command(Op::set);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  c.append(value.data(), value.size());
  dispatch(c);
}

ByteBuffer Shell::getPacked(ObjId obj, std::string_view field, const std::type_info& type) {
  ByteBuffer c = command(Op::get);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  auto rep = dispatch(c);
  const Element* e = obj.element();
  return std::move(rep[static_cast<std::size_t>(e ? e->owner(obj.dataIndex) : 0)]);
}

ByteBuffer Shell::getVecPacked(ObjId obj, std::string_view field, const std::type_info& type,
                               bool whole) {
  ByteBuffer c = command(Op::getVec);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  w.put<bool>(whole);
  auto rep = dispatch(c);
  const Element* e = obj.element();
  if (e->isGlobal() || rep.size() == 1) return std::move(rep[0]);
  ByteBuffer out;
  std::size_t total = 0;
  for (auto& b : rep) total += b.size();
  out.reserve(total);
  for (auto& b : rep) out.append(b.data(), b.size());  // node order is global index order
  return out;
}

void Shell::setVecPacked(ObjId obj, std::string_view field, const std::type_info& type,
                         const ByteBuffer& values, std::uint64_t n, bool whole) {
  ByteBuffer c = command(Op::setVec);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  w.put<bool>(whole).put<std::uint64_t>(n);
  c.append(values.data(), values.size());
  dispatch(c);
}

void Shell::setAllPacked(ObjId obj, std::string_view field, const std::type_info& type,
                         const ByteBuffer& value) {
  ByteBuffer c = command(Op::setAll);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  c.append(value.data(), value.size());
  dispatch(c);
}

ByteBuffer Shell::lookupGetPacked(ObjId obj, std::string_view field, const std::type_info& keyType,
                                  const ByteBuffer& key, const std::type_info& type) {
  ByteBuffer c = command(Op::lookupGet);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, keyType);
  put_type(w, type);
  w.put<std::string>(std::string(key.data(), key.size()));
  auto rep = dispatch(c);
  const Element* e = obj.element();
  return std::move(rep[static_cast<std::size_t>(e ? e->owner(obj.dataIndex) : 0)]);
}

void Shell::lookupSetPacked(ObjId obj, std::string_view field, const std::type_info& keyType,
                            const ByteBuffer& key, const std::type_info& type,
                            const ByteBuffer& value) {
  ByteBuffer c = command(Op::lookupSet);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, keyType);
  put_type(w, type);
  w.put<std::string>(std::string(key.data(), key.size()));
  c.append(value.data(), value.size());
  dispatch(c);
}

void Shell::callPacked(ObjId obj, std::string_view dest,
                       const std::vector<const std::type_info*>& types, const ByteBuffer& args) {
  ByteBuffer c = command(Op::call);
  Writer w(c);
  w.put<ObjId>(obj)
      .put<std::string>(std::string(dest))
      .put<std::uint32_t>(static_cast<std::uint32_t>(types.size()));
  for (auto* t : types) put_type(w, *t);
  c.append(args.data(), args.size());
  dispatch(c);
}

void Shell::setClock(unsigned tick, double dt) {
  ByteBuffer c = command(Op::setClock);
  Writer(c).put<unsigned>(tick).put<double>(dt);
  dispatch(c);
}

void Shell::useClock(unsigned tick, std::string_view path, std::string_view field) {
  // Each piece of a comma-separated list starts at the current element on its own.
  std::string abs;
  const auto pieces = split_paths(std::string(path));
  for (std::size_t i = 0; i < pieces.size(); ++i)
    abs += (i ? "," : "") + (pieces[i].empty() ? pieces[i] : absolute(pieces[i]));
  ByteBuffer c = command(Op::useClock);
  Writer(c).put<unsigned>(tick).put<std::string>(abs).put<std::string>(std::string(field));
  dispatch(c);
}

void Shell::reinit() {
  dispatch(command(Op::reinit));
}

void Shell::start(double runtime) {
  ByteBuffer c = command(Op::start);
  Writer(c).put<double>(runtime);
  dispatch(c);
}

void Shell::stop() {
  if (Clock::instance().running()) Clock::instance().requestStop();
}

double Shell::currentTime() const {
  return Clock::instance().currentTime();
}

void Shell::setNumThreads(unsigned n) {
  ByteBuffer c = command(Op::setNumThreads);
  Writer(c).put<unsigned>(n);
  dispatch(c);
}

unsigned Shell::numThreads() const {
  return Clock::instance().numThreads();
}

std::vector<std::string> Shell::loadLibrary(const std::string& path) {
  ByteBuffer c = command(Op::loadLibrary);
  Writer(c).put<std::string>(path);
  auto rep = dispatch(c);
  Reader r(rep[0]);
  return r.get<std::vector<std::string>>();
}

double Shell::baseDt() const {
  return Clock::instance().baseDt();
}

void Shell::seed(std::uint64_t s) {
  ByteBuffer c = command(Op::seed);
  Writer(c).put<std::uint64_t>(s);
  dispatch(c);
}

Index Shell::doSyncDataHandler(std::string_view path) {
  return doSyncDataHandler(resolve_path(absolute(path), "syncDataHandler").id);
}

Index Shell::doSyncDataHandler(Id fe) {
  ByteBuffer c = command(Op::syncDataHandler);
  Writer(c).put<Id>(fe);
  auto rep = dispatch(c);
  Reader r(rep[0]);
  return r.get<Index>();
}

void Shell::reduceNow(ObjId requester, std::string_view field) {
  ByteBuffer c = command(Op::reduceNow);
  Writer(c).put<ObjId>(requester).put<std::string>(std::string(field));
  dispatch(c);
}

void Shell::registerCommand(const std::string& name, Handler h) {
  extensions()[name] = h;
}

std::vector<ByteBuffer> Shell::dispatchExtension(const std::string& name, const ByteBuffer& args) {
  ByteBuffer c = command(Op::extension);
  Writer(c).put<std::string>(name);
  c.append(args.data(), args.size());
  return dispatch(c);
}

}  // namespace antler

// The Shell's handlers for fields: get, set (one, many, all: all or nothing on every node),
// lookups, calls (see shell/detail/handlers.hpp).
#include <cstring>

#include "core/comm/algorithms.hpp"
#include "core/layout.hpp"
#include "reduce/reduce_queue.hpp"
#include "shell/detail/handlers.hpp"

namespace antler::shell_detail {

namespace {
/// A Shell command wrote to e's objects (set, setVec, a call) between runs: the objects' Element
/// (a field element's parent holds them) hears of it, so that what its state knows about them
/// (ElementState::calledOutsideRun) is asked again.
void tell_state(Simulation& sim, const Element* e) {
  const Element* holder = e->isField() ? sim.elements().get(e->parent()) : e;
  if (holder && !holder->isField())
    if (ElementState* st = static_cast<const DataElement*>(holder)->state()) st->calledOutsideRun();
}
}  // namespace

void do_set(Simulation& sim, Reader& r, Writer&) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const TypeTag t = get_type(r);
  Element* e = require_element(sim, o, "set");
  auto* vf = require_value(e, field, "set", true);
  check_type(vf->valueType(), t.mangled, t.name, "set", e->cinfo()->name() + "." + field);
  check_data_index(e, o.dataIndex, "set");
  if (!e->isLocal(o.dataIndex)) return;
  check_field_index(e, o.dataIndex, o.fieldIndex, "set");
  vf->set(e, o.dataIndex, o.fieldIndex, r);
  tell_state(sim, e);
}

void do_get(Simulation& sim, Reader& r, Writer& w) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const TypeTag t = get_type(r);
  Element* e = require_element(sim, o, "get");
  auto* vf = require_value(e, field, "get", false);
  check_type(vf->valueType(), t.mangled, t.name, "get", e->cinfo()->name() + "." + field);
  check_data_index(e, o.dataIndex, "get");
  if (!e->isLocal(o.dataIndex)) return;
  check_field_index(e, o.dataIndex, o.fieldIndex, "get");
  vf->get(e, o.dataIndex, o.fieldIndex, w);
}

void do_get_vec(Simulation& sim, Reader& r, Writer& w) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const TypeTag t = get_type(r);
  const auto whole = r.get<bool>();
  Element* e = require_element(sim, o, "getVec");
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

namespace {
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
  if (vf->assignsOnly() || vf->checksValueOnly()) {  // (validate_values ran: nothing can fail)
    if (isRange) {
      std::uint64_t n = 0;
      vf->writeRange(e, range.first, range.second, r, nullptr, n);
    } else {
      each([&](Index d, Index f) { vf->set(e, d, f, r); });
    }
    return;
  }
  // The undo log is reused between commands (only the master thread runs commands): a fresh
  // buffer of a large write would cost more in page faults than the copy itself. Up to
  // kKeepUndo: a larger one (the weights of 1e7 synapses: 80 MB, as much as their 8-byte
  // objects) is released after its command, so the model's memory is not held twice over
  // (its page faults: ~20 ms for 80 MB, against ~40 ms for the 1e7 setter calls).
  constexpr std::size_t kKeepUndo = std::size_t{16} << 20;
  thread_local ByteBuffer undo;
  struct Release {
    ByteBuffer& b;
    ~Release() {
      if (b.capacity() > kKeepUndo) b = ByteBuffer();
    }
  } release{undo};
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
  Simulation& sim = simulation_of(*e);
  if (agree && sim.layout().numNodes > 1 && !e->isGlobal())
    failed = comm::algo::any(sim.shell().comm(), failed);
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
  if (vf->assignsOnly() || !(vf->validatesFirst() || vf->checksValueOnly())) return;
  Reader v(r.position(), r.left());
  vf->validate(v, n);
}
}  // namespace

namespace {
/// setVec of every entry of a data element: the values are in global order and this node's
/// entries are one contiguous block.
void set_vec_data(Element* e, const ValueFinfoBase* vf, Reader& r, std::uint64_t n) {
  if (n != e->numData())
    throw ValueError("setVec: " + std::to_string(n) + " values for " + e->path() + ", which has " +
                     std::to_string(e->numData()) + " entries");
  validate_values(vf, r, n);
  for (Index d = 0; d < e->localBegin(); ++d) vf->skip(r);
  atomic_write(e, vf, r,
               [&](auto&& fn) {
                 for (Index d = e->localBegin(); d < e->localEnd(); ++d) fn(d, Index{0});
               },
               true, "setVec", {e->localBegin(), e->localEnd()});
}

/// How many field entries the nodes before this one hold, and all nodes together (a collective
/// over the nodes of a distributed element: only each node can count its parents' entries).
std::pair<std::uint64_t, std::uint64_t> field_entries_before(Simulation& sim, const Element* e) {
  std::uint64_t mine = 0;
  for (Index d = e->localBegin(); d < e->localEnd(); ++d) mine += e->numField(d);
  if (sim.layout().numNodes == 1 || e->isGlobal()) return {0, mine};
  std::vector<std::size_t> counts;
  std::vector<char> all;
  comm::algo::allgather_inline(sim.shell().comm(),
                               {reinterpret_cast<const char*>(&mine), sizeof mine}, sizeof mine,
                               counts, all);
  std::uint64_t before = 0, total = 0;
  for (int k = 0; k < sim.layout().numNodes; ++k) {
    std::uint64_t x;
    std::memcpy(&x, all.data() + k * sizeof x, sizeof x);
    if (k < sim.layout().node) before += x;
    total += x;
  }
  return {before, total};
}

/// setVec of every field entry of every parent, parent by parent: this node's entries start
/// after those of the nodes before it.
void set_vec_fields(Simulation& sim, Element* e, const ValueFinfoBase* vf, Reader& r,
                    std::uint64_t n) {
  const auto [before, total] = field_entries_before(sim, e);
  if (n != total)
    throw ValueError("setVec: " + std::to_string(n) + " values for " + e->path() + ", which has " +
                     std::to_string(total) + " entries over all its parents");
  validate_values(vf, r, n);
  for (std::uint64_t k = 0; k < before; ++k) vf->skip(r);
  atomic_write(
      e, vf, r,
      [&](auto&& fn) {
        for (Index d = e->localBegin(); d < e->localEnd(); ++d)
          for (Index f = 0; f < e->numField(d); ++f) fn(d, f);
      },
      true, "setVec");
}

/// setVec of the field entries of one parent: they live on its owner only, which alone checks
/// the count and writes.
void set_vec_parent(Element* e, const ValueFinfoBase* vf, Reader& r, std::uint64_t n, Index d) {
  check_data_index(e, d, "setVec");
  validate_values(vf, r, n);
  if (!e->isLocal(d)) return;
  if (n != e->numField(d))
    throw ValueError("setVec: " + std::to_string(n) + " values for " + e->name() + " of " +
                     e->context().elements().path(e->parent()) + "[" + std::to_string(d) +
                     "], which has " + std::to_string(e->numField(d)) + " entries");
  atomic_write(
      e, vf, r,
      [&](auto&& fn) {
        for (Index f = 0; f < n; ++f) fn(d, f);
      },
      false, "setVec");
}
}  // namespace

void do_set_vec(Simulation& sim, Reader& r, Writer&) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const TypeTag t = get_type(r);
  const auto whole = r.get<bool>();
  const auto n = r.get<std::uint64_t>();
  Element* e = require_element(sim, o, "setVec");
  auto* vf = require_value(e, field, "setVec", true);
  check_type(vf->valueType(), t.mangled, t.name, "setVec", e->cinfo()->name() + "." + field);
  if (!e->isField())
    set_vec_data(e, vf, r, n);
  else if (whole)
    set_vec_fields(sim, e, vf, r, n);
  else
    set_vec_parent(e, vf, r, n, o.dataIndex);
  tell_state(sim, e);
}

/// pairFill with field values (Shell::pairFill's PairValues): every check first, on every node
/// alike (metadata and the values themselves), then the fill, then the values, each written by
/// the node that holds its entry's parent. Only fields whose setter cannot fail once the checks
/// passed are taken (a plain member, or a setter whose verdict depends on the value alone), so
/// that nothing can fail after the fill.
void do_pair_fill_values(Simulation& sim, Reader& r, Writer&) {
  const auto id = r.get<std::uint32_t>();
  const auto src = r.get<ArrayView<Index>>();
  const auto dest = r.get<ArrayView<Index>>();
  const auto nf = r.get<std::uint32_t>();
  std::vector<PairFieldValues> given;
  for (std::uint32_t i = 0; i < nf; ++i) {
    PairFieldValues g;
    g.field = r.get<std::string>();
    g.type = get_type(r);
    g.n = r.get<std::uint64_t>();
    g.bytes = r.get<std::uint64_t>();
    g.at = r.take(g.bytes);
    given.push_back(std::move(g));
  }
  pair_fill_values(sim, id, src, dest, given);
}

void pair_fill_values(Simulation& sim, std::uint32_t id, std::span<const Index> src,
                      std::span<const Index> dest, const std::vector<PairFieldValues>& given) {
  auto* m = static_cast<SparseMsg*>(require_msg(sim, id, MsgKind::sparse, "pairFill"));
  Element* e = m->dest();
  if (!e->isField())
    throw ValueError(
        "pairFill: field values go to the entries the pairs make in a field element "
        "(a synapse); the destination " +
        e->path() + " is not one");
  // Each field's packed values, reached by pair: value k at at + k * size, or (values of
  // different sizes: strings) at at + offsets[k].
  struct Values {
    const ValueFinfoBase* vf;
    const char* at;
    std::size_t bytes, size;
    std::vector<std::uint64_t> offsets;
  };
  std::vector<Values> fields;
  for (const PairFieldValues& g : given) {
    const std::uint64_t n = g.n;
    const std::string what = e->cinfo()->name() + "." + g.field;
    auto* vf = require_value(e, g.field, "pairFill", true);
    check_type(vf->valueType(), g.type.mangled, g.type.name, "pairFill", what);
    if (n != src.size())
      throw ValueError("pairFill: " + std::to_string(n) + " values of " + what + " for " +
                       std::to_string(src.size()) + " pairs (one per pair, in pair order)");
    for (const Values& f : fields)
      if (f.vf == vf) throw ValueError("pairFill: values of " + what + " given twice");
    if (!vf->assignsOnly() && !vf->checksValueOnly())
      throw ValueError("pairFill: " + what +
                       "'s setter depends on the object's state, so its values cannot all be "
                       "checked before the fill: set it with setVec once the message is filled");
    // Exactly n values (no short read later), and where each starts.
    Values f{vf, g.at, g.bytes, 0, {}};
    Reader v(g.at, g.bytes);
    for (std::uint64_t k = 0; k < n; ++k) {
      const std::size_t before = v.left();
      vf->skip(v);
      const std::size_t size = before - v.left();
      if (k == 0) f.size = size;
      if (size != f.size && f.offsets.empty()) {
        f.offsets.resize(n);
        for (std::uint64_t j = 0; j < k; ++j) f.offsets[j] = j * f.size;
      }
      if (!f.offsets.empty()) f.offsets[k] = g.bytes - before;
    }
    if (v.left())
      throw CommError("corrupted buffer: " + std::to_string(v.left()) + " bytes after the " +
                      std::to_string(n) + " values of " + what);
    validate_values(vf, Reader(g.at, g.bytes), n);
    fields.push_back(std::move(f));
  }
  m->pairFill(src, dest);  // (checks the indices before it changes anything)
  // Parent by parent (their objects in order), each entry's fields together, each value read
  // where it lies.
  if (fields.empty()) return;
  // Fields that are plain members of a floating type, on a message that holds its entries'
  // objects (an EdgeArray's store): copied straight into the objects, in slot order (at 1e6
  // neurons, 1e8 synapses, 23 s against 49 parent by parent, and no 4 B a pair).
  if (const EdgeStoreBase* store = m->store(); store && store->size() > 0) {
    std::vector<std::ptrdiff_t> off(fields.size());
    bool plain = true;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const auto& t = fields[i].vf->valueType();
      plain = plain && fields[i].vf->assignsOnly() && fields[i].offsets.empty() &&
              (t == typeid(double) || t == typeid(float)) &&
              fields[i].vf->memberOffset(store->object(0), &off[i]);
    }
    if (plain && m->forEachPairSlot(src, dest, [&](std::size_t k, std::uint64_t slot) {
          char* obj = store->object(slot);
          for (std::size_t i = 0; i < fields.size(); ++i)
            std::memcpy(obj + off[i], fields[i].at + k * fields[i].size, fields[i].size);
        })) {
      tell_state(sim, e);
      return;
    }
  }
  m->forEachPairField(src, dest, [&](std::size_t k, Index field) {
    for (const Values& f : fields) {
      const std::size_t at = f.offsets.empty() ? k * f.size : f.offsets[k];
      Reader v(f.at + at, f.bytes - at);
      f.vf->set(e, dest[k], field, v);
    }
  });
  tell_state(sim, e);
}

void do_set_all(Simulation& sim, Reader& r, Writer&) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const TypeTag t = get_type(r);
  Element* e = require_element(sim, o, "setVec");
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
  tell_state(sim, e);
}

void do_lookup(Simulation& sim, Reader& r, Writer& w, bool set) {
  const char* op = set ? "setLookup" : "getLookup";
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const TypeTag kt = get_type(r);
  const TypeTag vt = get_type(r);
  Element* e = require_element(sim, o, op);
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
  if (set) {
    lf->set(e, o.dataIndex, o.fieldIndex, kr, r);
    tell_state(sim, e);
  } else {
    lf->get(e, o.dataIndex, o.fieldIndex, kr, w);
  }
}

void do_call(Simulation& sim, Reader& r, Writer&) {
  const auto o = r.get<ObjId>();
  const auto field = r.get<std::string>();
  const auto n = r.get<std::uint32_t>();
  std::vector<TypeTag> types;
  for (std::uint32_t i = 0; i < n; ++i) types.push_back(get_type(r));
  Element* e = require_element(sim, o, "call");
  const DestFinfoBase* df = require_dest(e, field, "call");
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
  tell_state(sim, e);
}

}  // namespace antler::shell_detail

#pragma once
// The Shell's node-side handlers (shell.cpp's execute calls them on every node) and the argument
// helpers they share: internal to shell/, not installed. One file per topic:
//   handlers_tree.cpp      create, destroy (and default scheduling)
//   handlers_msgs.cpp      messages: add, shared fields, Sparse filling, stride
//   handlers_fields.cpp    get/set of one, many (all or nothing on every node) and lookup fields,
//                          calls
//   handlers_run.cpp       the clock and the run: setClock, useClock, reinit, start, threads,
//                          clearModel, syncDataHandler, a reduction now
//   handlers_library.cpp   loadLibrary and extension commands
// A new built-in command: its Op (shell.hpp) and descriptor (detail/command.hpp), a handler in
// the file of its topic (declared below), one row in channel.cpp's kCommands, and the client
// method that calls it (shell.cpp).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/buffer.hpp"
#include "core/element.hpp"
#include "core/error.hpp"
#include "core/value_finfo.hpp"
#include "msg/msg.hpp"
#include "shell/shell.hpp"
#include "shell/simulation.hpp"

namespace antler::shell_detail {

/// A command's first bytes: its op.
inline ByteBuffer command(Op op) {
  ByteBuffer b;
  Writer(b).put<std::uint32_t>(static_cast<std::uint32_t>(op));
  return b;
}

inline Element* require_element(const Simulation& sim, const ObjId& o, const char* op) {
  Element* e = sim.elements().get(o.id);
  if (!e)
    throw PathError(std::string(op) + ": element " + std::to_string(o.id.value) +
                    " does not exist");
  return e;
}

inline void check_data_index(const Element* e, Index d, const char* op) {
  if (d >= e->numData())
    throw IndexError(std::string(op) + ": index " + std::to_string(d) + " out of range for " +
                         e->path() + ", which has " + std::to_string(e->numData()) + " entries",
                     d, e->numData());
}

/// Checks (d, f) on the owner: for a FieldElement, f must be below the parent's entry count.
inline void check_field_index(const Element* e, Index d, Index f, const char* op) {
  if (e->isField() && f >= e->numField(d))
    throw IndexError(std::string(op) + ": index " + std::to_string(f) + " out of range for " +
                         e->name() + " of " + e->context().elements().path(e->parent()) + "[" +
                         std::to_string(d) + "], which has " + std::to_string(e->numField(d)) +
                         " entries",
                     f, e->numField(d));
}

inline std::vector<std::string> value_fields(const Cinfo* c) {
  auto v = c->fieldNames(FinfoKind::value);
  auto r = c->fieldNames(FinfoKind::readOnlyValue);
  v.insert(v.end(), r.begin(), r.end());
  return v;
}

inline const ValueFinfoBase* require_value(const Element* e, std::string_view field, const char* op,
                                           bool writable) {
  const Finfo* f = e->cinfo()->findFinfo(field);
  if (!f || (f->kind() != FinfoKind::value && f->kind() != FinfoKind::readOnlyValue))
    throw FieldError(std::string(op) + ": '" + std::string(field) + "' is not a field of " +
                         e->cinfo()->name() + " (fields: " + join_names(value_fields(e->cinfo())) +
                         ")",
                     e->cinfo()->name(), field, value_fields(e->cinfo()));
  auto* vf = static_cast<const ValueFinfoBase*>(f);
  if (writable && vf->readOnly())
    throw FieldError(std::string(op) + ": field '" + std::string(field) + "' of " +
                     e->cinfo()->name() + " is read-only");
  return vf;
}

/// The field `name` of e's class, which must be of `kind`; otherwise a FieldError naming the
/// fields of that kind ("'x' is not a <what> of C (<plural>: a, b)").
inline const Finfo* require_finfo(const Element* e, std::string_view name, FinfoKind kind,
                                  const char* what, const char* plural, const char* op) {
  const Finfo* f = e->cinfo()->findFinfo(name);
  if (f && f->kind() == kind) return f;
  const auto valid = e->cinfo()->fieldNames(kind);
  throw FieldError(std::string(op) + ": '" + std::string(name) + "' is not a " + what + " of " +
                       e->cinfo()->name() + " (" + plural + ": " + join_names(valid) + ")",
                   e->cinfo()->name(), name, valid);
}

inline const LookupValueFinfoBase* require_lookup(const Element* e, std::string_view field,
                                                  const char* op) {
  return static_cast<const LookupValueFinfoBase*>(
      require_finfo(e, field, FinfoKind::lookupValue, "lookup field", "lookup fields", op));
}

/// Used by `call` and by the Shell's description of a function (one check, one message).
inline const DestFinfoBase* require_dest(const Element* e, std::string_view dest, const char* op) {
  return static_cast<const DestFinfoBase*>(
      require_finfo(e, dest, FinfoKind::dest, "function", "functions", op));
}

inline void check_type(const std::type_info& want, const std::string& gotMangled,
                       const std::string& gotName, const char* op, const std::string& what) {
  if (gotMangled != want.name())
    throw TypeError(
        std::string(op) + ": " + what + " has type " + type_name(want) + ", not " + gotName,
        type_name(want), gotName);
}

struct TypeTag {
  std::string mangled, name;
};
inline void put_type(Writer& w, const std::type_info& t) {
  w.put<std::string>(t.name()).put<std::string>(type_name(t));
}
inline TypeTag get_type(Reader& r) {
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

/// The pieces of a comma-separated path list ("/a,/b/##"), spaces around them dropped
/// (handlers_run.cpp).
std::vector<std::string> split_paths(const std::string& list);

/// The extension commands registered in this process (Shell::registerCommand), by name: like the
/// class registry, a registry of what the loaded code can do, shared by every simulation.
std::map<std::string, Shell::Handler>& extensions();

// ---- the handlers: each runs on every node, reading its arguments from r, its reply to w ----
// Typed (shell/detail/command.hpp: the arguments decoded, the reply written by the adapter):
ObjId do_create(Simulation& sim, const std::string& cls, const std::string& path, Index n,
                bool global);
void do_destroy(Simulation& sim, ObjId o);
std::uint32_t do_add_msg(Simulation& sim, const std::string& kind, ObjId src, const std::string& sf,
                         ObjId dest, const std::string& df);
void do_random(Simulation& sim, std::uint32_t id, double p, std::uint64_t seed);
/// The message with this id, of this kind (MsgError naming what it is otherwise).
Msg* require_msg(Simulation& sim, std::uint32_t id, MsgKind kind, const char* op);
void do_pair_fill(Simulation& sim, std::uint32_t id, const ArrayView<Index>& s,
                  const ArrayView<Index>& d);
void do_set_stride(Simulation& sim, std::uint32_t id, long s);
void do_set_clock(Simulation& sim, unsigned tick, double dt);
void do_use_clock(Simulation& sim, unsigned tick, const std::string& path,
                  const std::string& field);
void do_reinit(Simulation& sim);
void do_start(Simulation& sim, double runtime);
void do_set_threads(Simulation& sim, unsigned n);
void do_phase_timers(Simulation& sim, bool on);
void do_clear(Simulation& sim);
Index do_sync(Simulation& sim, Id id);
void do_reduce_now(Simulation& sim, ObjId o, const std::string& field);
std::vector<std::string> do_load_library(Simulation& sim, const std::string& path);
// By hand (values packed by the field's type follow their typed head; see command.hpp):
void do_set(Simulation& sim, Reader& r, Writer& w);
void do_get(Simulation& sim, Reader& r, Writer& w);
void do_set_vec(Simulation& sim, Reader& r, Writer& w);
void do_get_vec(Simulation& sim, Reader& r, Writer& w);
void do_set_all(Simulation& sim, Reader& r, Writer& w);
void do_pair_fill_values(Simulation& sim, Reader& r, Writer& w);
/// One field's values for pair_fill_values: n values packed by the field's type, at `at`.
struct PairFieldValues {
  std::string field;
  TypeTag type;
  std::uint64_t n = 0;
  const char* at = nullptr;
  std::size_t bytes = 0;
};
/// What do_pair_fill_values runs once it has read its command (Shell::pairFill runs it directly
/// on one node, on the caller's arrays).
void pair_fill_values(Simulation& sim, std::uint32_t id, std::span<const Index> src,
                      std::span<const Index> dest, const std::vector<PairFieldValues>& given);
void do_lookup(Simulation& sim, Reader& r, Writer& w, bool set);
void do_call(Simulation& sim, Reader& r, Writer& w);
void do_extension(Simulation& sim, Reader& r, Writer& w);

}  // namespace antler::shell_detail

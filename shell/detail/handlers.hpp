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
// A new built-in command: a handler in the file of its topic, its declaration below, its Op
// (shell.hpp) and one row in shell.cpp's kCommands.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/buffer.hpp"
#include "core/element.hpp"
#include "core/error.hpp"
#include "core/value_finfo.hpp"
#include "shell/shell.hpp"
#include "shell/simulation.hpp"

namespace antler::shell_detail {

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
                     e->path() + ", which has " + std::to_string(e->numData()) + " entries");
}

/// Checks (d, f) on the owner: for a FieldElement, f must be below the parent's entry count.
inline void check_field_index(const Element* e, Index d, Index f, const char* op) {
  if (e->isField() && f >= e->numField(d))
    throw IndexError(std::string(op) + ": index " + std::to_string(f) + " out of range for " +
                     e->name() + " of " + e->context().elements().path(e->parent()) + "[" +
                     std::to_string(d) + "], which has " + std::to_string(e->numField(d)) +
                     " entries");
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
                     ")");
  auto* vf = static_cast<const ValueFinfoBase*>(f);
  if (writable && vf->readOnly())
    throw FieldError(std::string(op) + ": field '" + std::string(field) + "' of " +
                     e->cinfo()->name() + " is read-only");
  return vf;
}

inline void check_type(const std::type_info& want, const std::string& gotMangled,
                       const std::string& gotName, const char* op, const std::string& what) {
  if (gotMangled != want.name())
    throw TypeError(std::string(op) + ": " + what + " has type " + type_name(want) + ", not " +
                    gotName);
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
void do_create(Simulation& sim, Reader& r, Writer& w);
void do_destroy(Simulation& sim, Reader& r, Writer& w);
void do_add_msg(Simulation& sim, Reader& r, Writer& w);
void do_random(Simulation& sim, Reader& r, Writer& w);
void do_pair_fill(Simulation& sim, Reader& r, Writer& w);
void do_set_stride(Simulation& sim, Reader& r, Writer& w);
void do_set(Simulation& sim, Reader& r, Writer& w);
void do_get(Simulation& sim, Reader& r, Writer& w);
void do_set_vec(Simulation& sim, Reader& r, Writer& w);
void do_get_vec(Simulation& sim, Reader& r, Writer& w);
void do_set_all(Simulation& sim, Reader& r, Writer& w);
void do_lookup(Simulation& sim, Reader& r, Writer& w, bool set);
void do_call(Simulation& sim, Reader& r, Writer& w);
void do_set_clock(Simulation& sim, Reader& r, Writer& w);
void do_use_clock(Simulation& sim, Reader& r, Writer& w);
void do_reinit(Simulation& sim, Reader& r, Writer& w);
void do_start(Simulation& sim, Reader& r, Writer& w);
void do_set_threads(Simulation& sim, Reader& r, Writer& w);
void do_clear(Simulation& sim, Reader& r, Writer& w);
void do_sync(Simulation& sim, Reader& r, Writer& w);
void do_reduce_now(Simulation& sim, Reader& r, Writer& w);
void do_load_library(Simulation& sim, Reader& r, Writer& w);
void do_extension(Simulation& sim, Reader& r, Writer& w);

}  // namespace antler::shell_detail

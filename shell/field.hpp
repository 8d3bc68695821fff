#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Typed access to fields and functions of any object of a simulation, through its Shell, on
/// whatever node owns the object:
///
///   Shell& s = sim.shell();
///   Field<double>::set(s, neuron, "Vm", -0.065);
///   double vm = Field<double>::get(s, neuron, "Vm");
///   std::vector<double> all = Field<double>::getVec(s, neurons, "Vm");   // every entry, all nodes
///   SetGet::call(s, neuron, "addSpike", 0.01);
///
/// The C++ type must be the field's type exactly (TypeError otherwise, naming both types).
#include <string_view>
#include <vector>

#include "core/buffer.hpp"
#include "core/id.hpp"
#include "core/type_name.hpp"
#include "shell/shell.hpp"

namespace antler {

namespace detail {
template <class T>
ByteBuffer pack(const T& v) {
  ByteBuffer b;
  Writer(b).put<T>(v);
  return b;
}
template <class T>
std::vector<T> unpack_all(const ByteBuffer& b) {
  std::vector<T> out;
  Reader r(b);
  if constexpr (std::is_trivially_copyable_v<T>) out.reserve(b.size() / sizeof(T));
  while (r.left()) out.push_back(r.get<T>());
  return out;
}
}  // namespace detail

/// Get and set a value field of type T.
template <class T>
struct Field {
  /// Sets field of one object.
  static void set(Shell& s, ObjId o, std::string_view field, const T& v) {
    s.setPacked(o, field, typeid(T), detail::pack(v));
  }
  /// Reads field of one object.
  static T get(Shell& s, ObjId o, std::string_view field) {
    const ByteBuffer b = s.getPacked(o, field, typeid(T));
    Reader r(b);
    return r.get<T>();
  }
  /// Field of every entry of an Element, in index order (for a FieldElement: every field entry of
  /// every parent, parent by parent).
  static std::vector<T> getVec(Shell& s, Id e, std::string_view field) {
    return detail::unpack_all<T>(s.getVecPacked(ObjId(e), field, typeid(T), true));
  }
  /// Field of every field entry of one parent: o = (FieldElement, parent index).
  static std::vector<T> getFieldVec(Shell& s, ObjId o, std::string_view field) {
    return detail::unpack_all<T>(s.getVecPacked(o, field, typeid(T), false));
  }
  /// Sets field of every entry from v (v.size() must be the entry count).
  static void setVec(Shell& s, Id e, std::string_view field, const std::vector<T>& v) {
    ByteBuffer b;
    Writer w(b);
    for (const T& x : v) w.put<T>(x);
    s.setVecPacked(ObjId(e), field, typeid(T), b, v.size(), true);
  }
  /// Sets field of every field entry of one parent: o = (FieldElement, parent index).
  static void setFieldVec(Shell& s, ObjId o, std::string_view field, const std::vector<T>& v) {
    ByteBuffer b;
    Writer w(b);
    for (const T& x : v) w.put<T>(x);
    s.setVecPacked(o, field, typeid(T), b, v.size(), false);
  }
  /// Sets field of every entry (every field entry of a FieldElement) to v.
  static void setAll(Shell& s, Id e, std::string_view field, const T& v) {
    s.setAllPacked(ObjId(e), field, typeid(T), detail::pack(v));
  }
};

/// Get and set a lookup field with key K and value T.
template <class K, class T>
struct LookupField {
  static T get(Shell& s, ObjId o, std::string_view field, const K& key) {
    const ByteBuffer b = s.lookupGetPacked(o, field, typeid(K), detail::pack(key), typeid(T));
    Reader r(b);
    return r.get<T>();
  }
  static void set(Shell& s, ObjId o, std::string_view field, const K& key, const T& v) {
    s.lookupSetPacked(o, field, typeid(K), detail::pack(key), typeid(T), detail::pack(v));
  }
};

/// Calls destination functions by name.
struct SetGet {
  /// Calls dest on object o with args (types must match the function's exactly).
  template <class... A>
  static void call(Shell& s, ObjId o, std::string_view dest, const A&... args) {
    ByteBuffer b;
    Writer w(b);
    (w.put<A>(args), ...);
    s.callPacked(o, dest, type_infos<A...>(), b);
  }
};

}  // namespace antler
#pragma GCC visibility pop

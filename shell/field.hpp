#pragma once
/// Typed access to fields and functions of any object, on whatever node owns it:
///
///   Field<double>::set(neuron, "Vm", -0.065);
///   double vm = Field<double>::get(neuron, "Vm");
///   std::vector<double> all = Field<double>::getVec(neurons, "Vm");   // every entry, all nodes
///   SetGet::call(neuron, "addSpike", 0.01);
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
  static void set(ObjId o, std::string_view field, const T& v) {
    Shell::instance().setPacked(o, field, typeid(T), detail::pack(v));
  }
  /// Reads field of one object.
  static T get(ObjId o, std::string_view field) {
    const ByteBuffer b = Shell::instance().getPacked(o, field, typeid(T));
    Reader r(b);
    return r.get<T>();
  }
  /// Field of every entry of an Element, in index order (for a FieldElement: every field entry of
  /// every parent, parent by parent).
  static std::vector<T> getVec(Id e, std::string_view field) {
    return detail::unpack_all<T>(Shell::instance().getVecPacked(ObjId(e), field, typeid(T), true));
  }
  /// Field of every field entry of one parent: o = (FieldElement, parent index).
  static std::vector<T> getFieldVec(ObjId o, std::string_view field) {
    return detail::unpack_all<T>(Shell::instance().getVecPacked(o, field, typeid(T), false));
  }
  /// Sets field of every entry from v (v.size() must be the entry count).
  static void setVec(Id e, std::string_view field, const std::vector<T>& v) {
    ByteBuffer b;
    Writer w(b);
    for (const T& x : v) w.put<T>(x);
    Shell::instance().setVecPacked(ObjId(e), field, typeid(T), b, v.size(), true);
  }
  /// Sets field of every field entry of one parent: o = (FieldElement, parent index).
  static void setFieldVec(ObjId o, std::string_view field, const std::vector<T>& v) {
    ByteBuffer b;
    Writer w(b);
    for (const T& x : v) w.put<T>(x);
    Shell::instance().setVecPacked(o, field, typeid(T), b, v.size(), false);
  }
  /// Sets field of every entry (every field entry of a FieldElement) to v.
  static void setAll(Id e, std::string_view field, const T& v) {
    Shell::instance().setAllPacked(ObjId(e), field, typeid(T), detail::pack(v));
  }
};

/// Get and set a lookup field with key K and value T.
template <class K, class T>
struct LookupField {
  static T get(ObjId o, std::string_view field, const K& key) {
    const ByteBuffer b =
        Shell::instance().lookupGetPacked(o, field, typeid(K), detail::pack(key), typeid(T));
    Reader r(b);
    return r.get<T>();
  }
  static void set(ObjId o, std::string_view field, const K& key, const T& v) {
    Shell::instance().lookupSetPacked(o, field, typeid(K), detail::pack(key), typeid(T),
                                      detail::pack(v));
  }
};

/// Calls destination functions by name.
struct SetGet {
  /// Calls dest on object o with args (types must match the function's exactly).
  template <class... A>
  static void call(ObjId o, std::string_view dest, const A&... args) {
    ByteBuffer b;
    Writer w(b);
    (w.put<A>(args), ...);
    Shell::instance().callPacked(o, dest, type_infos<A...>(), b);
  }
};

}  // namespace antler

#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Readable names of C++ types, for introspection and error messages.
#include <string>
#include <typeinfo>
#include <vector>

namespace antler {

/// "double", "unsigned int", "std::vector<double>", ... for a type_info.
std::string type_name(const std::type_info& t);

/// Readable name of T.
template <class T>
std::string type_name() {
  return type_name(typeid(T));
}

/// "double,unsigned int" for a list of types ("void" for none).
std::string type_list_name(const std::vector<const std::type_info*>& types);

/// The type_infos of a parameter pack.
template <class... A>
std::vector<const std::type_info*> type_infos() {
  return {&typeid(A)...};
}

}  // namespace antler
#pragma GCC visibility pop

#include "core/type_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "core/id.hpp"

namespace antler {

std::string type_name(const std::type_info& t) {
  if (t == typeid(std::string)) return "string";
  if (t == typeid(std::vector<double>)) return "vector<double>";
  if (t == typeid(std::vector<unsigned>)) return "vector<unsigned int>";
  if (t == typeid(std::vector<int>)) return "vector<int>";
  if (t == typeid(std::vector<std::string>)) return "vector<string>";
  if (t == typeid(ObjId)) return "ObjId";
  if (t == typeid(Id)) return "Id";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status),
                                           std::free);
  std::string s = (status == 0 && d) ? d.get() : t.name();
  if (s.rfind("antler::", 0) == 0) s = s.substr(8);
  return s;
}

std::string type_list_name(const std::vector<const std::type_info*>& types) {
  if (types.empty()) return "void";
  std::string out;
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (i) out += ",";
    out += type_name(*types[i]);
  }
  return out;
}

}  // namespace antler

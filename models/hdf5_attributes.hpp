#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// MOOSE's HDF5 attributes (HDF5WriterBase's stringAttr, doubleAttr, longAttr, stringVecAttr,
/// doubleVecAttr, longVecAttr), shared by NSDFWriter and HDF5DataWriter. A key "name" is an
/// attribute of the file's root; "/group/path/name" one of that object (made as groups if it is
/// not in the file). They are written at the writer's next flush or close and then forgotten, as
/// MOOSE does, so a key set again after a flush replaces the attribute.
#include <map>
#include <string>
#include <vector>

#include "core/class_builder.hpp"
#include "core/error.hpp"

namespace antler {

struct Hdf5Attributes {
  std::map<std::string, std::string> strings;
  std::map<std::string, double> doubles;
  std::map<std::string, long> longs;
  std::map<std::string, std::vector<std::string>> stringVecs;
  std::map<std::string, std::vector<double>> doubleVecs;
  std::map<std::string, std::vector<long>> longVecs;

  bool empty() const {
    return strings.empty() && doubles.empty() && longs.empty() && stringVecs.empty() &&
           doubleVecs.empty() && longVecs.empty();
  }
  void clear() { *this = Hdf5Attributes{}; }

  /// Adds the six lookup fields of class T, whose attributes are the member `m`; `who` names the
  /// class in errors.
  template <class T>
  static void addFields(ClassBuilder<T>& b, Hdf5Attributes T::*m, const char* who) {
    add<T>(b, m, &Hdf5Attributes::strings, who, "stringAttr", "a string attribute");
    add<T>(b, m, &Hdf5Attributes::doubles, who, "doubleAttr", "a number attribute");
    add<T>(b, m, &Hdf5Attributes::longs, who, "longAttr", "an integer attribute");
    add<T>(b, m, &Hdf5Attributes::stringVecs, who, "stringVecAttr", "a list-of-strings attribute");
    add<T>(b, m, &Hdf5Attributes::doubleVecs, who, "doubleVecAttr", "a list-of-numbers attribute");
    add<T>(b, m, &Hdf5Attributes::longVecs, who, "longVecAttr", "a list-of-integers attribute");
  }

 private:
  template <class T, class V>
  static void add(ClassBuilder<T>& b, Hdf5Attributes T::*m,
                  std::map<std::string, V> Hdf5Attributes::*kind, const char* who,
                  const char* field, const char* what) {
    const std::string where = std::string(who) + "." + field;
    auto get = [m, kind, where](const T& o, const std::string& key) -> V {
      const auto& map = (o.*m).*kind;
      auto it = map.find(key);
      if (it == map.end())
        throw IndexError(where + "['" + key +
                         "']: not set (attributes are kept until the next flush or close)");
      return it->second;
    };
    auto set = [m, kind, where](T& o, const std::string& key, const V& v) {
      if (key.empty() || key.back() == '/' || key.find('\0') != std::string::npos)
        throw ValueError(where + ": the key " + quoted(key) +
                         " is no attribute name ('name' or '/group/path/name')");
      ((o.*m).*kind)[key] = v;
    };
    b.template lookupFn<std::string, V>(
        field, get, set,
        std::string(what) +
            " ('name': of the file; '/path/name': of that object), written at the next flush "
            "or close");
  }
};

}  // namespace antler
#pragma GCC visibility pop

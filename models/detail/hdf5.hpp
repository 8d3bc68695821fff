#pragma once
// HDF5 helpers of antler's writers (NSDFWriter, HDF5DataWriter): internal, not installed. Only
// the writers' .cpp files see HDF5's headers (CMakeLists.txt).
#include <hdf5.h>

#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "models/hdf5_attributes.hpp"

namespace antler::hdf5 {

/// Turns HDF5's own printing of its error stack off while alive (errors become exceptions here).
struct Quiet {
  H5E_auto2_t fn = nullptr;
  void* data = nullptr;
  Quiet() {
    H5Eget_auto2(H5E_DEFAULT, &fn, &data);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~Quiet() { H5Eset_auto2(H5E_DEFAULT, fn, data); }
  Quiet(const Quiet&) = delete;
  Quiet& operator=(const Quiet&) = delete;
};

/// Throws a ValueError naming the writer, the file and the failed step when an HDF5 call
/// returned < 0.
template <class H>
H checked(H h, const char* who, const std::string& file, const std::string& what) {
  if (h < 0) throw ValueError(std::string(who) + ": cannot " + what + " in '" + file + "'");
  return h;
}

/// f as a writer's filename: a ValueError naming `who` if it is empty or holds a NUL.
inline const std::string& valid_filename(const char* who, const std::string& f) {
  if (f.empty()) throw ValueError(std::string(who) + ".filename: must not be empty");
  if (f.find('\0') != std::string::npos)
    throw ValueError(std::string(who) + ".filename: " + antler::quoted(f) +
                     " contains a NUL character (a file name cannot)");
  return f;
}

/// A UTF-8 variable-length string type (the caller closes it).
inline hid_t vlen_string() {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

/// The group at `path`, made with its missing parents (the caller closes it).
inline hid_t make_group(hid_t fid, const std::string& path, const char* who,
                        const std::string& file) {
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t g = H5Gcreate2(fid, path.c_str(), lcpl, H5P_DEFAULT, H5P_DEFAULT);
  H5Pclose(lcpl);
  return checked(g, who, file, "create group " + path);
}

/// Writes one attribute `name` of object `obj` (replacing one of that name): `n` values of
/// memory type `t` at `p`, as a scalar when `scalar`.
inline void put_attribute(hid_t obj, const std::string& name, hid_t t, const void* p, hsize_t n,
                          bool scalar, const char* who, const std::string& file) {
  if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
  hid_t s = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr);
  hid_t a = H5Acreate2(obj, name.c_str(), t, s, H5P_DEFAULT, H5P_DEFAULT);
  const herr_t rc = a < 0 ? -1 : H5Awrite(a, t, p);
  if (a >= 0) H5Aclose(a);
  H5Sclose(s);
  checked(rc, who, file, "write the attribute " + name);
}

inline void put_attribute(hid_t obj, const std::string& name, const std::string& v, const char* who,
                          const std::string& file) {
  hid_t t = vlen_string();
  const char* p = v.c_str();
  try {
    put_attribute(obj, name, t, &p, 1, true, who, file);
  } catch (...) {
    H5Tclose(t);
    throw;
  }
  H5Tclose(t);
}

inline void put_attribute(hid_t obj, const std::string& name, double v, const char* who,
                          const std::string& file) {
  put_attribute(obj, name, H5T_NATIVE_DOUBLE, &v, 1, true, who, file);
}

inline void put_attribute(hid_t obj, const std::string& name, long v, const char* who,
                          const std::string& file) {
  put_attribute(obj, name, H5T_NATIVE_LONG, &v, 1, true, who, file);
}

inline void put_attribute(hid_t obj, const std::string& name, const std::vector<std::string>& v,
                          const char* who, const std::string& file) {
  std::vector<const char*> p;
  for (const auto& x : v) p.push_back(x.c_str());
  hid_t t = vlen_string();
  try {
    put_attribute(obj, name, t, p.data(), p.size(), false, who, file);
  } catch (...) {
    H5Tclose(t);
    throw;
  }
  H5Tclose(t);
}

inline void put_attribute(hid_t obj, const std::string& name, const std::vector<double>& v,
                          const char* who, const std::string& file) {
  put_attribute(obj, name, H5T_NATIVE_DOUBLE, v.data(), v.size(), false, who, file);
}

inline void put_attribute(hid_t obj, const std::string& name, const std::vector<long>& v,
                          const char* who, const std::string& file) {
  put_attribute(obj, name, H5T_NATIVE_LONG, v.data(), v.size(), false, who, file);
}

/// Writes every attribute of `a` into the open file `fid` (see models/hdf5_attributes.hpp for
/// the keys), then forgets them.
inline void write_attributes(hid_t fid, Hdf5Attributes& a, const char* who,
                             const std::string& file) {
  Quiet quiet;
  auto each = [&](auto& map) {
    for (const auto& [key, value] : map) {
      // "name": the root; "/a/b/name": /a/b, made as groups if it is not in the file.
      const auto slash = key.rfind('/');
      std::string obj = slash == std::string::npos ? "/" : key.substr(0, slash);
      if (obj.empty()) obj = "/";
      if (obj.front() != '/') obj = "/" + obj;
      const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
      if (obj != "/" && H5Lexists(fid, obj.c_str(), H5P_DEFAULT) <= 0)
        H5Gclose(make_group(fid, obj, who, file));
      hid_t o = checked(H5Oopen(fid, obj.c_str(), H5P_DEFAULT), who, file, "open " + obj);
      try {
        put_attribute(o, name, value, who, file);
      } catch (...) {
        H5Oclose(o);
        throw;
      }
      H5Oclose(o);
    }
  };
  each(a.strings);
  each(a.doubles);
  each(a.longs);
  each(a.stringVecs);
  each(a.doubleVecs);
  each(a.longVecs);
  a.clear();
}

}  // namespace antler::hdf5

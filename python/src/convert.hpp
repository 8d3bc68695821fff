#pragma once
// The conversion layer at the Python boundary: every value that enters antler from Python — a
// field value, a function argument, an index, a count, a tick, a seed — is converted and checked
// here, by the rules below, and nothing else converts Python objects. A refused value raises the
// antler error that derives from the matching built-in (TypeError for the wrong kind of object,
// ValueError or IndexError for a value out of range), naming the operation, the argument and
// what would be valid, before anything is changed.
//
// Rules (no silent truncation, wrap-around or coercion):
//   integers   Python int or numpy integer (anything with __index__), never bool, float or str;
//              in the C++ type's range (or a narrower one the caller gives).
//   reals      Python int or float, numpy integer or floating; never bool, complex, str, bytes,
//              None. NaN and inf pass here when the field decides (its setter may refuse them);
//              arguments that must be finite say so.
//   bools      Python bool, numpy bool, or an integer that is exactly 0 or 1; never None, floats
//              or strings.
//   strings    str only (not bytes); may not contain NUL where they name things.
//   sequences  a 1-d numpy array of a compatible kind (integers for integer fields, integers or
//              floats for real fields, bools or 0/1 integers for bools), or any other sequence
//              whose items follow the rules above.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/buffer.hpp"
#include "core/error.hpp"

namespace antler::py_convert {

namespace py = pybind11;

/// Where a value is converted, for messages: "set IntFire.numSynapses", "start: runtime".
struct Ctx {
  std::string where;
  bool index = false;  ///< out of range is an IndexError (an index), not a ValueError
};

/// repr(h) (shortened) and its type: "'3' (str)", "1.5 (float)".
std::string describe(py::handle h);

/// The integer value of h in [lo, hi] (TypeError if h is not an integer).
long long to_int(py::handle h, const Ctx& c, long long lo, long long hi);
/// The unsigned integer value of h in [lo, hi].
unsigned long long to_uint(py::handle h, const Ctx& c, unsigned long long lo,
                           unsigned long long hi);
/// The real value of h (finite only if `finite`).
double to_real(py::handle h, const Ctx& c, bool finite);
/// The bool value of h.
bool to_bool(py::handle h, const Ctx& c);
/// The str value of h (without NUL if `name`).
std::string to_str(py::handle h, const Ctx& c, bool name);

/// h converted to the C++ arithmetic type T, in T's range.
template <class T>
T to(py::handle h, const Ctx& c) {
  if constexpr (std::is_same_v<T, bool>) {
    return to_bool(h, c);
  } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
    return static_cast<T>(to_uint(h, c, 0, std::numeric_limits<T>::max()));
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(
        to_int(h, c, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  } else if constexpr (std::is_same_v<T, float>) {
    const double v = to_real(h, c, false);
    if (std::isfinite(v) && std::abs(v) > std::numeric_limits<float>::max())
      throw ValueError(c.where + ": " + describe(h) + " does not fit in a float (32-bit)");
    return static_cast<float>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(to_real(h, c, false));
  } else if constexpr (std::is_same_v<T, std::string>) {
    return to_str(h, c, false);
  } else {
    static_assert(sizeof(T) == 0, "no conversion for this type");
  }
}

/// The numpy dtype kind of h ('f', 'i', 'u', 'b', 'c', 'O', 'U', ...), or 0 if h is not a
/// numpy array or scalar.
char numpy_kind(py::handle h);

/// Appends the values of a 1-d sequence or numpy array h to out as T; returns how many. Arrays
/// of a compatible kind are converted in one pass (a float64 array for a double field is one
/// copy); anything else item by item, each by the rules above.
template <class T>
std::size_t append_many(py::handle h, const Ctx& c, ByteBuffer& out) {
  if (py::isinstance<py::array>(h)) {
    auto a = py::reinterpret_borrow<py::array>(h);
    if (a.ndim() != 1)
      throw ValueError(c.where + ": expected a 1-d array, got " + std::to_string(a.ndim()) +
                       " dimensions");
    const char k = a.dtype().kind();
    const std::string dt = py::str(a.dtype()).cast<std::string>();
    if constexpr (std::is_arithmetic_v<T>) {
      bool ok = false;
      if constexpr (std::is_same_v<T, bool>) {
        ok = k == 'b' || k == 'i' || k == 'u';
      } else if constexpr (std::is_integral_v<T>) {
        ok = k == 'i' || k == 'u';
      } else {
        ok = k == 'f' || k == 'i' || k == 'u';
      }
      if (ok) {
        const auto n = static_cast<std::size_t>(a.size());
        if constexpr (std::is_integral_v<T>) {
          // Range first: nothing is converted unless every value fits (no wrap-around).
          if (n > 0 && !(std::is_same_v<T, bool> && k == 'b')) {
            auto lo = py::int_(a.attr("min")()), hi = py::int_(a.attr("max")());
            const long long tmin =
                std::is_same_v<T, bool> ? 0 : static_cast<long long>(std::numeric_limits<T>::min());
            const unsigned long long tmax =
                std::is_same_v<T, bool>
                    ? 1
                    : static_cast<unsigned long long>(std::numeric_limits<T>::max());
            if (py::int_(lo) < py::int_(tmin) || py::int_(hi) > py::int_(tmax)) {
              throw ValueError(c.where + ": values of the " + dt + " array must lie in " +
                               std::to_string(tmin) + ".." + std::to_string(tmax) + ", got " +
                               py::str(lo).cast<std::string>() + ".." +
                               py::str(hi).cast<std::string>());
            }
          }
        }
        // An array of T itself is one copy into out; another dtype is converted a slice at a
        // time, so that no converted copy of a large array is ever held whole.
        if (py::array_t<T, py::array::c_style>::check_(a)) {
          out.append(a.data(), n * sizeof(T));
          return n;
        }
        constexpr std::size_t kSlice = std::size_t{1} << 16;
        const std::size_t before = out.size();
        out.reserve(before + n * sizeof(T));
        for (std::size_t i = 0; i < n; i += kSlice) {
          const std::size_t m = std::min(kSlice, n - i);
          py::object part =
              a[py::slice(static_cast<py::ssize_t>(i), static_cast<py::ssize_t>(i + m), 1)];
          auto conv = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(part);
          if (!conv) {
            out.resize(before);
            throw TypeError(c.where + ": cannot convert the " + dt + " array");
          }
          if constexpr (std::is_same_v<T, float>) {
            // A finite value past float's range would become inf: refuse it.
            auto wide =
                py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(part);
            for (std::size_t j = 0; j < m; ++j)
              if (std::isinf(conv.data()[j]) && std::isfinite(wide.data()[j])) {
                out.resize(before);
                throw ValueError(c.where + ": entry " + std::to_string(i + j) + " (" +
                                 format_double(wide.data()[j]) +
                                 ") does not fit in a float (32-bit)");
              }
          }
          out.append(conv.data(), m * sizeof(T));
        }
        return n;
      }
    }
    // An array of another kind: objects go item by item below; anything else is refused whole.
    if (k != 'O' && (!std::is_same_v<T, std::string> || k != 'U')) {
      const std::string want = std::is_same_v<T, bool>          ? "bools or 0/1 integers"
                               : std::is_integral_v<T>          ? "integers"
                               : std::is_same_v<T, std::string> ? "strings"
                                                                : "integers or floats";
      throw TypeError(c.where + ": expected an array of " + want + ", got a " + dt + " array" +
                      (k == 'f' && std::is_integral_v<T>
                           ? " (convert it explicitly, e.g. a.astype(int))"
                           : ""));
    }
  }
  if (py::isinstance<py::str>(h) || py::isinstance<py::bytes>(h) ||
      !py::isinstance<py::sequence>(h) && !py::isinstance<py::array>(h))
    throw TypeError(c.where + ": expected a sequence of values, got " + describe(h));
  std::size_t n = 0;
  Writer w(out);
  for (auto x : h) {
    w.put<T>(to<T>(x, Ctx{c.where + ": entry " + std::to_string(n), c.index}));
    ++n;
  }
  return n;
}

}  // namespace antler::py_convert

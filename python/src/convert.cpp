#include "convert.hpp"

namespace antler::py_convert {

namespace {

bool is_bool(py::handle h) {
  return PyBool_Check(h.ptr()) || numpy_kind(h) == 'b';
}

std::string type_of(py::handle h) {
  return Py_TYPE(h.ptr())->tp_name;
}

[[noreturn]] void out_of_range(const Ctx& c, py::handle h, const std::string& range) {
  const std::string m = c.where + ": " + describe(h) + " is out of range (valid: " + range + ")";
  if (c.index) throw IndexError(m);
  throw ValueError(m);
}

/// h as a Python int (TypeError unless h is an integer: never a bool, float or string).
py::object python_int(py::handle h, const Ctx& c, const std::string& range) {
  if (is_bool(h) || !PyIndex_Check(h.ptr()))
    throw TypeError(c.where + ": expected an integer in " + range + ", got " + describe(h));
  py::object v = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
  if (!v) throw py::error_already_set();
  return v;
}

}  // namespace

char numpy_kind(py::handle h) {
  // numpy arrays and numpy scalars both have a dtype; nothing else antler accepts does.
  if (PyLong_CheckExact(h.ptr()) || PyFloat_CheckExact(h.ptr()) || PyUnicode_Check(h.ptr()))
    return 0;
  if (!PyObject_HasAttrString(h.ptr(), "dtype")) return 0;
  py::object d = py::reinterpret_borrow<py::object>(h).attr("dtype");
  if (!PyObject_HasAttrString(d.ptr(), "kind")) return 0;
  const std::string k = py::str(d.attr("kind")).cast<std::string>();
  return k.size() == 1 ? k[0] : 0;
}

std::string describe(py::handle h) {
  std::string r;
  try {
    r = py::repr(h).cast<std::string>();
  } catch (const std::exception&) {
    r = "<unprintable>";
  }
  if (r.size() > 60) r = r.substr(0, 57) + "...";
  return r + " (" + type_of(h) + ")";
}

long long to_int(py::handle h, const Ctx& c, long long lo, long long hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  py::object v = python_int(h, c, range);
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow != 0 || x < lo || x > hi) out_of_range(c, h, range);
  return x;
}

unsigned long long to_uint(py::handle h, const Ctx& c, unsigned long long lo,
                           unsigned long long hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  py::object v = python_int(h, c, range);
  int overflow = 0;
  const long long s = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow < 0 || (overflow == 0 && s < 0)) out_of_range(c, h, range);
  unsigned long long x = static_cast<unsigned long long>(s);
  if (overflow > 0) {
    x = PyLong_AsUnsignedLongLong(v.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      out_of_range(c, h, range);
    }
  }
  if (x < lo || x > hi) out_of_range(c, h, range);
  return x;
}

double to_real(py::handle h, const Ctx& c, bool finite) {
  double v = 0;
  const char k = numpy_kind(h);
  if (PyFloat_Check(h.ptr())) {
    v = PyFloat_AsDouble(h.ptr());
  } else if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) {
    v = PyLong_AsDouble(h.ptr());
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      throw ValueError(c.where + ": " + describe(h) + " is too large for a real number (double)");
    }
  } else if ((k == 'f' || k == 'i' || k == 'u') && !py::isinstance<py::array>(h)) {
    v = py::float_(py::reinterpret_borrow<py::object>(h)).cast<double>();
  } else {
    const bool cplx = PyComplex_Check(h.ptr()) || k == 'c';
    throw TypeError(c.where + ": expected a real number, got " + describe(h) +
                    (cplx ? " (a complex value would lose its imaginary part)" : ""));
  }
  if (finite && !std::isfinite(v))
    throw ValueError(c.where + ": expected a finite number, got " + format_double(v));
  return v;
}

bool to_bool(py::handle h, const Ctx& c) {
  if (py::isinstance<py::array>(h) && py::reinterpret_borrow<py::array>(h).ndim() != 0)
    throw TypeError(c.where + ": expected a bool (True, False, 0 or 1), got an array " +
                    describe(h));
  if (is_bool(h)) return PyObject_IsTrue(h.ptr()) == 1;
  if (PyIndex_Check(h.ptr()) && !py::isinstance<py::array>(h)) {
    py::object v = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
    if (!v) throw py::error_already_set();
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow == 0 && (x == 0 || x == 1)) return x == 1;
    throw ValueError(c.where + ": expected a bool (True, False, 0 or 1), got " + describe(h));
  }
  throw TypeError(c.where + ": expected a bool (True, False, 0 or 1), got " + describe(h));
}

std::string to_str(py::handle h, const Ctx& c, bool name) {
  if (!PyUnicode_Check(h.ptr()))
    throw TypeError(c.where + ": expected a string, got " + describe(h));
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(h.ptr(), &n);
  if (!p) {
    PyErr_Clear();
    throw ValueError(c.where + ": the string " + describe(h) + " cannot be encoded as UTF-8");
  }
  std::string s(p, static_cast<std::size_t>(n));
  if (name && s.find('\0') != std::string::npos)
    throw ValueError(c.where + ": " + quoted(s) + " contains a NUL character");
  return s;
}

}  // namespace antler::py_convert

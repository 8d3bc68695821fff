// _antler: the C++ half of the Python package `antler`. It exposes the Shell as plain functions
// over (id, dataIndex, fieldIndex) triples and converts values between Python and the C++ type of
// each field; python/antler/__init__.py builds the MOOSE-style classes on top.
//
// Importing it initialises MPI. On every rank but 0 the import never returns to the script: the
// rank serves the driver's Shell commands until the driver's interpreter exits, then finalises MPI
// and exits with the driver's exit code. So a script written as if serial runs under mpirun.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <span>
#include <typeindex>
#include <unordered_map>
#include <utility>

#include "convert.hpp"
#include "core/comm/mpi.hpp"
#include "core/error.hpp"
#include "core/type_name.hpp"
#include "models/hdf5_data_writer.hpp"
#include "models/nsdf_writer.hpp"
#include "shell/clock.hpp"
#include "shell/runtime.hpp"
#include "shell/shell.hpp"
#include "shell/simulation.hpp"

namespace py = pybind11;
using namespace antler;

namespace {

// The MPI environment (if antler initialised MPI) and the Runtime on antler's communicator.
std::unique_ptr<comm::Environment> g_env;
std::unique_ptr<Runtime> g_rt;
int g_exit_code = 0;
// The one-node simulation scripts use when antler is not running on a communicator (before
// init, after release).
std::unique_ptr<Simulation> g_serial;

/// The simulation the module's functions act on: the Runtime's, or the serial one.
Simulation& sim() {
  if (g_rt) return g_rt->simulation();
  if (!g_serial) g_serial = std::make_unique<Simulation>();
  return *g_serial;
}
Shell& shell() {
  return sim().shell();
}

// ---- errors: antler::Error kinds -> the Python classes defined in antler/__init__.py ----

// dict kind -> class, set by _set_error_classes. A leaked reference on purpose: a static
// py::object would be destroyed after the interpreter, without the GIL.
PyObject*& error_classes() {
  static PyObject* d = nullptr;
  return d;
}

/// Raises cls with the whole message (PyErr_SetString would stop at a NUL byte) and, as its
/// `details` attribute, the error's facts ({"index": "7", "size": "5"}, ...: core/error.hpp).
void set_python_error(PyObject* cls, const std::string& what, const ErrorDetails& details = {}) {
  PyObject* msg =
      PyUnicode_DecodeUTF8(what.data(), static_cast<Py_ssize_t>(what.size()), "backslashreplace");
  if (!msg) {
    PyErr_Clear();
    PyErr_SetString(cls, "antler error (unprintable message)");
    return;
  }
  PyObject* exc = PyObject_CallOneArg(cls, msg);
  if (!exc) {  // a class that cannot be made from a message: raise it the plain way
    PyErr_Clear();
    PyErr_SetObject(cls, msg);
    Py_DECREF(msg);
    return;
  }
  Py_DECREF(msg);
  PyObject* d = PyDict_New();
  for (const auto& [k, v] : details) {
    PyObject* val =
        PyUnicode_DecodeUTF8(v.data(), static_cast<Py_ssize_t>(v.size()), "backslashreplace");
    if (val) PyDict_SetItemString(d, k.c_str(), val);
    Py_XDECREF(val);
  }
  if (d && PyObject_SetAttrString(exc, "details", d) != 0) PyErr_Clear();
  Py_XDECREF(d);
  PyErr_SetObject(cls, exc);
  Py_DECREF(exc);
}

// ---- conversions between Python objects and the packed C++ value of a field ----

using Triple = std::tuple<std::uint32_t, Index, Index>;

namespace cv = py_convert;

ObjId to_objid(py::handle h, const cv::Ctx& c) {
  py::object o = py::reinterpret_borrow<py::object>(h);
  if (py::hasattr(o, "_oid")) o = o.attr("_oid");
  if (py::isinstance<py::str>(o)) return shell().resolve(cv::to_str(o, c, true), c.where);
  if (py::isinstance<py::tuple>(o) && py::len(o) == 3) {
    auto t = py::reinterpret_borrow<py::tuple>(o);
    return ObjId(Id(static_cast<std::uint32_t>(cv::to_uint(t[0], c, 0, 0xFFFFFFFFu))),
                 static_cast<Index>(cv::to_uint(t[1], c, 0, 0xFFFFFFFFu)),
                 static_cast<Index>(cv::to_uint(t[2], c, 0, 0xFFFFFFFFu)));
  }
  throw TypeError(c.where + ": expected an element, a vec or a path, got " + cv::describe(h));
}

/// How one C++ field type crosses the boundary (conversions in python/src/convert.hpp).
struct Conv {
  std::function<void(py::handle, Writer&, const cv::Ctx&)> to;
  std::function<py::object(Reader&)> from;
  std::function<py::object(ByteBuffer&&)> many;  // a packed sequence -> numpy array or list
  std::function<std::size_t(py::handle, ByteBuffer&, const cv::Ctx&)> toMany;
};

template <class T>
struct is_vector : std::false_type {};
template <class E>
struct is_vector<std::vector<E>> : std::true_type {};

template <class T>
T cast_value(py::handle h, const cv::Ctx& c);

/// A sequence of indices read where it lies when it is a 1-D C-ordered numpy array of antler's
/// Index (uint32: what np.unique, np.nonzero(...).astype(np.uint32) and friends give), so that 1e7
/// synapses' indices are not copied before they reach the command; anything else is converted
/// (each entry checked) into a vector of its own.
struct IndexArg {
  IndexArg(py::handle h, const cv::Ctx& c) {
    if (py::array_t<Index, py::array::c_style>::check_(h)) {
      auto a = py::reinterpret_borrow<py::array_t<Index, py::array::c_style>>(h);
      if (a.ndim() == 1) {
        keep = a;
        view = std::span<const Index>(a.data(), static_cast<std::size_t>(a.size()));
        return;
      }
    }
    own = cast_value<std::vector<Index>>(h, c);
    view = own;
  }
  py::object keep;  // the array viewed
  std::vector<Index> own;
  std::span<const Index> view;
};

template <class T>
T cast_value(py::handle h, const cv::Ctx& c) {
  if constexpr (std::is_same_v<T, ObjId>) {
    return to_objid(h, c);
  } else if constexpr (std::is_same_v<T, Id>) {
    return to_objid(h, c).id;
  } else if constexpr (is_vector<T>::value) {
    using E = typename T::value_type;
    if (py::isinstance<py::str>(h) || py::isinstance<py::bytes>(h) ||
        (!py::isinstance<py::sequence>(h) && !py::isinstance<py::array>(h)))
      throw TypeError(c.where + ": expected a sequence, got " + cv::describe(h));
    T out;
    if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool>) {
      // A 1-D numpy array of integers (or, for a floating E, of floats) converts in bulk: a
      // Sparse message's 1e7 indices in milliseconds, not seconds. An entry out of E's range is
      // converted on its own, for the error the element-wise path gives.
      if (py::isinstance<py::array>(h)) {
        auto a = py::reinterpret_borrow<py::array>(h);
        if (a.ndim() != 1)
          throw TypeError(c.where + ": expected a 1-D sequence, got a " + std::to_string(a.ndim()) +
                          "-D array");
        const char kind = a.dtype().kind();
        auto bulk = [&]<class W>(W*) {
          auto w = py::array_t<W, py::array::c_style | py::array::forcecast>::ensure(a);
          if (!w) return false;
          const W* p = w.data();
          const auto n = static_cast<std::size_t>(w.size());
          out.resize(n);
          for (std::size_t k = 0; k < n; ++k) {
            if constexpr (std::is_integral_v<E>) {
              if (!std::in_range<E>(p[k]))
                out[k] = cast_value<E>(a[py::int_(k)], {c.where + ": entry " + std::to_string(k)});
              else
                out[k] = static_cast<E>(p[k]);
            } else {
              out[k] = static_cast<E>(p[k]);
            }
          }
          return true;
        };
        // Each integer width read as itself: no converted copy of the whole array.
        const auto width = a.dtype().itemsize();
        if (kind == 'i' && (width == 1   ? bulk(static_cast<std::int8_t*>(nullptr))
                            : width == 2 ? bulk(static_cast<std::int16_t*>(nullptr))
                            : width == 4 ? bulk(static_cast<std::int32_t*>(nullptr))
                                         : bulk(static_cast<std::int64_t*>(nullptr))))
          return out;
        if (kind == 'u' && (width == 1   ? bulk(static_cast<std::uint8_t*>(nullptr))
                            : width == 2 ? bulk(static_cast<std::uint16_t*>(nullptr))
                            : width == 4 ? bulk(static_cast<std::uint32_t*>(nullptr))
                                         : bulk(static_cast<std::uint64_t*>(nullptr))))
          return out;
        if constexpr (std::is_floating_point_v<E>)
          if (kind == 'f' && bulk(static_cast<double*>(nullptr))) return out;
      }
    }
    std::size_t k = 0;
    for (auto x : h) out.push_back(cast_value<E>(x, {c.where + ": entry " + std::to_string(k++)}));
    return out;
  } else {
    return cv::to<T>(h, c);
  }
}

template <class T>
py::object to_python(const T& v) {
  if constexpr (std::is_same_v<T, ObjId>)
    return py::make_tuple(v.id.value, v.dataIndex, v.fieldIndex);
  else if constexpr (std::is_same_v<T, Id>)
    return py::make_tuple(v.value, 0, 0);
  else if constexpr (std::is_same_v<T, std::vector<ObjId>>) {
    py::list l;
    for (auto& o : v) l.append(to_python(o));
    return l;
  } else if constexpr (std::is_same_v<T, std::vector<double>> ||
                       std::is_same_v<T, std::vector<int>> ||
                       std::is_same_v<T, std::vector<unsigned>>) {
    using E = typename T::value_type;
    py::array_t<E> a(static_cast<py::ssize_t>(v.size()));
    if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(E));
    return a;
  } else
    return py::cast(v);
}

template <class T>
Conv make_conv() {
  Conv c;
  c.to = [](py::handle h, Writer& w, const cv::Ctx& ctx) { w.put<T>(cast_value<T>(h, ctx)); };
  c.from = [](Reader& r) { return to_python<T>(r.get<T>()); };
  c.many = [](ByteBuffer&& b) -> py::object {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      // The array takes over the bytes the nodes sent: no copy.
      const std::size_t n = b.size() / sizeof(T);
      auto* owner = new ByteBuffer(std::move(b));
      py::capsule cap(owner, [](void* p) { delete static_cast<ByteBuffer*>(p); });
      if (n == 0) return py::array_t<T>(0);
      return py::array_t<T>({static_cast<py::ssize_t>(n)}, {static_cast<py::ssize_t>(sizeof(T))},
                            reinterpret_cast<const T*>(owner->data()), cap);
    } else if constexpr (std::is_same_v<T, bool>) {
      const std::size_t n = b.size();
      py::array_t<bool> a(static_cast<py::ssize_t>(n));
      if (n) std::memcpy(a.mutable_data(), b.data(), n);
      return a;
    } else {
      py::list l;
      Reader r(b);
      while (r.left()) l.append(to_python<T>(r.get<T>()));
      return l;
    }
  };
  c.toMany = [](py::handle h, ByteBuffer& out, const cv::Ctx& ctx) -> std::size_t {
    if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string>) {
      return cv::append_many<T>(h, ctx, out);
    } else {
      if (py::isinstance<py::str>(h) || !py::isinstance<py::sequence>(h))
        throw TypeError(ctx.where + ": expected a sequence of values, got " + cv::describe(h));
      Writer w(out);
      std::size_t n = 0;
      for (auto x : h) {
        w.put<T>(cast_value<T>(x, {ctx.where + ": entry " + std::to_string(n)}));
        ++n;
      }
      return n;
    }
  };
  return c;
}

const Conv& conv_for(const std::type_info& t, const std::string& what) {
  static const std::unordered_map<std::type_index, Conv> table = [] {
    std::unordered_map<std::type_index, Conv> m;
    m.emplace(typeid(double), make_conv<double>());
    m.emplace(typeid(float), make_conv<float>());
    m.emplace(typeid(int), make_conv<int>());
    m.emplace(typeid(unsigned), make_conv<unsigned>());
    m.emplace(typeid(long), make_conv<long>());
    m.emplace(typeid(unsigned long), make_conv<unsigned long>());
    m.emplace(typeid(long long), make_conv<long long>());
    m.emplace(typeid(unsigned long long), make_conv<unsigned long long>());
    m.emplace(typeid(short), make_conv<short>());
    m.emplace(typeid(unsigned short), make_conv<unsigned short>());
    m.emplace(typeid(bool), make_conv<bool>());
    m.emplace(typeid(std::string), make_conv<std::string>());
    m.emplace(typeid(std::vector<double>), make_conv<std::vector<double>>());
    m.emplace(typeid(std::vector<int>), make_conv<std::vector<int>>());
    m.emplace(typeid(std::vector<unsigned>), make_conv<std::vector<unsigned>>());
    m.emplace(typeid(std::vector<long>), make_conv<std::vector<long>>());
    m.emplace(typeid(std::vector<std::string>), make_conv<std::vector<std::string>>());
    m.emplace(typeid(ObjId), make_conv<ObjId>());
    m.emplace(typeid(Id), make_conv<Id>());
    m.emplace(typeid(std::vector<ObjId>), make_conv<std::vector<ObjId>>());
    return m;
  }();
  auto it = table.find(std::type_index(t));
  if (it == table.end())
    throw TypeError(what + " has type " + type_name(t) + ", which Python cannot convert (yet)");
  return it->second;
}

// ---- field lookups (metadata is local: every node holds the whole tree) ----

/// The class name of o's element (PathError if it no longer exists).
std::string class_of(const ObjId& o) {
  return shell().elementInfo(o).className;
}

ObjId oid(const Triple& t) {
  return ObjId(Id(std::get<0>(t)), std::get<1>(t), std::get<2>(t));
}
Triple triple(const ObjId& o) {
  return {o.id.value, o.dataIndex, o.fieldIndex};
}

/// The object, its value field's type and class.field, and the type's converter, checked (by
/// the Shell) for a get or a set.
struct Access {
  ObjId o;
  const std::type_info& type;
  std::string where;
  const Conv& c;
};

Access access(const Triple& t, const std::string& field, bool set) {
  const ObjId o = oid(t);
  const std::type_info& type = shell().valueType(o, field, set ? "set" : "get", set);
  std::string where = class_of(o) + "." + field;
  const Conv& c = conv_for(type, where);
  return {o, type, std::move(where), c};
}

py::object get_field(const Triple& t, const std::string& field) {
  const auto [o, type, where, c] = access(t, field, false);
  const ByteBuffer b = shell().getPacked(o, field, type);
  Reader r(b);
  return c.from(r);
}

void set_field(const Triple& t, const std::string& field, py::handle value) {
  const auto [o, type, where, c] = access(t, field, true);
  ByteBuffer b;
  Writer w(b);
  c.to(value, w, {"set " + where});
  shell().setPacked(o, field, type, b);
}

py::object get_vec(const Triple& t, const std::string& field, bool whole) {
  const auto [o, type, where, c] = access(t, field, false);
  return c.many(shell().getVecPacked(o, field, type, whole));
}

void set_vec(const Triple& t, const std::string& field, py::handle value, bool whole) {
  const auto [o, type, where, c] = access(t, field, true);
  // One value for every entry, or one per entry: a string is one value of a string field, a
  // 0-d array one value of any field.
  const bool isArray = py::isinstance<py::array>(value);
  const bool scalar = isArray ? py::reinterpret_borrow<py::array>(value).ndim() == 0
                      : type == typeid(std::string)
                          ? py::isinstance<py::str>(value)
                          : !py::isinstance<py::sequence>(value) ||
                                py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value);
  const cv::Ctx ctx{"set " + where};
  ByteBuffer b;
  if (scalar) {
    Writer w(b);
    c.to(value, w, ctx);
    shell().setAllPacked(o, field, type, b);
    return;
  }
  shell().setVecPacked(o, field, type, whole,
                       [&](ByteBuffer& out) -> std::uint64_t { return c.toMany(value, out, ctx); });
}

/// obj.field[key] for a lookup field (PulseGen's level[i], the clock's tickDt[i]).
py::object lookup_get(const Triple& t, const std::string& field, py::handle key) {
  const ObjId o = oid(t);
  const auto [keyType, valueType] = shell().lookupTypes(o, field, "get", false);
  const std::string where = class_of(o) + "." + field;
  ByteBuffer k;
  Writer kw(k);
  conv_for(*keyType, where).to(key, kw, {"get " + where + "[key]", true});
  const ByteBuffer b = shell().lookupGetPacked(o, field, *keyType, k, *valueType);
  Reader r(b);
  return conv_for(*valueType, where).from(r);
}

/// obj.field[key] = value for a lookup field.
void lookup_set(const Triple& t, const std::string& field, py::handle key, py::handle value) {
  const ObjId o = oid(t);
  const auto [keyType, valueType] = shell().lookupTypes(o, field, "set", true);
  const std::string where = class_of(o) + "." + field;
  ByteBuffer k, v;
  Writer kw(k), vw(v);
  conv_for(*keyType, where).to(key, kw, {"set " + where + "[key]", true});
  conv_for(*valueType, where).to(value, vw, {"set " + where + "[key]"});
  shell().lookupSetPacked(o, field, *keyType, k, *valueType, v);
}

void call_dest(const Triple& t, const std::string& dest, py::args args) {
  const ObjId o = oid(t);
  const auto& types = shell().destTypes(o, dest);
  const std::string where = "call " + class_of(o) + "." + dest;
  if (args.size() != types.size())
    throw TypeError(where + ": takes " + std::to_string(types.size()) + " argument(s) (" +
                    type_list_name(types) + "), got " + std::to_string(args.size()));
  ByteBuffer b;
  Writer w(b);
  for (std::size_t i = 0; i < types.size(); ++i)
    conv_for(*types[i], where).to(args[i], w, {where + ": argument " + std::to_string(i + 1)});
  shell().callPacked(o, dest, types, b);
}

py::tuple element_info(py::handle t) {
  const Shell::ElementInfo e = shell().elementInfo(to_objid(t, {"element"}));
  return py::make_tuple(e.className, e.path, e.numData, e.isField, e.parent.value, e.fieldDimension,
                        e.name);
}

py::object find(const std::string& path) {
  const std::optional<ObjId> o = shell().lookup(path);
  if (!o) return py::none();
  return py::cast(triple(*o));
}

std::vector<py::tuple> field_info(const std::string& cls, const std::string& where) {
  std::vector<py::tuple> out;
  for (auto& f : Shell::fieldInfo(cls, where))
    out.push_back(py::make_tuple(f.name, f.kind, f.type, f.doc));
  return out;
}

/// The model's structure as plain Python data, for tests that check a failed command changed
/// nothing: every element (path, class, entries, field dimension), every message (kind, ends,
/// fields, Sparse entries), the clock (dts, scheduled paths, time, step) and the run settings.
py::tuple snapshot() {
  const Shell& sh = shell();
  py::list elements;
  std::vector<Id> stack{Id::root()};
  while (!stack.empty()) {
    const Shell::ElementInfo e = sh.elementInfo(ObjId(stack.back()));
    stack.pop_back();
    elements.append(py::make_tuple(e.path, e.className, e.numData, e.isGlobal, e.fieldDimension));
    for (auto it = e.children.rbegin(); it != e.children.rend(); ++it) stack.push_back(*it);
  }
  py::list msgs;
  for (const Shell::MsgInfo& m : sh.messages())
    msgs.append(
        py::make_tuple(m.id, m.kind, m.srcPath, m.srcField, m.destPath, m.destField, m.entries));
  py::list ticks;
  const std::vector<double> dts = sh.tickDts();
  const auto scheduled = sh.schedule();
  for (std::size_t k = 0; k < dts.size(); ++k) {
    py::list paths;
    for (const std::string& p : scheduled[k]) paths.append(p);
    ticks.append(py::make_tuple(dts[k], paths));
  }
  return py::make_tuple(elements, msgs, ticks, sh.currentTime(), sh.currentStep(), sh.numThreads(),
                        sh.currentSeed(), Shell::classNames());
}

// ---- Ctrl-C during a serial run ----

std::atomic<bool> g_interrupted{false};

// The Shell whose run an InterruptGuard protects.
Shell* g_guarded_shell = nullptr;

extern "C" void on_interrupt(int) {
  // Async-signal-safe: two lock-free atomic stores. The clock reads its flag at each step's end.
  g_interrupted.store(true, std::memory_order_relaxed);
  if (Shell* s = g_guarded_shell) s->interrupt();
}

/// SIGINT handled by antler for the guard's lifetime (Python's handler restored after).
class InterruptGuard {
 public:
  explicit InterruptGuard(Shell& s) {
    g_guarded_shell = &s;
    g_interrupted.store(false);
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    installed_ = sigaction(SIGINT, &sa, &old_) == 0;
  }
  ~InterruptGuard() {
    if (installed_) sigaction(SIGINT, &old_, nullptr);
    g_guarded_shell = nullptr;
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  bool interrupted() const { return g_interrupted.load(); }

 private:
  struct sigaction old_ {};
  bool installed_ = false;
};

void finalize_driver() {
  if (!g_rt) return;
  try {
    g_rt->finish(g_exit_code);
  } catch (const std::exception& e) {
    comm::abort(std::string("could not stop the workers: ") + e.what());
  }
  g_rt.reset();
  g_serial.reset();
  g_env.reset();  // MPI_Finalize, if antler initialised MPI
}

/// Starts antler on `c`. On the driver returns true; a worker serves the driver's commands and
/// returns false once the driver releases it (finalize or exit).
void refuse_if_running() {
  if (g_rt)
    throw StateError("init: antler is already running on " + std::to_string(g_rt->numNodes()) +
                     " node(s); call antler.finalize() first");
}

/// Starts antler on the communicator `make` gives (made only after the checks: making one is
/// collective, and the other ranks may be serving this driver, not calling init).
template <class Make>
bool start_on(Make make) {
  refuse_if_running();
  g_rt = std::make_unique<Runtime>(make());
  g_serial.reset();  // a model made before init stays behind with the one-node simulation
  if (g_rt->isDriver()) return true;
  g_exit_code = g_rt->workerExitCode();
  g_rt.reset();
  return false;
}

// Every function a script reaches takes Python objects and converts them here, by the rules of
// python/src/convert.hpp, naming the antler function and argument in any error.
using H = py::handle;
std::string str(H h, const char* where) {
  return cv::to_str(h, {where}, true);
}
ObjId obj(H h, const char* where) {
  return to_objid(h, {where});
}
unsigned u32(H h, const char* where, unsigned lo = 0, unsigned hi = 0xFFFFFFFFu) {
  return static_cast<unsigned>(cv::to_uint(h, {where}, lo, hi));
}
/// copy / move take elements, vecs or paths (a relative path starts at the current element).
ObjId tree_arg(H h, const char* where) {
  if (py::isinstance<py::str>(h)) return shell().resolve(str(h, where), where);
  return obj(h, where);
}

/// init, release and the errors' way to Python.
void def_lifecycle(py::module_& m) {
  // Importing initialises nothing: antler.init() (or the package's import, for scripts that do
  // not use mpi4py) starts antler on a communicator.
  m.def("init_world", [] {
    int argc = 0;
    char** argv = nullptr;
    if (!comm::mpi_active()) g_env = std::make_unique<comm::Environment>(&argc, &argv);
    if (start_on([] { return comm::Comm::world(); })) return true;
    // A worker of a script written as if serial: the script never runs here.
    std::fflush(stdout);
    std::fflush(stderr);
    g_env.reset();
    _exit(g_exit_code);
  });
  m.def("init_comm", [](std::uintptr_t handle) {
    if (!comm::mpi_active())
      throw StateError("init(comm): MPI is not initialised (import mpi4py.MPI first)");
    MPI_Comm c = reinterpret_cast<MPI_Comm>(handle);
    return start_on([&] { return comm::Comm::fromMpi(&c); });
  });
  m.def("release", [] {
    const bool had = g_rt != nullptr;
    if (g_rt) {
      // The model goes with the nodes that held it, on one node as on several (init's
      // contract: antler runs serially again afterwards, with an empty model).
      shell().clearModel();
      g_rt->finish(0);
      g_rt.reset();
    }
    return had;
  });
  m.def("running", [] { return g_rt != nullptr; });

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Exception& e) {
      py::object cls;
      if (error_classes())
        cls = py::reinterpret_borrow<py::dict>(error_classes())
                  .attr("get")(static_cast<int>(e.kind()));
      set_python_error(cls && !cls.is_none() ? cls.ptr() : PyExc_RuntimeError, e.what(),
                       e.details());
    } catch (const InternalError& e) {
      set_python_error(PyExc_RuntimeError, e.what());
    }
  });

  m.def("_set_error_classes", [](py::dict d) {
    Py_XDECREF(error_classes());
    error_classes() = d.inc_ref().ptr();
  });
  m.def("_set_exit_code", [](int c) { g_exit_code = c; });
  m.def("_finalize", &finalize_driver, "tells the workers to quit and finalises MPI (atexit)");
}

/// The element tree: create, delete, find, the current element, introspection, copy and move.
void def_tree(py::module_& m) {
  m.def("create", [](H cls, H path, H n, H global) {
    const std::string c = str(cls, "create: class"), p = str(path, "create: path");
    const std::string where = "create " + c + " at " + quoted(p);
    return triple(shell().create(c, p, u32(n, (where + ": n").c_str(), 1, 0xFFFFFFFEu),
                                 cv::to_bool(global, {where + ": global"})));
  });
  m.def("delete", [](H t) { shell().destroy(obj(t, "delete")); });
  m.def("find", [](H p) { return find(str(p, "exists")); });
  m.def(
      "resolve",
      [](H p, const std::string& where) {
        return triple(shell().resolve(str(p, where.c_str()), where));
      },
      py::arg("path"), py::arg("where") = "element");
  m.def("ce", [](H p) { shell().ce(str(p, "ce: path")); });
  m.def("pwd", [] { return shell().pwd(); });
  m.def("cwe", [] { return triple(shell().cwe()); });
  m.def("class_doc", [](H c) { return Shell::classDoc(str(c, "doc: class"), "doc"); });
  m.def("msgs_of", [](H t) {
    // (outgoing, incoming) message ids of an element, in id order.
    const Id e = obj(t, "showmsg").id;
    shell().elementInfo(ObjId(e));  // PathError if it is gone
    std::vector<std::uint32_t> out, in;
    for (const Shell::MsgInfo& m : shell().messages()) {
      if (m.src == e) out.push_back(m.id);
      if (m.dest == e) in.push_back(m.id);
    }
    return py::make_tuple(out, in);
  });
  m.def("element_info", &element_info);
  m.def("children", [](H t) {
    std::vector<Triple> out;
    for (Id c : shell().elementInfo(obj(t, "children")).children) out.push_back(triple(ObjId(c)));
    return out;
  });
  m.def("wildcard_find", [](H p) {
    std::vector<Triple> out;
    for (auto& o : shell().wildcardFind(str(p, "wildcardFind"))) out.push_back(triple(o));
    return out;
  });
  m.def("class_names", &Shell::classNames);
  m.def("class_bases", [](H c) { return Shell::classBases(str(c, "class"), "class"); });
  m.def(
      "field_info",
      [](H c, const std::string& where) {
        return field_info(str(c, (where + ": className").c_str()), where);
      },
      py::arg("cls"), py::arg("where") = "getFieldNames");
  m.def("object_path", [](const Triple& t) { return shell().path(oid(t)); });
  m.def("copy", [](H s, H p, H name, H n) {
    const ObjId src = tree_arg(s, "copy: src"), parent = tree_arg(p, "copy: newParent");
    const std::string nm = name.is_none() ? std::string() : str(name, "copy: name");
    return triple(shell().copy(src, parent, nm, u32(n, "copy: n")));
  });
  m.def("move",
        [](H s, H p) { shell().move(tree_arg(s, "move: src"), tree_arg(p, "move: newParent")); });
  m.def("clear_model", [] { shell().clearModel(); });
}

/// Fields: values, vectors, lookup fields and calls.
void def_fields(py::module_& m) {
  m.def("get", &get_field);
  m.def("set", &set_field);
  m.def("get_vec", &get_vec);
  m.def("set_vec", &set_vec);
  m.def("call", &call_dest);
  m.def("lookup_get", &lookup_get);
  m.def("field_element_num", [](H c, H f) {
    const std::string field = str(f, "field");
    for (const Shell::FieldInfo& fi : Shell::fieldInfo(str(c, "class"), "class"))
      if (fi.name == field) return fi.sizeField;
    return std::string();
  });
  m.def("lookup_set", &lookup_set);
}

/// Messages: connect, their description and configuration.
void def_messages(py::module_& m) {
  m.def("add_msg", [](H kind, H s, H sf, H d, H df) {
    return shell().addMsg(str(kind, "connect: msgType"), obj(s, "connect: src"),
                          str(sf, "connect: srcField"), obj(d, "connect: dest"),
                          str(df, "connect: destField"));
  });
  m.def("msg_info", [](H h) {
    const Shell::MsgInfo i = shell().messageInfo(u32(h, "Msg: id"));
    // A Single message's two objects; a Diagonal's stride (for Msg.adjacent).
    py::object ends = py::none();
    if (i.kind == "Single")
      ends = py::make_tuple(triple(i.from), triple(i.to));
    else if (i.kind == "Diagonal")
      ends = py::int_(i.stride);
    return py::make_tuple(i.kind, triple(ObjId(i.src)), i.srcField, triple(ObjId(i.dest)),
                          i.destField, i.entries, ends);
  });
  m.def("set_random_connectivity", [](H id, H p, H seed) {
    const double prob = cv::to_real(p, {"setRandomConnectivity: probability"}, true);
    if (prob < 0 || prob > 1)
      throw ValueError("setRandomConnectivity: probability must lie in [0, 1], got " +
                       format_double(prob));
    shell().setRandomConnectivity(u32(id, "setRandomConnectivity: msg"), prob,
                                  cv::to<std::uint64_t>(seed, {"setRandomConnectivity: seed"}));
  });
  m.def("pair_fill", [](H id, H s, H d, py::dict fields) {
    const IndexArg src(s, {"pairFill: srcIndices"}), dest(d, {"pairFill: destIndices"});
    const std::uint32_t msg = u32(id, "pairFill: msg");
    const Msg* info = shell().msg(msg);
    if (fields.empty() || !info) {  // (no such message: the Shell says so)
      shell().pairFill(msg, src.view, dest.view);
      return;
    }
    if (!info->dest()->isField())  // (the Shell's check, before a field is looked up there)
      throw ValueError(
          "pairFill: field values go to the entries the pairs make in a field element (a "
          "synapse); the destination " +
          info->dest()->path() + " is not one");
    // Each field's values packed by its type, straight into the command's bytes; a 1-D array of
    // the field's own floating type is that already, and is read where it lies.
    const ObjId target(info->dest()->id());
    std::vector<Shell::PairValues> values;
    for (auto [key, value] : fields) {
      const std::string field = py::str(key);
      const std::type_info& type = shell().valueType(target, field, "pairFill", true);
      const std::string where = class_of(target) + "." + field;
      auto own = [&]<class T>(T*) {
        if (type != typeid(T) || !py::array_t<T, py::array::c_style>::check_(value)) return false;
        auto a = py::reinterpret_borrow<py::array_t<T, py::array::c_style>>(value);
        if (a.ndim() != 1) return false;
        Shell::PairValues v{field, &type, {}, {}, static_cast<std::uint64_t>(a.size())};
        v.packed = {reinterpret_cast<const char*>(a.data()), v.count * sizeof(T)};
        values.push_back(std::move(v));
        return true;
      };
      if (own(static_cast<double*>(nullptr)) || own(static_cast<float*>(nullptr))) continue;
      const Conv& c = conv_for(type, where);
      values.push_back({field, &type, [&c, value, where](ByteBuffer& out) -> std::uint64_t {
                          return c.toMany(value, out, {"pairFill " + where});
                        }});
    }
    shell().pairFill(msg, src.view, dest.view, values);
  });
  m.def("set_stride", [](H id, H s) {
    shell().setStride(u32(id, "setStride: msg"), cv::to<long>(s, {"setStride: stride"}));
  });
}

/// The clock and the run, threads, nodes, seed, reductions on demand, libraries.
void def_run(py::module_& m) {
  m.def("set_clock", [](H tick, H dt) {
    shell().setClock(static_cast<unsigned>(cv::to_uint(tick, {"setClock: tick", true}, 0, 31)),
                     cv::to_real(dt, {"setClock: dt"}, false));
  });
  m.def("use_clock", [](H tick, H path, H field) {
    shell().useClock(static_cast<unsigned>(cv::to_uint(tick, {"useClock: tick", true}, 0, 31)),
                     str(path, "useClock: path"), str(field, "useClock: field"));
  });
  m.def("tick_of", [](H t, bool init) { return shell().tickOf(to_objid(t, {"tick"}), init); });
  m.def("unschedule", [](H path, H field) {
    shell().useClock(Shell::kNoTick, str(path, "tick: path"), str(field, "field"));
  });
  m.def("reinit", [] { shell().reinit(); });
  m.def("start", [](H t) {
    const double runtime = cv::to_real(t, {"start: runtime"}, false);
    Shell& s = shell();
    if (s.numNodes() > 1) {  // under mpirun, SIGINT ends every rank (mpirun forwards it)
      s.start(runtime);
      return;
    }
    // Ctrl-C during a serial run stops it at the end of the current step: the model stays
    // consistent (time at that step; start() goes on from there) and the script gets a
    // KeyboardInterrupt. Python's own handler would only act once the run had returned.
    InterruptGuard guard(s);
    s.start(runtime);
    if (guard.interrupted()) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw py::error_already_set();
    }
  });
  m.def("stop", [] { shell().stop(); });
  m.def("current_time", [] { return shell().currentTime(); });
  m.def("base_dt", [] { return shell().baseDt(); });
  m.def("set_num_threads", [](H n) { shell().setNumThreads(u32(n, "setNumThreads: n")); });
  m.def("get_num_threads", [] { return shell().numThreads(); });
  m.def("set_phase_timers", [](H on) {
    if (!py::isinstance<py::bool_>(on))
      throw TypeError("setPhaseTimers: on: expected True or False, got " + cv::describe(on));
    shell().setPhaseTimers(on.cast<bool>());
  });
  m.def("phase_times", [] {
    // This node's totals (Clock::phaseTimes): plain dicts and lists, seconds.
    const PhaseTimes& pt = shell().phaseTimes();
    py::list threads;
    for (const PhaseTimes::Phases& p : pt.threads) {
      py::dict d;
      d["process"] = p.process;
      d["predicted"] = p.predicted;
      d["exchange"] = p.exchange;
      d["primary"] = p.primary;
      d["deliver"] = p.deliver;
      d["reduce"] = p.reduce;
      d["wait"] = p.wait;
      threads.append(d);
    }
    py::list elements;
    for (const auto& [id, sec] : pt.elements)
      elements.append(py::make_tuple(shell().path(id), sec));
    py::dict out;
    out["rounds"] = pt.rounds;
    out["threads"] = threads;
    out["elements"] = elements;
    return out;
  });
  m.def("num_nodes", [] { return shell().numNodes(); });
  m.def("my_node", [] { return shell().myNode(); });
  m.def("seed", [](H s) { shell().seed(cv::to<std::uint64_t>(s, {"seed: n"})); });
  m.def("sync_data_handler",
        [](H t) { return shell().doSyncDataHandler(obj(t, "syncDataHandler").id); });
  m.def("reduce_now",
        [](H t, H f) { shell().reduceNow(obj(t, "reduceNow"), str(f, "reduceNow: field")); });
  m.def("block_reduce", [](H t, H f, H pattern, H k, H contiguous, H divisions, H rounds) {
    const char* op = "blockReduce";
    BlockSpec spec;
    const std::string p = cv::to_str(pattern, {"blockReduce: pattern"}, false);
    const char* const names[] = {"merge", "swap", "broadcast", "allReduce"};
    bool known = false;
    for (int i = 0; i < 4; ++i)
      if (p == names[i]) {
        spec.pattern = static_cast<comm::Pattern>(i);
        known = true;
      }
    if (!known)
      throw ValueError("blockReduce: pattern '" + p + "' (merge, swap, broadcast, allReduce)");
    spec.k = static_cast<int>(cv::to_int(k, {"blockReduce: k"}, -(1LL << 31), (1LL << 31) - 1));
    spec.contiguous = cv::to_bool(contiguous, {"blockReduce: contiguous"});
    auto ints = [&](H seq, const char* what, std::vector<int>& out) {
      if (seq.is_none()) return;
      if (!py::isinstance<py::sequence>(seq) || py::isinstance<py::str>(seq))
        throw TypeError(std::string("blockReduce: ") + what + " must be a sequence of ints, not " +
                            std::string(py::str(seq.get_type().attr("__name__"))),
                        "sequence of int", std::string(py::str(seq.get_type().attr("__name__"))));
      for (H x : py::reinterpret_borrow<py::sequence>(seq))
        out.push_back(static_cast<int>(
            cv::to_int(x, {std::string("blockReduce: ") + what}, -(1LL << 31), (1LL << 31) - 1)));
    };
    ints(divisions, "divisions", spec.divisions);
    if (!rounds.is_none()) {
      if (!py::isinstance<py::sequence>(rounds) || py::isinstance<py::str>(rounds))
        throw TypeError("blockReduce: rounds must be a sequence of (dimension, group size) pairs",
                        "sequence of pairs",
                        std::string(py::str(rounds.get_type().attr("__name__"))));
      for (H r : py::reinterpret_borrow<py::sequence>(rounds)) {
        std::vector<int> pair;
        ints(r, "rounds", pair);
        if (pair.size() != 2)
          throw ValueError("blockReduce: each round is a (dimension, group size) pair");
        spec.rounds.push_back({pair[0], pair[1]});
      }
    }
    shell().blockReduce(obj(t, op), str(f, "blockReduce: field"), spec);
  });
  m.def("all_to_all", [](H t, H f, H k) {
    shell().allToAll(
        obj(t, "allToAll"), str(f, "allToAll: field"),
        static_cast<int>(cv::to_int(k, {"allToAll: k"}, -(1LL << 31), (1LL << 31) - 1)));
  });
  m.def("load_library", [](H p) {
    const std::string path = str(p, "loadLibrary: path");
    if (path.empty())
      throw ValueError("loadLibrary: the path is empty (give a shared library file)");
    return shell().loadLibrary(path);
  });
}

/// For the Python layer and its tests: the model's snapshot and the conversions themselves.
void def_support(py::module_& m) {
  m.def("snapshot", &snapshot, "the model's structure (for tests)");
  // The conversions themselves, for the arguments the Python layer handles (indices of a vec).
  m.def("to_int", [](H h, const std::string& where, long long lo, long long hi, bool index) {
    return cv::to_int(h, {where, index}, lo, hi);
  });
  m.def("to_real",
        [](H h, const std::string& where, bool finite) { return cv::to_real(h, {where}, finite); });
}

}  // namespace

PYBIND11_MODULE(_antler, m) {
  // The recorders live in libantler_recorders (the one library that needs HDF5): naming their
  // classes here keeps the library linked, and its classes registered, whatever the linker drops.
  NSDFWriter::initCinfo();
  HDF5DataWriter::initCinfo();
  m.doc() = "C++ core of the antler package (use `import antler`)";
  m.attr("version") = ANTLER_VERSION;

  def_lifecycle(m);
  def_tree(m);
  def_fields(m);
  def_messages(m);
  def_run(m);
  def_support(m);
}

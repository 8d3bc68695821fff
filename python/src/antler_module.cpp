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
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <typeindex>
#include <unordered_map>

#include "core/element.hpp"
#include "core/error.hpp"
#include "core/mpi.hpp"
#include "core/path.hpp"
#include "core/value_finfo.hpp"
#include "msg/msg.hpp"
#include "shell/shell.hpp"

namespace py = pybind11;
using namespace antler;

namespace {

std::unique_ptr<mpi::Guard> g_mpi;
int g_exit_code = 0;

// ---- errors: antler::Error kinds -> the Python classes defined in antler/__init__.py ----

// dict kind -> class, set by _set_error_classes. A leaked reference on purpose: a static
// py::object would be destroyed after the interpreter, without the GIL.
PyObject*& error_classes() {
  static PyObject* d = nullptr;
  return d;
}

// ---- conversions between Python objects and the packed C++ value of a field ----

using Triple = std::tuple<std::uint32_t, Index, Index>;

ObjId to_objid(py::handle h) {
  if (py::hasattr(h, "_oid")) h = h.attr("_oid");
  if (py::isinstance<py::str>(h)) return resolve_path(h.cast<std::string>(), "convert");
  if (py::isinstance<py::tuple>(h) && py::len(h) == 3) {
    auto t = h.cast<Triple>();
    return ObjId(Id(std::get<0>(t)), std::get<1>(t), std::get<2>(t));
  }
  throw TypeError("expected an element, a vec or a path, got " +
                  py::str(py::type::of(h)).cast<std::string>());
}

struct Conv {
  std::function<void(py::handle, Writer&)> to;
  std::function<py::object(Reader&)> from;
  std::function<py::object(ByteBuffer&&)> many;  // a packed sequence -> numpy array or list
  std::function<std::size_t(py::handle, Writer&)> toMany;
};

template <class T>
T cast_value(py::handle h) {
  if constexpr (std::is_same_v<T, ObjId>) {
    return to_objid(h);
  } else if constexpr (std::is_same_v<T, Id>) {
    return to_objid(h).id;
  } else if constexpr (std::is_same_v<T, std::vector<ObjId>>) {
    std::vector<ObjId> out;
    for (auto x : h) out.push_back(to_objid(x));
    return out;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!py::isinstance<py::bool_>(h) && !py::isinstance<py::int_>(h) &&
        !py::hasattr(h, "__bool__"))
      throw TypeError("expected bool");
    return py::bool_(py::reinterpret_borrow<py::object>(h)).cast<bool>();
  } else if constexpr (std::is_unsigned_v<T> && std::is_integral_v<T>) {
    if (py::isinstance<py::float_>(h))
      throw TypeError("expected a non-negative integer, got float");
    const long long v = py::int_(py::reinterpret_borrow<py::object>(h)).cast<long long>();
    if (v < 0) throw TypeError("expected a non-negative integer, got " + std::to_string(v));
    return static_cast<T>(v);
  } else if constexpr (std::is_integral_v<T>) {
    if (py::isinstance<py::float_>(h)) throw TypeError("expected an integer, got float");
    return py::int_(py::reinterpret_borrow<py::object>(h)).cast<T>();
  } else {
    return h.cast<T>();
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
  c.to = [](py::handle h, Writer& w) {
    try {
      w.put<T>(cast_value<T>(h));
    } catch (const py::cast_error&) {
      throw TypeError("expected " + type_name<T>() + ", got " +
                      py::str(py::type::of(h)).cast<std::string>());
    }
  };
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
  c.toMany = [](py::handle h, Writer& w) -> std::size_t {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      if (py::isinstance<py::array>(h)) {
        auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(h);
        if (!a) throw TypeError("cannot convert the array to " + type_name<T>());
        if (a.ndim() != 1)
          throw ValueError("expected a 1-d array, got " + std::to_string(a.ndim()) + " dimensions");
        w.buffer().append(a.data(), static_cast<std::size_t>(a.size()) * sizeof(T));
        return static_cast<std::size_t>(a.size());
      }
    }
    std::size_t n = 0;
    for (auto x : h) {
      try {
        w.put<T>(cast_value<T>(x));
      } catch (const py::cast_error&) {
        throw TypeError("expected a sequence of " + type_name<T>() + ", entry " +
                        std::to_string(n) + " is " + py::str(py::type::of(x)).cast<std::string>());
      }
      ++n;
    }
    return n;
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

Element* element_of(const ObjId& o) {
  Element* e = o.element();
  if (!e) throw PathError("the element " + std::to_string(o.id.value) + " no longer exists");
  return e;
}

std::vector<std::string> value_names(const Cinfo* c) {
  auto v = c->fieldNames(FinfoKind::value);
  auto r = c->fieldNames(FinfoKind::readOnlyValue);
  v.insert(v.end(), r.begin(), r.end());
  return v;
}

const ValueFinfoBase* value_finfo(const Element* e, const std::string& field, const char* op) {
  const Finfo* f = e->cinfo()->findFinfo(field);
  if (!f || (f->kind() != FinfoKind::value && f->kind() != FinfoKind::readOnlyValue))
    throw FieldError(std::string(op) + ": '" + field + "' is not a field of " + e->cinfo()->name() +
                     " (fields: " + join_names(value_names(e->cinfo())) + ")");
  return static_cast<const ValueFinfoBase*>(f);
}

ObjId oid(const Triple& t) {
  return ObjId(Id(std::get<0>(t)), std::get<1>(t), std::get<2>(t));
}
Triple triple(const ObjId& o) {
  return {o.id.value, o.dataIndex, o.fieldIndex};
}

/// The object, its value field and the field type's converter, checked for a get or a set.
struct Access {
  ObjId o;
  const Element* e;
  const ValueFinfoBase* vf;
  const Conv& c;
};

Access access(const Triple& t, const std::string& field, bool set) {
  const ObjId o = oid(t);
  const Element* e = element_of(o);
  const auto* vf = value_finfo(e, field, set ? "set" : "get");
  if (set && vf->readOnly())
    throw FieldError("set: field '" + field + "' of " + e->cinfo()->name() + " is read-only");
  return {o, e, vf, conv_for(vf->valueType(), e->cinfo()->name() + "." + field)};
}

py::object get_field(const Triple& t, const std::string& field) {
  const auto [o, e, vf, c] = access(t, field, false);
  const ByteBuffer b = Shell::instance().getPacked(o, field, vf->valueType());
  Reader r(b);
  return c.from(r);
}

void set_field(const Triple& t, const std::string& field, py::handle value) {
  const auto [o, e, vf, c] = access(t, field, true);
  ByteBuffer b;
  Writer w(b);
  try {
    c.to(value, w);
  } catch (const TypeError& err) {
    throw TypeError("set: " + e->cinfo()->name() + "." + field + ": " + err.what());
  }
  Shell::instance().setPacked(o, field, vf->valueType(), b);
}

py::object get_vec(const Triple& t, const std::string& field, bool whole) {
  const auto [o, e, vf, c] = access(t, field, false);
  return c.many(Shell::instance().getVecPacked(o, field, vf->valueType(), whole));
}

void set_vec(const Triple& t, const std::string& field, py::handle value, bool whole) {
  const auto [o, e, vf, c] = access(t, field, true);
  const bool scalar =
      vf->valueType() == typeid(std::string)
          ? py::isinstance<py::str>(value)
          : !py::isinstance<py::sequence>(value) && !py::isinstance<py::array>(value);
  ByteBuffer b;
  Writer w(b);
  try {
    if (scalar) {
      c.to(value, w);
      Shell::instance().setAllPacked(o, field, vf->valueType(), b);
      return;
    }
    const std::size_t n = c.toMany(value, w);
    Shell::instance().setVecPacked(o, field, vf->valueType(), b, n, whole);
  } catch (const TypeError& err) {
    throw TypeError("set: " + e->cinfo()->name() + "." + field + ": " + err.what());
  }
}

void call_dest(const Triple& t, const std::string& dest, py::args args) {
  const ObjId o = oid(t);
  const Element* e = element_of(o);
  const Finfo* f = e->cinfo()->findFinfo(dest);
  if (!f || f->kind() != FinfoKind::dest)
    throw FieldError("call: '" + dest + "' is not a function of " + e->cinfo()->name() +
                     " (functions: " + join_names(e->cinfo()->fieldNames(FinfoKind::dest)) + ")");
  const auto& types = static_cast<const DestFinfoBase*>(f)->argTypes();
  if (args.size() != types.size())
    throw TypeError("call: " + e->cinfo()->name() + "." + dest + " takes " +
                    std::to_string(types.size()) + " argument(s) (" + type_list_name(types) +
                    "), got " + std::to_string(args.size()));
  ByteBuffer b;
  Writer w(b);
  for (std::size_t i = 0; i < types.size(); ++i) conv_for(*types[i], dest).to(args[i], w);
  Shell::instance().callPacked(o, dest, types, b);
}

py::tuple element_info(const Triple& t) {
  const ObjId o = oid(t);
  const Element* e = element_of(o);
  return py::make_tuple(
      e->cinfo()->name(), e->path(), e->numData(), e->isField(), e->parent().value,
      e->isField() ? static_cast<const FieldElement*>(e)->fieldDimension() : 0u, e->name());
}

py::object find(const std::string& path) {
  const ObjId o = find_path(path);
  if (!o.element()) return py::none();
  return py::cast(triple(o));
}

std::vector<py::tuple> field_info(const std::string& cls) {
  std::vector<py::tuple> out;
  for (auto& f : Shell::fieldInfo(cls))
    out.push_back(py::make_tuple(f.name, f.kind, f.type, f.doc));
  return out;
}

std::vector<std::string> class_bases(const std::string& cls) {
  std::vector<std::string> out;
  for (const Cinfo* c = Cinfo::require(cls, "class"); c; c = c->base()) out.push_back(c->name());
  return out;
}

void finalize_driver() {
  if (!g_mpi) return;
  try {
    Shell::instance().quitWorkers(g_exit_code);
  } catch (const std::exception& e) {
    mpi::abort(std::string("could not stop the workers: ") + e.what());
  }
  g_mpi.reset();  // MPI_Finalize
}

}  // namespace

PYBIND11_MODULE(_antler, m) {
  m.doc() = "C++ core of the antler package (use `import antler`)";

  int argc = 0;
  char** argv = nullptr;
  g_mpi = std::make_unique<mpi::Guard>(&argc, &argv);
  if (g_mpi->rank() != 0) {
    // A worker: serve until the driver says quit, then leave without running the script.
    int code = 0;
    try {
      code = Shell::instance().serve();
    } catch (const std::exception& e) {
      mpi::abort(std::string("worker loop failed: ") + e.what());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    g_mpi.reset();
    _exit(code);
  }

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      py::object cls;
      if (error_classes())
        cls = py::reinterpret_borrow<py::dict>(error_classes())
                  .attr("get")(static_cast<int>(e.kind()));
      if (cls && !cls.is_none())
        PyErr_SetString(cls.ptr(), e.what());
      else
        PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const InternalError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  m.def("_set_error_classes", [](py::dict d) {
    Py_XDECREF(error_classes());
    error_classes() = d.inc_ref().ptr();
  });
  m.def("_set_exit_code", [](int c) { g_exit_code = c; });
  m.def("_finalize", &finalize_driver, "tells the workers to quit and finalises MPI (atexit)");

  m.def("create", [](const std::string& cls, const std::string& path, Index n, bool global) {
    return triple(Shell::instance().create(cls, path, n, global));
  });
  m.def("delete", [](const Triple& t) { Shell::instance().destroy(oid(t)); });
  m.def("find", &find);
  m.def("resolve", [](const std::string& path) { return triple(resolve_path(path, "element")); });
  m.def("element_info", &element_info);
  m.def("children", [](const Triple& t) {
    std::vector<Triple> out;
    for (Id c : element_of(oid(t))->children()) out.push_back(triple(ObjId(c)));
    return out;
  });
  m.def("wildcard_find", [](const std::string& p) {
    std::vector<Triple> out;
    for (auto& o : Shell::instance().wildcardFind(p)) out.push_back(triple(o));
    return out;
  });
  m.def("class_names", &Shell::classNames);
  m.def("class_bases", &class_bases);
  m.def("field_info", &field_info);
  m.def("object_path", [](const Triple& t) { return oid(t).path(); });
  m.def("get", &get_field);
  m.def("set", &set_field);
  m.def("get_vec", &get_vec);
  m.def("set_vec", &set_vec);
  m.def("call", &call_dest);

  m.def("add_msg", [](const std::string& kind, const Triple& s, const std::string& sf,
                      const Triple& d, const std::string& df) {
    return Shell::instance().addMsg(kind, oid(s), sf, oid(d), df);
  });
  m.def("msg_info", [](std::uint32_t id) {
    const Msg* msg = Shell::instance().msg(id);
    if (!msg) throw MsgError("no message with id " + std::to_string(id));
    std::size_t entries = 0;
    if (msg->kind() == MsgKind::sparse) entries = static_cast<const SparseMsg*>(msg)->numEntries();
    return py::make_tuple(to_string(msg->kind()), triple(ObjId(msg->src()->id())),
                          msg->srcFinfo()->name(), triple(ObjId(msg->dest()->id())),
                          msg->destFinfo()->name(), entries);
  });
  m.def("set_random_connectivity", [](std::uint32_t id, double p, std::uint64_t seed) {
    Shell::instance().setRandomConnectivity(id, p, seed);
  });
  m.def("pair_fill", [](std::uint32_t id, const std::vector<Index>& s,
                        const std::vector<Index>& d) { Shell::instance().pairFill(id, s, d); });
  m.def("set_stride", [](std::uint32_t id, long s) { Shell::instance().setStride(id, s); });

  m.def("set_clock", [](unsigned tick, double dt) { Shell::instance().setClock(tick, dt); });
  m.def("use_clock", [](unsigned tick, const std::string& path, const std::string& field) {
    Shell::instance().useClock(tick, path, field);
  });
  m.def("reinit", [] { Shell::instance().reinit(); });
  m.def("start", [](double t) { Shell::instance().start(t); });
  m.def("stop", [] { Shell::instance().stop(); });
  m.def("current_time", [] { return Shell::instance().currentTime(); });
  m.def("base_dt", [] { return Shell::instance().baseDt(); });
  m.def("set_num_threads", [](unsigned n) { Shell::instance().setNumThreads(n); });
  m.def("get_num_threads", [] { return Shell::instance().numThreads(); });
  m.def("num_nodes", [] { return Shell::instance().numNodes(); });
  m.def("my_node", [] { return Shell::instance().myNode(); });
  m.def("seed", [](std::uint64_t s) { Shell::instance().seed(s); });
  m.def("sync_data_handler",
        [](const Triple& t) { return Shell::instance().doSyncDataHandler(oid(t).id); });
  m.def("reduce_now",
        [](const Triple& t, const std::string& f) { Shell::instance().reduceNow(oid(t), f); });
  m.def("load_library", [](const std::string& p) { return Shell::instance().loadLibrary(p); });
  m.def("clear_model", [] { Shell::instance().clearModel(); });
}

"""antler: MOOSE-style message-passing simulations on threads and MPI nodes, from Python.

Scripts port from MOOSE by changing ``import moose`` to ``import antler as moose``::

    import antler as moose
    cells = moose.IntFire('/net/cells', 1000)
    moose.setClock(0, 1e-4)
    moose.useClock(0, '/net/##[TYPE=IntFire]', 'process')
    moose.reinit()
    moose.start(0.1)
    print(moose.vec('/net/cells').Vm.mean())

Write the script as if serial and run it with ``mpirun -n 4 python3 script.py``: importing antler
on ranks other than 0 serves rank 0's commands and never returns to the script; the workers exit
with the driver when its interpreter exits (exit code 1 if the script raised).
"""

import atexit as _atexit
import builtins as _builtins
import functools as _functools
import os as _os
import sys as _sys
import random as _random
import time as _time

from . import _antler as _a

# A script written as if serial (it does not import mpi4py first) runs on MPI_COMM_WORLD: on ranks
# other than 0 the next line serves rank 0's commands and never returns to the script. A script
# that imports mpi4py.MPI before antler is MPI-aware: it chooses the communicator with
# antler.init(comm), and until then antler runs serially on each rank.
_MPI_AWARE = "mpi4py.MPI" in _sys.modules
if not _MPI_AWARE and not _a.running():  # (running: the module is being reloaded)
    _a.init_world()

__all__ = [
    "Error", "PathError", "FieldError", "TypeError", "IndexError", "ClassError", "MsgError",
    "ValueError", "StateError", "CommError", "melement", "vec", "element", "exists", "delete",
    "le", "wildcardFind", "getFieldNames", "connect", "setClock", "useClock", "reinit", "start",
    "stop", "syncDataHandler", "seed", "numNodes", "myNode", "setNumThreads", "getNumThreads",
    "setPhaseTimers", "phaseTimes",
    "loadLibrary", "currentTime", "Msg", "init", "finalize", "doc", "showfield", "showmsg",
    "getFieldDict", "ce", "pwd", "copy", "move", "rand", "version", "version_info",
    "blockReduce", "allToAll",
]  # and every class (added as they are made)

# ---------------------------------------------------------------------------------------------
# Errors: each derives from antler.Error and from the matching built-in exception.


class Error(Exception):
    """Root of every error antler raises for bad input.

    ``details`` holds the error's facts as strings, where the C++ side recorded them: an
    IndexError's ``index`` and ``size``, a PathError's ``path``, a FieldError's ``class``,
    ``field`` and ``valid`` (the fields there are), a TypeError's ``expected`` and ``got``, a
    ClassError's ``class``; facts cross nodes with the message.
    """

    details = {}


class PathError(Error, _builtins.ValueError):
    """An unknown path, or a name already taken."""


class FieldError(Error, _builtins.AttributeError):
    """An unknown field of a class."""


class TypeError(Error, _builtins.TypeError):  # noqa: A001 - mirrors antler::TypeError
    """A value of the wrong type."""


class IndexError(Error, _builtins.IndexError):  # noqa: A001
    """An index out of range."""


class ClassError(Error, _builtins.ValueError):
    """An unknown class."""


class MsgError(Error, _builtins.ValueError):
    """An unknown message kind or an ill-formed message."""


class ValueError(Error, _builtins.ValueError):  # noqa: A001
    """A bad value."""


class StateError(Error, _builtins.RuntimeError):
    """A command not allowed now (for example while the clock runs)."""


class CommError(Error, _builtins.RuntimeError):
    """Nodes disagree, or a buffer is corrupted."""


_a._set_error_classes({0: ValueError, 1: PathError, 2: FieldError, 3: TypeError, 4: IndexError,
                       5: ClassError, 6: MsgError, 7: StateError, 8: CommError})

# ---------------------------------------------------------------------------------------------
# Leaving: the workers exit with the driver's code (1 if the script raised).

_state = {"failed": False, "code": 0}
if not getattr(_sys.excepthook, "_antler", False):  # (once: the module may be reloaded)
    _previous_hook = _sys.excepthook

    def _excepthook(kind, value, tb):
        _state["failed"] = True
        _previous_hook(kind, value, tb)

    _excepthook._antler = True
    _sys.excepthook = _excepthook


def _set_exit_code(code):
    """Sets the exit code the worker ranks will use (pytest's conftest uses this)."""
    _state["code"] = int(code)


def _finish():
    _a._set_exit_code(1 if _state["failed"] else _state["code"])
    _a._finalize()


if "_finish_registered" not in globals():  # (once: the module may be reloaded)
    _atexit.register(_finish)
    _finish_registered = True

# ---------------------------------------------------------------------------------------------
# Elements


_KINDS = {}  # class name -> {field: (kind, type)}


def _fields(class_name):
    f = _KINDS.get(class_name)
    if f is None:
        f = {name: (kind, typ) for name, kind, typ, _doc in _a.field_info(class_name)}
        _KINDS[class_name] = f
    return f


def _field_list(cls):
    """'fields: ...; functions: ...' for error messages (without the setX/getX of each field)."""
    f = _fields(cls)
    values = [n for n, (k, _t) in f.items() if k in ("value", "readonly value", "field element")]
    derived = set()
    for v in values:
        derived.add("set" + v[:1].upper() + v[1:])
        derived.add("get" + v[:1].upper() + v[1:])
    funcs = [n for n, (k, _t) in f.items() if k == "dest" and n not in derived]
    return "fields: %s; functions: %s" % (", ".join(values), ", ".join(funcs) or "none")


def _triple(obj, where="element"):
    """(id, dataIndex, fieldIndex) of an element, a vec or a path."""
    if isinstance(obj, (melement, vec)):
        return obj._oid
    if isinstance(obj, str):
        return _a.resolve(obj, where)
    if isinstance(obj, tuple) and len(obj) == 3:
        return obj
    raise TypeError("%s: expected an element, a vec or a path, got %s" % (where, type(obj).__name__))


def _wrap(t):
    info = _a.element_info(t)
    cls = _CLASSES.get(info[0], melement)
    obj = object.__new__(cls)
    object.__setattr__(obj, "_oid", tuple(t))
    return obj


def _field_name(name, where):
    """A field name as given to getField/setField: a str that names no Python internal."""
    if not isinstance(name, str):
        raise TypeError("%s: the field name must be a string, got %r (%s)"
                        % (where, name, type(name).__name__))
    if name.startswith("_"):
        raise FieldError("%s: '%s' is not a field" % (where, name))


def _is_scalar(value):
    """One value (not a sequence of values), as set_vec decides."""
    if isinstance(value, (str, bytes)):
        return True
    if hasattr(value, "ndim"):
        return value.ndim == 0
    return not hasattr(value, "__len__")


def _clock_oid():
    return _a.resolve("/clock")


def _set_tick(oid, t):
    """Moves an element's process to tick t, or takes it off the clock (t = -1)."""
    path = _a.element_info(oid)[1]
    t = _a.to_int(t, "set tick of %s" % path, -1, 31, True)
    if t < 0:
        _a.unschedule(path, "process")
    else:
        _a.use_clock(t, path, "process")


class _IsA(object):
    """obj.isA('X') and obj.isA['X']."""

    __slots__ = ("_cls",)

    def __init__(self, cls):
        self._cls = cls

    def __call__(self, className):
        if isinstance(className, type) and issubclass(className, melement):
            className = className._class_name
        if not isinstance(className, str):
            raise TypeError("isA: expected a class name, got %s" % type(className).__name__)
        _a.class_bases(className)  # a ClassError naming the registered classes if unknown
        return className in _a.class_bases(self._cls)

    __getitem__ = __call__


class _Neighbors(object):
    """obj.neighbors['field']: the elements at the other end of the messages using that field."""

    __slots__ = ("_oid",)

    def __init__(self, oid):
        self._oid = oid

    def __getitem__(self, field):
        if not isinstance(field, str):
            raise TypeError("neighbors: expected a field name, got %s" % type(field).__name__)
        cls = _a.element_info(self._oid)[0]
        if field not in _fields(cls):
            raise FieldError("neighbors: '%s' is not a field of %s (%s)"
                             % (field, cls, _field_list(cls)))
        out, inc = _a.msgs_of(self._oid)
        found = []
        for mid in out:
            _k, _s, sf, dest, _df, _n, _e = _a.msg_info(mid)
            if sf == field:
                found.append(vec(_wrap(dest)))
        for mid in inc:
            _k, src, _sf, _d, df, _n, _e = _a.msg_info(mid)
            if df == field:
                found.append(vec(_wrap(src)))
        return found


class _LookupField(object):
    """A lookup field of one object: ``pg.level[1]``, ``pg.level[1] = 2.0``, ``clock.tickDt[0]``."""

    __slots__ = ("_oid", "_name")

    def __init__(self, oid, name):
        self._oid = oid
        self._name = name

    def __getitem__(self, key):
        return _a.lookup_get(self._oid, self._name, key)

    def __setitem__(self, key, value):
        _a.lookup_set(self._oid, self._name, key, value)

    def __call__(self, key):
        return self[key]

    def __repr__(self):
        return "<lookup field %s.%s of %s>" % (_a.element_info(self._oid)[0], self._name,
                                               _a.object_path(self._oid))


class melement(object):
    """One object: an entry of an Element (or of a field element such as a synapse).

    ``antler.IntFire(path, n=1)`` creates n IntFires at path, or returns what is already there.
    Fields read and write as attributes (``obj.Vm = -0.07``); functions are methods
    (``obj.addSpike(0.01)``); an array field is a vec (``neuron.synapse``).
    """

    __slots__ = ("_oid",)
    _class_name = "Neutral"

    def __new__(cls, path, n=1, g=0, dtype=None):
        if isinstance(path, (melement, vec)):
            return _wrap(path._oid)
        if not isinstance(path, str):
            raise TypeError("%s(path, n=1): path must be a string, got %s"
                            % (cls._class_name, type(path).__name__))
        found = _a.find(path)
        if found is not None:
            obj = _wrap(found)
            if not isinstance(obj, cls):
                raise PathError("%s already exists and is a %s, not a %s"
                                % (path, obj.className, cls._class_name))
            return obj
        return _wrap(_a.create(cls._class_name, path, n, g))

    def __init__(self, *args, **kwargs):
        pass

    # -- identity --
    @property
    def path(self):
        """Path with indices, e.g. /net/cells[3]."""
        return _a.object_path(self._oid)

    @property
    def name(self):
        return _a.element_info(self._oid)[6]

    @property
    def className(self):
        return _a.element_info(self._oid)[0]

    @property
    def dataIndex(self):
        return self._oid[1]

    @property
    def fieldIndex(self):
        return self._oid[2]

    @property
    def dindex(self):
        """The data index (MOOSE's older name for dataIndex)."""
        return self._oid[1]

    def getDataIndex(self):
        return self._oid[1]

    def getFieldIndex(self):
        return self._oid[2]

    @property
    def id(self):
        """The whole element this object belongs to, as a vec (MOOSE's Id)."""
        return vec((self._oid[0], 0, 0))

    @property
    def idValue(self):
        """The element's id number (the same on every node)."""
        return self._oid[0]

    @property
    def type(self):
        return self.className

    def getType(self):
        return self.className

    @property
    def vec(self):
        """The vec of the element this object belongs to."""
        return vec(self)

    @property
    def isA(self):
        """``obj.isA('Compartment')`` or ``obj.isA['Compartment']``: True if the object's class
        is that class or derives from it."""
        return _IsA(self.className)

    @property
    def neighbors(self):
        """``obj.neighbors['spikeOut']``: the elements (as vecs) at the other end of every message
        that uses that field of this object's element, in message order."""
        return _Neighbors(self._oid)

    @property
    def msgIn(self):
        """The messages into this element."""
        return [Msg(m) for m in _a.msgs_of(self._oid)[1]]

    @property
    def msgOut(self):
        """The messages out of this element."""
        return [Msg(m) for m in _a.msgs_of(self._oid)[0]]

    def connect(self, srcField, dest, destField, msgType="Single"):
        """Same as antler.connect(self, srcField, dest, destField, msgType)."""
        return connect(self, srcField, dest, destField, msgType)

    @property
    def tick(self):
        """The clock tick the element's process runs on (-1: none). Setting it moves the element
        (as useClock(t, path, 'process')); -1 takes it off the clock."""
        if "tick" in _fields(self.className):
            return _a.get(self._oid, "tick")
        return _a.tick_of(self._oid, False)

    @tick.setter
    def tick(self, t):
        _set_tick(self._oid, t)

    @property
    def dt(self):
        """The dt of the element's tick (0 if it is on none), unless the class has a dt field."""
        if "dt" in _fields(self.className):
            return _a.get(self._oid, "dt")
        t = _a.tick_of(self._oid, False)
        return 0.0 if t < 0 else _a.lookup_get(_clock_oid(), "tickDt", t)

    @property
    def parent(self):
        return _wrap((_a.element_info(self._oid)[4], 0, 0))

    @property
    def children(self):
        return [vec(_wrap(c)) for c in _a.children(self._oid)]

    def __eq__(self, other):
        return isinstance(other, melement) and self._oid == other._oid

    def __hash__(self):
        return hash(self._oid)

    def __repr__(self):
        return "<%s %s>" % (self.className, self.path)

    def getFieldNames(self, finfoType="*"):
        """Field names of the object's class (antler.getFieldNames(self, finfoType))."""
        return getFieldNames(self.className, finfoType)

    # -- fields --
    def getField(self, name):
        """The value of a field by name (as obj.<name>)."""
        _field_name(name, "getField")
        cls = self.className
        kind = _fields(cls).get(name, (None,))[0]
        if kind not in ("value", "readonly value", "lookup value", "field element"):
            raise FieldError("getField: '%s' is not a value field of %s (%s)"
                             % (name, cls, _field_list(cls)))
        return self.__getattr__(name)

    def setField(self, name, value):
        """Sets a field by name (as obj.<name> = value)."""
        _field_name(name, "setField")
        self.__setattr__(name, value)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise _builtins.AttributeError(name)
        oid = object.__getattribute__(self, "_oid")
        cls = _a.element_info(oid)[0]
        kind = _fields(cls).get(name, (None,))[0]
        if kind in ("value", "readonly value"):
            return _a.get(oid, name)
        if kind == "dest":
            return _functools.partial(_a.call, oid, name)
        if kind == "field element":
            return vec(_a.object_path(oid) + "/" + name)
        if kind == "lookup value":
            return _LookupField(oid, name)
        if kind is None:
            raise FieldError("'%s' is not a field of %s (%s)" % (name, cls, _field_list(cls)))
        raise FieldError("'%s' of %s is a %s field: use it with antler.connect" % (name, cls, kind))

    def __setattr__(self, name, value):
        if name == "_oid":
            raise _builtins.AttributeError("_oid is read-only")
        if name == "tick" and "tick" not in _fields(self.className):
            _set_tick(self._oid, value)
            return
        _a.set(self._oid, name, value)

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(_fields(self.className)))


class vec(object):
    """All entries of an Element: ``vec.Vm`` is a numpy array over every entry on every node, and
    ``vec.Vm = x`` sets them from a scalar or a sequence. ``vec('/net/cells[3]/synapse')`` is the
    synapses of cell 3; ``vec('/net/cells/synapse')`` every synapse of every cell."""

    __slots__ = ("_oid", "_whole")

    def __init__(self, path, n=None, g=0, dtype=None):
        what = path
        if isinstance(what, Msg):
            raise TypeError("vec(path): a Msg is not an element (use antler.element(msg))")
        if isinstance(what, vec):
            oid, whole = what._oid, what._whole
        elif isinstance(what, melement):
            oid = what._oid
            whole = True
            if _a.element_info(oid)[3]:  # a field entry: its parent's array
                whole = False
        elif isinstance(what, str):
            found = _a.find(what)
            if found is None:
                if dtype is None:
                    _a.resolve(what)  # raises the PathError naming the valid children
                cls = _CLASSES.get(dtype) if isinstance(dtype, str) else dtype
                if cls is None or not (isinstance(cls, type) and issubclass(cls, melement)):
                    raise ClassError("vec(%r, n, dtype=%r): unknown class (classes: %s)"
                                     % (what, dtype, ", ".join(sorted(_CLASSES))))
                found = _a.create(cls._class_name, what, 1 if n is None else n, g)
            oid = tuple(found)
            # A field element named with its parent's index ('/a[3]/synapse') is that parent's
            # array; so is 'synapse' when the current element is an entry (ce('/a[3]')).
            full = what if what.startswith("/") else _a.pwd().rstrip("/") + "/" + what
            head = full.rstrip("/").rsplit("/", 1)[0]
            whole = not (_a.element_info(oid)[3] and head.endswith("]"))
        elif isinstance(what, tuple):
            oid, whole = what, True
        else:
            raise TypeError("vec(path): expected a path, an element or a vec, got %s"
                            % type(what).__name__)
        if whole:
            oid = (oid[0], 0, 0)
        object.__setattr__(self, "_oid", tuple(oid))
        object.__setattr__(self, "_whole", whole)

    @property
    def path(self):
        info = _a.element_info(self._oid)
        if info[3] and not self._whole:
            return _a.object_path((self._oid[0], self._oid[1], 0)).rsplit("[", 1)[0]
        return info[1]

    @property
    def name(self):
        return _a.element_info(self._oid)[6]

    @property
    def className(self):
        return _a.element_info(self._oid)[0]

    @property
    def numData(self):
        return _a.element_info(self._oid)[2]

    @property
    def fieldDimension(self):
        """The largest entry count of any parent, as set by syncDataHandler (field elements)."""
        return _a.element_info(self._oid)[5]

    @property
    def id(self):
        return self._oid[0]

    @property
    def idValue(self):
        """The element's id number (the same on every node)."""
        return self._oid[0]

    value = idValue

    @property
    def shape(self):
        """(number of entries,), as numpy's."""
        return (len(self),)

    @property
    def vec(self):
        """The vec itself (MOOSE scripts write x.vec on vecs too)."""
        return self

    @property
    def objid(self):
        """The first entry (for a field element of one parent: that parent's first entry)."""
        return _wrap(self._oid)

    @property
    def type(self):
        return "moose.vec"

    @property
    def dtype(self):
        """The class name of the entries."""
        return self.className

    @property
    def parent(self):
        return _wrap((_a.element_info(self._oid)[4], self._oid[1] if not self._whole else 0, 0))

    @property
    def children(self):
        return [vec(_wrap(c)) for c in _a.children(self._oid)]

    def _num_name(self):
        """The parent's count field of a field element of one parent ('numSynapses'), or None."""
        info = _a.element_info(self._oid)
        if not info[3] or self._whole:
            return None
        pcls = _a.element_info((info[4], 0, 0))[0]
        return _a.field_element_num(pcls, info[6]) or None

    @property
    def num(self):
        """Entries: of a field element of one parent (``neuron.synapse.num``, settable), or of
        the element."""
        return len(self)

    @property
    def tick(self):
        """The clock tick the element's process runs on (-1: none); settable (see melement)."""
        return _a.tick_of(self._oid, False)

    def connect(self, srcField, dest, destField, msgType="Single"):
        """Same as antler.connect(self, srcField, dest, destField, msgType)."""
        return connect(self, srcField, dest, destField, msgType)

    def __len__(self):
        info = _a.element_info(self._oid)
        if not info[3]:
            return info[2]
        if not self._whole:
            nn = self._num_name()
            parent = (info[4], self._oid[1], 0)
            if nn:
                return _a.get(parent, nn)
            return _a.get(self._oid, "numField")
        # Every parent's entries: the sum of the parents' counts ("numSynapses"), not the names of
        # 1e7 synapses fetched to be counted.
        pcls = _a.element_info((info[4], 0, 0))[0]
        nn = _a.field_element_num(pcls, info[6])
        if nn:
            return int(_a.get_vec((info[4], 0, 0), nn, True).sum())
        return len(_a.get_vec(self._oid, "name", True))

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(n))]
        if n == 0:
            raise IndexError("vec[%r]: %s has no entries" % (i, self.path))
        given = _a.to_int(i, "vec[i] of %s (%d entries)" % (self.path, n), -n, n - 1, True)
        i = given + n if given < 0 else given
        if _a.element_info(self._oid)[3]:
            if self._whole:
                raise IndexError("index a field element through its parent: vec('%s[i]/%s')[k]"
                                 % (_a.element_info((_a.element_info(self._oid)[4], 0, 0))[1], self.name))
            return _wrap((self._oid[0], self._oid[1], i))
        return _wrap((self._oid[0], i, 0))

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __eq__(self, other):
        return isinstance(other, vec) and (self._oid, self._whole) == (other._oid, other._whole)

    def __hash__(self):
        return hash((self._oid, self._whole))

    def __repr__(self):
        return "<vec %s: %s>" % (self.className, self.path)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise _builtins.AttributeError(name)
        oid = object.__getattribute__(self, "_oid")
        whole = object.__getattribute__(self, "_whole")
        cls = _a.element_info(oid)[0]
        kind = _fields(cls).get(name, (None,))[0]
        if kind in ("value", "readonly value"):
            return _a.get_vec(oid, name, whole)
        if kind is None:
            raise FieldError("'%s' is not a field of %s (%s)" % (name, cls, _field_list(cls)))
        raise FieldError("'%s' of %s is a %s field: use it on one element (vec[i]) or with connect"
                         % (name, cls, kind))

    def __setattr__(self, name, value):
        if name == "tick":
            _set_tick(self._oid, value)
            return
        if name == "num":
            nn = self._num_name()
            if nn is None:
                raise FieldError("set num: %s is not the field element of one object; set the "
                                 "count on one parent (neuron.synapse.num = n)" % self.path)
            info = _a.element_info(self._oid)
            _a.set((info[4], self._oid[1], 0), nn, value)
            return
        if not self._whole and _a.element_info(self._oid)[3] and _is_scalar(value):
            # One value for the entries of one parent only (setAll would write every parent's).
            value = [value] * len(self)
        _a.set_vec(self._oid, name, value, self._whole)


_CLASSES = {}

# Kinds as field_info names them, in the order the documentation lists them.
_KIND_TITLES = (("value", "Value fields"), ("readonly value", "Read-only value fields"),
                ("lookup value", "Lookup fields"), ("field element", "Field elements"),
                ("src", "Source fields (messages out)"), ("dest", "Destination fields (functions)"),
                ("shared", "Shared fields"), ("reduce", "Reduce fields"),
                ("blocks", "Block fields (blockReduce, allToAll)"))


def _class_doc(cls):
    """The documentation of a class: its own doc, then every field by kind with C++ type and doc."""
    lines = ["antler class %s" % cls, ""]
    own = _a.class_doc(cls)
    if own:
        lines += [own, ""]
    bases = _a.class_bases(cls)
    if len(bases) > 1:
        lines += ["Inherits from: %s" % " -> ".join(bases[1:]), ""]
    info = _a.field_info(cls)
    for kind, title in _KIND_TITLES:
        rows = [(n, t, d) for n, k, t, d in info if k == kind]
        if not rows:
            continue
        lines.append("%s:" % title)
        for n, t, d in rows:
            lines.append("    %s (%s)%s" % (n, t, ": " + d if d else ""))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _make_classes():
    """Makes a Python class for every registered class not yet made (base classes first)."""
    made = []
    for name in _a.class_names():
        if name in _CLASSES:
            continue
        chain = list(reversed(_a.class_bases(name)))  # Neutral ... name
        base = melement
        for c in chain:
            if c not in _CLASSES:
                doc = _class_doc(c)
                _CLASSES[c] = type(c, (base,), {"__slots__": (), "_class_name": c, "__doc__": doc,
                                                "__module__": __name__})
                globals()[c] = _CLASSES[c]
                if c not in __all__:
                    __all__.append(c)
                made.append(c)
            base = _CLASSES[c]
    return made


_make_classes()

# ---------------------------------------------------------------------------------------------
# The Shell commands, with pymoose's names.


def element(path):
    """The object at path (e.g. '/net/cells[3]' or '/net/cells[3]/synapse[2]'); given what
    connect returned, that message."""
    if isinstance(path, Msg):
        return path
    return _wrap(_triple(path))


def exists(path):
    """True if an element exists at path (an ill-formed path or an index out of range is not an
    element; a path that is not a string is a TypeError)."""
    if not isinstance(path, str):
        raise TypeError("exists: path must be a string, got %s" % type(path).__name__)
    try:
        return _a.find(path) is not None
    except (PathError, IndexError, ValueError):
        return False


def delete(obj):
    """Deletes an element (by element, vec or path) and everything below it."""
    _a.delete(_triple(obj, "delete"))


def le(path="/"):
    """Lists (prints) the children of path and returns their paths."""
    kids = [_a.element_info(c)[1] for c in _a.children(_triple(path))]
    print("Elements under %s" % (_a.element_info(_triple(path))[1]))
    for k in kids:
        print("    " + k)
    return kids


def wildcardFind(pattern):
    """Elements matching a pattern such as '/net/##[TYPE=IntFire]', as vecs."""
    return [vec(_wrap(t)) for t in _a.wildcard_find(pattern)]


_FINFO_TYPES = {"valueFinfo": ("value", "readonly value"), "destFinfo": ("dest",), "srcFinfo": ("src",),
                "lookupFinfo": ("lookup value",), "sharedFinfo": ("shared",),
                "fieldElementFinfo": ("field element",), "reduceFinfo": ("reduce",),
                "blockFinfo": ("blocks",)}


def getFieldNames(className, finfoType=None):
    """Field names of a class; finfoType filters by kind ('valueFinfo', 'destFinfo', 'srcFinfo',
    'lookupFinfo', 'sharedFinfo', 'fieldElementFinfo', 'reduceFinfo', 'blockFinfo')."""
    return _field_names(className, finfoType, "getFieldNames")


def _field_names(className, finfoType, where):
    if isinstance(className, type) and issubclass(className, melement):
        className = className._class_name
    if isinstance(className, (melement, vec)):
        className = className.className
    if not isinstance(className, str):
        raise TypeError("%s: expected a class name, a class, an element or a vec, got %r (%s)"
                        % (where, className, type(className).__name__))
    if finfoType is not None and not isinstance(finfoType, str):
        raise TypeError("%s: finfoType must be a string (valid: %s), got %r (%s)"
                        % (where, ", ".join(sorted(_FINFO_TYPES)), finfoType,
                           type(finfoType).__name__))
    kinds = None
    if finfoType is not None and finfoType != "*":
        if finfoType not in _FINFO_TYPES:
            raise ValueError("%s: unknown finfoType '%s' (valid: %s)"
                             % (where, finfoType, ", ".join(sorted(_FINFO_TYPES))))
        kinds = _FINFO_TYPES[finfoType]
    return tuple(n for n, k, _t, _d in _a.field_info(className, where)
                 if kinds is None or k in kinds)


class Msg(object):
    """A message made by connect: its id, kind and ends; Sparse messages are filled with
    setRandomConnectivity(probability, seed) or pairFill(srcIndices, destIndices)."""

    __slots__ = ("id",)

    def __init__(self, mid):
        object.__setattr__(self, "id", _a.to_int(mid, "Msg: id", 0, 2**32 - 1, False))

    def _info(self):
        return _a.msg_info(self.id)

    @property
    def type(self):
        return self._info()[0]

    @property
    def e1(self):
        return vec(_wrap(self._info()[1]))

    @property
    def e2(self):
        return vec(_wrap(self._info()[3]))

    @property
    def srcFieldsOnE1(self):
        return [self._info()[2]]

    @property
    def destFieldsOnE2(self):
        return [self._info()[4]]

    @property
    def numEntries(self):
        """Entries of a Sparse message."""
        return self._info()[5]

    @property
    def adjacent(self):
        """MOOSE's lookup: msg.adjacent[obj] is the object at the other end from obj, one of the
        message's ends (Single: the other object; OneToOne: the entry with obj's index; Diagonal:
        the index shifted by the stride; OneToAll, Sparse, Reduce: entry 0 of the other Element,
        as MOOSE answers for them)."""
        return _Adjacent(self)

    def setRandomConnectivity(self, probability, seed):
        _a.set_random_connectivity(self.id, probability, seed)

    def pairFill(self, srcIndices, destIndices, **fields):
        """Connects srcIndices[k] to destIndices[k] for every k (any integer sequences). A 1-D
        numpy array of uint32 is read where it lies: 1e7 pairs are not copied before they reach
        the message.

        Keyword arguments set fields of the entries the pairs make in the destination field
        element, one value per pair in the order of the pairs, as Brian2's and NEST's connect
        take them: ``m.pairFill(src, dst, weight=w, delay=d)`` needs no sort by the caller (pair
        k's synapse gets w[k] and d[k]; a number is every pair's value). Every check comes
        before the fill: if a field, a count or a value is refused, nothing changes."""
        if fields:
            import numpy as np
            n = len(srcIndices)
            fields = {k: (np.full(n, v) if np.ndim(v) == 0 and not isinstance(v, str) else v)
                      for k, v in fields.items()}
        _a.pair_fill(self.id, srcIndices, destIndices, fields)

    def setStride(self, stride):
        _a.set_stride(self.id, stride)

    def __repr__(self):
        info = self._info()
        return "<Msg %d %s %s.%s -> %s.%s>" % (self.id, info[0], _a.element_info(info[1])[1], info[2],
                                               _a.element_info(info[3])[1], info[4])


class _Adjacent(object):
    __slots__ = ("_msg",)

    def __init__(self, msg):
        self._msg = msg

    def __getitem__(self, obj):
        kind, e1, _sf, e2, _df, _n, ends = self._msg._info()
        t = _triple(obj, "Msg.adjacent")
        where = "Msg.adjacent[%s]" % (_a.element_info(t)[1],)
        if kind == "Single":
            a, b = (tuple(x) for x in ends)
            if t[0] == a[0] and t[1] == a[1]:
                return _wrap(b)
            if t[0] == b[0] and t[1] == b[1]:
                return _wrap(a)
        elif t[0] in (e1[0], e2[0]):
            other = e2 if t[0] == e1[0] else e1
            if kind == "OneToOne":
                return _wrap((other[0], t[1], 0))
            if kind == "Diagonal":
                d = t[1] + (ends if t[0] == e1[0] else -ends)
                if 0 <= d < _a.element_info((other[0], 0, 0))[2]:
                    return _wrap((other[0], d, 0))
            else:
                return _wrap((other[0], 0, 0))
        raise IndexError("%s: not an end of this %s message (%s -> %s)"
                         % (where, kind, _a.element_info(e1)[1], _a.element_info(e2)[1]))


def connect(src, srcField, dest, destField, msgType="Single"):
    """Connects src.srcField to dest.destField with a message of kind Single, OneToOne, OneToAll,
    Diagonal, Sparse or Reduce; src and dest may be paths, elements or vecs. Returns the Msg."""
    return Msg(_a.add_msg(msgType, _triple(src, "connect: src"), srcField, _triple(dest, "connect: dest"),
                       destField))


def setClock(tick, dt):
    """Sets the dt of a clock tick (0..31)."""
    _a.set_clock(tick, dt)


def useClock(tick, path, field="process"):
    """Schedules every element matching path (a wildcard is fine) on tick."""
    _a.use_clock(tick, path, field)


def reinit():
    """Resets time to 0 and calls reinit on every scheduled element."""
    _a.reinit()


def start(runtime, notify=False):
    """Runs the model for runtime (seconds of model time). Shows a progress bar on stderr when it
    is a terminal and the run is long."""
    runtime = _a.to_real(runtime, "start: runtime", True)
    base = _a.base_dt()
    ratio = runtime / base if base > 0 else 0.0
    steps = int(round(ratio)) if ratio < 2.0**53 else 2**53 + 1  # (inf: a dt of 5e-324)
    tty = notify or (hasattr(_sys.stderr, "isatty") and _sys.stderr.isatty())
    if not tty or steps < 1000 or steps > 2**53:  # (the core refuses runs past 2^53 steps)
        _a.start(runtime)
        return
    chunk = max(1, steps // 50)
    done = 0
    t0 = _time.time()
    shown = False
    while done < steps:
        k = min(chunk, steps - done)
        _a.start(k * base)
        done += k
        elapsed = _time.time() - t0
        if shown or (elapsed > 0.5 and done < steps):
            shown = True
            frac = done / steps
            bar = "#" * int(30 * frac)
            _sys.stderr.write("\r[%-30s] %5.1f%%  t=%.4g s  %.1f s" % (bar, 100 * frac, _a.current_time(), elapsed))
            _sys.stderr.flush()
    if shown:
        _sys.stderr.write("\n")


def stop():
    """Stops a running clock at the end of the current step."""
    _a.stop()


def currentTime():
    """Model time reached so far."""
    return _a.current_time()


def syncDataHandler(fieldElement):
    """Sets a field element's fieldDimension to the largest entry count of any parent, on every
    node, and returns it (e.g. syncDataHandler('/net/cells/synapse'))."""
    return _a.sync_data_handler(_triple(fieldElement, "syncDataHandler"))


def seed(n=0):
    """Seeds the random classes (RandSpike, setRandomConnectivity defaults) on every node, and
    antler.rand."""
    _a.seed(n)
    _rng.seed(int(n))


_rng = globals().get("_rng") or _random.Random(0)  # (a reload keeps the stream going, as MOOSE's)


def rand(a=0.0, b=1.0):
    """A uniform random number in [a, b) from the stream antler.seed seeds (MOOSE's moose.rand;
    a Mersenne twister as MOOSE's, but not MOOSE's numbers for a given seed)."""
    lo = _a.to_real(a, "rand: a", True)
    hi = _a.to_real(b, "rand: b", True)
    return lo + (hi - lo) * _rng.random()


__version__ = "4.1.0"  # the MOOSE API level antler follows (see version())
antler_version = _a.version


def version():
    """The MOOSE API level antler follows ('4.1.0': scripts that compare versions see MOOSE 4.1);
    antler's own version is antler.antler_version."""
    return __version__


def version_info():
    """{'major', 'minor', 'micro', 'antler'}: the MOOSE API level and antler's own version."""
    major, minor, micro = __version__.split(".")
    return {"major": major, "minor": minor, "micro": micro, "antler": antler_version}


def numNodes():
    """Number of MPI nodes."""
    return _a.num_nodes()


def myNode():
    """This process's node (always 0 in a script: the other nodes serve it)."""
    return _a.my_node()


def setNumThreads(n):
    """Threads per node for the next runs: every Element is cut into n slices, which run on at most
    as many OS threads as this rank has cores (ANTLER_CORES_PER_RANK=k sets that). Results do not
    depend on n."""
    _a.set_num_threads(n)


def getNumThreads():
    """Threads per node."""
    return _a.get_num_threads()


def setPhaseTimers(on):
    """Turns the clock's phase timers on (every node; the totals start from zero) or off. While
    on, each run adds the wall time of each phase of its rounds to phaseTimes(); results do not
    change."""
    _a.set_phase_timers(on)


def phaseTimes():
    """Where the runs since setPhaseTimers(True) spent their time on this node, in seconds: a
    dict with ``rounds`` (rounds run), ``threads`` (per OS thread, the master first: ``process``,
    ``predicted`` and ``primary`` (folding reductions' targets), ``exchange`` (with the other
    nodes), ``deliver``, ``reduce`` (the digests) and ``wait`` (at barriers)) and ``elements``
    ((path, seconds) of each scheduled element's process calls, all threads together)."""
    return _a.phase_times()


def loadLibrary(path):
    """Loads a shared library of element classes on every node and makes their Python classes;
    returns the names of the new classes."""
    if hasattr(path, "__fspath__"):
        path = _os.fspath(path)
    added = _a.load_library(path)
    _make_classes()
    return added


def blockReduce(element, field, pattern="merge", k=2, contiguous=True, divisions=None,
                rounds=None):
    """Runs block rounds over the entries of a data element (DIY's patterns: 'merge', 'swap',
    'broadcast', 'allReduce'), calling the class's C++ block field `field` on each entry in each
    round it takes part in, on every node. Entries are the blocks (gid = index); divisions puts
    them on a grid (default: one dimension); k is the radix; contiguous=False halves distances
    instead of doubling them; rounds gives explicit (dimension, group size) rounds."""
    _a.block_reduce(_triple(element, "blockReduce"), field, pattern, k, contiguous, divisions,
                    rounds)


def allToAll(element, field, k=2):
    """DIY's all_to_all over the entries of a data element: the block field `field` runs once
    sending to any entries and once receiving from all of them; k-ary rounds in between."""
    _a.all_to_all(_triple(element, "allToAll"), field, k)


def reduceNow(requester, field="reduce"):
    """Runs the reductions of requester's reduce field now (without the clock)."""
    _a.reduce_now(_triple(requester, "reduceNow"), field)


def _class_name_of(what, where):
    if isinstance(what, type) and issubclass(what, melement):
        return what._class_name
    if isinstance(what, (melement, vec)):
        return what.className
    if isinstance(what, str):
        if what.startswith("/") or what not in _CLASSES and exists(what):
            return _a.element_info(_triple(what, where))[0]
        _a.field_info(what, where)  # a ClassError naming the call if it is no class
        return what
    raise TypeError("%s: expected a class name, a class, an element or a vec, got %s"
                    % (where, type(what).__name__))


def _doc_text(what):
    """The text doc(what) prints."""
    if (isinstance(what, str) and "." in what and "/" not in what
            and what.strip(".") and not exists(what)):
        cls, field = what.split(".", 1)
        cls = _class_name_of(cls, "doc")
        for n, k, t, d in _a.field_info(cls):
            if n == field:
                return "%s.%s: %s (%s)%s\n" % (cls, n, k, t, "\n    " + d if d else "")
        raise FieldError("doc: class %s has no field '%s' (%s)" % (cls, field, _field_list(cls)))
    return _class_doc(_class_name_of(what, "doc"))


def doc(what):
    """Prints the documentation of a class (by name, class, element or vec: every field with its
    kind, C++ type and doc string) or of one field ('IntFire.Vm'), as MOOSE's doc does."""
    print(_doc_text(what), end="")


def getFieldDict(className, finfoType=None):
    """{field name: C++ type} of a class, optionally of one kind (as getFieldNames)."""
    cls = _class_name_of(className, "getFieldDict")
    names = set(_field_names(cls, finfoType, "getFieldDict"))
    return {n: t for n, _k, t, _d in _a.field_info(cls) if n in names}


def _format_value(v):
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, list) and len(v) > 8:
        return "[%s, ... (%d values)]" % (", ".join(repr(x) for x in v[:8]), len(v))
    return repr(v)


def showfield(obj, field="*", showtype=False):
    """Prints the value fields of one object (all, or the one named), one per line, as MOOSE's
    showfield does; showtype adds each field's C++ type."""
    if not isinstance(showtype, bool) and not (isinstance(showtype, int) and showtype in (0, 1)):
        raise TypeError("showfield: showtype must be True or False, got %r (%s)"
                        % (showtype, type(showtype).__name__))
    if not isinstance(field, str):
        raise TypeError("showfield: field must be a field name or '*', got %r (%s)"
                        % (field, type(field).__name__))
    el = obj if isinstance(obj, melement) else _wrap(_triple(obj, "showfield")) \
        if isinstance(obj, str) else None
    if el is None:
        if isinstance(obj, vec):
            el = obj[0]
        else:
            raise TypeError("showfield: expected an element, a vec or a path, got %s"
                            % type(obj).__name__)
    info = [(n, k, t) for n, k, t, _d in _a.field_info(el.className)
            if k in ("value", "readonly value")]
    if field != "*":
        info = [x for x in info if x[0] == field]
        if not info:
            raise FieldError("showfield: %s has no value field '%s' (%s)"
                             % (el.className, field, _field_list(el.className)))
    print("[ %s ]" % el.path)
    width = max([len(n) for n, _k, _t in info] + [1])
    for n, _k, t in info:
        value = _format_value(el.getField(n))
        print(("%-*s = %s" % (width, n, value)) + (("    (%s)" % t) if showtype else ""))


def showmsg(obj):
    """Prints the messages into and out of an element: kind, the other end, and the fields."""
    t = _triple(obj, "showmsg")
    out, inc = _a.msgs_of(t)
    path = _a.element_info(t)[1]

    def end(x):
        return _a.element_info(x)[1]

    print("INCOMING:")
    for mid in inc:
        kind, src, sf, _dest, df, _n, _e = _a.msg_info(mid)
        print("    %s.%s -> %s.%s  [%s, id %d]" % (end(src), sf, path, df, kind, mid))
    print("OUTGOING:")
    for mid in out:
        kind, _src, sf, dest, df, _n, _e = _a.msg_info(mid)
        print("    %s.%s -> %s.%s  [%s, id %d]" % (path, sf, end(dest), df, kind, mid))


def ce(where):
    """Makes an element (by path, element or vec) the current element: every path that does not
    start with '/' starts there, as in a shell (MOOSE's ce)."""
    if isinstance(where, (melement, vec)):
        where = where.path
    _a.ce(where)


def pwd():
    """Prints and returns the current element's path (MOOSE's pwd)."""
    p = _a.pwd()
    print(p)
    return p
def copy(src, newParent, name=None, n=1):
    """Copies the element src (an element, a vec or a path; relative paths start at the current
    element) and everything below it under newParent, named name (default: src's name), and
    returns the new element. The copy has the same classes, entries and value fields (synapse
    arrays and their fields too) and the messages whose both ends lie inside src's subtree;
    messages that cross its boundary, schedules (useClock) and lookup fields are not copied.
    With n > 1 every copied element holds n x the entries (copy k of entry d is entry
    k * numData + d) and the internal messages connect each copy only to itself. Bad input
    (unknown paths, a name taken, n = 0, newParent inside src) raises and changes nothing."""
    return _wrap(_a.copy(src, newParent, name, n))


def move(src, newParent):
    """Moves the element src (an element, a vec or a path) and its subtree under newParent,
    keeping its name, its messages and its schedules. The root, a field element (such as a
    synapse array), a newParent inside src and a name already taken there are refused."""
    _a.move(src, newParent)


def _snapshot():
    """The model's structure as plain data (for tests: a failed command must not change it)."""
    return _a.snapshot()


def init(comm=None):
    """Runs antler on an mpi4py communicator (default: MPI_COMM_WORLD) — for scripts that use
    mpi4py themselves. Rank 0 of comm drives: init returns True there and the script builds and
    runs models as if serial. Every other rank of comm serves rank 0 inside init and returns False
    once rank 0 calls antler.finalize() (or exits), so the script goes on there with its own MPI
    work. Ranks outside comm do not call init. Scripts that do not import mpi4py before antler
    need no init: importing antler runs it on every rank."""
    if comm is None:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
    try:
        from mpi4py import MPI
    except ImportError:
        raise TypeError("init: comm must be an mpi4py communicator (mpi4py is not installed)")
    # Only a communicator: a datatype's or an info's handle taken for one crashes MPI.
    if not isinstance(comm, MPI.Intracomm) or comm == MPI.COMM_NULL:
        raise TypeError("init: comm must be an mpi4py intracommunicator (e.g. MPI.COMM_WORLD or "
                        "one made by comm.Split), got %r (%s)" % (comm, type(comm).__name__))
    handle = MPI._handleof(comm)
    return _a.init_comm(handle)


def finalize():
    """Releases the ranks serving this driver (see init) after clearing the model; antler then
    runs serially again. Called at exit if the script does not."""
    return _a.release()


def _clearModel():
    """Deletes every element and message and resets the clock (for tests)."""
    _a.clear_model()

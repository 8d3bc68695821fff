"""Records a script's results at exit, the same way under real MOOSE and under antler.

run.py puts this folder first on PYTHONPATH and names a file in $MOOSE_COMPAT_DUMP. Python imports
sitecustomize at start-up; this one waits for the first `import moose` (real MOOSE, or antler
through shim/) and then registers an atexit handler that writes, on rank 0 only:

    {"module": file of the moose module, "currentTime": /clock's currentTime,
     "tables": {key: [every value of the Table's vector]}, "errors": [what could not be read]}

Ordering: atexit runs handlers last-registered first. The handler is registered once the moose
module has finished executing, i.e. after the module's own handlers (antler's MPI finalize,
MOOSE's cleanup), so it runs while the model still exists.

Table keys: the path without any `[0]`, plus `[i]` for entry i of a Table array. MOOSE 4.1's
`.path` leaves out an array entry's index, so the index comes from dataIndex.
"""
import atexit
import importlib.machinery
import json
import os
import re
import sys

_DUMP = os.environ.get("MOOSE_COMPAT_DUMP")


def _errtext(what, e):
    return "%s: %s: %s" % (what, type(e).__name__, e)


def _tables(m, errors):
    """Every Table in the model, as {key: list of floats}."""
    try:
        found = list(m.wildcardFind("/##[TYPE=Table]"))
    except Exception as e:  # a wildcard without TYPE= filters: filter by className here
        errors.append(_errtext("wildcardFind TYPE", e))
        try:
            found = [x for x in m.wildcardFind("/##") if getattr(x, "className", "") == "Table"]
        except Exception as e2:
            errors.append(_errtext("wildcardFind ##", e2))
            found = []
    out = {}
    for el in found:
        try:
            entries = list(m.vec(el))
        except Exception as e:
            errors.append(_errtext("vec(%s)" % getattr(el, "path", el), e))
            entries = [el]
        for ent in entries:
            try:
                path = str(ent.path)
                tail = re.search(r"\[(\d+)\]$", path)
                index = getattr(ent, "dataIndex", None)
                if index is None:
                    index = int(tail.group(1)) if tail else 0
                base = re.sub(r"\[0\]", "", re.sub(r"\[\d+\]$", "", path))
                key = base if len(entries) <= 1 else "%s[%d]" % (base, int(index))
                if key not in out:  # wildcardFind may list one array once per entry
                    out[key] = [float(v) for v in ent.vector]
            except Exception as e:
                errors.append(_errtext("table %s" % getattr(ent, "path", ent), e))
    return out


def _current_time(m, errors):
    try:
        return float(m.element("/clock").currentTime)
    except Exception as e:
        errors.append(_errtext("/clock.currentTime", e))
    try:
        return float(m.currentTime())
    except Exception as e:
        errors.append(_errtext("currentTime()", e))
    return None


def _dump():
    m = sys.modules.get("moose")
    if m is None:
        return
    try:
        if hasattr(m, "myNode") and int(m.myNode()) != 0:
            return
    except Exception:
        pass
    errors = []
    res = {"module": getattr(m, "__file__", None), "tables": _tables(m, errors)}
    res["currentTime"] = _current_time(m, errors)
    res["errors"] = errors
    try:
        with open(_DUMP, "w") as f:
            json.dump(res, f)
    except OSError as e:
        sys.stderr.write("moose_compat hook: cannot write %s: %s\n" % (_DUMP, e))


class _WatchMoose:
    """Meta-path finder for the first `import moose`: finds it with the ordinary path finder and
    registers _dump once the module has executed."""

    def __init__(self):
        self.done = False

    def find_spec(self, name, path=None, target=None):
        if name != "moose" or self.done:
            return None
        self.done = True
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_register(module):
            try:
                exec_module(module)
            finally:
                atexit.register(_dump)

        spec.loader.exec_module = exec_then_register
        return spec


if _DUMP:
    sys.meta_path.insert(0, _WatchMoose())

# This file hides Debian's own sitecustomize, which installs the apport hook: do the same.
try:
    import apport_python_hook
except ImportError:
    pass
else:
    apport_python_hook.install()

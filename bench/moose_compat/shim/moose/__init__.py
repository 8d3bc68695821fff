"""`import moose` for unchanged MOOSE scripts: gives antler.

With this folder on PYTHONPATH ahead of antler's build (build/python), `import moose`,
`import moose.utils` and `from moose import *` give the antler modules themselves: the module
object is replaced in sys.modules, and a meta-path finder maps every `moose.X` to `antler.X`, so
both names share one module object (no second copy of antler's state).
"""
import importlib
import importlib.abc
import importlib.util
import sys

import antler


class _MooseAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `moose.X` as `antler.X` (and nothing where antler has no X)."""

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("moose."):
            return None
        try:
            if importlib.util.find_spec("antler." + name[len("moose."):]) is None:
                return None
        except (ImportError, ValueError):
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return importlib.import_module("antler." + spec.name[len("moose."):])

    def exec_module(self, module):
        pass  # create_module returned antler's own, already executed, module


if not any(isinstance(f, _MooseAlias) for f in sys.meta_path):
    sys.meta_path.insert(0, _MooseAlias())

# The import statement that loads this file returns sys.modules["moose"], so it returns antler.
sys.modules["moose"] = antler

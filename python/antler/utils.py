"""The helpers MOOSE scripts import from ``moose.utils`` (``from moose import utils``,
``import moose.utils as mu``), written for antler: tables, ticks, running in steps, the tree.

Only the helpers that need nothing antler lacks are here (no hsolve, channels or file readers);
a script that calls another one gets an AttributeError naming it."""

import re as _re

import antler as _antler


def getfields(obj):
    """{field: value} of every value field of an object."""
    return {name: obj.getField(name) for name in _antler.getFieldNames(obj, "valueFinfo")}


def findAllBut(pattern, exclude):
    """The elements a wildcard matches whose paths do not contain `exclude`."""
    return [e for e in _antler.wildcardFind(pattern) if exclude not in e.path]


def apply_to_tree(pattern, python_filter=None, value=None):
    """Sets `value` on every element the pattern matches (python_filter(e) True, if given);
    value is a dict {field: value}. Returns the elements."""
    found = [e for e in _antler.wildcardFind(pattern) if python_filter is None or python_filter(e)]
    for e in found:
        for field, v in (value or {}).items():
            setattr(e, field, v)
    return found


def get_matching_children(parent, names):
    """The children of parent whose names contain any of `names`."""
    parent = _antler.element(parent) if isinstance(parent, str) else parent
    return [c for c in parent.children if any(n in c.name for n in names)]


def underscorize(path):
    """'/a/b[2]' -> 'a_b_2_' (a name made from a path)."""
    return _re.sub(r"[/\[\]]", "_", str(path)).lstrip("_")


def printtree(root="/", vchar="|", hchar="__", vcount=1, depth=0, prefix="", is_last=False):
    """Prints the element tree under root, one element per line, indented by depth."""
    root = _antler.element(root) if isinstance(root, str) else root
    print(prefix + ("" if depth == 0 else hchar) + root.name)
    kids = root.children
    for i, k in enumerate(kids):
        printtree(k[0] if len(k) else k, vchar, hchar, vcount, depth + 1,
                  prefix + ("    " if is_last or depth == 0 else vchar + "   "), i == len(kids) - 1)


def create_table(tablePath, element, field, tableType="Table"):
    """A Table at tablePath recording element's field (the existing one if there is one)."""
    if _antler.exists(tablePath):
        return _antler.element(tablePath)
    if tableType != "Table":
        raise _antler.ClassError("create_table: table type %r (valid: Table)" % tableType)
    table = _antler.Table(tablePath)
    _antler.connect(table, "requestOut", element, "get" + field[0].upper() + field[1:])
    return table


def setupTable(name, obj, qtyname, tables_path=None, threshold=None, spikegen=None):
    """A Table named `name` under tables_path (default: under obj) recording obj's qtyname."""
    parent = tables_path if tables_path is not None else obj.path
    if isinstance(parent, str) and not _antler.exists(parent):
        _antler.Neutral(parent)
    table = _antler.Table("%s/%s" % (parent if isinstance(parent, str) else parent.path, name))
    if threshold is not None:
        table.threshold = threshold
    if spikegen is None:
        _antler.connect(table, "requestOut", obj, "get" + qtyname[0].upper() + qtyname[1:])
    else:
        _antler.connect(spikegen, "spikeOut", table, "input")
    return table


def updateTicks(tickDtMap):
    """setClock for each {tick: dt}."""
    for tick, dt in tickDtMap.items():
        _antler.setClock(tick, dt)


def assignTicks(tickTargetMap):
    """useClock(tick, target, 'process') for each {tick: target path}."""
    for tick, target in tickTargetMap.items():
        _antler.useClock(tick, target, "process")


def setDefaultDt(elecdt=1e-5, chemdt=0.01, tabdt=1e-5, plotdt1=1.0, plotdt2=0.25e-3):
    """MOOSE's helper: electrical ticks 0-7, tables 8, chemistry 10-17, chemical plots 18."""
    for t in range(8):
        _antler.setClock(t, elecdt)
    _antler.setClock(8, tabdt)
    for t in range(10, 18):
        _antler.setClock(t, chemdt)
    _antler.setClock(18, plotdt1)


def stepRun(simtime, steptime, verbose=True, logger=None):
    """Runs simtime in pieces of steptime, printing the time reached after each when verbose."""
    done = 0.0
    while done + steptime <= simtime * (1 + 1e-12):
        _antler.start(steptime)
        done += steptime
        if verbose:
            (logger.info if logger else print)("stepRun: t = %g" % _antler.currentTime())
    if simtime - done > steptime * 1e-9:
        _antler.start(simtime - done)


def resetSim(simpaths, simdt, plotdt, simmethod="ee"):
    """Ticks 0-7 at simdt for the elements under simpaths, tables (tick 8) at plotdt; reinit.
    Only MOOSE's 'ee' method exists in antler (no hsolve)."""
    for t in range(8):
        _antler.setClock(t, simdt)
    _antler.setClock(8, plotdt)
    _antler.reinit()


def setup_iclamp(compartment, name, delay1, width1, level1):
    """A PulseGen named name under compartment, injecting one current pulse into it."""
    pg = _antler.PulseGen("%s/%s" % (compartment.path, name))
    pg.firstDelay, pg.firstWidth, pg.firstLevel = delay1, width1, level1
    pg.secondDelay = 1e9
    _antler.connect(pg, "output", compartment, "injectMsg")
    return pg

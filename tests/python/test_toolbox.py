"""The MOOSE user's toolbox: documentation at the prompt (help, doc, getFieldDict), showfield,
showmsg, and the current element (ce, pwd) with relative paths. The expected text is taken from
the C++ declarations (the doc strings written in models/*.cpp and tests/support/test_classes.cpp)
and from values set here."""
import pydoc

import pytest

import antler


def _declared(cls):
    """(name, kind, type, doc) of every field, as the class registry holds them."""
    return antler._antler.field_info(cls)


@pytest.mark.parametrize("cls", ["IntFire", "SpikeGen", "Stats", "Table", "Synapse"])
def test_help_lists_every_field_with_kind_type_and_doc(cls):
    text = pydoc.render_doc(getattr(antler, cls), renderer=pydoc.plaintext)
    assert antler._antler.class_doc(cls) in text
    titles = {"value": "Value fields", "readonly value": "Read-only value fields",
              "lookup value": "Lookup fields", "field element": "Field elements",
              "src": "Source fields", "dest": "Destination fields", "shared": "Shared fields",
              "reduce": "Reduce fields"}
    fields = _declared(cls)
    assert fields
    for name, kind, typ, doc in fields:
        line = "%s (%s)%s" % (name, typ, ": " + doc if doc else "")
        assert line in text, line
        # Under its kind's heading: the heading comes before the line, and no other heading
        # that lists this kind's fields comes between them.
        head = text.index(titles[kind])
        assert head < text.index(line)


def test_help_of_known_declarations():
    text = antler.IntFire.__doc__
    assert "leaky integrate-and-fire" in text
    assert "Vm (double): membrane potential" in text
    assert "spikeOut (double): sends the spike time when the neuron fires" in text
    assert "synapse (Synapse[])" in text
    assert "reduce (double -> " in antler.Stats.__doc__


def test_help_of_a_user_library_class(user_classes):
    text = antler.TestAdder.__doc__
    assert "test element: sends and folds values" in text
    assert "x (double): value sent each step" in text
    assert "sum (double): fold of what was received" in text
    assert "reduceMax (double -> " in antler.TestExtremes.__doc__


def test_doc_by_name_class_element_and_field(model, capsys):
    antler.doc("IntFire")
    by_name = capsys.readouterr().out
    assert by_name == antler.IntFire.__doc__
    n = antler.IntFire("/n", 3)
    for what in (antler.IntFire, n, antler.vec("/n"), "/n"):
        antler.doc(what)
        assert capsys.readouterr().out == by_name
    antler.doc("IntFire.tau")
    out = capsys.readouterr().out
    assert out.startswith("IntFire.tau: value (double)") and "membrane time constant" in out
    with pytest.raises(antler.FieldError, match="nope"):
        antler.doc("IntFire.nope")
    with pytest.raises(antler.ClassError, match="NoSuchClass"):
        antler.doc("NoSuchClass")
    with pytest.raises(antler.TypeError, match="doc"):
        antler.doc(5)


def test_getFieldDict():
    d = antler.getFieldDict("IntFire", "valueFinfo")
    assert set(d) == set(antler.getFieldNames("IntFire", "valueFinfo"))
    assert d["Vm"] == "double" and d["numSynapses"] == "unsigned int"
    everything = antler.getFieldDict(antler.IntFire)
    assert set(everything) == {n for n, _k, _t, _d in _declared("IntFire")}
    assert everything["spikeOut"] == "double"


def test_getField_setField(model):
    n = antler.IntFire("/n")
    n.setField("tau", 0.025)
    assert n.getField("tau") == 0.025 and n.tau == 0.025
    with pytest.raises(antler.FieldError):
        n.getField("nope")


def test_showfield(model, capsys):
    n = antler.IntFire("/n", 3)
    cell = antler.element("/n[1]")
    cell.Vm = -0.0625
    cell.tau = 0.02
    antler.showfield(cell)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "[ /n[1] ]"
    rows = {line.split("=")[0].strip(): line.split("=", 1)[1].strip() for line in out[1:]}
    value_fields = [f for f, k, _t, _d in _declared("IntFire") if k in ("value", "readonly value")]
    assert sorted(rows) == sorted(value_fields)
    assert rows["Vm"] == repr(-0.0625) and rows["tau"] == repr(0.02)
    assert rows["className"] == "'IntFire'" and rows["numData"] == "3"
    antler.showfield("/n[1]", "tau", showtype=True)
    assert capsys.readouterr().out.splitlines() == ["[ /n[1] ]", "tau = 0.02    (double)"]
    with pytest.raises(antler.FieldError, match="nope"):
        antler.showfield(n, "nope")


def test_showmsg(model, capsys):
    src = antler.SpikeGen("/src")
    cells = antler.IntFire("/cells", 4)
    stats = antler.Stats("/stats")
    m1 = antler.connect(src, "spikeOut", antler.vec("/cells"), "setVm", "OneToAll")
    m2 = antler.connect(stats, "reduce", antler.vec("/cells"), "getVm", "Reduce")
    antler.showmsg(cells)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "INCOMING:"
    assert "    /src.spikeOut -> /cells.setVm  [OneToAll, id %d]" % m1.id in out
    assert "    /stats.reduce -> /cells.getVm  [Reduce, id %d]" % m2.id in out
    assert out[out.index("OUTGOING:") + 1:] == []
    antler.showmsg("/src")
    out = capsys.readouterr().out.splitlines()
    assert out == ["INCOMING:", "OUTGOING:",
                   "    /src.spikeOut -> /cells.setVm  [OneToAll, id %d]" % m1.id]


def test_ce_pwd_and_relative_paths(model, capsys):
    assert antler.pwd() == "/"
    antler.Neutral("/net")
    antler.ce("/net")
    assert antler.pwd() == "/net"
    cells = antler.IntFire("cells", 5)               # create
    assert cells.path == "/net/cells[0]" and antler.exists("/net/cells")
    assert antler.exists("cells") and not antler.exists("/cells")
    assert antler.element("cells[3]").path == "/net/cells[3]"
    assert [v.path for v in antler.wildcardFind("##[TYPE=IntFire]")] == ["/net/cells"]
    antler.Stats("stats")
    antler.connect("stats", "reduce", "cells", "getVm", "Reduce")
    antler.useClock(0, "stats")
    antler.ce("cells")                                # relative to the current element
    assert antler.pwd() == "/net/cells"
    antler.ce("..")
    antler.ce("./cells[2]")
    assert antler.pwd() == "/net/cells[2]"
    antler.ce("/")
    # A failed ce changes nothing.
    antler.ce("/net")
    with pytest.raises(antler.PathError, match="nowhere"):
        antler.ce("nowhere")
    assert antler.pwd() == "/net"
    capsys.readouterr()
    # Deleting the current element leaves the root current.
    antler.delete("/net")
    assert antler.pwd() == "/"
    assert capsys.readouterr().out.splitlines() == ["/"]
    antler.ce(antler.Neutral("/other"))
    assert antler.pwd() == "/other"
    antler.ce("/")

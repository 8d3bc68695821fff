"""The Python API: classes, fields, vecs, messages, the clock, and every error type.
Expected values are computed here with numpy or plain Python, independently of antler."""
import time

import numpy as np
import pytest

import antler


def test_create_find_and_paths(model):
    net = antler.Neutral("/net")
    cells = antler.Stats("/net/stats", 5)
    assert isinstance(cells, antler.Stats) and isinstance(cells, antler.Neutral)
    assert antler.Stats("/net/stats") == cells  # an existing path returns what is there
    assert antler.exists("/net/stats") and not antler.exists("/net/none")
    assert antler.element("/net/stats[3]").path == "/net/stats[3]"
    assert antler.element("/net/stats[3]").dataIndex == 3
    assert len(antler.vec("/net/stats")) == 5
    assert [e.dataIndex for e in antler.vec("/net/stats")] == list(range(5))
    assert antler.vec("/net/stats")[-1].dataIndex == 4
    assert net.className == "Neutral" and cells.className == "Stats"
    assert [c.path for c in net.children] == ["/net/stats"]
    assert [v.path for v in antler.wildcardFind("/##[TYPE=Stats]")] == ["/net/stats"]
    assert antler.le("/net") == ["/net/stats"]
    antler.delete("/net/stats")
    assert not antler.exists("/net/stats")
    assert antler.Neutral("/net") == net
    with pytest.raises(antler.PathError):
        antler.Stats("/net")  # exists as a Neutral, not a Stats


def test_field_names():
    names = antler.getFieldNames("Stats", "valueFinfo")
    for f in ("mean", "sdev", "num", "min", "max", "sum", "name", "path"):
        assert f in names
    assert "reduce" in antler.getFieldNames("Stats", "reduceFinfo")
    assert "proc" in antler.getFieldNames(antler.Stats, "sharedFinfo")
    with pytest.raises(ValueError):
        antler.getFieldNames("Stats", "nonsense")
    with pytest.raises(ValueError):
        antler.getFieldNames("NoSuchClass")


def test_value_fields_and_vec_numpy(model, user_classes):
    a = antler.TestAdder("/a", 101)
    v = antler.vec(a)
    x = np.sin(np.arange(101) * 0.1)
    v.x = x
    got = v.x
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    np.testing.assert_array_equal(got, x)
    assert antler.element("/a[7]").x == x[7]
    v.x = 2.5
    np.testing.assert_array_equal(v.x, np.full(101, 2.5))
    v[3].x = -1
    assert v.x[3] == -1.0 and v.doubled[3] == -2.0
    v.x = list(range(101))  # any sequence, ints converted to the field's type
    np.testing.assert_array_equal(v.x, np.arange(101.0))
    assert v.count.dtype == np.uint32


def test_functions_and_strings(model, user_classes):
    a = antler.TestAdder("/a", 3)
    a.x = 3.0
    a.scale(2.0)  # x = 2 x + index
    assert a.x == 6.0
    e = antler.element("/a[2]")
    e.add(5.0)
    assert e.sum == 5.0
    assert antler.vec("/a").text == ["", "", ""]


def test_field_elements(model, user_classes):
    r = antler.TestReceiver("/r", 4)
    rv = antler.vec(r)
    rv.numSyn = [0, 1, 2, 3]
    syn3 = antler.vec("/r[3]/syn")
    assert len(syn3) == 3
    syn3.weight = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(antler.vec("/r[3]/syn").weight, [1.0, 2.0, 3.0])
    assert antler.element("/r[3]/syn[1]").weight == 2.0
    antler.element("/r[3]/syn[1]").weight = 7.0
    assert syn3[1].weight == 7.0
    assert len(antler.vec("/r/syn").weight) == 6  # every synapse of every parent
    assert antler.syncDataHandler("/r/syn") == 3
    assert antler.vec("/r/syn").fieldDimension == 3
    assert antler.element("/r[2]").syn.weight.shape == (2,)


@pytest.mark.parametrize("indices", ["list", "int64", "uint16", "int8", "uint32", "uint32-strided", ">u4"])
def test_messages_and_run_match_a_serial_reference(model, user_classes, indices):
    a = antler.TestAdder("/a", 6)
    b = antler.TestAdder("/b", 6)
    c = antler.TestAdder("/c", 4)
    x = np.array([0.5, -1.0, 2.0, 3.5, -0.25, 1.0])
    antler.vec(a).x = x
    antler.connect(a, "out", b, "add", "OneToOne")
    m = antler.connect(a, "out", c, "add", "Sparse")
    src, dst = [0, 0, 3, 5, 5], [1, 3, 0, 2, 3]
    if indices == "list":
        m.pairFill(src, dst)
    elif indices == "uint32-strided":  # every other entry of a uint32 array: converted, not viewed
        m.pairFill(np.repeat(np.array(src, dtype=np.uint32), 2)[::2],
                   np.repeat(np.array(dst, dtype=np.uint32), 2)[::2])
    else:  # numpy arrays: uint32 read in place, other integer widths and byte orders converted
        m.pairFill(np.array(src, dtype=indices), np.array(dst, dtype=indices))
    assert m.type == "Sparse" and m.numEntries == 5
    antler.setClock(0, 1e-3)
    antler.useClock(0, "/a")
    antler.useClock(0, "/b")
    antler.useClock(0, "/c")
    antler.reinit()
    antler.start(3e-3)
    assert antler.currentTime() == pytest.approx(3e-3)
    # Reference: each step b[i] folds x[i]; c[j] folds x[i] for every pair (i, j) in source order.
    bsum = np.zeros(6)
    csum = np.zeros(4)
    for _ in range(3):
        bsum = 0.5 * bsum + x
        for i in range(6):
            for s, d in sorted(zip(src, dst)):
                if s == i:
                    csum[d] = 0.5 * csum[d] + x[i]
    np.testing.assert_array_equal(antler.vec(b).sum, bsum)
    np.testing.assert_array_equal(antler.vec(c).sum, csum)


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", ">f8", "float64-strided", "float64"])
def test_vector_writes_convert_any_numeric_dtype_across_slices(model, user_classes, dtype):
    # 150,000 values: more than one slice of the conversion (65,536 values), so that a value in
    # any slice must land at its own entry.
    n = 150_000
    a = antler.TestAdder("/a", n)
    rng = np.random.default_rng(7)
    base = rng.integers(0, 200, n).astype(np.float64) + (0.0 if dtype in ("int32", "uint8") else 0.375)
    if dtype == "float64-strided":
        values = np.repeat(base, 2)[::2]
    else:
        values = base.astype(dtype)
    antler.vec(a).x = values
    np.testing.assert_array_equal(antler.vec(a).x, np.asarray(values, dtype=np.float64))


def test_a_refused_vector_write_leaves_every_entry_unchanged(model, user_classes):
    n = 150_000
    a = antler.TestAdder("/a", n)
    antler.vec(a).x = np.arange(n, dtype=np.float64)
    bad = np.arange(n, dtype=np.complex128)  # not a real number anywhere
    with pytest.raises(TypeError, match="TestAdder.x"):
        antler.vec(a).x = bad
    with pytest.raises(ValueError):
        antler.vec(a).x = np.zeros(n - 1)  # one short
    np.testing.assert_array_equal(antler.vec(a).x, np.arange(n, dtype=np.float64))


def test_random_connectivity_is_reproducible(model, user_classes):
    a = antler.TestAdder("/a", 50)
    r = antler.TestReceiver("/r", 40)
    m1 = antler.connect(a, "out", "/r/syn", "hit", "Sparse")
    m1.setRandomConnectivity(0.2, 99)
    counts1 = antler.vec(r).numSyn.copy()
    m1.setRandomConnectivity(0.2, 99)
    np.testing.assert_array_equal(antler.vec(r).numSyn, counts1)
    assert counts1.sum() == m1.numEntries
    assert 0.2 * 2000 - 6 * np.sqrt(2000 * 0.16) < m1.numEntries < 0.2 * 2000 + 6 * np.sqrt(2000 * 0.16)


def test_stats_equal_numpy(model, user_classes):
    a = antler.TestAdder("/a", 1000)
    x = np.cos(np.arange(1000) * 0.01) * 3 - 1
    antler.vec(a).x = x
    s = antler.Stats("/s")
    antler.connect(s, "reduce", a, "getX", "Reduce")
    antler.setClock(0, 1.0)
    antler.useClock(0, "/s")
    antler.reinit()
    assert s.num == 1000
    assert s.mean == pytest.approx(x.mean(), rel=1e-12)
    assert s.sdev == pytest.approx(x.std(), rel=1e-12)
    assert s.min == x.min() and s.max == x.max()


def test_reduce_now_over_the_nodes_holding_the_targets(model, user_classes):
    # One target (node 0) and the requester on the last node: under mpirun the nodes between take
    # no part (counted in C++: tests/reduce/test_reduce_path.cpp); the values against numpy.
    n = antler.numNodes()
    a = antler.TestAdder("/few", max(1, n - 1))
    x = np.sin(np.arange(max(1, n - 1)) * 0.37) * 1e3 + 1e-7 * np.arange(max(1, n - 1))
    antler.vec(a).x = x
    s = antler.Stats("/s", n)
    last = antler.vec(s)[n - 1]
    antler.connect(last, "reduce", a, "getX", "Reduce")
    antler.reduceNow(last)
    assert last.num == x.size
    assert last.mean == pytest.approx(x.mean(), rel=1e-12)
    assert last.sum == pytest.approx(x.sum(), rel=1e-12)
    assert last.min == x.min() and last.max == x.max()


def test_threads_and_nodes():
    assert antler.numNodes() >= 1
    assert antler.myNode() == 0
    antler.setNumThreads(3)
    assert antler.getNumThreads() == 3
    antler.setNumThreads(2)


def test_error_types(model, user_classes):
    a = antler.TestAdder("/a", 3)
    b = antler.TestAdder("/b", 3)
    with pytest.raises(ValueError) as e:  # unknown path
        antler.element("/nope")
    assert isinstance(e.value, antler.Error) and isinstance(e.value, antler.PathError)
    assert "children of /: clock, a, b" in str(e.value)
    with pytest.raises(AttributeError) as e:  # unknown field
        a.xx
    assert isinstance(e.value, antler.Error) and "fields: " in str(e.value)
    with pytest.raises(AttributeError):
        a.xx = 1
    with pytest.raises(AttributeError):
        a.sum = 1.0  # read-only
    with pytest.raises(TypeError) as e:  # wrong type
        a.x = "text"
    assert isinstance(e.value, antler.Error)
    with pytest.raises(TypeError):
        a.scale("two")  # a function's argument of the wrong type
    with pytest.raises(TypeError):
        a.scale(1.0, 2.0)  # too many arguments
    with pytest.raises(TypeError):
        antler.connect(a, "out", b, "addPair", "OneToOne")  # argument types differ
    with pytest.raises(IndexError) as e:  # bad index
        antler.element("/a[3]")
    assert isinstance(e.value, antler.Error)
    with pytest.raises(IndexError):
        antler.vec(a)[3]
    with pytest.raises(ValueError):  # unknown message kind
        antler.connect(a, "out", b, "add", "Sideways")
    with pytest.raises(ValueError):  # unknown class
        antler.melement.__new__(type("Nope", (antler.melement,), {"_class_name": "Nope"}), "/x")
    with pytest.raises(ValueError):
        antler.vec(a).x = [1.0, 2.0]  # wrong length
    with pytest.raises(ValueError):
        antler.setClock(0, -1.0)
    with pytest.raises(IndexError):
        antler.setClock(99, 1.0)
    # Nothing changed.
    np.testing.assert_array_equal(antler.vec(a).x, [0.0, 0.0, 0.0])
    assert [c.path for c in antler.element("/").children] == ["/clock", "/a", "/b"]  # /clock: antler's own, as in MOOSE


def test_errors_raised_during_a_run_reach_the_script(model, user_classes):
    f = antler.TestFaulty("/f", 8)
    antler.element("/f[6]").failAt = 6
    antler.setClock(0, 1.0)
    antler.useClock(0, "/f")
    antler.reinit()
    with pytest.raises(ValueError, match="failed at entry 6"):
        antler.start(3)
    antler.element("/f[6]").failAt = -1
    antler.reinit()
    antler.start(2)
    assert antler.currentTime() == pytest.approx(2.0)


def test_phase_timers(model, user_classes):
    n = 20000
    a = antler.TestAdder("/a", n)
    b = antler.TestAdder("/b", n)
    antler.connect(a, "out", b, "add", "OneToOne")
    antler.setClock(0, 1.0)
    antler.useClock(0, "/a")
    antler.useClock(0, "/b")
    antler.reinit()
    antler.start(10)
    counts_untimed = list(b.vec.count)
    assert antler.phaseTimes()["rounds"] == 0  # off: nothing counted
    antler.setPhaseTimers(True)
    antler.reinit()  # not counted
    t0 = time.perf_counter()
    antler.start(10)
    wall = time.perf_counter() - t0
    assert list(b.vec.count) == counts_untimed  # the same results
    pt = antler.phaseTimes()
    assert pt["rounds"] == 10
    assert [p for p, _ in pt["elements"]] == ["/a", "/b"]
    assert all(sec > 0 for _, sec in pt["elements"])
    master = pt["threads"][0]
    assert set(master) == {"process", "predicted", "exchange", "primary", "deliver", "reduce", "wait"}
    assert master["deliver"] > 0
    assert 0 < sum(master.values()) <= wall
    process = sum(t["process"] for t in pt["threads"])
    assert sum(sec for _, sec in pt["elements"]) == pytest.approx(process, rel=1e-9)
    antler.setPhaseTimers(False)
    with pytest.raises(antler.TypeError, match="setPhaseTimers: on: expected True or False"):
        antler.setPhaseTimers(1)

"""antler.copy and antler.move from Python. The reference for a copy is the same network built by
hand (and, for n copies, the original's values repeated n times); for a move, an unmoved twin."""
import numpy as np
import pytest

import antler

N = 11
DT = 1e-3


def build(path):
    """A recurrent IntFire population: Sparse messages into its synapses (random, then pairs
    appended), weights and delays per synapse, and a Table per cell pulling Vm."""
    antler.Neutral(path)
    cells = antler.IntFire(path + "/cells", N)
    v = antler.vec(cells)
    v.initVm = [0.1 + 0.13 * i for i in range(N)]
    v.thresh = 1.0
    v.tau = 0.03
    v.refractoryPeriod = 0.004
    v.vReset = -0.1
    syn = antler.vec(path + "/cells/synapse")
    antler.connect(cells, "spikeOut", syn, "addSpike", "Sparse").setRandomConnectivity(0.4, 3)
    antler.connect(cells, "spikeOut", syn, "addSpike", "Sparse").pairFill([0, 4, 10], [1, 1, 2])
    n = len(np.asarray(syn.weight))
    k = np.arange(n)
    syn.weight = 0.3 + 0.35 * np.mod(0.618 * k, 1.0)
    syn.delay = DT * (1 + k % 3)
    tabs = antler.Table(path + "/vm", N)
    for i in range(N):
        antler.connect(antler.element("%s/vm[%d]" % (path, i)), "requestOut",
                       antler.element("%s/cells[%d]" % (path, i)), "getVm", "Single")
    return cells, tabs


def schedule(path):
    antler.useClock(0, path + "/cells")
    antler.useClock(0, path + "/vm")


def traces(path):
    t = antler.vec(path + "/vm")
    return [np.asarray(antler.element("%s/vm[%d]" % (path, i)).vector) for i in range(len(t))]


def run(steps=60):
    antler.reinit()
    antler.start(steps * DT)


def test_copy_runs_as_the_hand_built_twin(model):
    antler.setClock(0, DT)
    build("/a")
    build("/h")
    lib = antler.Neutral("/lib")
    c = antler.copy("/a", lib, "c")
    assert c.path == "/lib/c[0]" and isinstance(c, antler.Neutral)
    assert len(antler.vec("/lib/c/cells")) == N
    np.testing.assert_array_equal(np.asarray(antler.vec("/lib/c/cells/synapse").weight),
                                  np.asarray(antler.vec("/h/cells/synapse").weight))
    for p in ("/a", "/h", "/lib/c"):
        schedule(p)
    run()
    ref = traces("/h")
    fired = np.isfinite(np.asarray(antler.vec("/h/cells").lastSpike)).sum()
    assert fired >= N // 2  # a run with spikes travelling through the synapses
    for p in ("/a", "/lib/c"):
        got = traces(p)
        for x, y in zip(got, ref):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(np.asarray(antler.vec(p + "/cells").Vm),
                                      np.asarray(antler.vec("/h/cells").Vm))


def test_copy_n_copies_each_running_as_the_original(model):
    antler.setClock(0, DT)
    build("/a")
    t = antler.copy(antler.element("/a"), "/", "t", n=3)
    assert len(antler.vec(t)) == 3 and len(antler.vec("/t/cells")) == 3 * N
    schedule("/a")
    schedule("/t")
    run()
    a, got = traces("/a"), traces("/t")
    assert len(got) == 3 * N
    for k in range(3):
        for d in range(N):
            np.testing.assert_array_equal(got[k * N + d], a[d])
    np.testing.assert_array_equal(np.asarray(antler.vec("/t/cells").Vm),
                                  np.tile(np.asarray(antler.vec("/a/cells").Vm), 3))


def test_move_keeps_messages_and_results(model):
    antler.setClock(0, DT)
    build("/a")
    build("/h")
    antler.Neutral("/lib")
    schedule("/a")
    schedule("/h")
    msgs = [m[0] for m in antler._snapshot()[1]]
    antler.move("/a", "/lib")
    assert not antler.exists("/a") and antler.exists("/lib/a/cells/synapse")
    assert [m[0] for m in antler._snapshot()[1]] == msgs
    run()
    for x, y in zip(traces("/lib/a"), traces("/h")):
        np.testing.assert_array_equal(x, y)


def test_relative_paths_after_ce(model):
    if not hasattr(antler, "ce"):
        pytest.skip("antler.ce is not in this build yet (the lead's ce/pwd)")
    antler.Neutral("/w")
    antler.Neutral("/w/src")
    antler.IntFire("/w/src/cells", 4)
    antler.Neutral("/w/dst")
    antler.ce("/w")
    c = antler.copy("src", "dst", "c2", 2)
    assert c.path == "/w/dst/c2[0]" and len(antler.vec("/w/dst/c2/cells")) == 8
    antler.move("dst/c2", ".")
    assert antler.exists("/w/c2/cells") and not antler.exists("/w/dst/c2")
    antler.ce("/")


def test_bad_input_changes_nothing(model):
    build("/a")
    antler.Neutral("/a/sub")
    antler.Neutral("/other")
    before = antler._snapshot()
    cases = [
        (lambda: antler.copy("/a", "/a/sub"), antler.ValueError, "own subtree"),
        (lambda: antler.copy("/nope", "/other"), antler.PathError, "nope"),
        (lambda: antler.copy("/a", "/nope"), antler.PathError, "nope"),
        (lambda: antler.copy("/a/vm", "/a"), antler.PathError, "already exists"),
        (lambda: antler.copy("/a", "/other", "b", 0), antler.ValueError, "n = 0"),
        (lambda: antler.copy("/a", "/other", "a b"), antler.ValueError, "valid element name"),
        (lambda: antler.copy("/a/cells/synapse", "/other"), antler.ValueError, "field element"),
        (lambda: antler.move("/a", "/a/sub"), antler.ValueError, "own subtree"),
        (lambda: antler.move("/", "/other"), antler.ValueError, "root"),
        (lambda: antler.move("/a/cells/synapse", "/other"), antler.ValueError, "field element"),
        (lambda: antler.move("/nope", "/other"), antler.PathError, "nope"),
    ]
    for f, err, needle in cases:
        with pytest.raises(err, match=needle):
            f()
        assert antler._snapshot() == before
    with pytest.raises(antler.Error, match="copy: n"):
        antler.copy("/a", "/other", "b", -1)
    assert antler._snapshot() == before

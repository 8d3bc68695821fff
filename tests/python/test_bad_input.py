"""Bad input: every error typed and named, nothing half-written, nothing hangs.

Each test asserts three things about a bad call: the exception is the antler error that derives
from the matching built-in, its message names the thing (and the offending value as given), and a
snapshot of the whole model — the tree, every value field of every entry on every node, the
messages, the clock and the run settings — is unchanged. Runs at 1 node and under mpirun -n 2;
the cases that used to hang also run in a child `mpirun -n 2` under a timeout, so a hang fails
the test instead of stalling the suite.
"""
import json
import os
import random
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import antler

NAN = float("nan")


# ---------------------------------------------------------------------------------------------
# The model every test starts from, and its snapshot


def build(m):
    """A small model with every kind of thing a bad call could touch."""
    m.Neutral("/net")
    n = m.IntFire("/net/n", 6)
    m.vec(n).numSynapses = [1, 2, 3, 0, 2, 1]
    m.vec("/net/n/synapse").weight = np.arange(9) * 0.125
    m.vec("/net/n/synapse").delay = 1e-3
    m.vec(n).tau = np.linspace(0.01, 0.02, 6)
    m.vec(n).Vm = np.linspace(0.1, 0.6, 6)
    r = m.RandSpike("/net/r", 3)
    m.vec(r).rate = 50.0
    m.PulseGen("/net/p")
    m.SpikeGen("/net/g", 2)
    m.Compartment("/net/c", 2)
    stats = m.Stats("/net/stats")
    m.connect(stats, "reduce", n, "getVm", "Reduce")
    m.connect(r, "spikeOut", "/net/n/synapse", "addSpike", "Sparse").setRandomConnectivity(0.5, 7)
    m.setClock(0, 1e-3)
    m.setClock(1, 1e-3)
    m.useClock(0, "/net/r")
    m.useClock(0, "/net/n")
    m.useClock(1, "/net/stats")
    m.seed(3)
    m.reinit()
    m.start(0.004)
    return n


def state():
    """Everything a failed command must leave as it was."""
    snap = antler._snapshot()
    values = {}
    for path, cls, _n, _glob, _fdim in snap[0]:
        if path == "/":
            continue
        v = antler.vec(path)
        for name in antler.getFieldNames(cls, "valueFinfo"):
            try:
                x = getattr(v, name)
            except antler.TypeError:  # a type Python does not read (yet)
                continue
            values[(path, name)] = np.asarray(x).tobytes() if isinstance(x, np.ndarray) else repr(x)
    return snap, values


@pytest.fixture
def net(model):
    n = build(antler)
    return n


def refused(err, builtin, fn, *words):
    """fn() raises err (an antler.Error and a builtin), its message contains every word, and the
    model is unchanged. Returns the message."""
    before = state()
    with pytest.raises(err) as info:
        fn()
    e = info.value
    assert isinstance(e, antler.Error) and isinstance(e, builtin), type(e).__mro__
    msg = str(e)
    for w in words:
        assert w in msg, (w, msg)
    after = state()
    assert after[0] == before[0], "structure changed"
    changed = [k for k in before[1] if before[1][k] != after[1].get(k)]
    assert not changed, "values changed: %s" % changed
    return msg


# ---------------------------------------------------------------------------------------------
# Wrong exception types: each of these once raised a pybind11 or Python error


def test_wrong_types_are_antler_errors_naming_function_and_argument(net):
    n = net
    v = antler.vec(n)
    T, V, I = antler.TypeError, antler.ValueError, antler.IndexError
    cases = [
        (T, TypeError, lambda: antler.IntFire("/net/x", 1.5), ["create", "n", "1.5"]),
        (T, TypeError, lambda: antler.IntFire("/net/x", None), ["create", "n", "None"]),
        (V, ValueError, lambda: antler.IntFire("/net/x", -1), ["create", "n", "-1"]),
        (T, TypeError, lambda: antler.IntFire("/net/x", "3"), ["create", "n", "'3'"]),
        (T, TypeError, lambda: antler.setClock(1.5, 1e-3), ["setClock", "tick", "1.5"]),
        (I, IndexError, lambda: antler.setClock(-1, 1e-3), ["setClock", "tick", "-1", "0..31"]),
        (I, IndexError, lambda: antler.setClock(2**40, 1e-3), ["setClock", "tick", str(2**40)]),
        (T, TypeError, lambda: antler.setClock(0, "1"), ["setClock", "dt", "'1'"]),
        (T, TypeError, lambda: antler.setClock(0, None), ["setClock", "dt", "None"]),
        (V, ValueError, lambda: antler.setClock(0, NAN), ["setClock", "dt", "nan"]),
        (T, TypeError, lambda: antler.useClock(None, "/net/n"), ["useClock", "tick"]),
        (T, TypeError, lambda: antler.useClock(0, 5), ["useClock", "path"]),
        (V, ValueError, lambda: antler.seed(-1), ["seed", "-1"]),
        (V, ValueError, lambda: antler.seed(2**64), ["seed", str(2**64)]),
        (T, TypeError, lambda: antler.seed(None), ["seed", "None"]),
        (T, TypeError, lambda: antler.seed(1.5), ["seed", "1.5"]),
        (V, ValueError, lambda: antler.start(NAN), ["start", "runtime", "nan"]),
        (V, ValueError, lambda: antler.start(float("inf")), ["start", "runtime", "inf"]),
        (V, ValueError, lambda: antler.start(-1.0), ["start", "runtime", "-1"]),
        (T, TypeError, lambda: antler.start("1"), ["start", "runtime", "'1'"]),
        (T, TypeError, lambda: antler.start(None), ["start", "runtime", "None"]),
        (V, ValueError, lambda: antler.setNumThreads(0), ["setNumThreads", "0", "1..1024"]),
        (V, ValueError, lambda: antler.setNumThreads(-2), ["setNumThreads", "-2"]),
        (T, TypeError, lambda: antler.setNumThreads(2.0), ["setNumThreads", "2.0"]),
        (T, TypeError, lambda: antler.setNumThreads(None), ["setNumThreads", "None"]),
        (I, IndexError, lambda: v[6], ["/net/n", "6", "-6..5"]),
        (I, IndexError, lambda: v[-7], ["/net/n", "-7", "-6..5"]),
        (T, TypeError, lambda: v[1.5], ["/net/n", "1.5"]),
        (T, TypeError, lambda: v["1"], ["/net/n", "'1'"]),
        (T, TypeError, lambda: n.setVm("x"), ["setVm", "argument 1", "'x'"]),
        (T, TypeError, lambda: n.setVm(), ["setVm", "takes 1"]),
        (T, TypeError, lambda: antler.connect(n, 5, n, "setVm"), ["connect", "srcField"]),
        (T, TypeError, lambda: antler.connect(None, "spikeOut", n, "setVm"), ["connect"]),
        (T, TypeError, lambda: antler.Msg(0).setRandomConnectivity("x", 1), ["probability"]),
        (V, ValueError, lambda: antler.Msg(0).setRandomConnectivity(1.5, 1), ["probability", "1.5"]),
        (V, ValueError, lambda: antler.Msg(0).setRandomConnectivity(0.5, -1), ["seed", "-1"]),
        (T, TypeError, lambda: antler.Msg(0).pairFill([0, 1.5], [0, 1]), ["pairFill", "1.5"]),
        (V, ValueError, lambda: antler.Msg(0).pairFill([0, -1], [0, 1]), ["pairFill", "-1"]),
        # numpy arrays take the bulk path: the same errors, naming the entry
        (V, ValueError, lambda: antler.Msg(0).pairFill(np.array([0, -1]), np.array([0, 1])),
         ["pairFill", "entry 1", "-1"]),
        (V, ValueError, lambda: antler.Msg(0).pairFill(np.array([0, 1]), np.array([2**40, 1])),
         ["pairFill", "destIndices", "entry 0", str(2**40)]),
        (T, TypeError, lambda: antler.Msg(0).pairFill(np.array([0, 1.5]), np.array([0, 1])),
         ["pairFill", "entry 0", "an integer", "numpy.float64"]),
        (T, TypeError, lambda: antler.Msg(0).pairFill(np.zeros((2, 2), int), np.array([0, 1])),
         ["pairFill", "1-D", "2-D"]),
        (T, TypeError, lambda: antler.Msg(None), ["Msg", "None"]),
        (T, TypeError, lambda: antler.loadLibrary(None), ["loadLibrary", "None"]),
        (T, TypeError, lambda: antler.loadLibrary(5), ["loadLibrary", "5"]),
        (V, ValueError, lambda: antler.loadLibrary(""), ["loadLibrary", "empty"]),
        (T, TypeError, lambda: antler.exists(None), ["exists"]),
        (T, TypeError, lambda: antler.element(5), ["element", "int"]),
        (T, TypeError, lambda: antler.getFieldNames(5), ["getFieldNames", "5"]),
        (T, TypeError, lambda: antler.syncDataHandler(None), ["syncDataHandler", "None"]),
    ]
    for err, builtin, fn, words in cases:
        refused(err, builtin, fn, *words)


# ---------------------------------------------------------------------------------------------
# Silently accepted before: wrapped, truncated or coerced values


def test_values_are_never_wrapped_truncated_or_coerced(net):
    n = net
    v = antler.vec(n)
    g = antler.element("/net/g[0]")
    T, V = antler.TypeError, antler.ValueError
    cases = [
        (V, lambda: setattr(n, "numSynapses", 2**32), ["IntFire.numSynapses", str(2**32)]),
        (V, lambda: setattr(n, "numSynapses", -1), ["IntFire.numSynapses", "-1"]),
        (T, lambda: setattr(n, "numSynapses", 1.5), ["IntFire.numSynapses", "1.5"]),
        (T, lambda: setattr(n, "numSynapses", 2.0), ["IntFire.numSynapses", "2.0"]),
        (T, lambda: setattr(n, "numSynapses", "3"), ["IntFire.numSynapses", "'3'"]),
        (T, lambda: setattr(n, "numSynapses", True), ["IntFire.numSynapses", "True"]),
        (T, lambda: setattr(v, "numSynapses", np.full(6, 1.5)), ["numSynapses", "float64", "astype"]),
        (T, lambda: setattr(v, "numSynapses", [1, 1, 1, 1.5, 1, 1]), ["numSynapses", "entry 3", "1.5"]),
        (V, lambda: setattr(v, "numSynapses", np.array([1, 2, -3, 1, 1, 1])), ["numSynapses", "-3"]),
        (V, lambda: setattr(v, "numSynapses", np.full(6, 2**33, dtype=np.int64)), ["numSynapses"]),
        (T, lambda: setattr(n, "Vm", "3"), ["IntFire.Vm", "'3'"]),
        (T, lambda: setattr(n, "Vm", b"3"), ["IntFire.Vm", "b'3'"]),
        (T, lambda: setattr(n, "Vm", None), ["IntFire.Vm", "None"]),
        (T, lambda: setattr(n, "Vm", True), ["IntFire.Vm", "True"]),
        (T, lambda: setattr(n, "Vm", 1 + 2j), ["IntFire.Vm", "complex", "imaginary"]),
        (T, lambda: setattr(n, "Vm", np.complex128(1)), ["IntFire.Vm", "imaginary"]),
        (T, lambda: setattr(v, "Vm", np.ones(6, dtype=complex)), ["IntFire.Vm", "complex128"]),
        (T, lambda: setattr(v, "Vm", np.ones(6, dtype=bool)), ["IntFire.Vm", "bool"]),
        (T, lambda: setattr(v, "Vm", "abcdef"), ["IntFire.Vm", "'abcdef'"]),
        (V, lambda: setattr(v, "Vm", np.ones((2, 3))), ["IntFire.Vm", "1-d"]),
        (V, lambda: setattr(v, "Vm", np.ones(5)), ["/net/n", "5 values", "6 entries"]),
        (T, lambda: setattr(g, "edgeTriggered", None), ["SpikeGen.edgeTriggered", "None"]),
        (T, lambda: setattr(g, "edgeTriggered", 0.0), ["SpikeGen.edgeTriggered", "0.0"]),
        (T, lambda: setattr(g, "edgeTriggered", "yes"), ["SpikeGen.edgeTriggered", "'yes'"]),
        (V, lambda: setattr(g, "edgeTriggered", 2), ["SpikeGen.edgeTriggered", "2"]),
        (T, lambda: antler.IntFire("/net/x", 1.0), ["create", "1.0"]),
        (V, lambda: antler.IntFire("/net/x", 0), ["create"]),
    ]
    for err, fn, words in cases:
        refused(err, Exception, fn, *words)
    # What is accepted is exact: ints for reals, 0/1 for bools, numpy scalars.
    g.edgeTriggered = 0
    assert g.edgeTriggered is False
    g.edgeTriggered = np.bool_(True)
    assert g.edgeTriggered is True
    n.Vm = np.float32(0.25)
    assert n.Vm == 0.25
    n.numSynapses = np.uint8(2)
    assert n.numSynapses == 2
    v.numSynapses = np.array([1, 2, 3, 0, 2, 1], dtype=np.int8)
    np.testing.assert_array_equal(v.numSynapses, [1, 2, 3, 0, 2, 1])


# ---------------------------------------------------------------------------------------------
# All or nothing


@pytest.mark.parametrize("bad_at", [0, 2, 3, 5])  # first and last entry of each node at -n 2
def test_a_vector_write_that_fails_anywhere_writes_nothing(net, bad_at):
    v = antler.vec(net)
    tau = np.full(6, 0.03)
    tau[bad_at] = NAN
    refused(antler.ValueError, ValueError, lambda: setattr(v, "tau", tau), "IntFire.tau", "nan")
    tau[bad_at] = -1.0
    refused(antler.ValueError, ValueError, lambda: setattr(v, "tau", list(tau)), "IntFire.tau", "-1")
    # One value for every entry.
    refused(antler.ValueError, ValueError, lambda: setattr(v, "tau", 0.0), "IntFire.tau")
    # The synapses (and their weights) of every neuron survive a failed count write.
    counts = [1, 2, 3, 0, 2, 1]
    counts[bad_at] = 2**32 - 1
    refused(antler.ValueError, ValueError, lambda: setattr(v, "numSynapses", counts),
            "IntFire.numSynapses", str(2**32 - 1), "memory")
    # And a good write afterwards writes everything.
    v.tau = np.linspace(0.02, 0.03, 6)
    np.testing.assert_array_equal(v.tau, np.linspace(0.02, 0.03, 6))


def test_resource_requests_past_a_limit_are_refused(net):
    refused(antler.ValueError, ValueError, lambda: antler.IntFire("/net/huge", 2**32 - 2),
            "create", "/net/huge", str(2**32 - 2), "memory")
    refused(antler.ValueError, ValueError, lambda: setattr(net, "numSynapses", 2**32 - 1),
            "IntFire.numSynapses", str(2**32 - 1), "GiB")
    threads = antler.getNumThreads()
    refused(antler.ValueError, ValueError, lambda: antler.setNumThreads(2**32 - 1),
            "setNumThreads", str(2**32 - 1), "1..1024")
    assert antler.getNumThreads() == threads
    antler.start(0.001)  # and the model still runs


def test_overflowing_step_counts_are_refused_up_front(net):
    refused(antler.ValueError, ValueError, lambda: antler.start(1e300), "start", "1e+300", "2^53")
    refused(antler.ValueError, ValueError, lambda: antler.start(1e17), "start", "1e+17", "2^53")
    t = antler.currentTime()
    antler.start(0.002)
    assert antler.currentTime() == pytest.approx(t + 0.002)


# ---------------------------------------------------------------------------------------------
# Messages that help


def test_messages_keep_every_character_and_the_value_as_given(net):
    msg = refused(antler.ValueError, ValueError, lambda: antler.element("/net/n\x00zz"), "\\x00zz")
    assert "zz" in msg
    msg = refused(antler.IndexError, IndexError, lambda: antler.vec(net)[-7], "-7")
    assert "-1" not in msg.replace("-7", "")


# ---------------------------------------------------------------------------------------------
# Never a hang: an error on one node, in any phase of a round, ends the run on every node


HANG_CASES = {
    # A Single message into a synapse that does not exist, on node 1 at -n 2: raised while
    # delivering on one node only.
    "delivery": """
        m.RandSpike('/r', 2); m.IntFire('/n', 2)
        m.vec('/r').rate = 1000.0
        m.connect('/r[0]', 'spikeOut', '/n[1]/synapse[5]', 'addSpike', 'Single')
        m.setClock(0, 1e-3); m.useClock(0, '/r'); m.useClock(0, '/n')
        m.reinit()
        attempt('start', lambda: m.start(0.05))
        attempt('start again', lambda: m.start(0.01))
    """,
    # A PulseGen driving IntFire.setTau with 0: raised in reinit's delivery, then in start.
    "reinit": """
        p = m.PulseGen('/p'); n = m.IntFire('/n', 3)
        m.connect(p, 'output', n, 'setTau', 'OneToAll')
        m.setClock(0, 1e-3); m.useClock(0, '/p'); m.useClock(0, '/n')
        attempt('reinit', m.reinit)
        attempt('start', lambda: m.start(0.05))
    """,
    # Runs whose step count overflows.
    "overflow": """
        m.IntFire('/n', 3); m.setClock(0, 1e-3); m.useClock(0, '/n'); m.reinit()
        attempt('1e300', lambda: m.start(1e300))
        attempt('1e17', lambda: m.start(1e17))
    """,
}

HANG_EXPECT = {
    "delivery": {"start": "IndexError", "start again": "IndexError"},
    "reinit": {"reinit": "ValueError", "start": "ValueError"},
    "overflow": {"1e300": "ValueError", "1e17": "ValueError"},
}


def hang_script(body):
    return textwrap.dedent("""
        import json, antler as m
        out = {}
        def attempt(label, fn):
            try:
                fn()
                out[label] = 'ok'
            except m.Error as e:
                out[label] = type(e).__name__
        """) + textwrap.dedent(body) + textwrap.dedent("""
        # After the errors, the model still runs on every node.
        m.vec('/n').Vm = 0.0
        for l in ('/r', '/p'):
            if m.exists(l): m.delete(l)
        m.reinit(); m.start(0.003)
        out['time'] = m.currentTime()
        print('RESULT ' + json.dumps(out), flush=True)
        """)


def child_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "PRTE_"))}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="2")
    return env


@pytest.mark.parametrize("case", sorted(HANG_CASES))
def test_errors_on_one_node_end_the_run_everywhere_without_hanging(case, tmp_path):
    if antler.numNodes() > 1:
        pytest.skip("starts its own mpirun -n 2 (from the 1-node run)")
    mpirun = shutil.which("mpirun")
    if not mpirun:
        pytest.skip("no mpirun")
    script = tmp_path / ("hang_%s.py" % case)
    script.write_text(hang_script(HANG_CASES[case]))
    try:
        p = subprocess.run([mpirun, "--oversubscribe", "--bind-to", "none", "-n", "2",
                            sys.executable, str(script)], env=child_env(), capture_output=True,
                           text=True, timeout=90)
    except subprocess.TimeoutExpired as e:
        pytest.fail("%s: hung (no result after 90 s)\n%s" % (case, e.stdout))
    line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    assert p.returncode == 0 and line, (p.returncode, p.stdout, p.stderr)
    got = json.loads(line[0][7:])
    for label, kind in HANG_EXPECT[case].items():
        assert got[label] == kind, (case, label, got)
    assert got["time"] == pytest.approx(0.003)


def test_an_error_on_one_node_during_delivery_reaches_the_script(model):
    # The same as the 'delivery' case, in this process (at -n 2 under pytest's own mpirun).
    antler.RandSpike("/r", 2)
    antler.IntFire("/n", 2)
    antler.vec("/r").rate = 1000.0
    antler.connect("/r[0]", "spikeOut", "/n[1]/synapse[5]", "addSpike", "Single")
    antler.setClock(0, 1e-3)
    antler.useClock(0, "/r")
    antler.useClock(0, "/n")
    antler.reinit()
    with pytest.raises(antler.IndexError, match="synapse"):
        antler.start(0.05)
    antler.delete("/r")
    antler.reinit()
    antler.start(0.002)
    assert antler.currentTime() == pytest.approx(0.002)


# ---------------------------------------------------------------------------------------------
# A seeded fuzz: thousands of random calls with random bad arguments


BAD_INT = [None, 1.5, -1, 2**64, "3", b"3", 1 + 2j, NAN, [], object(), True, 2.0]
BAD_REAL = [None, "x", b"x", 1 + 2j, [], object(), True, 10**400, {}]
BAD_PATH = [None, 5, b"/net", "", "/nonexistent", "/net/n[99]", "/net/n[-1]", "/net/n\x00",
            "/net/n[1.5]", "/net/n[", "/net/#", 1.5, ("x",)]
BAD_NAME = [None, 5, "", "nonsense", "Vm\x00", b"Vm", 1.5]
BAD_FIELD_VALUES = {
    "tau": [NAN, -1.0, 0.0, float("inf"), "x", None, 1 + 2j, True],
    "numSynapses": [-1, 1.5, 2**32, 2**32 - 1, "x", None, True],
    "Vm": ["x", None, 1 + 2j, True, b"x", [1.0]],
    "thresh": ["x", None, 1j, False],
}


def fuzz_calls(rng, n, count):
    """(label, callable) pairs, each of which must be refused."""
    v = antler.vec(n)
    pick = rng.choice

    def vec_bad(field):
        bad = list(np.full(6, 0.5 if field != "numSynapses" else 1))
        bad[rng.randrange(6)] = pick(BAD_FIELD_VALUES[field])
        return bad

    makers = [
        lambda: ("create n", lambda a=pick(BAD_INT): antler.IntFire("/net/f", a)),
        lambda: ("create path", lambda a=pick(BAD_PATH[:2] + [b"/x", "/net/n/synapse/x", "/nonexistent/x"]):
                 antler.IntFire(a, 1)),
        lambda: ("element", lambda a=pick(BAD_PATH): antler.element(a)),
        lambda: ("delete", lambda a=pick(BAD_PATH): antler.delete(a)),
        lambda: ("setClock tick", lambda a=pick(BAD_INT + [32, 99]): antler.setClock(a, 1e-3)),
        lambda: ("setClock dt", lambda a=pick(BAD_REAL + [NAN, -1.0, 0.0]): antler.setClock(0, a)),
        lambda: ("useClock", lambda a=pick([p for p in BAD_PATH if p != "/net/#"]):
                 antler.useClock(0, a)),
        lambda: ("start", lambda a=pick(BAD_REAL + [NAN, -1.0, 1e300]): antler.start(a)),
        lambda: ("seed", lambda a=pick(BAD_INT): antler.seed(a)),
        lambda: ("threads", lambda a=pick(BAD_INT + [0, 2**32 - 1]): antler.setNumThreads(a)),
        lambda: ("connect", lambda a=pick(BAD_NAME): antler.connect("/net/r", a, "/net/n/synapse",
                                                                    "addSpike", "Sparse")),
        lambda: ("connect kind", lambda a=pick(BAD_NAME): antler.connect("/net/r", "spikeOut",
                                                                         "/net/n", "setVm", a)),
        lambda: ("field get", lambda a=pick(BAD_NAME): getattr(n, a) if isinstance(a, str)
                 else antler.element(a)),
        lambda: ("set", lambda f=pick(sorted(BAD_FIELD_VALUES)): setattr(
            n, f, pick(BAD_FIELD_VALUES[f]))),
        lambda: ("vec set", lambda f=pick(sorted(BAD_FIELD_VALUES)): setattr(v, f, vec_bad(f))),
        lambda: ("vec all", lambda f=pick(["tau", "numSynapses"]): setattr(
            v, f, pick(BAD_FIELD_VALUES[f]))),
        lambda: ("vec index", lambda a=pick([None, 1.5, 2**64, "3", 6, -7, 2**40]): v[a]),
        lambda: ("call", lambda a=pick(BAD_REAL): n.setVm(a)),
        lambda: ("sync", lambda a=pick(BAD_PATH + ["/net/n"]): antler.syncDataHandler(a)),
        lambda: ("loadLibrary", lambda a=pick([None, 5, "", "/nonexistent.so", b"x"]):
                 antler.loadLibrary(a)),
        lambda: ("random", lambda a=pick(BAD_REAL + [NAN, -0.5, 1.5]):
                 antler.Msg(1).setRandomConnectivity(a, 1)),
    ]
    return [pick(makers)() for _ in range(count)]


def test_seeded_fuzz_of_bad_calls_changes_nothing_and_the_model_still_runs(net):
    rng = random.Random(20261122)
    calls = 3000 if antler.numNodes() == 1 else 800
    before = state()
    kinds = {}
    for k, (label, fn) in enumerate(fuzz_calls(rng, net, calls)):
        try:
            fn()
        except antler.Error as e:
            assert isinstance(e, (TypeError, ValueError, IndexError, AttributeError, RuntimeError))
            assert str(e), label
            kinds[type(e).__name__] = kinds.get(type(e).__name__, 0) + 1
        else:
            pytest.fail("call %d (%s) was accepted" % (k, label))
        if k % 50 == 0 or k == calls - 1:  # the snapshot costs more than the calls
            after = state()
            assert after[0] == before[0], (k, label)
            assert after[1] == before[1], (k, label)
    assert len(kinds) >= 4, kinds  # type, value, index, path, field errors all seen
    # The model still runs correctly: with no input, an IntFire decays by (1 - dt/tau) per step.
    antler.delete("/net/r")
    v = antler.vec(net)
    v.Vm = 0.5
    v.thresh = 10.0
    antler.start(0.005)
    tau = v.tau
    np.testing.assert_allclose(v.Vm, 0.5 * (1 - 1e-3 / tau) ** 5, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# Odd paths and libraries


def test_odd_paths_mean_what_a_shell_would_and_agree_everywhere(net):
    V, I = antler.ValueError, antler.IndexError
    # Class(path) creates, or returns what is there: '/net/..' is the root, '/net/.' is /net.
    assert antler.Neutral("/net/..").path == antler.element("/").path
    assert antler.Neutral("/net/.").path == antler.element("/net").path
    refused(antler.PathError, ValueError, lambda: antler.IntFire("/net/.."), "Neutral", "IntFire")
    refused(V, ValueError, lambda: antler.Neutral("/nonexistent/.."), "nonexistent")
    refused(V, ValueError, lambda: antler.Neutral("/net/n[2]/x"), "/net/n[2]/x", "/net/n")
    refused(V, ValueError, lambda: antler.IntFire("/z", 0), "/z", "0")
    refused(V, ValueError, lambda: antler.Neutral("/net/x[3]"), "x[3]")
    refused(I, IndexError, lambda: antler.element("/net/n[99999999999]"), "99999999999", "0..5")
    refused(V, ValueError, lambda: antler.element("/net/n[-1]"), "-1")
    # Lookups resolve '.' and '..' as a shell does, and exists/element/le agree.
    assert antler.element("/net/n/..").path == antler.element("/net").path
    assert antler.element("/net/./n[2]").path == "/net/n[2]"
    assert antler.exists("/net/n/../n") and not antler.exists("/net/n[6]")
    assert not antler.exists("/net/n[99999999999]") and not antler.exists("/z")
    assert antler.le("/net/n/..") == antler.le("/net")
    # '##' finds each element once.
    everything = [v.path for v in antler.wildcardFind("/##")]
    assert len(everything) == len(set(everything))
    assert sorted(v.path for v in antler.wildcardFind("/##/##")) == sorted(
        p for p in everything if p.count("/") >= 2)


def test_a_library_that_would_register_a_class_twice_is_refused_whole(net, tmp_path):
    lib = os.path.join(os.path.dirname(antler._a.__file__), "..", "..", "libantler.so")
    if not os.path.exists(lib):
        pytest.skip("libantler.so not next to the build's python folder")
    copy = tmp_path / "libantler_copy.so"
    shutil.copy(lib, copy)
    if antler.numNodes() > 1:
        pytest.skip("the copy lives in this node's temporary folder only")
    classes = antler._snapshot()[7]
    msg = refused(antler.ValueError, ValueError, lambda: antler.loadLibrary(str(copy)),
                  "loadLibrary", "libantler_copy.so", "libantler.so")
    assert "own copy" in msg or "Neutral" in msg
    assert antler._snapshot()[7] == classes
    # Its static initialisers registered antler's Shell commands again (e.g. "move"): they are
    # rolled back with it, so antler's own still run (no call into the closed library).
    antler.Neutral("/lib_a")
    antler.Neutral("/lib_b")
    antler.move("/lib_a", "/lib_b")
    assert antler.exists("/lib_b/lib_a") and not antler.exists("/lib_a")
    antler.delete("/lib_b")
    refused(antler.ValueError, ValueError, lambda: antler.loadLibrary(str(tmp_path / "none.so")),
            "loadLibrary", "none.so")


INIT_TWICE = r'''
import json, sys
from mpi4py import MPI
import antler
rank = MPI.COMM_WORLD.Get_rank()
got = {}
if antler.init():
    antler.Neutral("/x")
    got["nodes1"] = antler.numNodes()
    try:
        antler.init()  # already running: refused before any collective (it used to hang here)
        got["second"] = "accepted"
    except antler.StateError as e:
        got["second"] = "StateError" if "finalize" in str(e) else str(e)
    antler.finalize()
if antler.init():  # again, after finalize: a fresh run on every rank, with an empty model
    got["nodes2"] = antler.numNodes()
    got["x_after"] = antler.exists("/x")
    antler.IntFire("/n", 3)
    antler.reinit()
    antler.start(1e-3)
    got["time"] = antler.currentTime()
    antler.finalize()
    print("RESULT " + json.dumps(got), flush=True)
'''


def test_init_twice_and_init_after_finalize_under_mpirun(tmp_path):
    # A second init() while running is refused, and finalize() then init() starts again, at
    # mpirun -n 2 (both used to hang: the refusal came after a collective the workers were not in).
    if antler.numNodes() > 1:
        pytest.skip("starts its own mpirun -n 2 (from the 1-node run)")
    mpirun = shutil.which("mpirun")
    if not mpirun:
        pytest.skip("no mpirun")
    pytest.importorskip("mpi4py.MPI")
    script = tmp_path / "init_twice.py"
    script.write_text(INIT_TWICE)
    try:
        p = subprocess.run([mpirun, "--oversubscribe", "--bind-to", "none", "-n", "2",
                            sys.executable, str(script)], env=child_env(), capture_output=True,
                           text=True, timeout=90)
    except subprocess.TimeoutExpired as e:
        pytest.fail("init twice: hung (no result after 90 s)\n%s" % (e.stdout,))
    line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    assert p.returncode == 0 and line, (p.returncode, p.stdout, p.stderr)
    got = json.loads(line[0][7:])
    assert got == {"nodes1": 2, "second": "StateError", "nodes2": 2, "x_after": False,
                   "time": pytest.approx(1e-3)}


def test_errors_carry_their_facts_as_details(model):
    """An antler error's facts (index and size, path, class, field, types) come with it as
    `details` (tests/core/test_errors.cpp checks that they cross nodes); an error raised in
    Python has none."""
    antler.Neutral("/facts")
    antler.IntFire("/facts/n", 4)
    with pytest.raises(antler.IndexError) as e:
        antler.element("/facts/n[7]")
    assert e.value.details["index"] == "7" and e.value.details["size"] == "4"
    with pytest.raises(antler.PathError) as e:
        antler.element("/facts/none")
    assert e.value.details["path"] == "/facts/none"
    with pytest.raises(antler.ClassError) as e:
        antler.doc("NoSuchClass")
    assert e.value.details["class"] == "NoSuchClass"
    assert antler.ValueError("raised in Python").details == {}

# The same bits on any split: Stats' sum and mean are the correctly rounded sum (math.fsum) and
# fsum / n on every threads x nodes split (ctest runs this file at 1-4 ranks; each run sets 1, 2
# and 3 threads), and sdev is the same bits on every split and within 1e-14 of the exact value
# computed here with fractions. The data are the cancelling Vm and adversarial sets, held
# in a field nothing changes during the step (TestBlocks.value: no process of its own; IntFire's
# reinit and process would move Vm).
import math
import struct
from fractions import Fraction

import numpy as np
import pytest

import antler


@pytest.fixture
def model():
    for p in ("/s",):
        if antler.exists(p):
            antler.delete(p)
    antler.Neutral("/s")
    yield
    antler.delete("/s")
    antler.setNumThreads(1)


def _stats_of(x, threads):
    antler.setNumThreads(threads)
    if antler.exists("/s/n"):
        antler.delete("/s/n")
        antler.delete("/s/st")
    n = antler.TestBlocks("/s/n", len(x))
    v = antler.vec(n)
    v.value = x
    st = antler.Stats("/s/st")
    antler.connect(st, "reduce", v, "getValue", "Reduce")
    antler.setClock(0, 1e-4)
    antler.useClock(0, "/s/st")
    antler.reinit()
    antler.start(1e-4)
    return st.sum, st.mean, st.sdev, st.num


def _exact_sdev(x):
    fx = [Fraction(float(a)) for a in x]
    n = len(fx)
    mean = sum(fx) / n
    return math.sqrt(float(sum((a - mean) ** 2 for a in fx) / n))


def _sets():
    i = np.arange(100003)
    yield "the issue's Vm", np.sin(i * 0.37) * 1e3 + 1e-7 * i
    rng = np.random.default_rng(7)
    k = np.arange(3001)
    yield "huge and tiny", np.where(k % 3 == 0, 1e150, np.where(k % 3 == 1, -1e150, 1e-150)) * (
        1 + k * 1e-12)
    yield "alternating signs", (-1.0) ** k * (1e6 + rng.random(3001))
    yield "subnormals", rng.random(2001) * 5e-320 - 2.5e-320
    yield "overflow only in a wrong order", np.array([1e308, 1e308, -1e308, -1e308, 1e308, 3.0])


@pytest.mark.parametrize("name,x", list(_sets()), ids=lambda a: a if isinstance(a, str) else "")
def test_stats_are_the_same_bits_on_every_split(model, user_classes, name, x):
    try:
        want_sum = math.fsum(x)
    except OverflowError:  # fsum's partials overflow; the exact rational sum, correctly rounded
        want_sum = float(sum(Fraction(float(a)) for a in x))
    runs = [_stats_of(x, t) for t in (1, 2, 3)]
    for s, mean, sdev, num in runs:
        assert num == len(x)
        assert s == want_sum, "%s: sum %r, fsum %r" % (name, s, want_sum)
        assert mean == want_sum / len(x)
    # sdev: one value for every split, close to the exact one.
    assert len({struct.pack("<d", r[2]) for r in runs}) == 1, [r[2] for r in runs]  # bits
    # (Squares below the normal range lose their low bits, as the header says: not compared.)
    if len(x) < 20000 and math.isfinite(runs[0][2]) and np.min(np.abs(x)) > 1e-150:
        exact = _exact_sdev(x)
        assert runs[0][2] == pytest.approx(exact, rel=1e-14, abs=1e-320)


def test_stats_nan_and_infinity(model, user_classes):
    s, mean, sdev, num = _stats_of(np.array([1.0, np.inf, 2.0]), 2)
    assert s == np.inf and mean == np.inf and math.isnan(sdev)
    s, mean, sdev, num = _stats_of(np.array([1.0, np.inf, -np.inf]), 1)
    assert math.isnan(s) and math.isnan(mean) and math.isnan(sdev)


@pytest.mark.parametrize("stats_dt", [1e-4, 3e-4])
@pytest.mark.parametrize("stats_tick", [1, 3])
def test_stats_of_intfire_vm_from_the_sweep_copy(model, stats_tick, stats_dt):
    # IntFire's sweep writes Vm out as it goes when a Reduce message reads Vm and no message sets
    # it; Stats folds that copy instead of reading the neurons again. It must give the bits of the
    # neurons' own Vm: on a tick after the neurons' (this step's Vm) and before them (the last
    # step's), in the first step of a run (no copy yet), and after a Vm set between runs (the
    # neurons on the clock, and off it). The reference: the same model with a message into setVm
    # from a SpikeGen that never fires, which keeps Stats on the neurons themselves. The sweep
    # feeds Stats as it goes (SweepSink): with Stats every step, and every third step (a feed
    # that goes unused, then folds of the neurons themselves).
    def run(inert_setter, threads):
        antler.setNumThreads(threads)
        for p in ("/s/n", "/s/st", "/s/sg", "/s/tm", "/s/ts", "/s/tn"):
            if antler.exists(p):
                antler.delete(p)
        rng = np.random.default_rng(3)
        n = antler.vec(antler.IntFire("/s/n", 301))
        n.initVm = rng.uniform(-0.5, 1.2, 301)
        n.tau, n.thresh, n.refractoryPeriod = 0.01, 1.0, 1e-3
        st = antler.Stats("/s/st")
        antler.connect(st, "reduce", n, "getVm", "Reduce")
        if inert_setter:
            sg = antler.SpikeGen("/s/sg")
            sg.threshold = 1e300
            antler.connect(sg, "spikeOut", n, "setVm", "OneToAll")
        tabs = [antler.Table(p) for p in ("/s/tm", "/s/ts", "/s/tn")]
        for t, f in zip(tabs, ("getMean", "getSdev", "getNum")):
            antler.connect(t, "requestOut", st, f)
        for t in (1, 2, 3, 8):
            antler.setClock(t, 1e-4)
        antler.setClock(stats_tick, stats_dt)
        antler.useClock(stats_tick, "/s/st")
        antler.reinit()
        antler.start(30e-4)
        n.Vm = rng.uniform(-0.5, 1.2, 301)  # between runs: the next run's first Stats sees it
        antler.start(20e-4)
        # The neurons off the clock (neither prepared nor processed) and Vm set: Stats reads it.
        antler.element("/s/n").tick = -1
        n.Vm = last = rng.uniform(-0.5, 1.2, 301)
        antler.start(3e-4)
        assert np.frombuffer(np.asarray(tabs[0].vector).tobytes())[-1] == math.fsum(last) / 301
        return [np.asarray(t.vector).tobytes() for t in tabs] + [np.asarray(n.Vm).tobytes()]

    ref = run(True, 1)
    distinct = 40 if stats_dt == 1e-4 else 12
    assert len(np.frombuffer(ref[0])) == 54 and len(set(np.frombuffer(ref[0]))) > distinct
    for threads in (1, 2, 3):
        assert run(False, threads) == ref, threads


@pytest.mark.parametrize("threads", [1, 2])
def test_stats_of_intfire_vm_after_the_neurons_leave_the_clock(model, threads):
    # The Stats on a tick before the neurons': the sweep's last feed of a run goes unused. In
    # the next run the neurons are off the clock (not prepared) and a message made between the
    # runs sets their Vm: the Stats must read that Vm, not keep the old feed.
    antler.setNumThreads(threads)
    n = antler.vec(antler.IntFire("/s/n", 7))
    n.initVm = np.linspace(0.1, 0.7, 7)
    n.tau, n.thresh = 0.01, 10.0
    st = antler.Stats("/s/st")
    antler.connect(st, "reduce", n, "getVm", "Reduce")
    for t in (0, 1, 2):
        antler.setClock(t, 1e-4)
    antler.useClock(1, "/s/st")
    antler.useClock(2, "/s/n")
    antler.reinit()
    antler.start(5e-4)
    antler.element("/s/n").tick = -1
    pg = antler.PulseGen("/s/pg")
    pg.baseLevel, pg.firstDelay, pg.firstLevel = 0.25, 1.0, 0.25
    antler.connect(pg, "output", n, "setVm", "OneToAll")
    antler.useClock(0, "/s/pg")
    antler.start(1e-4)
    assert list(n.Vm) == [0.25] * 7
    assert st.mean == 0.25

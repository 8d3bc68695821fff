"""Neuron models from Python against closed-form solutions, and the demo network's Stats against
numpy over vec.Vm at several steps."""
import importlib.util
import math
import os

import numpy as np
import pytest

import antler

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def test_intfire_decay_spike_and_refractory(model):
    dt, tau = 1e-3, 0.01
    n = antler.IntFire("/n")
    n.tau, n.thresh, n.refractoryPeriod, n.initVm = tau, 1.0, 0.004, 0.5
    antler.setClock(0, dt)
    antler.useClock(0, "/n")
    antler.reinit()
    antler.start(5 * dt)
    assert n.Vm == pytest.approx(0.5 * (1 - dt / tau) ** 5, rel=1e-12)  # Vm *= (1 - dt/tau) per step
    # A synapse delivering 2.0 at t = 10 ms drives it over threshold: it fires and resets.
    src = antler.SpikeGen("/src")
    src.threshold = 0.5
    n.numSynapses = 1
    syn = antler.element("/n/synapse[0]")
    syn.weight, syn.delay = 2.0, 0.004
    antler.connect(src, "spikeOut", syn, "addSpike", "Single")
    antler.useClock(0, "/src")
    antler.reinit()
    src.Vm(1.0)  # the SpikeGen fires at its first step (t = 1 ms); the weight lands at t = 5 ms
    antler.start(10 * dt)
    assert n.lastSpike == pytest.approx(0.005, abs=1e-12)
    assert n.spiked == 0.0


def test_compartment_matches_the_closed_form(model):
    dt, Cm, Rm, Em, inj, V0 = 5e-5, 1e-10, 1e8, -0.065, 2e-10, -0.07
    c = antler.Compartment("/c")
    c.Cm, c.Rm, c.Em, c.inject, c.initVm = Cm, Rm, Em, inj, V0
    t = antler.Table("/t")
    antler.connect(t, "requestOut", c, "getVm", "Single")
    antler.setClock(0, dt)
    antler.setClock(1, dt)
    antler.useClock(0, "/c")
    antler.useClock(1, "/t")
    antler.reinit()
    antler.start(200 * dt)
    vinf = Em + inj * Rm
    times = dt * np.arange(201)
    expected = vinf + (V0 - vinf) * np.exp(-times / (Rm * Cm))
    np.testing.assert_allclose(np.asarray(t.vector), expected, rtol=1e-12)


def test_randspike_rate_within_bounds_and_split_independent(model):
    antler.seed(42)
    r = antler.RandSpike("/r", 1000)
    antler.vec(r).rate = 20.0
    s = antler.SpikeStats("/s")
    antler.connect(s, "reduce", r, "getHasFired", "Reduce")
    tab = antler.Table("/tab")
    antler.connect(tab, "requestOut", s, "getCount", "Single")
    dt = 1e-3
    for k in range(3):
        antler.setClock(k, dt)
    antler.useClock(0, "/r")
    antler.useClock(1, "/s")
    antler.useClock(2, "/tab")
    counts = []
    for threads in (1, 2):
        antler.setNumThreads(threads)
        antler.reinit()
        antler.start(1.0)
        counts.append(np.asarray(tab.vector))
    np.testing.assert_array_equal(counts[0], counts[1])
    total = counts[0][1:].sum()
    mean, sd = 1000 * 1.0 * 20.0, math.sqrt(1000 * 1000 * 0.02 * 0.98)
    assert abs(total - mean) < 6 * sd


def _load_demo():
    spec = importlib.util.spec_from_file_location("population_stats", os.path.join(EXAMPLES, "population_stats.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_demo_stats_equal_numpy_at_several_steps(model):
    demo = _load_demo()
    args = demo.argparse.Namespace(neurons=1500, inputs=200, rate=10.0, fanin=20.0, fanout=20.0, win=0.25,
                                   wrec=0.05, duration=0.05, dt=1e-4, seed=3, threads=0, out="", no_plot=True)
    nv, stats, rate, tabs, _sizes = demo.build(args)
    antler.reinit()
    for _ in range(5):
        antler.start(40 * args.dt)
        vm = nv.Vm
        assert stats.num == len(vm) == 1500
        assert stats.mean == pytest.approx(vm.mean(), rel=1e-12)
        assert stats.sdev == pytest.approx(vm.std(), rel=1e-10)
        assert stats.min == vm.min() and stats.max == vm.max()
        assert rate.rate == pytest.approx(nv.spiked.sum() / (1500 * args.dt), rel=1e-12)

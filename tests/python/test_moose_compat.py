"""MOOSE 3/4 behaviour that real MOOSE scripts rely on: default scheduling by class, the /clock
element and MOOSE's tick rules, useClock's lists, phases and wildcards, PulseGen's pulse arrays and
trigger modes, the SimpleSynHandler -> activation synapse layout, Table's spike recording, lookup
fields, ElementField .num, and the small API (id, dindex, shape, isA, neighbors, element(msg), ...).

Every expected value is computed here from MOOSE's rules as written in its source (cited), by a
serial loop or a formula, never read back from antler; the same file runs at 1 and 2 nodes."""
import math

import numpy as np
import pytest

import antler

BASE = 50e-6  # MOOSE's base dt (scheduling/Clock.cpp: defaultDt_[0])


# ---------------------------------------------------------------------------------------------
# The clock: MOOSE's default ticks and dts, its integer steps, /clock


def test_default_dts_and_ticks_are_moose_s(model):
    clock = antler.element("/clock")
    assert clock.className == "Clock"
    assert clock.baseDt == BASE and clock.dt == 0.0  # (dt: Neutral's, of its own tick: none)
    expected = [50e-6] * 8 + [1e-4, 0.0, 0.01] + [0.1] * 7 + [1.0, 1.0, 10.0] + [0.0] * 9 + [1.0, 0.01]
    assert list(clock.dts) == pytest.approx(expected, rel=1e-15)
    for t, dt in enumerate(expected):
        assert clock.tickDt[t] == pytest.approx(dt, rel=1e-15)
    ticks = {"PulseGen": 0, "StimulusTable": 0, "SimpleSynHandler": 1, "RandSpike": 1, "IntFire": 2,
             "Compartment": 3, "SpikeGen": 5, "SpikeStats": 7, "Table": 8, "TimeTable": 8,
             "Stats": 17, "NSDFWriter": 30, "Neutral": -1}
    for cls, t in ticks.items():
        assert clock.defaultTick[cls] == t
        obj = getattr(antler, cls)("/x_" + cls)
        assert obj.tick == t, cls
    comp = antler.element("/x_Compartment")
    assert antler._a.tick_of(comp._oid, True) == 2  # init on the tick before process (MOOSE)


def _pulse_period(width, delay):
    """MOOSE's PulseGen period (device/PulseGen.cpp, process): delays count from the previous
    pulse's onset; the train stops at the first pulse with no width and no delay."""
    period = width[0] + delay[0]
    for i in range(1, len(width)):
        if not (width[i] > 0 or delay[i] > 0):
            break
        incr = delay[i] + width[i] - width[i - 1]
        if incr > 0:
            period += incr
    return period


def _pulse_reference(t, level, width, delay, base=0.0):
    """MOOSE's free-running PulseGen output at time t (device/PulseGen.cpp, process)."""
    phase = math.fmod(t, _pulse_period(width, delay))
    for i in range(len(width)):
        if phase < delay[i]:
            return base
        if phase < delay[i] + width[i]:
            return level[i]
        phase -= delay[i]
    return None  # keeps the previous output


def test_a_script_without_useClock_records_what_moose_records(model):
    # No setClock, no useClock: PulseGen on tick 0 (50 us), Table on tick 8 (100 us).
    pg = antler.PulseGen("/pg")
    pg.count = 3
    for i, (lv, w, d) in enumerate([(1.0, 2e-4, 1e-4), (2.0, 1e-4, 4e-4), (-1.0, 3e-4, 3e-4)]):
        pg.level[i], pg.width[i], pg.delay[i] = lv, w, d
    tab = antler.Table("/tab")
    antler.connect(tab, "requestOut", pg, "getOutputValue")
    antler.reinit()
    antler.start(3e-3)
    v = np.asarray(tab.vector)
    # Table.reinit pulls once (t = 0), then once per 100 us step: 1 + 30 values.
    assert len(v) == 31
    lv, w, d = [1.0, 2.0, -1.0], [2e-4, 1e-4, 3e-4], [1e-4, 4e-4, 3e-4]
    out = 0.0
    expected = [0.0]
    for k in range(1, 61):  # the PulseGen's 50 us steps; the Table reads every second one
        r = _pulse_reference(k * BASE, lv, w, d)
        out = out if r is None else r
        if k % 2 == 0:
            expected.append(out)
    assert v.tolist() == expected
    assert antler.currentTime() == pytest.approx(3e-3, rel=1e-15)
    assert antler.element("/clock").currentStep == 60


def test_useClock_moves_an_element_off_its_default_tick(model):
    pg = antler.PulseGen("/pg")
    pg.firstLevel, pg.firstWidth, pg.firstDelay = 1.0, 1e-3, 1e-3
    tab = antler.Table("/tab")
    antler.connect(tab, "requestOut", pg, "getOutputValue")
    antler.setClock(5, 1e-3)
    antler.useClock(5, "/tab", "process")
    assert tab.tick == 5
    antler.reinit()
    antler.start(10e-3)
    assert len(tab.vector) == 11  # processed once per 1 ms, not also on tick 8
    tab.tick = -1  # off the clock: a further run adds nothing
    antler.start(2e-3)
    assert len(tab.vector) == 11
    tab.tick = 8
    antler.start(1e-3)
    assert len(tab.vector) == 21


def test_setClock_follows_moose_s_base_dt_rule(model):
    clock = antler.element("/clock")
    antler.setClock(0, 1e-3)  # a multiple of the base: 20 steps of 50 us
    assert clock.baseDt == BASE and clock.tickStep[0] == 20
    antler.setClock(1, 1e-5)  # smaller than the base: it becomes the base, the others rescale
    assert clock.baseDt == 1e-5
    assert clock.tickStep[0] == 100 and clock.tickStep[1] == 1 and clock.tickStep[8] == 10
    assert clock.tickDt[0] == pytest.approx(1e-3, rel=1e-12)
    with pytest.raises(antler.ValueError):
        antler.setClock(0, 1e-8)  # below MOOSE's minimum dt
    with pytest.raises(antler.IndexError):
        clock.tickDt[32]
    with pytest.raises(antler.ValueError):
        antler.setClock(0, 5e-324)


def test_start_counts_whole_strides(model):
    # MOOSE: start(T) runs round(T / (stride * dt)) strides; stride = the smallest step in use.
    antler.setClock(0, 1e-3)
    antler.setClock(8, 3e-3)
    a = antler.Table("/a")
    b = antler.Table("/b")
    antler.useClock(0, "/a", "process")  # /b stays on tick 8 (3 ms)
    antler.reinit()
    antler.start(0.0104)  # 10 strides of 1 ms
    assert antler.element("/clock").stride == 20
    assert antler.currentTime() == pytest.approx(0.010, rel=1e-15)
    assert len(a.vector) == 0 and len(b.vector) == 0  # (nothing to pull: sizes from reinit only)
    assert antler.element("/clock").currentStep == 200


def test_useClock_lists_wildcards_and_init(model):
    antler.Neutral("/m")
    antler.Table("/m/t1")
    antler.Table("/m/t2")
    antler.Neutral("/m/sub")
    antler.PulseGen("/m/sub/p")
    antler.Compartment("/c")
    antler.useClock(9, "/m/t1, /m/t2", "process")
    assert antler.element("/m/t1").tick == 9 and antler.element("/m/t2").tick == 9
    antler.useClock(10, "/m/##", "process")  # /m/sub (a Neutral) has no process: skipped
    assert antler.element("/m/sub/p").tick == 10 and antler.element("/m/t1").tick == 10
    with pytest.raises(antler.FieldError):
        antler.useClock(10, "/m/sub", "process")  # named alone: refused, as before
    antler.useClock(4, "/c", "init")
    assert antler._a.tick_of(antler.element("/c")._oid, True) == 4
    assert antler.element("/c").tick == 3
    with pytest.raises(antler.FieldError):
        antler.useClock(4, "/m/t1", "init")  # a Table has no init phase
    with pytest.raises(antler.FieldError):
        antler.useClock(4, "/m/t1", "bogus")
    with pytest.raises(antler.PathError):
        antler.useClock(4, "/m/t1,,/m/t2", "process")


def test_the_clock_element_is_antler_s(model):
    with pytest.raises(antler.ValueError):
        antler.delete("/clock")
    with pytest.raises(antler.ValueError):
        antler.move("/clock", "/")
    with pytest.raises(antler.ValueError):
        antler.copy("/clock", "/", "c2")
    with pytest.raises(antler.PathError):
        antler.Neutral("/clock/x")
    antler._clearModel()
    assert antler.exists("/clock")


# ---------------------------------------------------------------------------------------------
# PulseGen


def _pulse_run(pg_setup, steps, inputs=None, mode=0):
    """Runs a PulseGen with a Table on its tick; returns the table's values after reinit."""
    pg = antler.PulseGen("/pg")
    pg_setup(pg)
    pg.trigMode = mode
    tab = antler.Table("/tab")
    antler.connect(pg, "output", tab, "input")
    antler.setClock(0, 1e-3)
    antler.useClock(0, "/pg,/tab", "process")
    antler.reinit()
    for k in range(steps):
        if inputs is not None:
            pg.input(inputs[k])
        antler.start(1e-3)
    return pg, np.asarray(tab.vector)


def _pulse_triggered(mode, inputs, level, width, delay, base):
    """MOOSE's trigMode 1 and 2 (device/PulseGen.cpp): the values sent, one per step that sends."""
    period = _pulse_period(width, delay)
    trig, prev, out, sent = -1.0, 0, base, [base]  # reinit sends baseLevel
    for k, x in enumerate(inputs, start=1):
        t = BASE * (20 * k)  # MOOSE's time: base dt x base steps
        inp = int(x)
        if mode == 1:
            if inp == 0:
                phase = period if trig < 0 else t - trig
            else:
                if prev == 0:
                    trig = t
                phase = t - trig
        else:
            if inp == 0:
                phase = period
            else:
                if prev == 0:
                    trig = t
                phase = math.fmod(t - trig, period)
        prev = inp
        if phase >= period:
            out = base
            continue
        for i in range(len(width)):
            if phase < delay[i]:
                out = base
                break
            if phase < delay[i] + width[i]:
                out = level[i]
                break
            phase -= delay[i]
        sent.append(out)
    return sent


@pytest.mark.parametrize("mode", [1, 2])
def test_pulsegen_trigger_and_gate_modes(model, mode):
    level, width, delay, base = [2.0, 5.0], [3e-3, 2e-3], [1e-3, 4.5e-3], -1.0

    def setup(pg):
        pg.baseLevel = base
        for i in range(2):
            pg.level[i], pg.width[i], pg.delay[i] = level[i], width[i], delay[i]

    inputs = [0] * 3 + [1] * 4 + [0.5] * 2 + [0] * 3 + [1] * 14 + [0] * 6
    _pg, got = _pulse_run(setup, len(inputs), inputs, mode)
    want = _pulse_triggered(mode, inputs, level, width, delay, base)
    assert got.tolist() == pytest.approx(want, abs=0, rel=0)


def test_pulsegen_count_first_second_and_bad_input(model):
    pg = antler.PulseGen("/pg")
    assert pg.count == 2
    pg.firstLevel, pg.secondDelay = 3.0, 2e-3
    assert pg.level[0] == 3.0 and pg.delay[1] == 2e-3
    pg.count = 4
    assert pg.level[0] == 3.0 and pg.level[3] == 0.0
    pg.count = 1
    assert pg.secondLevel == 0.0  # MOOSE reads 0 past the count
    before = antler._snapshot()
    with pytest.raises(antler.IndexError):
        pg.level[1] = 2.0
    with pytest.raises(antler.IndexError):
        pg.secondLevel = 2.0
    with pytest.raises(antler.ValueError):
        pg.count = 0
    with pytest.raises(antler.ValueError):
        pg.trigMode = 3
    with pytest.raises(antler.ValueError):
        pg.width[0] = -1.0
    with pytest.raises(antler.TypeError):
        pg.level["a"]
    with pytest.raises(antler.FieldError):
        pg.nolookup
    assert antler._snapshot() == before
    assert pg.count == 1 and pg.trigMode == 0


# ---------------------------------------------------------------------------------------------
# SimpleSynHandler -> IntFire.activation (MOOSE's layout since 2014)


def _intfire_reference(events, steps, dt, tau, thresh, refractory):
    """MOOSE's SimpleSynHandler (tick 1) feeding IntFire (tick 2), one dt: in step k (t = k dt)
    the handler sums the weights of the events with time <= t, divided by dt; IntFire adds that
    to Vm, then fires (Vm > thresh, t - lastSpike > refractoryPeriod: Vm = -1e-7) or decays."""
    vm, last, spikes, trace = 0.0, -math.inf, [], []
    pending = sorted(events)
    for k in range(1, steps + 1):
        t = k * dt
        act = 0.0
        while pending and pending[0][0] <= t + 1e-6 * dt:
            act += pending.pop(0)[1] / dt
        vm += act
        if vm > thresh and t - last > refractory:
            spikes.append(t)
            vm, last = -1e-7, t
        else:
            vm *= 1 - dt / tau
        trace.append(vm)
    return trace, spikes


def test_simple_syn_handler_drives_intfire_as_in_moose(model):
    dt, tau, thresh = 1e-4, 0.02, 15000.0
    times = [1e-3, 1.5e-3, 1.55e-3, 4e-3, 4.2e-3]
    weights, delays = [0.5, 0.75], [5e-4, 1.2e-3]
    tt = antler.TimeTable("/tt")
    tt.vector = times
    syn = antler.SimpleSynHandler("/syn")
    syn.synapse.num = 2
    for i in range(2):
        syn.synapse[i].weight, syn.synapse[i].delay = weights[i], delays[i]
    nrn = antler.IntFire("/nrn")
    nrn.tau, nrn.thresh = tau, thresh
    for i in range(2):
        antler.connect(tt, "eventOut", syn.synapse[i], "addSpike")
    antler.connect(syn, "activationOut", nrn, "activation")
    vm = antler.Table("/vm")
    antler.connect(vm, "requestOut", nrn, "getVm")
    for t in (0, 1, 2, 8):
        antler.setClock(t, dt)
    antler.reinit()
    antler.start(80 * dt)
    # The TimeTable (tick 8) sends each time in the step that reaches it, after the handler has
    # run; every delay here is longer than a step, so each event is due later.
    events = [(t + d, w) for t in times for w, d in zip(weights, delays)]
    trace, spikes = _intfire_reference(events, 80, dt, tau, thresh, 0.1)
    got = np.asarray(vm.vector)
    assert len(got) == 81
    assert got[1:] == pytest.approx(trace, rel=1e-12, abs=1e-12)
    assert spikes, "the reference should fire once (weights / dt add 5000 and 7500 to Vm)"
    assert nrn.lastSpike == pytest.approx(spikes[-1], rel=1e-12)
    assert syn.numSynapses == 2 and syn.numPending == 0


def test_simple_syn_handler_keeps_the_old_layout_working(model):
    # IntFire's own synapses (MOOSE before 2014) and a handler feeding activation, side by side.
    n = antler.vec(antler.IntFire("/n", 2))
    n.thresh = 1e9
    n.tau = 1.0
    n[0].numSynapses = 1
    antler.element("/n[0]/synapse[0]").weight = 0.25
    h = antler.SimpleSynHandler("/h")
    h.numSynapses = 1
    h.synapse[0].weight = 0.25
    antler.connect(h, "activationOut", n[1], "activation")
    antler.setClock(0, 1e-3)
    antler.useClock(0, "/h", "process")  # one dt for all: the handler runs before the neurons
    antler.setClock(2, 1e-3)
    antler.reinit()
    antler.element("/n[0]/synapse[0]").addSpike(0.0)
    h.synapse[0].addSpike(0.0)
    antler.start(1e-3)
    assert n[0].Vm == pytest.approx(0.25 * (1 - 1e-3))  # weight added, then one decay
    assert n[1].Vm == pytest.approx(0.25 / 1e-3 * (1 - 1e-3))  # MOOSE: weight / dt


# ---------------------------------------------------------------------------------------------
# Table


def test_table_spike_records_the_table_s_time_of_the_crossing(model):
    tab = antler.Table("/t")
    tab.threshold = 0.5
    antler.setClock(8, 1e-3)
    antler.reinit()
    antler.start(3e-3)  # the table's last step is at 3 ms
    tab.spike(0.2)  # below: nothing
    tab.spike(0.7)  # crossing: the table's time
    tab.spike(0.9)  # still above: nothing
    antler.start(2e-3)
    tab.spike(0.1)  # re-armed
    tab.spike(1.0)
    assert np.asarray(tab.vector) == pytest.approx([3e-3, 5e-3], rel=1e-12)
    tab.vector = [1.0, 2.0]
    assert tab.vector.tolist() == [1.0, 2.0]


def test_table_plainPlot_writes_moose_s_format(model, tmp_path):
    tab = antler.Table("/t")
    tab.vector = [1.5, -2.0, 1e-20]
    f = tmp_path / "plot.txt"
    tab.plainPlot(str(f))
    assert f.read_text() == "%.18e\n%.18e\n%.18e\n\n" % (1.5, -2.0, 1e-20)


# ---------------------------------------------------------------------------------------------
# ElementField .num/.vec, lookups, and the small API


def test_element_field_num_and_vec(model):
    n = antler.vec(antler.IntFire("/n", 3))
    assert len(antler.vec("/n[1]/synapse")) == 0  # none yet: 0, not IndexError (MOOSE: 0)
    assert list(antler.vec("/n[1]/synapse")) == []
    n[1].synapse.num = 4
    assert n[1].numSynapses == 4 and n[1].synapse.num == 4 and len(n[1].synapse) == 4
    assert n[1].synapse.vec is not None and len(n[1].synapse.vec) == 4
    assert n[0].synapse.num == 0
    w = antler.NSDFWriter("/w")
    w.eventInput.num = 2
    assert w.numEventInput == 2
    with pytest.raises(antler.ValueError):
        n[1].synapse.num = -1


def test_small_api(model):
    n = antler.vec(antler.IntFire("/n", 4))
    e = n[2]
    assert e.dindex == 2 and e.getDataIndex() == 2 and e.getFieldIndex() == 0
    assert e.idValue == n.idValue == n.id
    assert e.id == antler.vec("/n") and e.type == "IntFire"
    assert n.shape == (4,) and n.vec == n and n.dtype == "IntFire"
    assert e.isA("IntFire") and e.isA["Neutral"] and not e.isA("Table")
    with pytest.raises(antler.ClassError):
        e.isA("NoSuchClass")
    src = antler.vec(antler.RandSpike("/src", 4))
    m = src.connect("spikeOut", n, "activation", "OneToOne")
    assert antler.element(m) is m and m.type == "OneToOne"
    assert [v.path for v in n[0].neighbors["activation"]] == ["/src"]
    assert [v.path for v in src[0].neighbors["spikeOut"]] == ["/n"]
    assert antler.version() == "4.1.0" and antler.__version__ == "4.1.0"
    assert isinstance(antler.antler_version, str)
    antler.seed(3)
    a = [antler.rand() for _ in range(3)]
    antler.seed(3)
    assert [antler.rand() for _ in range(3)] == a and all(0 <= x < 1 for x in a)
    assert 2.0 <= antler.rand(2.0, 3.0) < 3.0
    ns = {}
    exec("from antler import *", ns)
    assert "IntFire" in ns and "SimpleSynHandler" in ns and "PulseGen" in ns


def test_conversion_escapes_are_antler_errors(model):
    n = antler.IntFire("/n")
    with pytest.raises(antler.TypeError):
        antler.getFieldNames("IntFire", [])
    with pytest.raises(antler.TypeError):
        antler.getFieldNames(None)
    with pytest.raises(antler.TypeError):
        n.getField(5)
    for bad in ("__dict__", "_oid", "__class__"):
        with pytest.raises(antler.FieldError):
            n.getField(bad)
        with pytest.raises(antler.FieldError):
            n.setField(bad, 1)
    with pytest.raises(antler.FieldError):
        n.getField("setVm")
    with pytest.raises(antler.TypeError):
        n.setField(None, 1)
    antler.setClock(0, 1e-7)
    antler.useClock(0, "/n", "process")
    with pytest.raises(antler.ValueError):
        antler.start(1e12)  # 1e19 steps: refused, not an OverflowError


# ---------------------------------------------------------------------------------------------
# Compartment cables: the init phase, raxial/axial, Im


def test_two_compartment_cable_matches_moose_s_equations(model):
    Cm, Rm, Em, Ra = [1e-11, 2e-11], [1e9, 5e8], [-0.065, -0.07], [1e7, 3e7]
    inj, dt, steps = 5e-11, 50e-6, 300
    cs = [antler.Compartment("/c%d" % i) for i in range(2)]
    for i, c in enumerate(cs):
        c.Cm, c.Rm, c.Em, c.Ra, c.initVm = Cm[i], Rm[i], Em[i], Ra[i], Em[i]
    cs[0].inject = inj
    antler.connect(cs[0], "raxial", cs[1], "axial")  # default ticks: init 2, process 3 (50 us)
    antler.reinit()
    antler.start(steps * dt)
    # MOOSE (biophysics/Compartment.cpp): init sends the Vm of the last step; c1 couples through
    # c0's Ra (the raxial side's), both ways.
    v = list(Em)
    for _ in range(steps):
        g = 1.0 / Ra[0]
        A = [inj + Em[0] / Rm[0] + v[1] * g, Em[1] / Rm[1] + v[0] * g]
        B = [1.0 / Rm[0] + g, 1.0 / Rm[1] + g]
        im1 = (v[0] - v[1]) * g
        v = [v[i] * math.exp(-B[i] * dt / Cm[i]) + A[i] / B[i] * (1 - math.exp(-B[i] * dt / Cm[i]))
             for i in range(2)]
    assert cs[0].Vm == pytest.approx(v[0], rel=1e-9)
    assert cs[1].Vm == pytest.approx(v[1], rel=1e-9)
    assert cs[1].Im == pytest.approx(im1, rel=1e-6)
    assert cs[1].Vm > Em[1] + 1e-3  # the current reached the second compartment
    with pytest.raises(antler.MsgError):
        antler.connect(cs[0], "raxial", cs[1], "axial", "OneToAll")
    with pytest.raises(antler.FieldError):
        antler.connect(cs[0], "raxial", cs[1], "injectMsg")


# ---------------------------------------------------------------------------------------------
# Stats and SpikeStats, MOOSE's way (running statistics, windows)


class _Running(object):
    """MOOSE's Stats arithmetic (builtins/Stats.cpp: input, getMean, getSdev, the window)."""

    def __init__(self, window):
        self.sum = self.sumsq = 0.0
        self.num = 0
        self.samples = [0.0] * window

    def input(self, v):
        self.sum += v
        self.sumsq += v * v
        if self.samples:
            self.samples[self.num % len(self.samples)] = v
        self.num += 1

    def check(self, st):
        assert st.num == self.num
        assert st.sum == pytest.approx(self.sum, rel=1e-12)
        assert st.mean == pytest.approx(self.sum / self.num, rel=1e-12)
        assert st.sdev == pytest.approx(
            math.sqrt(max(0.0, self.sumsq - self.sum ** 2 / self.num) / self.num), rel=1e-9, abs=1e-12)
        n = min(len(self.samples), self.num)
        w = self.samples[:n]
        assert st.wnum == n and st.windowLength == len(self.samples)
        assert st.wsum == pytest.approx(sum(w), rel=1e-12, abs=1e-15)
        assert st.wmean == pytest.approx(sum(w) / n, rel=1e-12, abs=1e-15)


def test_stats_runs_moose_s_running_statistics(model):
    src = antler.vec(antler.PulseGen("/src", 5))
    src.baseLevel = [0.5, -1.0, 2.0, 4.0, 0.25]  # a PulseGen with no pulses holds baseLevel
    st = antler.Stats("/st")
    st.windowLength = 3
    antler.connect(st, "requestOut", src, "getOutputValue", "Reduce")
    antler.setClock(17, 1e-4)  # Stats' default tick, at the sources' pace
    antler.reinit()
    antler.start(7 * 1e-4)
    ref = _Running(3)
    for _ in range(7):
        for v in [0.5, -1.0, 2.0, 4.0, 0.25]:  # every value, in index order, every step
            ref.input(v)
    ref.check(st)
    assert st.min == -1.0 and st.max == 4.0
    st.input(10.0)  # values sent to input join the same statistics
    ref.input(10.0)
    ref.check(st)
    antler.reinit()
    assert st.num == 0 and st.mean == 0.0 and st.wnum == 0


def test_spikestats_pools_spikes_into_rates(model):
    dt = 1e-3
    times = [0.0005, 0.0012, 0.0015, 0.0031, 0.0032, 0.0033, 0.0070]
    tt = antler.TimeTable("/tt")
    tt.vector = times
    ss = antler.SpikeStats("/ss")
    ss.windowLength = 4
    antler.connect(tt, "eventOut", ss, "addSpike")
    antler.setClock(8, dt)  # the TimeTable
    antler.setClock(9, dt)
    antler.useClock(9, "/ss", "process")  # after it, so a step's spikes count in that step
    antler.reinit()
    antler.start(10 * dt)
    ref = _Running(4)
    for k in range(1, 11):
        n = sum(1 for t in times if (k - 1) * dt < t <= k * dt + 1e-9 * dt)
        ref.input(n / dt)
    ref.check(ss)
    assert ss.mean == pytest.approx(len(times) / (10 * dt), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# LIF


def test_lif_fires_as_moose_s(model):
    Cm, Rm, Em, inj, thresh, vreset, refr = 1e-10, 1e8, -0.07, 4e-10, -0.05, -0.08, 2e-3
    dt, steps = 1e-4, 300
    lif = antler.LIF("/lif")
    lif.Cm, lif.Rm, lif.Em, lif.initVm, lif.inject = Cm, Rm, Em, Em, inj
    lif.thresh, lif.vReset, lif.refractoryPeriod = thresh, vreset, refr
    spikes = antler.Table("/spikes")
    antler.connect(lif, "spikeOut", spikes, "input")
    antler.setClock(1, dt)  # init
    antler.setClock(2, dt)  # process
    antler.reinit()
    antler.start(steps * dt)
    # MOOSE's LIF (intfire/LIF.cpp) with its Compartment step, no synaptic input.
    v, last, want = Em, -refr, []
    for k in range(1, steps + 1):
        t = BASE * (2 * k)
        if t < last + refr:
            v = vreset
            continue
        if v > thresh:
            v, last = vreset, t
            want.append(t)
            continue
        B = 1.0 / Rm
        A = inj + Em / Rm
        x = math.exp(-B * dt / Cm)
        v = v * x + A / B * (1 - x)
    assert len(want) >= 3
    assert np.asarray(spikes.vector) == pytest.approx(want, rel=1e-12)
    assert lif.Vm == pytest.approx(v, rel=1e-9)
    assert lif.lastEventTime == pytest.approx(want[-1], rel=1e-12)
    assert antler._a.tick_of(lif._oid, True) == 1 and lif.tick == 2


def test_moose_utils_and_reload(model):
    import importlib

    from antler import utils
    c = antler.Compartment("/c")
    t = utils.setupTable("vm", c, "Vm")
    assert t.path == "/c/vm[0]" and t.neighbors["requestOut"][0].path == "/c"
    assert utils.getfields(c)["Rm"] == c.Rm
    assert [e.path for e in utils.findAllBut("/##[TYPE=Table]", "nothing")] == ["/c/vm"]
    mod = importlib.reload(antler)  # a script that reloads moose (MOOSE's tests do)
    assert mod.exists("/c")


def test_an_array_of_tables_reads_an_array_one_to_one(model):
    n = 5
    src = antler.vec(antler.PulseGen("/src", n))
    src.baseLevel = [float(i * i) for i in range(n)]
    tabs = antler.vec(antler.Table("/tabs", n))
    antler.connect(tabs, "requestOut", src, "getOutputValue", "OneToOne")
    antler.reinit()
    antler.start(3e-4)  # 3 steps of the tables' tick (8: 100 us)
    for i in range(n):
        assert tabs[i].vector.tolist() == [float(i * i)] * 4
    short = antler.vec(antler.PulseGen("/short", n - 1))
    with pytest.raises(antler.MsgError):
        antler.connect(tabs, "requestOut", short, "getOutputValue", "OneToOne")


# ---------------------------------------------------------------------------------------------
# The toolbox's bad input (each was wrong before: see issue 17)


def test_toolbox_bad_input_is_refused_by_name(model, tmp_path):
    import numpy as _np

    antler.Neutral("/net")
    n = antler.vec(antler.IntFire("/net/n", 3))
    for i in range(3):
        n[i].numSynapses = i + 1
    antler.ce("/net/n[2]")
    assert len(antler.vec("synapse")) == 3  # n[2]'s synapses, not every neuron's (6)
    antler.vec("synapse").weight = 0.5
    assert antler.vec("/net/n[0]/synapse").weight.tolist() == [1.0]
    antler.ce("/")
    with pytest.raises(antler.IndexError) as e:
        antler.ce("/net/n[2]/synapse[7]")
    assert "ce" in str(e.value) and "3 entries" in str(e.value)
    assert antler._a.pwd() == "/"
    tt = antler.TimeTable("/tt")
    before = antler._snapshot()
    with pytest.raises(antler.ValueError):
        antler.copy("/tt", "/net/n[2]")  # an entry, not an element: refused, not silently /net/n
    with pytest.raises(antler.ValueError):
        antler.move("/tt", "/net/n[1]")
    assert antler._snapshot() == before
    with pytest.raises(antler.TypeError):
        antler.showfield(n[0], showtype="no")
    with pytest.raises(antler.TypeError):
        antler.showfield(n[0], showtype=2)
    st = antler.StimulusTable("/st")
    with pytest.raises(antler.TypeError):
        st.doLoop = _np.array([True])
    with pytest.raises(antler.ValueError) as e:
        tt.vector = [3e-5, 1e-5]
    assert "3e-05" in str(e.value) and "1e-05" in str(e.value)
    w = antler.NSDFWriter("/w")
    with pytest.raises(antler.ValueError):
        w.filename = str(tmp_path / "a\0b.h5")
    for call, name in ((lambda: antler.showfield("/nope"), "showfield"),
                       (lambda: antler.showmsg("/nope"), "showmsg"),
                       (lambda: antler.getFieldDict("Nope"), "getFieldDict"),
                       (lambda: antler.doc("Nope"), "doc")):
        with pytest.raises(antler.Error) as e:
            call()
        assert str(e.value).startswith(name), str(e.value)
    antler.ce("/net")
    antler.doc(".")  # the current element's class
    antler.ce("/")


def test_loadLibrary_and_init_refuse_what_would_hang_or_crash(model, tmp_path):
    import os
    import shutil

    fifo = tmp_path / "pipe.so"
    os.mkfifo(fifo)
    with pytest.raises(antler.ValueError) as e:
        antler.loadLibrary(str(fifo))  # dlopen would wait for a writer forever
    assert "not a regular file" in str(e.value)
    text = tmp_path / "notes.so"
    text.write_text("not a library\n")
    with pytest.raises(antler.ValueError) as e:
        antler.loadLibrary(str(text))
    assert "ELF" in str(e.value)
    lib = os.environ.get("ANTLER_TEST_CLASSES")
    if lib:
        cut = tmp_path / "cut.so"
        shutil.copy(lib, cut)
        with open(cut, "r+b") as f:
            f.truncate(os.path.getsize(lib) // 2)
        with pytest.raises(antler.ValueError) as e:
            antler.loadLibrary(str(cut))  # dlopen would die with SIGBUS
        assert "truncated" in str(e.value)
    MPI = pytest.importorskip("mpi4py.MPI")
    for bad in (MPI.DOUBLE, MPI.INFO_ENV, MPI.COMM_WORLD.Get_group(), MPI.COMM_NULL, 3):
        with pytest.raises(antler.TypeError):
            antler.init(bad)


def test_nsdf_writer_mode_attributes_and_model_files(model, tmp_path):
    h5py = pytest.importorskip("h5py")
    path = str(tmp_path / "out.h5")
    open(path, "w").close()  # an existing file: mode 2 replaces it
    model_file = tmp_path / "model.py"
    model_file.write_text("print('the model')\n")
    pg = antler.PulseGen("/pg")
    w = antler.NSDFWriter("/w")
    w.filename = path
    with pytest.raises(antler.ValueError):
        w.mode = 1  # append: not supported, said so
    assert w.mode == 4
    w.mode = 2
    assert w.overwrite
    w.modelFileNames = str(model_file)
    with pytest.raises(antler.ValueError):
        w.modelFileNames = str(tmp_path / "missing.py")
    antler.connect(w, "requestOut", pg, "getOutputValue")
    antler.reinit()
    antler.start(1e-3)
    w.stringAttr["title"] = "a test"
    w.stringAttr["/data/uniform/pg/outputValue/unit"] = "A"
    w.stringAttr["/extra/group/note"] = "made"
    w.stringVecAttr["software"] = ["python", "antler"]
    w.doubleAttr["temperature"] = 34.5
    assert w.stringAttr["title"] == "a test"
    with pytest.raises(antler.IndexError):
        w.stringAttr["nope"]
    w.close()
    with h5py.File(path, "r") as f:
        def text(x):
            return x.decode() if isinstance(x, bytes) else x
        assert text(f.attrs["title"]) == "a test"
        assert [text(x) for x in f.attrs["software"]] == ["python", "antler"]
        assert f.attrs["temperature"] == 34.5
        assert text(f["/data/uniform/pg/outputValue"].attrs["unit"]) == "A"
        assert text(f["/extra/group"].attrs["note"]) == "made"
        assert text(f["/model/modelfile"].attrs["model.py"]) == "print('the model')\n"


def test_simple_syn_handler_events_beyond_its_ring(model):
    # The ring is sized at reinit for the delays then; a delay made longer afterwards, and a
    # spike sent before any reinit, wait aside and still arrive at their step.
    dt = 1e-3
    h = antler.SimpleSynHandler("/h")
    h.numSynapses = 2
    h.synapse[0].delay, h.synapse[1].delay = 2e-3, 2e-3
    h.synapse[0].weight, h.synapse[1].weight = 1.0, 0.5
    n = antler.IntFire("/n")
    n.tau, n.thresh = 1e9, 1e9
    antler.connect(h, "activationOut", n, "activation")
    vm = antler.Table("/vm")
    antler.connect(vm, "requestOut", n, "getVm")
    for t in (1, 2, 8):
        antler.setClock(t, dt)
    h.synapse[1].addSpike(0.0)  # queued before reinit: reinit drops it
    antler.reinit()
    assert h.numPending == 0  # reinit drops every queued event
    h.synapse[0].delay = 40e-3  # beyond the ring (sized for 2 ms)
    h.synapse[0].addSpike(1e-3)  # due at 41 ms
    h.synapse[1].addSpike(3e-3)  # due at 5 ms, in the ring
    assert h.numPending == 2
    antler.start(50 * dt)
    v = np.asarray(vm.vector)
    # Vm += sum(w) / dt in the step the event is due (decay 1 - dt / 1e9 per step).
    jumps = np.flatnonzero(np.diff(v) > 1.0) + 1
    assert jumps.tolist() == [5, 41]
    assert v[5] - v[4] == pytest.approx(0.5 / dt, rel=1e-9)
    assert v[41] - v[40] == pytest.approx(1.0 / dt, rel=1e-9)
    assert h.numPending == 0


def test_timetable_reads_its_filename(model, tmp_path):
    f = tmp_path / "spikes.txt"
    f.write_text("0.001 0.002\n0.0035\n\n0.004 end 0.009\n")  # MOOSE reads up to 'end'
    tt = antler.TimeTable("/tt")
    tt.filename = str(f)
    assert tt.vector.tolist() == [0.001, 0.002, 0.0035, 0.004] and tt.filename == str(f)
    bad = tmp_path / "unsorted.txt"
    bad.write_text("0.3 0.1\n")
    with pytest.raises(antler.ValueError):
        tt.filename = str(bad)
    with pytest.raises(antler.ValueError):
        tt.filename = str(tmp_path / "missing.txt")
    assert tt.vector.tolist() == [0.001, 0.002, 0.0035, 0.004] and tt.filename == str(f)


def test_finalize_clears_the_model_on_one_node_too():
    if antler.numNodes() > 1:
        pytest.skip("finalize releases the serving ranks: run in a serial session only")
    import subprocess
    import sys
    code = ("import antler as m\nm.Neutral('/net')\nm.IntFire('/net/n', 3)\n"
            "print(m.finalize(), m.exists('/net'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]


def _handler_network(n, dummy):
    """n SimpleSynHandlers feeding n IntFire OneToOne, driven by RandSpike inputs and by the
    neurons' own spikes (Sparse, random weights and delays of 1-4 steps). dummy: a second
    receiver of activationOut, which keeps the handlers on messages."""
    dt = 1e-4
    src = antler.vec(antler.RandSpike("/src", 30))
    src.rate = 400.0
    h = antler.vec(antler.SimpleSynHandler("/h", n))
    nrn = antler.vec(antler.IntFire("/n", n))
    nrn.tau, nrn.thresh, nrn.refractoryPeriod = 0.01, 0.6, 2e-4
    m1 = antler.connect(src, "spikeOut", antler.vec("/h/synapse"), "addSpike", "Sparse")
    m1.setRandomConnectivity(0.3, 11)
    m2 = antler.connect(nrn, "spikeOut", antler.vec("/h/synapse"), "addSpike", "Sparse")
    m2.setRandomConnectivity(0.2, 12)
    antler.syncDataHandler("/h/synapse")
    syn = antler.vec("/h/synapse")
    k = len(syn.weight)
    rng = np.random.default_rng(5)
    syn.weight = rng.uniform(-0.05, 0.3, k) * dt  # MOOSE's impulse: Vm += w / dt
    syn.delay = rng.integers(1, 5, k) * dt
    antler.connect(h, "activationOut", nrn, "activation", "OneToOne")
    if dummy:
        antler.connect(h, "activationOut", antler.vec(antler.IntFire("/dummy", n)), "activation",
                       "OneToOne")
    for t in (1, 2):
        antler.setClock(t, dt)
    return h, nrn


def test_simple_syn_handler_direct_path_gives_the_messages_bits(model):
    # The handler Element lends its slots to the IntFire Element it alone feeds (one OneToOne
    # message, a later tick, the same step): the run must give the bits of the message path,
    # which a second receiver of activationOut keeps in use. Also across runs that switch
    # paths without reinit, events aside in the handlers' heaps, and a dt change.
    def run(direct_phases):
        antler._clearModel()
        h, nrn = _handler_network(50, dummy=not direct_phases[0])
        antler.reinit()
        for i in (3, 17):  # beyond the slots sized at reinit: their events wait in the heap
            antler.element("/h[%d]/synapse[0]" % i).delay = 9e-3
        trace = []
        for i, direct in enumerate(direct_phases):
            if i and direct != direct_phases[i - 1]:
                if direct:
                    antler.delete("/dummy")
                else:
                    antler.connect(h, "activationOut", antler.vec(antler.IntFire("/dummy", 50)),
                                   "activation", "OneToOne")
            if i == 2:  # an activation straight into a neuron: its own ring is read again
                nrn[7].activation(0.375)
            if i == 3:
                antler.setClock(1, 2e-4)
                antler.setClock(2, 2e-4)
            antler.start(0.02)
            assert all(x.directPath == direct for x in h)
            trace.append((np.asarray(nrn.Vm).copy(), np.asarray(nrn.lastSpike).copy()))
        return trace

    ref = run([False, False, False, False])
    spikes = np.isfinite(ref[-1][1]).sum()
    assert spikes > 10, "the network should fire"
    for threads, phases in ((2, [True, True, True, True]), (2, [True, False, True, True]),
                            (2, [False, True, False, True]), (1, [True, True, True, True]),
                            (3, [True, True, True, True])):
        antler.setNumThreads(threads)  # the same bits on any thread split too
        got = run(phases)
        for (vm, last), (rvm, rlast) in zip(got, ref):
            assert vm.tobytes() == rvm.tobytes(), (threads, phases)
            assert last.tobytes() == rlast.tobytes(), (threads, phases)


def test_simple_syn_handler_keeps_its_queued_events_when_the_threads_change(model):
    # Events queued during a run that did not process the handlers (their tick's step is longer
    # than the run) wait in the queue of the clock thread that delivered them; a next run on
    # fewer threads must keep every one.
    antler.setNumThreads(2)
    src = antler.vec(antler.RandSpike("/src", 30))
    src.rate = 2000.0
    h = antler.vec(antler.SimpleSynHandler("/h", 40))
    m = antler.connect(src, "spikeOut", antler.vec("/h/synapse"), "addSpike", "Sparse")
    m.setRandomConnectivity(0.5, 7)
    antler.syncDataHandler("/h/synapse")
    antler.setClock(1, 1e-4)
    antler.setClock(5, 1e-2)
    antler.useClock(5, "/h")  # a step of 10 ms: not processed in the runs below
    antler.reinit()
    antler.start(2e-3)
    queued = sum(h.numPending)
    assert queued > 100
    src.rate = 0.0
    antler.setNumThreads(1)
    antler.start(1e-4)
    assert sum(h.numPending) == queued
    antler.start(1e-2)  # the handlers' first step: every event falls due and is taken
    assert sum(h.numPending) == 0


def test_simple_syn_handler_direct_path_keeps_a_signed_zero(model):
    # A tiny negative weight over a dt > 1 makes an activation that underflows to -0.0. On the
    # message path the neuron's step sum is -0.0 + -0.0 and a Vm of -0.0 stays -0.0; the direct
    # path must give the same bits, sign included (not 0.0 + -0.0).
    def run(direct):
        antler._clearModel()
        h = antler.vec(antler.SimpleSynHandler("/h", 2))
        n = antler.vec(antler.IntFire("/n", 2))
        n.initVm, n.tau, n.thresh = -0.0, 1e300, 1e300
        antler.connect(h, "activationOut", n, "activation", "OneToOne")
        if not direct:
            antler.connect(h, "activationOut", antler.vec(antler.IntFire("/d", 2)), "activation",
                           "OneToOne")
        for i in range(2):
            antler.element("/h[%d]" % i).numSynapses = 1
            antler.element("/h[%d]/synapse[0]" % i).weight = -5e-324 if i == 0 else 0.25
        for t in (1, 2):
            antler.setClock(t, 4.0)
        antler.reinit()
        for i in range(2):
            antler.element("/h[%d]/synapse[0]" % i).addSpike(0.0)
        antler.start(12.0)
        assert h[0].directPath == direct
        return np.asarray(n.Vm).copy()

    messages, direct = run(False), run(True)
    assert np.signbit(messages[0]) and messages[0] == 0.0  # -5e-324 / 4 is -0.0
    assert messages[1] == 0.25 / 4.0
    assert direct.tobytes() == messages.tobytes()


# ---------------------------------------------------------------------------------------------
# SynChan (MOOSE's biophysics/SynChan.cpp) on a Compartment through `channel`


def _moose_eq(x, y):
    """MOOSE's doubleEq (basecode/doubleEq.cpp)."""
    denom = abs(x) + abs(y)
    if denom < 1e-12:
        denom = 1e-6
    return abs(x - y) / denom < 1e-6


def test_synchan_drives_a_compartment_as_in_moose(model):
    dt, tau1, tau2, gbar, ek = 1e-4, 5e-3, 1e-3, 2e-9, 0.05
    rm, cm, em = 1e8, 1e-10, -0.065
    times, weights = [1e-3, 2.5e-3, 2.55e-3, 6e-3], [1.0, 0.5]
    tt = antler.TimeTable("/tt")
    tt.vector = times
    syn = antler.SynChan("/syn")
    syn.tau1, syn.tau2, syn.Gbar, syn.Ek = tau1, tau2, gbar, ek
    h = antler.SimpleSynHandler("/syn/h")
    h.synapse.num = 2
    for i in range(2):
        h.synapse[i].weight, h.synapse[i].delay = weights[i], 1e-3 * (i + 1)
        antler.connect(tt, "eventOut", h.synapse[i], "addSpike")
    antler.connect(h, "activationOut", syn, "activation")
    comp = antler.Compartment("/c")
    comp.Rm, comp.Cm, comp.Em, comp.initVm = rm, cm, em, em
    antler.connect(syn, "channel", comp, "channel")
    tabs = {}
    for f, obj in (("Gk", syn), ("Ik", syn), ("Vm", comp)):
        tabs[f] = antler.Table("/t" + f)
        antler.connect(tabs[f], "requestOut", obj, "get" + f)
    for t in range(5):
        antler.setClock(t, dt)
    antler.useClock(0, "/tt,/syn/h")
    antler.useClock(1, "/syn")
    antler.useClock(1, "/c", "init")
    antler.useClock(2, "/c")
    antler.useClock(3, "/tGk,/tIk,/tVm")
    antler.reinit()
    steps = 100
    antler.start(steps * dt)

    # MOOSE's equations, step by step: the handler's sum(w)/dt reaches the SynChan in the same
    # step (tick 0 before tick 1), its Gk the compartment (tick 1 before 2), the compartment's Vm
    # the SynChan in the next step.
    xc1, xc2 = tau1 * (1 - math.exp(-dt / tau1)), math.exp(-dt / tau1)
    yc1, yc2 = tau2 * (1 - math.exp(-dt / tau2)), math.exp(-dt / tau2)
    assert not _moose_eq(tau1, tau2)
    tp = tau1 * tau2 * math.log(tau1 / tau2) / (tau1 - tau2)
    norm = gbar * (tau1 - tau2) / (tau1 * tau2 * (math.exp(-tp / tau1) - math.exp(-tp / tau2)))
    events = sorted((t + 1e-3 * (i + 1), w) for t in times for i, w in enumerate(weights))
    x = y = 0.0
    vm = em
    syn_vm = em  # the compartment's VmOut at reinit
    want = {"Gk": [0.0], "Ik": [0.0], "Vm": [em]}
    for k in range(1, steps + 1):
        t = k * dt
        act = 0.0
        while events and events[0][0] <= t + 1e-6 * dt:
            act += events.pop(0)[1]
        act = act / dt if act else 0.0
        x = act * xc1 + x * xc2
        y = x * yc1 + y * yc2
        gk = y * norm
        ik = (ek - syn_vm) * gk
        a, b = gk * ek + em / rm, 1.0 / rm + gk
        one_minus_x = -math.expm1(-b * dt / cm)
        vm = vm * (1.0 - one_minus_x) + (a / b) * one_minus_x
        syn_vm = vm
        for f, v in (("Gk", gk), ("Ik", ik), ("Vm", vm)):
            want[f].append(v)
    for f in ("Gk", "Ik", "Vm"):
        got = np.asarray(tabs[f].vector)
        assert len(got) == steps + 1, f
        scale = max(abs(v) for v in want[f])
        assert scale > 0, f
        np.testing.assert_allclose(got, want[f], rtol=0, atol=1e-12 * scale, err_msg=f)
    assert max(want["Vm"]) > em + 1e-3  # the synapse does depolarise the compartment


def test_synchan_bad_input_and_defaults(model):
    syn = antler.SynChan("/syn")
    assert (syn.tau1, syn.tau2, syn.Gbar, syn.Ek, syn.modulation) == (1e-3, 1e-3, 0.0, 0.0, 1.0)
    assert syn.tick == 4  # MOOSE's default tick for SynChan
    for field, bad in (("tau1", 0.0), ("tau1", -1.0), ("tau2", -1e-3), ("tau1", float("nan")),
                       ("Gbar", float("inf"))):
        before = getattr(syn, field)
        with pytest.raises(antler.ValueError, match=field):
            setattr(syn, field, bad)
        assert getattr(syn, field) == before


def test_msg_adjacent_is_the_other_end(model):
    sg = [antler.SpikeGen("/sg%d" % i) for i in range(3)]
    h = antler.SimpleSynHandler("/h")
    h.synapse.num = 2
    msgs = [antler.connect(s, "spikeOut", h.synapse[i % 2], "addSpike") for i, s in enumerate(sg)]
    for i, (s, m) in enumerate(zip(sg, msgs)):
        other = antler.element(m).adjacent[s]
        assert other.path == "/h[0]/synapse[%d]" % (i % 2) and other.className == "Synapse"
        assert m.adjacent[other].path == s.path
    a = antler.vec(antler.IntFire("/a", 3))
    b = antler.vec(antler.IntFire("/b", 3))
    m = antler.connect(a, "spikeOut", b, "activation", "OneToOne")
    assert m.adjacent[a[2]].path == b[2].path and m.adjacent[b[1]].path == a[1].path
    with pytest.raises(antler.IndexError, match="not an end"):
        m.adjacent[sg[0]]
    with pytest.raises(antler.IndexError, match="not an end"):
        msgs[0].adjacent[sg[1]]


def test_compartment_geometry_follows_moose_s_rules(model):
    c = antler.Compartment("/c")
    assert (c.diameter, c.length, c.x0, c.x) == (0.0, 0.0, 0.0, 0.0)
    c.x0, c.y0, c.z0 = 1.0, 2.0, 3.0
    c.x, c.y, c.z = 4.0, 6.0, 3.0
    assert c.length == 5.0  # the distance between the ends (CompartmentBase::updateLength)
    c.length = 10.0  # it matched the ends: the far end moves along the axis
    assert (c.x, c.y, c.z) == (7.0, 10.0, 3.0) and c.length == 10.0
    c.x = 1.0
    assert c.length == pytest.approx(8.0)
    c.diameter = 2e-6
    assert list(c.coords) == [1.0, 2.0, 3.0, 1.0, 10.0, 3.0, 2e-6]
    c.coords = [0, 0, 0, 3, 4, 0, 1e-6]
    assert c.length == 5.0 and c.diameter == 1e-6
    for field, bad in (("length", -1.0), ("diameter", -1e-6), ("x", float("nan")),
                       ("coords", [1.0] * 6), ("length", float("inf"))):
        before = getattr(c, field)
        with pytest.raises(antler.ValueError, match=field):
            setattr(c, field, bad)
        assert np.all(np.asarray(getattr(c, field)) == np.asarray(before))
    assert c.Rm == 1.0  # the geometry does not change the electrical parameters


def test_leakage_on_a_compartment_and_isa_wildcards(model):
    rm, cm, em, ek, gbar, dt = 1e8, 1e-10, -0.065, -0.064, 1e-8, 5e-5
    antler.Neutral("/m")
    c = antler.Compartment("/m/c")
    c.Rm, c.Cm, c.Em, c.initVm = rm, cm, em, em
    leak = antler.Leakage("/m/c/chan")
    leak.Ek, leak.Gbar = ek, gbar
    assert leak.Gk == gbar  # MOOSE's Leakage: Gk follows Gbar at once
    antler.connect(leak, "channel", c, "channel")
    antler.SynChan("/m/syn")
    antler.LIF("/m/lif")
    assert sorted(x.path for x in antler.wildcardFind("/m/##[ISA=ChanBase]")) == \
        ["/m/c/chan", "/m/syn"]
    assert sorted(x.path for x in antler.wildcardFind("/m/##[ISA=CompartmentBase]")) == \
        ["/m/c", "/m/lif"]
    tab = antler.Table("/vm")
    antler.connect(tab, "requestOut", c, "getVm")
    ik = antler.Table("/ik")
    antler.connect(ik, "requestOut", leak, "getIk")
    antler.useClock(9, "/m/syn,/m/lif")  # (not run: tick 9 has no dt)
    antler.setClock(8, dt)  # the Tables' tick, as often as the rest (MOOSE's default is 1e-4)
    antler.reinit()
    antler.start(40 * dt)  # MOOSE's default ticks: chan 4 after the compartment's 3
    # The channel (tick 4) runs after the compartment (tick 3): its Gk reaches the compartment
    # in the next step; reinit's reaches the first.
    vm, want, want_ik = em, [em], [(ek - em) * gbar]
    for _ in range(40):
        a, b = gbar * ek + em / rm, 1.0 / rm + gbar
        omx = -math.expm1(-b * dt / cm)
        vm = vm * (1.0 - omx) + (a / b) * omx
        want.append(vm)
        want_ik.append((ek - vm) * gbar)  # the compartment's VmOut of this step came first
    np.testing.assert_allclose(tab.vector, want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(ik.vector, want_ik, rtol=1e-12, atol=0)
    assert want[-1] > em + 1e-4


def test_a_call_between_direct_runs_is_not_lost(model):
    # On the direct path the neurons skip their own event ring while it is known empty; a Shell
    # call between runs (an activation, a spike straight to a synapse) must make them read it.
    def run(direct):
        antler._clearModel()
        h = antler.vec(antler.SimpleSynHandler("/h", 4))
        n = antler.vec(antler.IntFire("/n", 4))
        n.tau, n.thresh = 1.0, 1e9
        antler.connect(h, "activationOut", n, "activation", "OneToOne")
        if not direct:
            antler.connect(h, "activationOut", antler.vec(antler.IntFire("/d", 4)), "activation",
                           "OneToOne")
        for t in (1, 2):
            antler.setClock(t, 1e-4)
        antler.reinit()
        antler.start(1e-3)
        assert h[0].directPath == direct
        n[2].activation(0.375)
        antler.start(1e-3)
        return np.asarray(n.Vm).copy()

    direct, messages = run(True), run(False)
    decay = 1.0 - antler.element("/clock").tickDt[2] / 1.0
    want = 0.375
    for _ in range(10):  # added in the next step, then a decay per step (IntFire's order)
        want *= decay
    assert messages[2] == want
    assert direct.tobytes() == messages.tobytes()

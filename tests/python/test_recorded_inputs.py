# TimeTable and StimulusTable from Python, against closed forms computed here with numpy. Runs at
# 1 and 2 nodes (ctest python.np1 / python.np2).
import numpy as np
import pytest

import antler


def test_timetable_replays_times_in_their_steps(model):
    dt = 1e-4
    k = np.array([-2.0, 0.0, 1.0, 1.0, 2.5, 6.0, 6.0, 6.0, 11.75, 40.0])  # in steps
    times = k * dt
    tt = antler.TimeTable("/tt")
    tt.vector = times
    got = antler.Table("/got")
    state = antler.Table("/state")
    antler.connect(tt, "eventOut", got, "input")
    antler.connect(state, "requestOut", tt, "getState")
    antler.setClock(0, dt)
    antler.useClock(0, "/##")
    nsteps = 20
    antler.reinit()
    antler.start(nsteps * dt)
    step = np.maximum(1, np.ceil(k)).astype(int)  # the step whose interval (t-dt, t] holds k dt
    sent = step <= nsteps
    np.testing.assert_array_equal(got.vector, times[sent])
    want_state = np.zeros(nsteps + 1)
    want_state[step[sent]] = 1.0
    np.testing.assert_array_equal(state.vector, want_state)
    assert tt.size == len(times)


def test_timetable_refuses_unsorted_times(model):
    tt = antler.TimeTable("/tt")
    tt.vector = [0.1, 0.2]
    with pytest.raises(antler.ValueError, match=r"sorted.*entry 2"):
        tt.vector = [0.1, 0.3, 0.2]
    with pytest.raises(ValueError, match="NaN"):
        tt.vector = [0.1, float("nan")]
    np.testing.assert_array_equal(tt.vector, [0.1, 0.2])


def _lookup(v, start, stop, x):
    """MOOSE 4's TableBase::interpolate of v spanning [start, stop] (builtins/TableBase.cpp),
    vectorised: entry j = floor((N - 1) fraction), then v[j] + (v[j+1] - v[j]) (x - lower) / dx."""
    x = np.asarray(x, dtype=float)
    xdivs = len(v) - 1
    fraction = (x - start) / (stop - start)
    j = np.clip(np.floor(xdivs * fraction).astype(int), 0, xdivs)
    dx = (stop - start) / xdivs
    jj = np.minimum(j, xdivs - 1)
    y = v[jj] + (v[jj + 1] - v[jj]) * ((x - (start + jj * dx)) / dx)
    return np.where(x < start, v[0], np.where((x > stop) | (j >= xdivs), v[-1], y))


def test_stimulustable_steps_and_loops(model):
    dt = 1.0 / 1024
    v = np.array([0.0, 2.0, -1.0, 4.0, 3.0])
    st = antler.StimulusTable("/st", 2)
    sv = antler.vec(st)

    for i in range(2):
        sv[i].vector = v
        sv[i].startTime = 0.0
        sv[i].stopTime = 4.0
    sv[0].stepSize = 0.5          # one entry every 2 steps, ramping
    sv[1].stepSize = 1.0          # one entry per step, looping after position 3
    sv[1].doLoop = True
    sv[1].loopTime = 3.0
    tabs = [antler.Table("/tab%d" % i) for i in range(2)]
    for i in range(2):
        antler.connect(tabs[i], "requestOut", sv[i], "getOutputValue")
    antler.element("/clock").baseDt = dt  # steps of exactly 1/1024 s (else rounded to 50 us)
    antler.setClock(0, dt)
    antler.useClock(0, "/##")
    nsteps = 25
    antler.reinit()
    antler.start(nsteps * dt)
    n = np.arange(nsteps + 1)
    np.testing.assert_array_equal(tabs[0].vector, _lookup(v, 0.0, 4.0, 0.5 * n))
    # MOOSE 4: positions 1, 2, 3, then past startTime + loopTime = 3 the position read is
    # x - 3 floor(x / 3): 4 -> 1, 5 -> 2, 6 -> 0, ...
    np.testing.assert_array_equal(tabs[1].vector, v[np.where(n > 3, n % 3, n)])

"""Ctrl-C during a serial start(): the run stops at the end of the step it is in (well within a
second), the script gets a KeyboardInterrupt, the clock's time is that step's, and start() goes on
from there. Run in a child process under a timeout, so that a run that ignores the signal fails
the test instead of stalling it."""
import os
import signal
import subprocess
import sys
import time

import pytest

import antler

CHILD = r"""
import sys, time
import antler
antler.IntFire('/n', 20000)
antler.setClock(2, 1e-4)
antler.reinit()
print('started', flush=True)
t0 = time.time()
try:
    antler.start(1e4)  # a run of 1e8 steps: hours
    print('finished', flush=True)
except KeyboardInterrupt:
    t = antler.currentTime()
    steps = antler.element('/clock').currentStep
    print('interrupted', time.time() - t0, repr(t), steps, flush=True)
    antler.start(1e-3)
    print('resumed', repr(antler.currentTime()), antler.element('/clock').currentStep, flush=True)
"""


def test_ctrl_c_stops_a_serial_run_at_a_step(model):
    if antler.numNodes() > 1:
        pytest.skip("a serial run in a child process (under mpirun, SIGINT ends every rank)")
    env = dict(os.environ)
    p = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert p.stdout.readline().strip() == "started"
        time.sleep(1.0)
        sent = time.time()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    lines = dict((ln.split()[0], ln.split()[1:]) for ln in out.splitlines())
    assert "interrupted" in lines, out + err
    assert time.time() - sent < 30
    t, steps = float(lines["interrupted"][1]), int(lines["interrupted"][2])
    assert 0 < steps < 10 ** 8 and steps % 2 == 0  # whole steps of tick 2 (2 base steps)
    assert t == 50e-6 * steps  # the clock's time of that step
    t2, steps2 = float(lines["resumed"][0]), int(lines["resumed"][1])
    assert steps2 == steps + 20 and t2 == 50e-6 * steps2

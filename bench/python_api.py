"""bench/python_api.py: what do the Python API's hot calls cost?

  1. vec.Vm of 1e5 IntFire entries, read into a numpy array (MOOSE: 200-300 ms on this kind of
     machine; goal <= 0.5 ms). Baseline in the same run: numpy copying an array of 1e5 doubles.
  2. antler.start(dt) called once per step, minus the cost of the same steps run by one start()
     call: the per-call overhead (MOOSE: 27-51 ms; goal <= 100 us). Measured on a small model
     (100 IntFires and a Stats reduction) so that the step itself does not drown the difference.

Run: PYTHONPATH=build/python python3 bench/python_api.py   (also under mpirun -n 2)
"""
import time

import numpy as np

import antler

from machine import print_machine  # bench/machine.py


def best(f, reps):
    t = 1e300
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    print_machine()
    n = 100000
    antler.setNumThreads(1)
    cells = antler.IntFire("/cells", n)
    v = antler.vec(cells)
    v.Vm = np.linspace(-0.07, -0.05, n)
    stats = antler.Stats("/stats")
    antler.connect(stats, "reduce", v, "getVm", "Reduce")

    print("Question 1: time to read vec.Vm of %d IntFires into numpy (%d node(s))" % (n, antler.numNodes()))
    got = v.Vm
    assert isinstance(got, np.ndarray) and got.shape == (n,) and got[-1] == -0.05
    t_vec = best(lambda: v.Vm, 50)
    base = np.linspace(0, 1, n)
    t_np = best(lambda: base.copy(), 50)
    print("  vec.Vm           %8.3f ms   (goal <= 0.5 ms; MOOSE 200-300 ms)" % (t_vec * 1e3))
    print("  numpy copy       %8.3f ms   (baseline: copying the same number of doubles)" % (t_np * 1e3))
    print("  ratio            %8.1f" % (t_vec / t_np))

    print("Question 3: time to write vec.<field> = a numpy array of %d doubles" % n)
    vm = np.linspace(-0.07, -0.05, n)
    tau = np.linspace(0.01, 0.03, n)

    def write_vm():
        v.Vm = vm

    def write_tau():
        v.tau = tau

    t_wvm = best(write_vm, 50)
    t_wtau = best(write_tau, 50)
    np.testing.assert_array_equal(v.tau, tau)
    print("  vec.Vm = a       %8.3f ms   (a plain member: converted and checked, then copied)" % (t_wvm * 1e3))
    print("  vec.tau = a      %8.3f ms   (a checked setter: validated, agreed, written with undo)" % (t_wtau * 1e3))
    print("  ratios to a numpy copy: Vm %.1f, tau %.1f" % (t_wvm / t_np, t_wtau / t_np))

    dt = 1e-4
    antler.Neutral("/small")
    small = antler.vec(antler.IntFire("/small/cells", 100))
    small.Vm = np.linspace(-0.07, -0.05, 100)
    sstats = antler.Stats("/small/stats")
    antler.connect(sstats, "reduce", small, "getVm", "Reduce")
    antler.setClock(0, dt)
    antler.setClock(1, dt)
    antler.useClock(0, "/small/cells")
    antler.useClock(1, "/small/stats")
    antler.reinit()
    steps = 2000

    def one_call():
        antler.start(steps * dt)

    def per_step():
        for _ in range(steps):
            antler.start(dt)

    t_one = best(one_call, 7)
    t_many = best(per_step, 7)
    over = (t_many - t_one) / steps
    print("Question 2: overhead of antler.start(dt) called once per step (100 IntFires + Stats)")
    print("  %d steps in one start()     %8.3f ms  (%6.1f us/step)" % (steps, t_one * 1e3, t_one / steps * 1e6))
    print("  %d start(dt) calls          %8.3f ms  (%6.1f us/step)" % (steps, t_many * 1e3, t_many / steps * 1e6))
    print("  overhead per start() call    %8.1f us   (goal <= 100 us; MOOSE 27-51 ms)" % (over * 1e6))
    assert sstats.num == 100 and stats.num in (0, n)


if __name__ == "__main__":
    main()

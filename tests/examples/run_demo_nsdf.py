"""The demo's --nsdf recording: run examples/population_stats.py at 1 and 2 nodes, read both files
back with h5py, and check (1) the series the writer recorded equal, bit for bit, what the demo's
Tables hold (its CSV, printed with 17 digits), (2) both files hold the same data (every uniform
and event dataset; the Stats' reductions up to reassociation), (3) Vm of every neuron averages to the Stats mean each step (up to
reassociation), and the spike count matches the recorded rate.

Usage: run_demo_nsdf.py MPIEXEC PYTHON EXAMPLES_DIR WORK_DIR [mpiexec flags...]
"""
import csv
import os
import subprocess
import sys

import h5py
import numpy as np

mpiexec, python, examples, work = sys.argv[1:5]
flags = sys.argv[5:]
os.makedirs(work, exist_ok=True)
N, dt = 400, 1e-4
files = {}
for ranks in (1, 2):
    out = os.path.join(work, "np%d" % ranks)
    h5 = os.path.join(work, "demo_np%d.h5" % ranks)
    cmd = [mpiexec] + flags + ["-n", str(ranks), python, os.path.join(examples, "population_stats.py"),
                               "--neurons", str(N), "--inputs", "100", "--duration", "0.05",
                               "--no-plot", "--out", out, "--nsdf", h5]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit("FAILED (%d ranks): %s\n%s" % (ranks, r.stdout, r.stderr))
    with open(os.path.join(out, "population_stats.csv")) as f:
        rows = list(csv.reader(f))[1:]
    table = {k: np.array([float(r[i]) for r in rows]) for i, k in ((1, "mean"), (2, "sdev"), (3, "rate"))}
    with h5py.File(h5, "r") as f:
        for k, path in (("mean", "/data/uniform/stats/mean"), ("sdev", "/data/uniform/stats/sdev"),
                        ("rate", "/data/uniform/rate/rate")):
            got = f[path][0]
            assert np.array_equal(got, table[k]), "%s differs from the Table at %d ranks" % (path, ranks)
        vm = f["/data/uniform/neurons/Vm"][()]
        assert vm.shape == (N, len(rows)), vm.shape
        np.testing.assert_allclose(vm.mean(axis=0), table["mean"], rtol=1e-12, atol=1e-12)
        nspikes = sum(len(f["/data/event/neurons/spikeOut/%d" % i]) for i in range(N))
        want = int(round(table["rate"][1:].sum() * dt * N))
        assert nspikes == want, (nspikes, want)
        data = {}
        f.visititems(lambda name, obj: data.__setitem__(name, obj[()])
                     if isinstance(obj, h5py.Dataset) and name.startswith("data/") else None)
    files[ranks] = data
    print("%d rank(s): %d samples x %d neurons, %d spikes: equal to the Tables" % (ranks, vm.shape[1], N, nspikes))
assert files[1].keys() == files[2].keys()
# Vm, spikes and the rate are the same bits on any split; the Stats' mean and sdev are reductions,
# equal up to floating-point reassociation (the Tables differ the same way).
for name in files[1]:
    if name.startswith("data/uniform/stats/"):
        np.testing.assert_allclose(files[1][name], files[2][name], rtol=1e-12, atol=1e-15)
    else:
        assert np.array_equal(files[1][name], files[2][name]), "%s differs between 1 and 2 ranks" % name
print("OK: %d datasets identical at 1 and 2 ranks (the Stats' up to reassociation)" % len(files[1]))

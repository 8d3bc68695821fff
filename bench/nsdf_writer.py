"""Writer overhead: the demo network (examples/population_stats.py) with and without an
NSDFWriter recording Vm of every neuron every step (plus every spike time), ms per step, and the
writer's achieved bandwidth against h5py writing the same array (neurons x steps, float64, in
blocks of the same size) in the same run.

    PYTHONPATH=build/python /usr/bin/python3 bench/nsdf_writer.py [neurons [steps]]
    mpirun -n 2 /usr/bin/python3 bench/nsdf_writer.py           (the writer gathers to rank 0)
"""
import argparse
import os
import sys
import tempfile
import time

import h5py
import numpy as np

import antler

from machine import print_machine  # bench/machine.py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import population_stats as demo  # noqa: E402

neurons = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
print_machine()
reps = 3
tmp = tempfile.mkdtemp(prefix="antler-nsdf-bench-", dir=os.environ.get("TMPDIR", "/tmp"))
path = os.path.join(tmp, "bench.h5")


def args(nsdf):
    return argparse.Namespace(neurons=neurons, inputs=1000, rate=10.0, fanin=20.0, fanout=20.0,
                              win=0.25, wrec=0.05, dt=1e-4, seed=1, nsdf=nsdf)


def run(nsdf, events=False):
    """Best ms/step over reps runs of `steps` steps (the writer's close included), and the best
    reinit + close time. The writer records Vm of every neuron every step (and, with events,
    every spike time: the demo's --nsdf)."""
    antler._clearModel()
    built = demo.build(args(""))
    writer = None
    if nsdf and events:
        writer = demo.add_writer(nsdf, *built[:3])
    elif nsdf:
        writer = antler.NSDFWriter("/net/nsdf")
        writer.filename = nsdf
        writer.overwrite = True
        antler.connect(writer, "requestOut", built[0], "getVm", "Reduce")
        antler.useClock(2, "/net/nsdf")
    best, fixed = float("inf"), float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        antler.reinit()
        t1 = time.perf_counter()
        antler.start(steps * 1e-4)
        t2 = time.perf_counter()
        if writer is not None:
            writer.close()
        t3 = time.perf_counter()
        best = min(best, t3 - t1)
        fixed = min(fixed, (t1 - t0) + (t3 - t2))
    return 1e3 * best / steps, (os.path.getsize(nsdf) if nsdf else 0), fixed


plain, _, _ = run("")
rec, size, _ = run(path)
os.remove(path)
rec_ev, size_ev, fixed_ev = run(path, events=True)
os.remove(path)

# h5py writing the same array the same way: a chunked float64 dataset grown in blocks of the
# writer's size (flushLimit = 4M values -> 4M / neurons columns per block), data already in memory.
block = max(1, (1 << 22) // neurons)
data = np.random.default_rng(0).random((neurons, block))
best = float("inf")
for _ in range(reps):
    t0 = time.perf_counter()
    with h5py.File(path, "w") as f:
        d = f.create_dataset("Vm", shape=(neurons, 0), maxshape=(neurons, None), dtype="f8",
                             chunks=(max(1, min(neurons, (1 << 17) // min(block, 64))), min(block, 64)))
        done = 0
        while done < steps + 1:
            k = min(block, steps + 1 - done)
            d.resize(done + k, axis=1)
            d[:, done:done + k] = data[:, :k]
            done += k
    best = min(best, time.perf_counter() - t0)
os.remove(path)
os.rmdir(tmp)
mib = neurons * (steps + 1) * 8 / 2**20
extra_ms = rec - plain
print("NSDFWriter: %d neurons x %d steps, %d node(s) x %d thread(s); %.0f MiB of Vm" % (
    neurons, steps, antler.numNodes(), antler.getNumThreads(), mib))
print("  ms/step without writer %.3f, with writer %.3f: ratio %.2f (+%.3f ms/step)" % (
    plain, rec, rec / plain, extra_ms))
print("  writer bandwidth (Vm bytes / extra time) %.0f MiB/s; h5py writing the same array %.0f MiB/s "
      "(%.3f s): ratio %.2f" % (mib / (extra_ms * steps / 1e3), mib / best, best,
                                (mib / (extra_ms * steps / 1e3)) / (mib / best)))
print("  file size %.0f MiB" % (size / 2**20))
print("  with every spike time too (the demo's --nsdf, one dataset per neuron): %.3f ms/step, ratio %.2f; "
      "reinit + close %.2f s; file %.0f MiB" % (rec_ev, rec_ev / plain, fixed_ev, size_ev / 2**20))

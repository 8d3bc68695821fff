"""Runs the Python examples as a user would (mpirun, Debian's python3) and checks their output:
population_stats.py at 1 and 2 nodes writes CSVs that agree to a relative 1e-12 and a PNG;
sync_synapses.py reports a fieldDimension equal to its own count at 1 and 2 nodes.

usage: run_python_examples.py <mpiexec> <python> <examples dir> <work dir> [mpiexec flags...]
"""
import os
import subprocess
import sys

import numpy as np


def run(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit("FAILED (%d): %s\n%s\n%s" % (p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def main():
    mpiexec, python, examples, work = sys.argv[1:5]
    flags = sys.argv[5:]
    env = dict(os.environ)
    small = ["--neurons", "2000", "--inputs", "300", "--duration", "0.2"]
    csvs = []
    for np_ in (1, 2):
        out = os.path.join(work, "demo_np%d" % np_)
        text = run([mpiexec] + flags + ["-n", str(np_), python, os.path.join(examples, "population_stats.py"),
                    "--out", out] + small, env)
        print(text)
        assert "result:" in text
        assert os.path.getsize(os.path.join(out, "population_stats.png")) > 10000
        csvs.append(np.loadtxt(os.path.join(out, "population_stats.csv"), delimiter=",", skiprows=1))
    a, b = csvs
    assert a.shape == b.shape and a.shape[0] == 2001, a.shape
    rel = np.max(np.abs(a - b) / np.maximum(np.abs(a), 1e-300))
    print("CSV at 1 and 2 nodes: largest relative difference %.3g" % rel)
    assert rel <= 1e-12
    assert np.all(a[:, 3] >= 0) and a[:, 3].mean() > 0  # neurons fire
    for np_ in (1, 2):
        text = run([mpiexec] + flags + ["-n", str(np_), python, os.path.join(examples, "sync_synapses.py")], env)
        print(text)
        assert "check: OK" in text and "nodes=%d" % np_ in text
    print("python examples: OK")


if __name__ == "__main__":
    main()

"""Runs examples/mpi4py_subcomm.py at 1, 3 and 4 ranks (antler on the first half, mpi4py on all)
and checks its verdict. usage: run_mpi4py.py <mpiexec> <python> <examples dir> [mpiexec flags...]"""
import subprocess
import sys


def main():
    mpiexec, python, examples = sys.argv[1:4]
    flags = sys.argv[4:]
    for n in (1, 3, 4):
        cmd = [mpiexec] + flags + ["-n", str(n), python, examples + "/mpi4py_subcomm.py"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            sys.exit("FAILED: %s did not finish in 120 s" % " ".join(cmd))
        print(p.stdout)
        if p.returncode != 0 or "result: ok" not in p.stdout:
            sys.exit("FAILED (%d) at -n %d:\n%s\n%s" % (p.returncode, n, p.stdout, p.stderr))
        want = "antler ran on %d of %d ranks" % ((n + 1) // 2, n)
        if want not in p.stdout:
            sys.exit("FAILED at -n %d: expected '%s'" % (n, want))


if __name__ == "__main__":
    main()

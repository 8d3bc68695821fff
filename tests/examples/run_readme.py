"""Runs the README's Python example (the first ```python block) at 1 and 2 nodes and checks that
the Stats mean it prints equals numpy's mean of vec.Vm, which it prints next to it.

usage: run_readme.py <README.md> <mpiexec> <python> [mpiexec flags...]
"""
import re
import subprocess
import sys
import tempfile


def main():
    readme, mpiexec, python = sys.argv[1:4]
    flags = sys.argv[4:]
    code = re.search(r"```python\n(.*?)```", open(readme).read(), re.S).group(1)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(code)
    for n in (1, 2):
        p = subprocess.run([mpiexec] + flags + ["-n", str(n), python, f.name], capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            sys.exit("README example failed at -n %d:\n%s\n%s" % (n, p.stdout, p.stderr))
        fields = p.stdout.split()
        mean, npmean = float(fields[0]), float(fields[2])
        print("-n %d: Stats mean %.15g, numpy %.15g" % (n, mean, npmean))
        assert abs(mean - npmean) <= 1e-12 * abs(npmean)
    print("README example: OK")


if __name__ == "__main__":
    main()

"""Installs antler into a scratch prefix, builds examples/user_library against it with
find_package(antler), and loads the library from Python at 1 and 2 nodes.

usage: run_user_library.py <cmake> <antler build dir> <source dir> <work dir> <mpiexec> <python> [flags...]
"""
import os
import shutil
import subprocess
import sys


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, **kw)
    if p.returncode != 0:
        sys.exit("FAILED (%d): %s\n%s\n%s" % (p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def main():
    cmake, build, src, work, mpiexec, python = sys.argv[1:7]
    flags = sys.argv[7:]
    shutil.rmtree(work, ignore_errors=True)
    prefix = os.path.join(work, "prefix")
    run([cmake, "--install", build, "--prefix", prefix])
    ubuild = os.path.join(work, "build")
    run([cmake, "-S", os.path.join(src, "examples", "user_library"), "-B", ubuild,
         "-Dantler_DIR=" + os.path.join(prefix, "lib", "cmake", "antler"), "-DCMAKE_BUILD_TYPE=Release"])
    run([cmake, "--build", ubuild])
    lib = os.path.join(ubuild, "libmy_cells.so")
    script = os.path.join(src, "examples", "user_library", "use_my_cells.py")
    rms = set()
    for n in (1, 2):
        out = run([mpiexec] + flags + ["-n", str(n), python, script, lib])
        print(out)
        assert "check: OK" in out and "nodes=%d" % n in out
        rms.add(out.split("rms=")[1].split()[0])
    assert len(rms) == 1, "the exact root mean square differs between 1 and 2 nodes: %s" % rms
    print("user library: OK")


if __name__ == "__main__":
    main()

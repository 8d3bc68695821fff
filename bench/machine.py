"""The machine a benchmark ran on, printed first by every benchmark (see bench/machine.hpp):
the CPU model, CPUs and caches from `lscpu`, else /proc/cpuinfo."""
import os
import subprocess


def machine():
    info = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10,
                             env=dict(os.environ, LC_ALL="C")).stdout
        for line in out.splitlines():
            key, _, value = line.partition(":")
            info[key.strip()] = value.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    model = info.get("Model name")
    if not model:
        try:
            with open("/proc/cpuinfo") as f:
                model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")),
                             None)
        except OSError:
            model = None
    parts = ["cpu: " + (model or "unknown")]
    if info.get("CPU(s)"):
        parts.append(info["CPU(s)"] + " CPUs")
    for key in ("L2 cache", "L3 cache"):
        if info.get(key):
            parts.append(key.split()[0] + " " + info[key])
    return ", ".join(parts)


def print_machine():
    """Prints machine() (rank 0 only under mpirun)."""
    if os.environ.get("OMPI_COMM_WORLD_RANK", "0") == "0":
        print(machine(), flush=True)

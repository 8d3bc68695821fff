# Sourced by the scripts: where to build, and how to call mpirun on a small machine as root.
ANTLER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ANTLER_BUILD="${ANTLER_BUILD:-$ANTLER_ROOT/build}"
ANTLER_JOBS="${ANTLER_JOBS:-$(nproc)}"
# Open MPI refuses to run as root and to start more ranks than cores unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe --bind-to none)

antler_build() {  # antler_build DIR [cmake args...]
  local dir=$1
  shift
  cmake -S "$ANTLER_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$ANTLER_PYTHON" "$@" >/dev/null
  cmake --build "$dir" -j "$ANTLER_JOBS"
}
# Debian's interpreter (with python3-numpy, -pytest, -matplotlib), not whatever is first on PATH.
ANTLER_PYTHON="${ANTLER_PYTHON:-/usr/bin/python3}"
export PYTHONPATH="$ANTLER_BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
export MPLBACKEND="${MPLBACKEND:-Agg}"

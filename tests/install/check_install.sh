#!/usr/bin/env bash
# Installs antler's Python package the ways users install things and runs a model with it from
# outside the source and build trees (ctest install.cmake and install.pip):
#   check_install.sh cmake BUILD_DIR PY_DIR   `cmake --install BUILD_DIR --prefix T`, then
#                                             PYTHONPATH=T/PY_DIR /usr/bin/python3
#   check_install.sh pip SOURCE_DIR           `pip install --no-build-isolation SOURCE_DIR` into a
#                                             fresh venv (--system-site-packages: Debian's numpy)
# The model runs at 1 node and under mpirun -n 2, and antler must come from the install.
set -euo pipefail
mode=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/antler-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
cat > model.py <<'PY'
import antler
assert "/antler-install." in antler.__file__, antler.__file__  # not the build tree's
n = antler.vec(antler.IntFire("/n", 5))
n.initVm, n.tau, n.thresh = [1.0, 2.0, 3.0, 4.0, 5.0], 0.5, 1e9
antler.setClock(0, 1e-3)
antler.useClock(0, "/n")
antler.reinit()
antler.start(4e-3)
decay = 1.0 - antler.element("/clock").tickDt[0] / 0.5
want = [v * decay * decay * decay * decay for v in [1.0, 2.0, 3.0, 4.0, 5.0]]
assert list(n.Vm) == want, (list(n.Vm), want)
print("installed antler ran on %d node(s)" % antler.numNodes())
PY
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none -n 2)
case "$mode" in
  cmake)
    build=$2 pydir=$3
    cmake --install "$build" --prefix "$tmp/prefix" > install.log
    export PYTHONPATH="$tmp/prefix/$pydir"
    /usr/bin/python3 model.py
    "${mpirun[@]}" /usr/bin/python3 model.py
    ;;
  pip)
    src=$2
    /usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
    # A copy of the tree (what git tracks and what it does not ignore), so that the build's own
    # folders do not land in the checkout.
    mkdir src && (cd "$src" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$tmp/src")
    "$tmp/venv/bin/pip" install --no-build-isolation --no-deps --no-index "$tmp/src" > pip.log 2>&1 ||
      { tail -40 pip.log; exit 1; }
    rm -rf "$tmp/src"
    env -u PYTHONPATH "$tmp/venv/bin/python" model.py
    env -u PYTHONPATH "${mpirun[@]}" "$tmp/venv/bin/python" model.py
    ;;
  *) echo "check_install.sh: mode cmake or pip" >&2; exit 2 ;;
esac

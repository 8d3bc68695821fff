"""Loads the user library built from examples/user_library and scripts its classes from Python,
with no binding code of their own.

    python3 examples/user_library/use_my_cells.py build-user/libmy_cells.so
    mpirun -n 2 python3 examples/user_library/use_my_cells.py build-user/libmy_cells.so
"""
import math
import sys
from fractions import Fraction

import numpy as np

import antler as moose

added = moose.loadLibrary(sys.argv[1])
print("loaded", sys.argv[1], "->", ", ".join(added))
osc = moose.vec(moose.Oscillator("/osc", 500))
osc.amplitude = np.linspace(1.0, 2.0, 500)
osc.frequency = 5.0
osc.phase = np.linspace(0, np.pi, 500)
spread = moose.Spread("/spread")
moose.connect(spread, "reduce", osc, "getX", "Reduce")
power = moose.Power("/power")
moose.connect(power, "reduce", osc, "getX", "Reduce")
moose.setClock(0, 1e-3)
moose.setClock(1, 1e-3)
moose.useClock(0, "/osc")
moose.useClock(1, "/spread")
moose.useClock(1, "/power")
moose.reinit()
moose.start(0.0137)
x = osc.x
expected = osc.amplitude * np.sin(2 * np.pi * 5.0 * moose.currentTime() + osc.phase)
# The exact sum of the squares (fractions), rounded once: Power's must have the same bits.
sum_sq = float(sum(Fraction(v) ** 2 for v in x.tolist()))
ok = (np.allclose(x, expected, rtol=1e-12, atol=1e-12) and spread.spread == x.max() - x.min()
      and spread.count == 500 and power.sumSq == sum_sq and power.rms == math.sqrt(sum_sq / 500))
print("result: spread=%.12f count=%d rms=%r nodes=%d" % (spread.spread, spread.count, power.rms,
                                                        moose.numNodes()))
print("check:", "OK" if ok else "MISMATCH")

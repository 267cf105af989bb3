"""The comparison program: a three-point average of a distributed array, then its sum.

    pgas run -n 2 docs/examples/coming_from.py
"""

import numpy as np

import pgas as pg

n = 1000
a = pg.arange(n, dtype=np.float64)          # Block-distributed 0, 1, ..., n - 1
b = pg.zeros(n)
b[1:-1] = (a[:-2] + a[2:]) / 2              # one statement; neighbours across locales move in one message each
total = b.sum()                             # collective: the same value on every locale

expected = np.zeros(n)
expected[1:-1] = (np.arange(n - 2) + np.arange(2, n)) / 2
if pg.here == 0:
    print(f"sum = {total}")
if not np.isclose(total, expected.sum()):
    raise SystemExit("coming_from.py: differs from NumPy")

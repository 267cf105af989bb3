"""The plan of a forall stencil on Block-Cyclic data over 16 locales.

    python docs/examples/explain_forall.py
"""

import numpy as np

import pgas as pg

n = 1024
A = pg.zeros((n, n), dist=pg.BlockCyclic(16), name="A")
B = pg.zeros((n, n), dist=pg.BlockCyclic(16), name="B")


def body(i, j):
    B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])


print(pg.explain(lambda: pg.forall((range(1, n - 1), range(1, n - 1)), body), locales=16))
if not np.array_equal(B.to_numpy()[:2, :2], np.zeros((2, 2))):     # explain ran nothing
    raise SystemExit("explain_forall.py: explain wrote to B")

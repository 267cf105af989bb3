"""The plan of one stencil statement on Cyclic data, for 4 locales, without running it.

The planner is pure, so ``locales=4`` works in a single process.

    python docs/examples/explain_stencil.py
"""

import numpy as np

import pgas as pg

n = 10
A = pg.from_numpy(np.arange(n, dtype=float), dist=pg.Cyclic(), name="A")
B = pg.zeros(n, dist=pg.Cyclic(), name="B")

print(pg.explain(lambda: B.__setitem__(slice(1, -1), A[:-2] + A[2:]), locales=4))

B[1:-1] = A[:-2] + A[2:]                               # and now run it for real
G = np.arange(n, dtype=float)
H = np.zeros(n)
H[1:-1] = G[:-2] + G[2:]
if not np.array_equal(B.to_numpy(), H):
    raise SystemExit("explain_stencil.py: differs from NumPy")

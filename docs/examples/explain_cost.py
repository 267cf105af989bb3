"""owner="cost": a matrix-vector product run where the matrix lives.

    python docs/examples/explain_cost.py
"""

import numpy as np

import pgas as pg

n = 64
A = pg.from_numpy(np.ones((n, n)), dist=pg.Cyclic(), name="A")
x = pg.zeros(n, dist=pg.Cyclic(), name="x")
y = pg.ones(n, dist=pg.Cyclic(), name="y")


def body(i, j):
    x[i] += A[i, j] * y[j]


pg.config(owner="cost")
print(pg.explain(lambda: pg.forall((range(n), range(n)), body), locales=4))
pg.forall((range(n), range(n)), body)             # run it: every x[i] is n
pg.config()
if not np.array_equal(x.to_numpy(), np.full(n, float(n))):
    raise SystemExit("explain_cost.py: differs from NumPy")

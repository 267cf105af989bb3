"""Lazy expressions, forall with loop variables as values, and A.layout.

    pgas run -n 2 docs/examples/lazy_forall.py
"""

import numpy as np

import pgas as pg

n = 8
A = pg.from_numpy(np.arange(n * n, dtype=float).reshape(n, n), dist=pg.Cyclic())
G = A.to_numpy()

# an expression that is not assigned is lazy: nothing is computed yet
E = A[1:, :] - A[:-1, :]
A[0, :] = -1.0                  # E is materialised first: it keeps the values of the moment it was written
E_now = E.to_numpy()            # (a materialised expression is an ordinary DistArray)
G_E = G[1:, :] - G[:-1, :]
G[0, :] = -1.0

# forall: the body runs once, with symbolic i, j; each assignment is one statement
C = pg.zeros((n, n), dist=pg.Cyclic())
D = pg.zeros((n, n), dist=pg.Cyclic())


def body(i, j):
    C[i, j] = 10 * i + j                    # loop variables used as values
    D[i, j] = 0.5 * C[i, j] + A[i, n - 1 - j]   # any affine subscript; reads C after it was written


pg.forall((range(n), range(n)), body)
G_C = 10 * np.arange(n)[:, None] + np.arange(n)[None, :]
G_D = 0.5 * G_C + G[:, ::-1]

# the layout: pure index arithmetic, no messages
L = A.layout
mine = L.owned(pg.here)                     # the global rows and columns this locale stores
local_ok = np.array_equal(A.local, G[np.ix_(*mine)])

C_all, D_all = C.to_numpy(), D.to_numpy()   # collective: every locale calls it, never inside `if pg.here == 0`
ok = np.array_equal(E_now, G_E) and np.array_equal(C_all, G_C) and np.allclose(D_all, G_D) and local_ok
if pg.here == 0:
    print(f"grid {L.grid}, blocks {L.blocks}; locale 0 stores rows {mine[0]} and columns {mine[1]}")
    print("C[:3, :3] =", C_all[:3, :3].tolist())
    print("matches NumPy:", ok)
if not ok:
    raise SystemExit(f"lazy_forall.py: differs from NumPy on locale {pg.here}")

"""Count the messages of one Jacobi sweep with pg.comm_diagnostics().

    pgas run -n 4 docs/examples/diagnostics.py
"""

import numpy as np

import pgas as pg

n = 64
G = np.random.default_rng(1).random((n, n))
A = pg.from_numpy(G, dist=pg.Cyclic())
B = pg.zeros((n, n), dist=pg.Cyclic())

with pg.comm_diagnostics() as d:                 # collective on entry and on exit
    B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])

H = np.zeros((n, n))
H[1:-1, 1:-1] = 0.25 * (G[:-2, 1:-1] + G[2:, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:])
ok = np.allclose(B.to_numpy(), H)
if pg.here == 0:                                  # the counts are the same on every locale
    print(d)
    print(d.report())
    print("messages from row locale to column locale:")
    print(d.matrix)
    print("matches NumPy:", ok)
if not ok:
    raise SystemExit("diagnostics.py: differs from NumPy")

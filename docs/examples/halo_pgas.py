"""The same 1-D Jacobi relaxation in pgas: no ghost cells, no ranks, no sends.

    pgas run -n 2 docs/examples/halo_pgas.py
"""

import numpy as np

import pgas as pg

n, sweeps = 1000, 100

u = pg.from_numpy(np.sin(np.linspace(0, np.pi, n)))    # Block: one contiguous share per locale
new = u.copy()

for sweep in range(sweeps):
    new[1:-1] = 0.5 * (u[:-2] + u[2:])                 # the halo exchange is planned for you
    u, new = new, u                                    # the end points are never written

whole = u.to_numpy()
G = np.sin(np.linspace(0, np.pi, n))
for sweep in range(sweeps):
    G[1:-1] = 0.5 * (G[:-2] + G[2:])
ok = np.allclose(whole, G)
if pg.here == 0:
    print(f"pgas: {pg.num_locales} locales, u[{n // 2}] = {whole[n // 2]:.6f}, matches NumPy: {ok}")
if not ok:
    raise SystemExit("halo_pgas.py: differs from NumPy")

"""A periodic 27-point stencil in 3-D reusing intermediate shifts: ``pgas run -n 4 examples/stencil27.py``.

The 27-point box average ``u_new[x] = mean of u over the 3 x 3 x 3 box at x``
is separable: sum the +1 / -1 neighbours along axis 0, then shift THAT sum
along axis 1 and add, then along axis 2.  Six shifts (two per axis, one
``pg.pshift`` per axis, each reusing the previous stage's result) instead of
26 separate ones: the reuse of intermediate shifted results of the paper's
27-point example.  The ghost-cell version fills faces, edges and corners with
one ``update_ghosts(corners=True)`` and sums 27 views of the padded block.
Both are checked against NumPy.

    python examples/stencil27.py [n] [sweeps]
"""

import itertools
import sys

import numpy as np

import pgas as pg


def numpy_sweeps(G, sweeps):
    for _ in range(sweeps):
        S = G
        for ax in range(3):
            S = S + np.roll(S, 1, ax) + np.roll(S, -1, ax)
        G = S / 27
    return G


def pshift_sweeps(G, sweeps):
    u = pg.from_numpy(G)
    plans = [pg.pshift_setup(u, [(1, ax), (-1, ax)]) for ax in range(3)]
    for _ in range(sweeps):
        S = u
        for plan in plans:                          # each stage shifts the previous stage's sum
            up, down = plan(S)
            S = S + up + down
        u = S / 27
    for plan in plans:
        plan.free()
    return u


def ghost_sweeps(G, sweeps):
    u = pg.from_numpy(G, ghosts=(1, 1, 1))
    for _ in range(sweeps):
        u.update_ghosts(periodic=True, corners=True)
        p = u.local_with_ghosts
        nx, ny, nz = u.local.shape
        total = np.zeros_like(u.local)
        for i, j, k in itertools.product(range(3), repeat=3):
            total += p[i:i + nx, j:j + ny, k:k + nz]
        u.local[...] = total / 27
    return u


def check(n=12, sweeps=3) -> dict:
    """Collective: max |error| of each way against NumPy."""
    G = np.random.default_rng(1).random((n, n + 1, n + 2))
    want = numpy_sweeps(G, sweeps)
    return {name: float(np.abs(f(G, sweeps).to_numpy() - want).max())
            for name, f in (("pshift", pshift_sweeps), ("ghosts", ghost_sweeps))}


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 24
    sweeps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    errors = check(n, sweeps)
    if pg.here == 0:
        for name, err in errors.items():
            print(f"{name:7s} max |error| vs NumPy: {err:.2e}")
    assert max(errors.values()) < 1e-12

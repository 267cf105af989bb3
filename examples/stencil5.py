"""A periodic 5-point stencil in 2-D, three ways: run it with ``pgas run -n 4 examples/stencil5.py``.

``u_new = (u + N + S + E + W) / 5`` on a torus, where N, S, E, W are the four
neighbours.  The same sweeps run

1. with four sequential ``pg.cshift`` calls (four exchanges per sweep),
2. with one ``pg.pshift`` set up once (``pg.pshift_setup``): the four shifts'
   data travels in ONE exchange, one message per neighbouring locale pair,
3. with ghost cells: ``pg.zeros(..., ghosts=(1, 1))``, one ``update_ghosts``
   per sweep, and NumPy on views of the padded local block (no shifted copies
   at all),

and each result is checked against NumPy's ``np.roll`` version.

    python examples/stencil5.py [n] [sweeps]
"""

import sys

import numpy as np

import pgas as pg

SHIFTS = [(1, 0), (-1, 0), (1, 1), (-1, 1)]


def numpy_sweeps(G, sweeps):
    for _ in range(sweeps):
        G = (G + sum(np.roll(G, -s, ax) for s, ax in SHIFTS)) / 5
    return G


def cshift_sweeps(G, sweeps):
    u = pg.from_numpy(G)
    for _ in range(sweeps):
        n, s, e, w = (pg.cshift(u, sh, ax) for sh, ax in SHIFTS)
        u = (u + n + s + e + w) / 5
    return u


def pshift_sweeps(G, sweeps):
    u = pg.from_numpy(G)
    nbrs = [pg.empty_like(u) for _ in SHIFTS]
    with pg.pshift_setup(u, SHIFTS) as plan:
        for _ in range(sweeps):
            n, s, e, w = plan(u, out=nbrs)
            u = (u + n + s + e + w) / 5
    return u


def ghost_sweeps(G, sweeps):
    u = pg.from_numpy(G, ghosts=(1, 1))
    for _ in range(sweeps):
        u.update_ghosts(periodic=True, corners=False)
        p = u.local_with_ghosts
        u.local[...] = (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]) / 5
    return u


def check(n=32, sweeps=4) -> dict:
    """Collective: max |error| of each way against NumPy."""
    G = np.random.default_rng(0).random((n, n))
    want = numpy_sweeps(G, sweeps)
    return {name: float(np.abs(f(G, sweeps).to_numpy() - want).max())
            for name, f in (("cshift", cshift_sweeps), ("pshift", pshift_sweeps), ("ghosts", ghost_sweeps))}


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    sweeps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    errors = check(n, sweeps)
    if pg.here == 0:
        for name, err in errors.items():
            print(f"{name:7s} max |error| vs NumPy: {err:.2e}")
    assert max(errors.values()) < 1e-12

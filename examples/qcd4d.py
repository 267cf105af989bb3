"""A QCD-like update on a 4-D periodic lattice: ``pgas run -n 4 examples/qcd4d.py``.

A real scalar field ``phi`` hops along links ``U[mu]`` (fixed, like a gauge
field) in all four directions::

    D phi(x) = sum_mu U[mu](x) phi(x + mu) + U[mu](x - mu) phi(x - mu)
    phi     <- (phi + kappa D phi) / (1 + 8 kappa)

Each step needs the eight neighbours ``phi(x +- mu)``: ONE ``pg.pshift`` of
eight shifts of a rank-4 array (the paper's QCD case), set up once and run
every step, with all eight shifts' data in one exchange.  The backward links
``U[mu](x - mu)`` are shifted once before the loop.  A ghost-cell version
(faces only: the operator has no diagonal terms) does the same with one
``update_ghosts`` per step.  Both are checked against NumPy.

    python examples/qcd4d.py [L] [steps]
"""

import sys

import numpy as np

import pgas as pg

KAPPA = 0.1
SHIFTS = [(s, mu) for mu in range(4) for s in (1, -1)]


def numpy_steps(phi, U, steps):
    Ub = [np.roll(U[mu], 1, mu) for mu in range(4)]
    for _ in range(steps):
        D = sum(U[mu] * np.roll(phi, -1, mu) + Ub[mu] * np.roll(phi, 1, mu) for mu in range(4))
        phi = (phi + KAPPA * D) / (1 + 8 * KAPPA)
    return phi


def pshift_steps(phi0, U0, steps):
    phi = pg.from_numpy(phi0)
    U = [pg.from_numpy(u) for u in U0]
    Ub = [pg.cshift(U[mu], -1, mu) for mu in range(4)]        # U[mu](x - mu), once
    nbrs = [pg.empty_like(phi) for _ in SHIFTS]
    with pg.pshift_setup(phi, SHIFTS) as plan:
        for _ in range(steps):
            plan(phi, out=nbrs)                               # the eight neighbours, one exchange
            D = U[0] * nbrs[0] + Ub[0] * nbrs[1]
            for mu in range(1, 4):
                D = D + U[mu] * nbrs[2 * mu] + Ub[mu] * nbrs[2 * mu + 1]
            phi = (phi + KAPPA * D) / (1 + 8 * KAPPA)
    return phi


def ghost_steps(phi0, U0, steps):
    phi = pg.from_numpy(phi0, ghosts=(1, 1, 1, 1))
    U = [pg.from_numpy(u) for u in U0]
    Ub = [pg.cshift(U[mu], -1, mu) for mu in range(4)]
    inner = (slice(1, -1),) * 4
    for _ in range(steps):
        phi.update_ghosts(periodic=True, corners=False)
        p = phi.local_with_ghosts
        D = np.zeros_like(phi.local)
        for mu in range(4):
            up = tuple(slice(2, None) if d == mu else inner[d] for d in range(4))
            dn = tuple(slice(None, -2) if d == mu else inner[d] for d in range(4))
            D += U[mu].local * p[up] + Ub[mu].local * p[dn]
        phi.local[...] = (p[inner] + KAPPA * D) / (1 + 8 * KAPPA)
    return phi


def check(L=6, steps=3) -> dict:
    """Collective: max |error| of each way against NumPy."""
    rng = np.random.default_rng(2)
    shape = (L, L, L + 2, L)
    phi, U = rng.random(shape), [rng.uniform(-1, 1, shape) for _ in range(4)]
    want = numpy_steps(phi, U, steps)
    return {name: float(np.abs(f(phi, U, steps).to_numpy() - want).max())
            for name, f in (("pshift", pshift_steps), ("ghosts", ghost_steps))}


if __name__ == "__main__":
    L = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    errors = check(L, steps)
    if pg.here == 0:
        for name, err in errors.items():
            print(f"{name:7s} max |error| vs NumPy: {err:.2e}")
    assert max(errors.values()) < 1e-12

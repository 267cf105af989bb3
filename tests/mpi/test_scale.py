"""A small set of statements at any locale count, run by the suite at 1-4 locales and
again at 8 and 16 oversubscribed locales (tests/run_mpi.py's scale stage): tiny
arrays, every distribution, against NumPy."""

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg

P = pg.num_locales
DISTS = {"block": pg.Block(), "cyclic": pg.Cyclic(), "bc2": pg.BlockCyclic(2)}


@pytest.mark.parametrize("kind", sorted(DISTS))
def test_stencil_sweeps(kind):
    n = 2 * P + 3
    g = np.random.default_rng(1).random((n, n))
    A = pg.from_numpy(g, dist=DISTS[kind])
    B = pg.zeros((n, n), dist=DISTS[kind])
    for _ in range(3):
        B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
        A[1:-1, 1:-1] = B[1:-1, 1:-1]
        b = g.copy()
        b[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
        g = b
    assert_matches(A, g)


@pytest.mark.parametrize("kind", sorted(DISTS))
def test_shifted_slices_and_mixed_distributions(kind):
    n = 3 * P + 1
    g = np.arange(n, dtype=np.int64)
    A = pg.from_numpy(g, dist=DISTS[kind])
    C = pg.zeros(n, dtype=np.int64, dist=pg.Cyclic() if kind != "cyclic" else pg.Block())
    C[2:] = A[:-2] * 3 + A[1:-1]
    A[::-1] = C                               # reversed, across distributions
    c = np.zeros(n, np.int64)
    c[2:] = g[:-2] * 3 + g[1:-1]
    assert_matches(C, c)
    assert_matches(A, c[::-1])


@pytest.mark.parametrize("owner", ["write", "cost"])
def test_reduction_forall(owner):
    n, m = P + 2, 2 * P + 1
    a = np.arange(n * m, dtype=float).reshape(n, m)
    y = np.arange(m, dtype=float)
    A = pg.from_numpy(a, dist=pg.Cyclic())
    Y = pg.from_numpy(y, dist=pg.Block())
    X = pg.zeros(n, dist=pg.BlockCyclic(2))
    def body(i, j):
        X[i] += A[i, j] * Y[j]

    pg.config(owner=owner)
    try:
        pg.forall((range(n), range(m)), body)
    finally:
        pg.config()
    assert_matches(X, a @ y)
    total = X.sum()
    collective_verdict(np.isclose(total, (a @ y).sum()), f"sum {total}")

"""Constants may come first in a forall body's expressions (``0.25 * (A[i-1] + ...)``)."""

import numpy as np
import pytest

import pgas as pg
from util import assert_matches


@pytest.mark.parametrize("dist", [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3)])
def test_constant_before_subscripts(dist):
    n = 11
    G = np.arange(n * n, dtype=float).reshape(n, n)
    A = pg.from_numpy(G, dist=dist)
    B = pg.zeros((n, n), dist=dist)

    def body(i, j):
        B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        A[i, j] = 2 - B[i, j] * 3

    pg.forall((range(1, n - 1), range(1, n - 1)), body)
    H = np.zeros((n, n))
    H[1:-1, 1:-1] = 0.25 * (G[:-2, 1:-1] + G[2:, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:])
    G[1:-1, 1:-1] = 2 - H[1:-1, 1:-1] * 3
    assert_matches(B, H)
    assert_matches(A, G)

"""Unassigned expressions keep NumPy's eager meaning: they are materialised before
any collective write to an array they read (statements, scalar writes, in-place
ufuncs, update, scatter)."""

import numpy as np

import pgas as pg
from util import assert_matches


def test_pending_expressions_see_values_before_later_writes():
    G = np.arange(10.0)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    B = A[1:] + A[:-1]
    A[3] = 100.0
    C = A[1:] * 2
    A += A
    D = A[:5] - 1
    mine = np.array([0]) if pg.here == 0 else np.array([], dtype=np.int64)
    A.update(mine, np.ones(len(mine)))
    E = A[::2] + 0
    A.scatter(mine, np.full(len(mine), -7.0))
    G2 = G.copy()
    e1 = G[1:] + G[:-1]
    G2[3] = 100.0
    e2 = G2[1:] * 2
    G2 += G2
    e3 = G2[:5] - 1
    G2[0] += 1.0
    e4 = G2[::2] + 0
    G2[0] = -7.0
    assert_matches(A, G2)
    for lazy, expect in ((B, e1), (C, e2), (D, e3), (E, e4)):
        assert_matches(lazy.eval(), expect)

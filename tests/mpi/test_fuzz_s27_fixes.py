"""Defects found by fuzzing statements against NumPy (session s27, tests/mpi/test_fuzz_s27.py),
each with the NumPy behaviour the fix restores."""

import numpy as np
import pytest

import pgas as pg
from util import assert_matches

DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]


@pytest.mark.parametrize("dist", DISTS)
def test_empty_slice_of_a_new_axis_writes_nothing(dist):
    # A[None][0:0] = v raised PlanError ("the write ignores loop variable(s) [0]"); NumPy writes nothing
    G = np.arange(6.0)
    A = pg.from_numpy(G, dist=dist)
    A[None][0:0] = 1.0
    A[None, 1:][0:0, :] = A[None, :-1][0:0, :] * 2.0
    V = A[:, None][:, 0:0]
    V += 1.0
    np.add(V, 1.0, out=V)
    assert_matches(A, G)
    G2 = np.arange(12).reshape(3, 4)
    B = pg.from_numpy(G2, dist=dist)
    B[:, None][1:, 0:0, ::2] = 7
    B[None][0:0] = B[None]
    assert_matches(B, G2)

"""``np.add.at(A, idx, v)`` and the other ``ufunc.at`` on a DistArray: a collective
one-way update in which each locale passes its own indices and values; the result is
NumPy's ``at`` applied with every locale's contributions once (repeats accumulate)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import assert_matches, raises_alike

import pgas as pg

P = pg.num_locales
ME = pg.here
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=12)


def every_locale(make):
    """``make(r)`` for every locale ``r`` (each computes every locale's input alike)."""
    return [make(r) for r in range(P)]


UFUNCS = [(np.add, np.int64), (np.add, np.float64), (np.maximum, np.int64), (np.minimum, np.float64),
          (np.bitwise_xor, np.int32), (np.bitwise_or, np.uint8), (np.logical_and, np.bool_),
          (np.multiply, np.int64), (np.multiply, np.float64), (np.multiply, np.complex128), (np.multiply, np.uint8),
          (np.multiply, np.bool_), (np.add, np.bool_)]


@pytest.mark.parametrize("uf,dtype", UFUNCS, ids=lambda x: getattr(x, "__name__", str(x)))
def test_ufunc_at_applies_every_locales_contributions(uf, dtype):
    n = 23
    rng0 = np.random.default_rng(5)
    start = (rng0.integers(0, 2, n) if dtype == np.bool_ else rng0.integers(-9, 9, n)).astype(dtype)
    if uf is np.multiply and np.dtype(dtype).kind in "fc":    # powers of two: every product exact in any order
        def values(r):
            return np.random.default_rng(100 + r).choice([0.5, 1.0, 2.0, -1.0, -2.0], 3 + 5 * r).astype(dtype)
    else:
        def values(r):
            return np.random.default_rng(100 + r).integers(0, 7, 3 + 5 * r).astype(dtype)
    parts = every_locale(lambda r: (np.random.default_rng(r).integers(-n, n, 3 + 5 * r), values(r)))
    A = pg.from_numpy(start, dist=pg.Cyclic() if uf is np.maximum else pg.Block())
    uf.at(A, *parts[ME])
    want = start.copy()
    for idx, v in parts:
        uf.at(want, idx, v)
    assert_matches(A, want)


def test_two_dimensional_broadcast_and_scalar_values():
    G = np.arange(20.0).reshape(4, 5)
    A = pg.from_numpy(G)
    rows, cols = np.array([[0], [3], [3]]), np.array([1, 4])       # broadcast to (3, 2), a repeated row
    np.add.at(A, (rows, cols), np.array([[1.0, 2.0]]))
    np.maximum.at(A, (np.array([ME % 4]), np.array([0])), 100.0)
    want = G.copy()
    for r in range(P):
        np.add.at(want, (rows, cols), np.array([[1.0, 2.0]]))
        np.maximum.at(want, (np.array([r % 4]), np.array([0])), 100.0)
    assert_matches(A, want)


def test_errors_raised_on_every_locale():
    A = pg.zeros(6, dtype=np.int64)
    raises_alike(TypeError, lambda: np.subtract.at(A, [0], 2), "subtract.at")
    raises_alike(TypeError, lambda: np.true_divide.at(A, [0], 2), "true_divide.at")
    raises_alike(IndexError, lambda: np.add.at(A, [6] if ME == P - 1 else [0], 1), "an index out of range")
    raises_alike(TypeError, lambda: np.add.at(A, [0], 1.5), "float values into an int array")
    raises_alike(ValueError, lambda: np.add.at(A, [0, 1], [1, 2, 3]), "values that do not broadcast")
    B = pg.zeros((2, 3))
    raises_alike(IndexError, lambda: np.add.at(B, np.array([0]), 1.0), "whole rows of an n-D array")
    raises_alike(IndexError, lambda: np.add.at(A, np.array([0.5]), 1), "float indices")
    assert_matches(A, np.zeros(6, np.int64))


@SETTINGS
@given(n=st.integers(1, 30), seed=st.integers(0, 2**16),
       op=st.sampled_from([np.add, np.multiply, np.minimum, np.maximum]))
def test_random_updates_match_numpy(n, seed, op):
    start = np.random.default_rng(seed).integers(-50, 50, n)
    parts = every_locale(lambda r: (np.random.default_rng(seed + r).integers(-n, n, (r + seed) % 9),
                                    np.random.default_rng(seed + 1000 + r).integers(-50, 50, (r + seed) % 9)))
    A = pg.from_numpy(start, dist=pg.BlockCyclic(2))
    op.at(A, *parts[ME])
    want = start.copy()
    for idx, v in parts:
        op.at(want, idx, v)
    assert_matches(A, want)


def test_update_multiply_one_sided_and_collective():
    """op "multiply": A.update (collective, repeats included) and A.update_one (one-sided,
    atomic at the owner: every locale's factor counts once)."""
    A = pg.from_numpy(np.arange(1, 9, dtype=np.int64))
    A.update(np.array([0, 7, 7]), np.array([3, 2, 5]), "multiply")
    A.update_one(1, 2, "multiply")
    pg.barrier()
    want = np.arange(1, 9, dtype=np.int64)
    want[0] *= 3 ** P
    want[7] *= 10 ** P
    want[1] *= 2 ** P
    assert_matches(A, want)

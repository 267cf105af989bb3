"""NumPy's advanced indexing on distributed arrays (pgas.array.fancy) against NumPy:
index arrays and lists mixed with slices, integers, None and ..., NumPy boolean masks,
distributed masks and distributed integer indices; assignment through them with
repeated indices (the last value wins, as in NumPy) and ``+=`` (not accumulated);
errors raised on every locale alike."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.layout import grids
from util import assert_matches, collective_verdict

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=15)
DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]


@st.composite
def cases(draw):
    """A global array, a distribution (any grid), and a replicated advanced key."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim)))
    grid = draw(st.sampled_from([None] + grids(P, ndim)))
    dist = draw(st.sampled_from([pg.Block(grid=grid), pg.Cyclic(grid=grid), pg.BlockCyclic(2, grid=grid)]))
    G = np.random.default_rng(draw(st.integers(0, 99))).integers(-50, 50, size=shape).astype(float)
    key = []
    arrays = draw(st.integers(1, ndim))          # how many axes get an index array
    axes = draw(st.permutations(range(ndim)))[:arrays]
    ishape = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=2)))
    for d in range(ndim):
        if d in axes:
            key.append(draw(st.lists(st.integers(-shape[d], shape[d] - 1), min_size=int(np.prod(ishape)),
                                     max_size=int(np.prod(ishape)))))
            key[-1] = np.array(key[-1], dtype=np.int64).reshape(ishape)
        else:
            key.append(draw(st.sampled_from([slice(None), slice(None, None, -1), slice(1, None), 0])))
    if draw(st.booleans()) and ndim > 1:
        key = [np.asarray(G > draw(st.integers(-50, 50)))] if draw(st.booleans()) else key
    return G, dist, tuple(key)


@SETTINGS
@given(cases())
def test_get_matches_numpy(case):
    G, dist, key = case
    A = pg.from_numpy(G, dist=dist)
    want = G[key]
    if want.ndim == 0:
        return
    R = A[key]
    assert_matches(R, want)


@SETTINGS
@given(cases(), st.booleans())
def test_set_with_repeats_matches_numpy(case, scalar):
    G, dist, key = case
    A = pg.from_numpy(G, dist=dist)
    H = G.copy()
    n = H[key].shape
    if not n:
        return
    value = 7.5 if scalar else np.arange(np.prod(n), dtype=float).reshape(n)
    A[key] = value
    H[key] = value
    assert_matches(A, H)
    A[key] += 1                          # A[key] = A[key] + 1: repeats are not accumulated
    H[key] += 1
    assert_matches(A, H)


@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_distributed_masks(dist):
    G = np.arange(30.).reshape(5, 6) - 11
    A = pg.from_numpy(G, dist=dist)
    M = pg.from_numpy(G % 4 == 1, dist=pg.Cyclic())            # another distribution than A's
    assert_matches(A[M], G[G % 4 == 1])
    assert_matches(A[A > 3], G[G > 3])
    assert_matches(A.T[A.T < 0], G.T[G.T < 0])                   # a view and a mask expression
    assert_matches(A[A > 100], G[G > 100])                       # nothing selected
    H = G.copy()
    A[A < 0] = 0.5
    H[H < 0] = 0.5
    A[M] = np.arange(np.count_nonzero(G % 4 == 1)) * 10.0
    H[G % 4 == 1] = np.arange(np.count_nonzero(G % 4 == 1)) * 10.0
    assert_matches(A, H)
    with pytest.raises(ValueError, match="cannot assign 2 input values"):
        A[M] = [1.0, 2.0]
    with pytest.raises(IndexError, match="did not match"):
        A[pg.from_numpy(np.ones(30, bool), dist=dist)]


@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_distributed_integer_index(dist):
    x = np.arange(11.) * 3
    X = pg.from_numpy(x, dist=dist)
    idx = np.array([[10, -1, 0], [4, 4, 2]])
    I = pg.from_numpy(idx, dist=pg.Cyclic())
    R = X[I]
    assert R.shape == idx.shape and R.dist == I.dist
    assert_matches(R, x[idx])
    assert_matches(X[::-2][pg.from_numpy(np.array([0, 5, 1]), dist=dist)], x[::-2][[0, 5, 1]])
    X[I] = np.arange(6.).reshape(2, 3)                           # 4 repeated: the last value wins
    x[idx] = np.arange(6.).reshape(2, 3)
    assert_matches(X, x)
    X[I] = pg.from_numpy(-np.arange(6.).reshape(2, 3), dist=dist)
    x[idx] = -np.arange(6.).reshape(2, 3)
    assert_matches(X, x)
    with pytest.raises(IndexError, match="out of bounds"):
        X[pg.from_numpy(np.array([0, 11]), dist=dist)]
    with pytest.raises(NotImplementedError, match="1-D arrays only"):
        pg.zeros((3, 3))[pg.from_numpy(np.array([0, 1]))]


def test_errors_on_every_locale():
    A = pg.from_numpy(np.arange(12.).reshape(3, 4))
    for key, err in [([0, 3], IndexError), ((slice(None), [4]), IndexError), ([[0, 1], [0]], ValueError),
                     (np.ones(5, bool), IndexError), ((pg.zeros(3, dtype=int), 0), NotImplementedError)]:
        with pytest.raises(err):
            A[key]
    with pytest.raises(ValueError):
        A[[0, 1]] = np.ones(3)                      # does not broadcast to (2, 4)
    collective_verdict(True)


def test_forall_still_refuses_index_arrays():
    A = pg.zeros(6)
    with pytest.raises(Exception, match="subscript .* must be an int or affine"):
        pg.forall(range(6), lambda i: A.__setitem__(i, A[[0, 1]][0]))

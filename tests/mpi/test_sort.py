"""Distributed sort, argsort, A.sort(), unique and searchsorted against NumPy's stable order,
on every distribution, with adversarial inputs (duplicates, all equal, sorted, reversed,
NaNs, empty locales)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.array.index import SUPPORTED_DTYPES
from pgas.array.sorting.samplesort import sample_sort
from util import assert_matches, collective_verdict

P = pg.num_locales
MPI_SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=8)
DISTS = {"block": pg.Block(), "cyclic": pg.Cyclic(), "bc1": pg.BlockCyclic(1), "bc3": pg.BlockCyclic(3),
         "bc16": pg.BlockCyclic(16)}
PATTERNS = ["random", "duplicates", "equal", "sorted", "reversed", "nans", "signed_zeros", "wide"]


def make(dtype, pattern, n, seed):
    """A NumPy array of ``n`` values of ``dtype`` following ``pattern`` (the same on every locale)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if pattern == "wide":
        x = rng.integers(-2**40, 2**40, n) if dtype.kind in "iu" else rng.standard_normal(n) * 1e6
    elif pattern == "equal":
        x = np.full(n, 3)
    else:
        x = rng.integers(-3, 4, n) if pattern != "random" else rng.integers(-1000, 1000, n)
    if dtype.kind == "c":
        x = x + 1j * rng.integers(-2, 3, n)
    x = np.asarray(x).astype(dtype) if dtype.kind != "i" else np.clip(x, np.iinfo(dtype).min, np.iinfo(dtype).max).astype(dtype)
    if pattern == "sorted":
        x = np.sort(x)
    elif pattern == "reversed":
        x = np.sort(x)[::-1].copy()
    elif pattern == "nans" and dtype.kind in "fc" and n:
        where = rng.random(n) < 0.3
        x[where] = np.nan
        if dtype.kind == "c" and n > 2:
            x[1] = complex(1, np.nan)
            x[2] = complex(np.nan, 2)
    elif pattern == "signed_zeros" and dtype.kind in "fc":
        x = np.where(rng.random(n) < 0.5, -0.0, 0.0).astype(dtype)
    return x


cases = st.tuples(st.sampled_from(SUPPORTED_DTYPES), st.sampled_from(PATTERNS), st.integers(0, 70),
                  st.sampled_from(sorted(DISTS)), st.sampled_from(sorted(DISTS)), st.integers(0, 2**16))


def exact(A, expected):
    assert_matches(A, expected, rtol=0.0, atol=0.0)


@MPI_SETTINGS
@given(cases)
def test_sort_argsort_match_numpy_stable(case):
    dtype, pattern, n, din, dout, seed = case
    x = make(dtype, pattern, n, seed)
    A = pg.from_numpy(x, dist=DISTS[din])
    S = pg.sort(A, dist=DISTS[dout])
    exact(S, np.sort(x, kind="stable"))
    I = pg.argsort(A, dist=DISTS[dout])
    exact(I, np.argsort(x, kind="stable").astype(np.int64))
    assert I.dtype == np.int64 and S.dtype == x.dtype


@MPI_SETTINGS
@given(cases)
def test_inplace_and_numpy_entry_points(case):
    dtype, pattern, n, din, _, seed = case
    x = make(dtype, pattern, n, seed)
    A = pg.from_numpy(x, dist=DISTS[din])
    B = A.copy()
    B.sort()
    exact(B, np.sort(x))
    assert B.layout.key == A.layout.key
    exact(np.sort(A), np.sort(x))
    exact(np.argsort(A), np.argsort(x, kind="stable").astype(np.int64))
    exact(A.argsort(), np.argsort(x, kind="stable").astype(np.int64))
    exact(A, x)                                            # the input is untouched


@MPI_SETTINGS
@given(cases, st.booleans())
def test_unique_matches_numpy(case, counts):
    dtype, pattern, n, din, dout, seed = case
    x = make(dtype, pattern, n, seed)
    A = pg.from_numpy(x, dist=DISTS[din])
    if counts:
        u, c = pg.unique(A, return_counts=True, dist=DISTS[dout])
        eu, ec = np.unique(x, return_counts=True)
        exact(u, eu)
        exact(c, ec.astype(np.int64))
    else:
        exact(np.unique(A), np.unique(x))


@MPI_SETTINGS
@given(cases, st.sampled_from(["left", "right"]), st.integers(0, 30))
def test_searchsorted_matches_numpy(case, side, m):
    dtype, pattern, n, din, dout, seed = case
    x = np.sort(make(dtype, pattern, n, seed))
    q = make(dtype, pattern, m, seed + 1)
    S = pg.from_numpy(x, dist=DISTS[din])
    Q = pg.from_numpy(q, dist=DISTS[dout]) if m else None
    if m:
        exact(pg.searchsorted(S, Q, side=side), np.searchsorted(x, q, side=side).astype(np.int64))
    got = pg.searchsorted(S, q, side=side)
    collective_verdict(np.array_equal(got, np.searchsorted(x, q, side=side)), lambda: f"{got}")
    if m:
        one = pg.searchsorted(S, q[0], side=side)
        collective_verdict(one == np.searchsorted(x, q[0], side=side), lambda: f"{one}")


@pytest.mark.parametrize("pattern", ["equal", "reversed", "duplicates"])
@pytest.mark.parametrize("dist", ["block", "cyclic"])
def test_buckets_stay_balanced(pattern, dist):
    """Keys are (value, global index), so even all-equal input splits evenly:
    no locale's bucket exceeds about 2 n / P (the regular-sampling bound)."""
    n = 3000
    x = make(np.float64, pattern, n, 1)
    A = pg.from_numpy(x, dist=DISTS[dist])
    from pgas.array.creation.layouts import owned_flat
    v, g, off, counts = sample_sort(A._flat_local, owned_flat(A.layout, pg.here), n)
    collective_verdict(sum(counts) == n and max(counts) <= 2 * n / P + 2 * P, lambda: f"bucket sizes {counts}")
    collective_verdict(np.array_equal(g, np.argsort(x, kind="stable")[off:off + len(g)]), "run")


@pytest.mark.parametrize("grid", ["rows", "cols", "default"])
def test_nd_sorts_along_whole_axes(grid):
    x = np.random.default_rng(3).integers(0, 5, (6, 7)).astype(np.float64)
    x[1, 2] = np.nan
    g = {"rows": (P, 1), "cols": (1, P), "default": None}[grid]
    A = pg.from_numpy(x, dist=pg.BlockCyclic(2, grid=g))
    for axis in (0, 1, -1):
        if A.layout.grid[axis] == 1:
            exact(pg.sort(A, axis=axis), np.sort(x, axis=axis))
            exact(pg.argsort(A, axis=axis), np.argsort(x, axis=axis, kind="stable").astype(np.int64))
            B = A.copy()
            B.sort(axis=axis)
            exact(B, np.sort(x, axis=axis))
        else:
            with pytest.raises(ValueError, match="split over"):
                pg.sort(A, axis=axis)
    exact(pg.sort(A, axis=None), np.sort(x, axis=None))
    exact(pg.argsort(A, axis=None), np.argsort(x, axis=None, kind="stable").astype(np.int64))
    u, c = pg.unique(A, return_counts=True)
    eu, ec = np.unique(x, return_counts=True)
    exact(u, eu)
    exact(c, ec.astype(np.int64))


def test_errors_alike_on_every_locale():
    A = pg.from_numpy(np.arange(5.0))
    with pytest.raises(TypeError, match="takes a DistArray"):
        pg.sort(np.arange(3))
    with pytest.raises(np.exceptions.AxisError):
        pg.sort(A, axis=1)
    with pytest.raises(ValueError, match="kind"):
        pg.sort(A, kind="bogus")
    with pytest.raises(NotImplementedError, match="return_counts only"):
        np.unique(A, return_index=True)
    with pytest.raises(ValueError, match="side"):
        pg.searchsorted(A, 1.0, side="middle")
    with pytest.raises(ValueError, match="1-D"):
        pg.searchsorted(pg.zeros((2, 2)), 1.0)
    M = pg.zeros((4, 4))
    with pytest.raises(np.exceptions.AxisError):
        M.sort(axis=None)

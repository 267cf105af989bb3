"""Distributed sort, argsort, A.sort(), unique and searchsorted against NumPy's stable order,
on every distribution, with adversarial inputs (duplicates, all equal, sorted, reversed,
NaNs, empty locales).

Also: heavy duplicates, NaNs, infinities and signed zeros, tiny arrays and 2-D row sorts."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import KEY_DTYPES as DTYPES
from util import a_dist, assert_matches, collective_verdict
from util import check_exactly as _check
from util import keys_of as _keys
from util import mixed_dists as _dists

import pgas as pg
from pgas.array.index import SUPPORTED_DTYPES
from pgas.array.sorting.samplesort import sample_sort, sort_values

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


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def _nan_of(dtype, negative: bool, payload: int):
    """A NaN of ``dtype`` with its sign bit set if ``negative`` and ``payload`` in its low bits."""
    u = np.array(np.nan, dtype=dtype).view(f"u{np.dtype(dtype).itemsize}")
    u |= np.array(payload, dtype=u.dtype)
    if negative:
        u |= np.array(1, dtype=u.dtype) << np.array(8 * u.itemsize - 1, dtype=u.dtype)
    return u.view(dtype)[()]


@settings(MPI_SETTINGS, max_examples=40)
@given(st.sampled_from(SUPPORTED_DTYPES), st.one_of(st.integers(0, 2 * P + 1), st.integers(0, 400)),
       st.sampled_from(["none", "+0", "-0", "both"]), st.sampled_from(["none", "quiet", "-nan", "payload", "mixed"]),
       st.sampled_from(sorted(DISTS)), st.sampled_from(sorted(DISTS)), st.integers(0, 2**16))
def test_sorts_keep_numpy_stable_order_bit_for_bit(dtype, n, zeros, nans, din, dout, seed):
    """pg.sort and A.sort() (values only, by np.sort where no equal values differ in bits) give
    np.sort(kind="stable")'s bits: the signs of zeros in input order, each NaN's bit pattern
    where it lands; pg.argsort gives the stable order; unique's values and counts agree."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    x = make(dtype, "duplicates" if seed % 2 else "wide", n, seed)
    if dtype.kind == "f" and n:
        where = rng.integers(0, 4, n)
        if zeros != "none":
            signs = {"+0": [False], "-0": [True], "both": [False, True]}[zeros]
            x[where == 1] = np.where(rng.choice(signs, n), -0.0, 0.0)[where == 1]
        if nans != "none":
            pats = {"quiet": [(False, 0)], "-nan": [(True, 0)], "payload": [(False, 5)],
                    "mixed": [(False, 0), (True, 0), (False, 5)]}[nans]
            kinds = rng.integers(0, len(pats), n)
            for k, (neg, pay) in enumerate(pats):
                x[(where == 2) & (kinds == k)] = _nan_of(dtype, neg, pay)
    A = pg.from_numpy(x, dist=DISTS[din])
    want = np.sort(x, kind="stable")
    got = pg.sort(A, dist=DISTS[dout]).to_numpy()
    collective_verdict(np.array_equal(_bits(got), _bits(want)), lambda: f"pg.sort {got} vs {want}")
    B = A.copy()
    B.sort()
    got = B.to_numpy()
    collective_verdict(np.array_equal(_bits(got), _bits(want)), lambda: f"A.sort() {got} vs {want}")
    exact(pg.argsort(A, dist=DISTS[dout]), np.argsort(x, kind="stable").astype(np.int64))
    u, c = pg.unique(A, return_counts=True)
    eu, ec = np.unique(x, return_counts=True)
    collective_verdict(np.array_equal(u.to_numpy(), eu, equal_nan=True) and np.array_equal(c.to_numpy(), ec),
                       "unique")


@pytest.mark.parametrize("pattern", ["equal", "reversed", "duplicates"])
@pytest.mark.parametrize("dist", ["block", "cyclic"])
def test_buckets_stay_balanced(pattern, dist):
    """Keys are (value, global index), or for values alone (value, locale, position in its
    sorted run), so even all-equal input splits evenly: no locale's bucket exceeds about
    2 n / P (the regular-sampling bound)."""
    n = 3000
    x = make(np.float64, pattern, n, 1)
    A = pg.from_numpy(x, dist=DISTS[dist])
    from pgas.array.creation.layouts import owned_flat
    v, g, off, counts = sample_sort(A._flat_local, owned_flat(A.layout, pg.here), n)
    collective_verdict(sum(counts) == n and max(counts) <= 2 * n / P + 2 * P, lambda: f"bucket sizes {counts}")
    collective_verdict(np.array_equal(g, np.argsort(x, kind="stable")[off:off + len(g)]), "run")
    v, off, counts = sort_values(A._flat_local, n, lambda: owned_flat(A.layout, pg.here))
    collective_verdict(sum(counts) == n and max(counts) <= 2 * n / P + 2 * P, lambda: f"values: bucket sizes {counts}")
    collective_verdict(np.array_equal(v, np.sort(x)[off:off + len(v)]), "values: run")


@pytest.mark.parametrize("kind", ["block", "cyclic", "bc2"])
@pytest.mark.parametrize("grid", ["rows", "cols", "default"])
def test_nd_sorts_along_every_axis(grid, kind):
    """Along an axis held whole (a local sort) or split over locales (gathered whole on a
    grid of the same kind, sorted, copied back): NumPy's stable order, in A's layout."""
    x = np.random.default_rng(3).integers(0, 5, (6, 7)).astype(np.float64)
    x[1, 2] = np.nan
    g = {"rows": (P, 1), "cols": (1, P), "default": None}[grid]
    dist = {"block": pg.Block(g), "cyclic": pg.Cyclic(g), "bc2": pg.BlockCyclic(2, grid=g)}[kind]
    A = pg.from_numpy(x, dist=dist)
    for axis in (0, 1, -1, -2):
        S = pg.sort(A, axis=axis)
        exact(S, np.sort(x, axis=axis))
        collective_verdict(S.layout.key == A.layout.key, "the sorted copy keeps the input's layout")
        exact(pg.argsort(A, axis=axis), np.argsort(x, axis=axis, kind="stable").astype(np.int64))
        exact(np.sort(A, axis=axis), np.sort(x, axis=axis))
        B = A.copy()
        B.sort(axis=axis)
        exact(B, np.sort(x, axis=axis))
    exact(pg.sort(A, axis=None), np.sort(x, axis=None))
    exact(pg.argsort(A, axis=None), np.argsort(x, axis=None, kind="stable").astype(np.int64))
    u, c = pg.unique(A, return_counts=True)
    eu, ec = np.unique(x, return_counts=True)
    exact(u, eu)
    exact(c, ec.astype(np.int64))


@MPI_SETTINGS
@given(st.data(), st.sampled_from([np.float64, np.int32, np.bool_]))
def test_sort_along_any_axis_of_3d(data, dtype):
    shape = tuple(data.draw(st.lists(st.integers(0, 6), min_size=3, max_size=3)))
    axis = data.draw(st.integers(-3, 2))
    x = np.random.default_rng(sum(shape)).integers(-3, 4, shape).astype(dtype)
    A = pg.from_numpy(x, dist=data.draw(a_dist(3)))
    exact(pg.sort(A, axis=axis), np.sort(x, axis=axis, kind="stable"))
    exact(pg.argsort(A, axis=axis), np.argsort(x, axis=axis, kind="stable").astype(np.int64))
    A.sort(axis=axis)
    exact(A, np.sort(x, axis=axis, kind="stable"))


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
    with pytest.raises(TypeError):                     # NumPy's ndarray.sort(axis=None) raises TypeError
        M.sort(axis=None)


def test_views_and_expressions_sort_as_numpy():
    """np.sort, np.argsort, np.unique and pg's of views (strided, reversed, transposed) and of
    lazy expressions: NumPy's stable order of the same values, bit for bit."""
    rng = np.random.default_rng(7)
    for n in [0, 1, P, 5 * P + 3, 200]:
        g = np.where(rng.random(n) < .3, -0.0, rng.integers(-3, 3, n) * 1.0)
        g[rng.random(n) < .1] = np.nan
        for d in _dists(1):
            A = pg.from_numpy(g, dist=d)
            for what, V, x in [("A[::2]", A[::2], g[::2]), ("A[::-3]", A[::-3], g[::-3]), ("A * 2", A * 2, g * 2)]:
                _check(np.sort(V), np.sort(x, kind="stable"), f"np.sort({what}) n={n} {d}")
                _check(pg.argsort(V), np.argsort(x, kind="stable"), f"pg.argsort({what}) n={n} {d}")
                vals, counts = pg.unique(abs(V), return_counts=True)
                wv, wc = np.unique(abs(x), return_counts=True)
                _check(vals, wv, f"unique values {what}")
                _check(counts, wc, f"unique counts {what}")
    g = rng.integers(-5, 5, (7, 6)).astype(np.int32)
    for d in _dists(2):
        B = pg.from_numpy(g, dist=d)
        for axis in [None, 0, 1, -1]:
            _check(np.sort(B.T, axis=axis), np.sort(g.T, axis=axis, kind="stable"), f"np.sort(B.T, {axis}) {d}")
            _check(np.argsort(B[1:, ::2], axis=axis), np.argsort(g[1:, ::2], axis=axis, kind="stable"),
                   f"np.argsort(B[1:, ::2], {axis}) {d}")


SMALL = settings(max_examples=10)


# ---------------------------------------------------------------------------
# 1. Sorting, argsort (stable), unique, searchsorted
# ---------------------------------------------------------------------------
@SMALL
@given(keys=st.lists(st.integers(-3, 3), min_size=0, max_size=3 * P + 4),
       dtype=st.sampled_from(DTYPES), dist=a_dist(1), out=st.sampled_from([None, "cyclic", "bc"]))
def test_sort_argsort_unique_match_numpy_with_heavy_duplicates(keys, dtype, dist, out):
    a = _keys(keys, dtype)
    A = pg.from_numpy(a, dist=dist)
    od = {None: None, "cyclic": pg.Cyclic(), "bc": pg.BlockCyclic(2)}[out]
    _check(pg.sort(A, dist=od), np.sort(a, kind="stable"), "sort")
    _check(pg.argsort(A, dist=od), np.argsort(a, kind="stable"), "argsort")
    _check(pg.unique(A), np.unique(a), "unique")
    vals, counts = pg.unique(A, return_counts=True)
    wv, wc = np.unique(a, return_counts=True)
    _check(vals, wv, "unique values")
    _check(counts, wc, "unique counts")


def test_sort_and_argsort_of_nans_infs_and_signed_zeros():
    a = np.array([np.nan, -0.0, 0.0, 1.0, np.nan, -np.inf, 0.0, -0.0, np.inf, -1.0, 2.5])
    for d in _dists(1):
        A = pg.from_numpy(a, dist=d)
        _check(pg.argsort(A), np.argsort(a, kind="stable"), f"argsort {d}")
        S = pg.sort(A)
        _check(S.to_numpy(), np.sort(a, kind="stable"), f"sort {d}")   # stable: -0.0 before 0.0 as given
        vals, counts = pg.unique(A, return_counts=True)
        wv, wc = np.unique(a, return_counts=True)
        # the sign of the zero NumPy keeps depends on its (unstable) sort; compare values
        collective_verdict(np.array_equal(vals.to_numpy(), wv, equal_nan=True)
                           and np.array_equal(counts.to_numpy(), wc), f"unique {d}")


def test_sort_of_tiny_arrays_leaves_locales_empty():
    for n in range(0, P + 2):
        a = np.arange(n, dtype=np.float64)[::-1].copy()
        for d in _dists(1):
            A = pg.from_numpy(a, dist=d)
            _check(pg.sort(A), np.sort(a), f"sort n={n} {d}")
            _check(pg.argsort(A), np.argsort(a, kind="stable"), f"argsort n={n} {d}")
            _check(pg.unique(A), np.unique(a), f"unique n={n} {d}")
    A = pg.from_numpy(np.full(4 * P + 1, 7, np.int64), dist=pg.Cyclic())
    _check(pg.argsort(A), np.arange(4 * P + 1), "argsort all equal")


def test_row_sorts_of_2d_arrays_and_in_place_sort():
    b = np.array([[3, 1, 2, 0, 1], [5, 5, 1, 2, -1], [0, -1, 9, 9, 0]], float)
    for d in [pg.Block((P, 1)), pg.Cyclic((P, 1)), pg.BlockCyclic(2, (P, 1))]:
        B = pg.from_numpy(b, dist=d)
        for ax in (-1, 1, None):
            _check(pg.sort(B, axis=ax), np.sort(b, axis=ax, kind="stable"), f"sort axis {ax} {d}")
            _check(pg.argsort(B, axis=ax), np.argsort(b, axis=ax, kind="stable"), f"argsort axis {ax} {d}")
        _check(pg.unique(B), np.unique(b), "unique 2-D")
        C = pg.from_numpy(b.copy(), dist=d)
        C.sort()
        assert_matches(C, np.sort(b))


@SMALL
@given(keys=st.lists(st.integers(-4, 4), min_size=1, max_size=3 * P + 3),
       v=st.lists(st.integers(-6, 6), min_size=0, max_size=7),
       dist=a_dist(1), side=st.sampled_from(["left", "right"]))
def test_searchsorted_with_duplicates_and_values_outside(keys, v, dist, side):
    s = np.sort(np.array(keys, dtype=np.float64))
    v = np.array(v, dtype=np.float64)
    S = pg.from_numpy(s, dist=dist)
    _check(pg.searchsorted(S, v, side=side), np.searchsorted(s, v, side=side), "searchsorted")
    if v.size:
        V = pg.from_numpy(v, dist=pg.Cyclic())
        _check(pg.searchsorted(S, V, side=side), np.searchsorted(s, v, side=side), "searchsorted (dist v)")


def test_searchsorted_of_nan_and_signed_zero():
    s = np.sort(np.array([np.nan, -0.0, 0.0, 1.0, np.nan, -np.inf, np.inf]))
    v = np.array([np.nan, 0.0, -0.0, -5, 100, 1.0, np.inf, -np.inf])
    for d in _dists(1):
        S = pg.from_numpy(s, dist=d)
        for side in ("left", "right"):
            _check(pg.searchsorted(S, v, side=side), np.searchsorted(s, v, side=side), f"{d} {side}")

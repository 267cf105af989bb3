"""Hostile review (session 20) of the least-reviewed NumPy-facing parts: sample sort,
argsort, unique, searchsorted; redistribution between Block / Cyclic / BlockCyclic
and grids (tiny and zero-length axes); views of views with negative steps and
writes through them; reshape / transpose / concatenate / stack; reductions with
axis tuples, keepdims, dtype=, integer wrap-around, argmin/argmax ties, empty
arrays; cumsum / cumprod on every axis; matmul / dot / outer / vdot of odd shapes;
.npy / zarr / HDF5 round trips; random arrays the same at every locale count.
Each test compares with NumPy (bit for bit unless a float sum's order differs)."""

import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas import comm
from pgas.layout import grids
from util import a_dist, assert_matches, collective_verdict

P = pg.num_locales
me = pg.here

SMALL = settings(max_examples=10)


def _same(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return (got.shape == want.shape and got.dtype == want.dtype
            and np.array_equal(got, want, equal_nan=got.dtype.kind in "fc"))


def _check(got, want, what="") -> None:
    """Collective: a DistArray or a replicated value equals NumPy's exactly."""
    if isinstance(got, pg.DistArray):
        assert_matches(got, want)
        if got.dtype.kind == "f":            # the sign of zero too
            g = got.to_numpy()
            collective_verdict(np.array_equal(np.signbit(g), np.signbit(np.asarray(want))),
                               f"{what}: signs of zero differ: {g} vs {want}")
        return
    collective_verdict(_same(got, want), f"{what}: got {got!r}, expected {want!r}")


def _dists(nd):
    out = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]
    for i, g in enumerate(grids(P, nd)):             # one kind per grid, rotating
        out.append([pg.Block(g), pg.Cyclic(g), pg.BlockCyclic(3, g)][i % 3])
    return out


DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.int8, np.bool_]


def _keys(draw_list, dtype):
    a = np.array(draw_list, dtype=np.int64)
    if dtype == np.bool_:
        return (a % 2).astype(bool)
    return a.astype(dtype)


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


# ---------------------------------------------------------------------------
# 2. Redistribution, incl. sizes below the locale count and zero-length axes
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(0,), (2,), (7,), (0, 3), (3, 0), (1, 5), (5, 2)])
def test_redistribute_between_every_pair_of_distributions(shape):
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    for d1 in _dists(len(shape)):
        A = pg.from_numpy(a, dist=d1)
        for d2 in _dists(len(shape)):
            assert_matches(pg.redistribute(A, d2), a)


# ---------------------------------------------------------------------------
# 3. Views of views, negative steps, writes through them; shape functions
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("k", range(3 + len(grids(P, 2))))
def test_views_of_views_and_writes_through_them(k):
    d = _dists(2)[k]
    a = np.arange(42.0).reshape(6, 7)
    A = pg.from_numpy(a, dist=d)
    _check(A[::-1, 1:][1::2, ::-3].to_numpy(), a[::-1, 1:][1::2, ::-3], "view of view")
    _check(A[::-1].T[2:, ::-2].to_numpy(), a[::-1].T[2:, ::-2], "view of transpose")
    for op in (lambda X: X[::-1, 1:][1::2, ::-3].__setitem__(Ellipsis, -1.0),
               lambda X: X.__setitem__((slice(None, None, -2), slice(None, None, -3)), X[1::2, ::3] * 10),
               lambda X: X.__setitem__((slice(1, None), slice(None)), X[:-1, :] + 1),
               lambda X: X.__setitem__((slice(None), slice(None, None, -1)), X.copy() if isinstance(X, np.ndarray) else X)):
        B, w = pg.from_numpy(a.copy(), dist=d), a.copy()
        op(B)
        op(w)
        assert_matches(B, w)
    B, w = pg.from_numpy(a[:6, :6].copy(), dist=d), a[:6, :6].copy()
    B[...] = B.T
    w[...] = w.T.copy()
    assert_matches(B, w)
    _check(pg.transpose(A).to_numpy(), a.T)
    _check(pg.reshape(A, (3, 2, 7)).to_numpy(), a.reshape(3, 2, 7))
    _check(pg.reshape(A[::-1, ::2], (-1,)).to_numpy(), a[::-1, ::2].reshape(-1))
    _check(pg.ravel(A.T).to_numpy(), np.ravel(a.T))
    _check(pg.concatenate([A, A[::-1]], axis=0).to_numpy(), np.concatenate([a, a[::-1]]))
    _check(pg.concatenate([A, A[:, :2]], axis=1).to_numpy(), np.concatenate([a, a[:, :2]], axis=1))
    _check(pg.concatenate([A[:0], A]).to_numpy(), np.concatenate([a[:0], a]))
    i32 = np.ones((1, 7), np.int32)
    _check(pg.concatenate([A, pg.from_numpy(i32, dist=d)]).to_numpy(), np.concatenate([a, i32]))
    _check(pg.stack([A, A * 2], axis=-1).to_numpy(), np.stack([a, a * 2], axis=-1))
    _check(pg.hstack([A, A[:, :1]]).to_numpy(), np.hstack([a, a[:, :1]]))
    _check(pg.flip(A, axis=1).to_numpy(), np.flip(a, axis=1))
    _check(pg.moveaxis(A, 0, 1).to_numpy(), np.moveaxis(a, 0, 1))


# ---------------------------------------------------------------------------
# 4. Reductions, scans
# ---------------------------------------------------------------------------
@SMALL
@given(dist=a_dist(3), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 99),
       axis=st.sampled_from([None, 0, 1, 2, -1, (0, 2), (1, 2), (0, 1, 2)]), keepdims=st.booleans())
def test_reductions_over_axis_tuples_match_numpy(dist, dtype, seed, axis, keepdims):
    rng = np.random.default_rng(seed)
    a = _keys(rng.integers(-3, 4, (3, 4, 5)) * (40 if dtype == np.int8 else 1), dtype)
    A = pg.from_numpy(a, dist=dist)
    exact = np.dtype(dtype).kind != "f"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in ("sum", "prod", "min", "max", "all", "any", "mean"):
            got = getattr(np, fn)(A, axis=axis, keepdims=keepdims)
            want = getattr(np, fn)(a, axis=axis, keepdims=keepdims)
            got = got.to_numpy() if isinstance(got, pg.DistArray) else np.asarray(got)
            ok = (got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
                  and (np.array_equal(got, want) if exact else np.allclose(got, want)))
            collective_verdict(ok, f"{fn}: {got!r} vs {want!r}")
        if dtype in (np.int8, np.uint8, np.bool_):
            for odt in (np.int8, np.uint8, np.int64, np.float64):
                got = np.sum(A, axis=axis, dtype=odt)
                got = got.to_numpy() if isinstance(got, pg.DistArray) else np.asarray(got)
                collective_verdict(_same(got, np.asarray(np.sum(a, axis=axis, dtype=odt))), f"sum dtype={odt}")


@SMALL
@given(dist=a_dist(3), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 99),
       axis=st.sampled_from([None, 0, 1, 2]))
def test_argmin_argmax_cumsum_cumprod_on_every_axis(dist, dtype, seed, axis):
    rng = np.random.default_rng(seed)
    a = _keys(rng.integers(-2, 3, (3, 4, 5)), dtype)        # many ties
    A = pg.from_numpy(a, dist=dist)
    for fn in (np.argmin, np.argmax):
        got = fn(A, axis=axis)
        _check(got.to_numpy() if isinstance(got, pg.DistArray) else got, fn(a, axis=axis), fn.__name__)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (np.cumsum, np.cumprod):
            got, want = fn(A, axis=axis), fn(a, axis=axis)
            if np.dtype(dtype).kind == "f":
                assert_matches(got, want, rtol=1e-6)
            else:
                assert_matches(got, want)


def test_reductions_of_empty_arrays_nans_and_wrap_around():
    for d in _dists(2):
        e = np.zeros((0, 3))
        E = pg.from_numpy(e, dist=d)
        for fn in ("sum", "prod", "all", "any"):
            for ax in (None, 0, 1):
                got = getattr(np, fn)(E, axis=ax)
                _check(got.to_numpy() if isinstance(got, pg.DistArray) else got, getattr(np, fn)(e, axis=ax), fn)
        for fn in ("min", "max", "argmin", "argmax"):
            with pytest.raises(ValueError):
                getattr(np, fn)(E)
        f = np.array([[1, np.nan, 3], [np.nan, 0, -np.inf]])
        F = pg.from_numpy(f, dist=d)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for fn in ("min", "max", "argmin", "argmax", "sum"):
                for ax in (None, 0, 1):
                    got = getattr(np, fn)(F, axis=ax)
                    _check(got.to_numpy() if isinstance(got, pg.DistArray) else got, getattr(np, fn)(f, axis=ax), fn)
        big = np.full((2, 3), 2 ** 62, np.int64)
        _check(np.sum(pg.from_numpy(big, dist=d)), np.sum(big), "int64 wrap")
        _check(np.sum(pg.from_numpy(big, dist=d), axis=0).to_numpy(), np.sum(big, axis=0), "int64 wrap axis")
        u = np.full((2, 3), 200, np.uint8)
        U = pg.from_numpy(u, dist=d)
        _check(np.sum(U), np.sum(u), "uint8 sum")
        _check(np.prod(U), np.prod(u), "uint8 prod")
        _check(np.cumsum(U).to_numpy(), np.cumsum(u), "uint8 cumsum")
        i8 = np.full((2, 3), 100, np.int8)
        _check(np.sum(pg.from_numpy(i8, dist=d), dtype=np.int8), np.sum(i8, dtype=np.int8), "int8 dtype=int8")


# ---------------------------------------------------------------------------
# 5. matmul / dot / outer / vdot
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("mkn", [(1, 1, 1), (2, 5, 3), (3, 0, 2), (7, 3, 5)])
@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.bool_])
def test_matmul_of_odd_shapes_and_distributions(mkn, dtype):
    m, k, n = mkn
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a, b = rng.integers(0, 3, (m, k)).astype(dtype), rng.integers(0, 3, (k, n)).astype(dtype)
    x, y = rng.integers(0, 3, k).astype(dtype), rng.integers(0, 3, m).astype(dtype)
    ds = _dists(2)
    for d1, d2 in ((ds[0], ds[-1]), (ds[1], ds[2])):
        A, B = pg.from_numpy(a, dist=d1), pg.from_numpy(b, dist=d2)
        X, Y = pg.from_numpy(x, dist=pg.Cyclic()), pg.from_numpy(y, dist=pg.BlockCyclic(2))
        tol = dict(rtol=1e-12) if dtype == np.float64 else {}
        assert_matches(A @ B, a @ b, **tol)
        assert_matches(A @ X, a @ x, **tol)
        assert_matches(Y @ A, y @ a, **tol)
        assert_matches(A.T[::-1] @ A[:, ::-1], a.T[::-1] @ a[:, ::-1], **tol)
        assert_matches(A @ b, a @ b, **tol)
        assert_matches(pg.outer(X, Y), np.outer(x, y))
        got, want = X @ X, x @ x
        collective_verdict(np.asarray(got).dtype == np.asarray(want).dtype and np.allclose(got, want), f"{got} {want}")
        got, want = pg.vdot(A, A), np.vdot(a, a)
        collective_verdict(np.asarray(got).dtype == np.asarray(want).dtype and np.allclose(got, want), f"{got} {want}")


# ---------------------------------------------------------------------------
# 6. Files
# ---------------------------------------------------------------------------
@pytest.fixture
def folder(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("s20")) if me == 0 else None
    return comm.bcast(path, 0) if P > 1 else path


@pytest.mark.parametrize("shape", [(0,), (5,), (2, 0), (3, 5), (2, 3, 2)])
def test_npy_zarr_hdf5_round_trips_for_every_distribution(shape, folder):
    for k, dt in enumerate([np.float64, np.int16, np.bool_, np.complex128]):
        a = (np.arange(int(np.prod(shape))) * 3 - 4).astype(dt).reshape(shape)
        for j, d in enumerate(_dists(len(shape))):
            A = pg.from_numpy(a, dist=d)
            p = os.path.join(folder, f"a{k}_{j}.npy")
            pg.save(p, A)
            assert_matches(pg.load(p, dist=pg.Cyclic() if len(shape) < 2 else pg.BlockCyclic(2)), a)
            ok = True
            if me == 0:
                b = np.load(p)
                ok = b.dtype == a.dtype and np.array_equal(b, a)
            collective_verdict(ok, "np.load of pg.save's file differs")
            if dt in (np.float64, np.int16) and j % 2 == 0:
                z = os.path.join(folder, f"z{k}_{j}.zarr")
                pg.to_zarr(A, z)
                assert_matches(pg.from_zarr(z, dist=pg.Cyclic()), a)
                h = os.path.join(folder, f"h{k}_{j}.h5")
                pg.to_hdf5(A, h, "x", serial=True)
                assert_matches(pg.from_hdf5(h, "x", dist=pg.Block()), a)


# ---------------------------------------------------------------------------
# 7. Random arrays: the same global array under every distribution
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 5, 1000])
def test_random_arrays_are_the_reference_arrays_under_every_distribution(n):
    for d in _dists(1):
        rng = pg.random.default_rng(7)
        assert_matches(rng.random(n, dist=d), pg.random.reference(7, 0, n, "random"), rtol=0)
        assert_matches(rng.random(n, dist=d), pg.random.reference(7, 1, n, "random"), rtol=0)

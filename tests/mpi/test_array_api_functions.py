"""``pgas.array_api``'s manipulation, searching, set, sorting and linear algebra functions that pgas
composes from its distributed operations (``pgas/array/api/composed.py``), and its element-wise
functions and ``where`` on operands that broadcast, against NumPy on the
global arrays over random shapes and data types: no :class:`pgas.GatherWarning` where they run
distributed, one where they still gather, and the standard's errors on every locale alike."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import collective_verdict, raises_alike

import pgas as pg

xp = pg.array_api
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=8)
DTYPES = [np.bool_, np.int8, np.int64, np.uint16, np.float32, np.float64, np.complex128]
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@pytest.fixture(autouse=True)
def no_gathering():
    """Every call here runs distributed unless a test expects a GatherWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", pg.GatherWarning)
        yield


def data(shape, dtype, seed=0, low=-3, high=4):
    """Small values with repeats (so sorts and sets meet ties), of ``dtype``."""
    rng = np.random.default_rng(seed)
    v = rng.integers(low, high, size=shape)
    if dtype == np.bool_:
        return v > 0
    if np.dtype(dtype).kind == "c":
        return (v + 1j * rng.integers(low, high, size=shape)).astype(dtype)
    return v.astype(dtype)


def same(got, want, what, rtol=0.0):
    """Collective: a namespace result (a DistArray, a 0-d array, or a tuple of them) equals NumPy's."""
    if isinstance(want, tuple):
        collective_verdict(isinstance(got, tuple) and len(got) == len(want), f"{what}: got {type(got).__name__}")
        for k, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{what}[{k}]", rtol)
        return
    g = got.to_numpy() if isinstance(got, pg.DistArray) else got
    want = np.asarray(want)
    ok = (isinstance(g, np.ndarray) and g.shape == want.shape and g.dtype == want.dtype
          and (np.array_equal(g, want, equal_nan=True) if not rtol
               else np.allclose(g, want, rtol=rtol, atol=rtol, equal_nan=True)))
    collective_verdict(ok, lambda: f"{what}: got {g!r}, NumPy {want!r}")


@SETTINGS
@given(shapes, st.sampled_from(DTYPES), st.data())
def test_broadcast_to_and_arrays(shape, dtype, d):
    lead = d.draw(st.lists(st.integers(1, 3), max_size=4 - len(shape)).map(tuple), "lead")
    ones = tuple(d.draw(st.sampled_from([1, n]), f"axis {k}") for k, n in enumerate(shape))
    x = data(ones, dtype)
    target = lead + shape
    same(xp.broadcast_to(xp.asarray(x), target), np.broadcast_to(x, target), "broadcast_to")
    y = data(shape, dtype, seed=1)
    same(tuple(xp.broadcast_arrays(xp.asarray(x), xp.asarray(y))), tuple(np.broadcast_arrays(x, y)),
         "broadcast_arrays")
    same(xp.broadcast_to(xp.asarray(np.asarray(x.flat[0])), target), np.broadcast_to(x.flat[0], target),
         "broadcast_to of a 0-d array")


@SETTINGS
@given(shapes, st.sampled_from(DTYPES), st.data())
def test_repeat_and_tile(shape, dtype, d):
    x = data(shape, dtype)
    axis = d.draw(st.none() | st.integers(-len(shape), len(shape) - 1), "axis")
    n = x.size if axis is None else shape[axis]
    r = d.draw(st.integers(0, 3), "repeats")
    same(xp.repeat(xp.asarray(x), r, axis=axis), np.repeat(x, r, axis=axis), "repeat(int)")
    counts = np.asarray(d.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n), "counts"), np.int64)
    same(xp.repeat(xp.asarray(x), xp.asarray(counts), axis=axis), np.repeat(x, counts, axis=axis), "repeat(array)")
    reps = tuple(d.draw(st.lists(st.integers(0, 3), min_size=1, max_size=4), "reps"))
    same(xp.tile(xp.asarray(x), reps), np.tile(x, reps), "tile")


@SETTINGS
@given(shapes, st.sampled_from(DTYPES), st.data())
def test_squeeze_unstack_take(shape, dtype, d):
    k = d.draw(st.integers(0, len(shape)), "unit axis")
    x = data(shape[:k] + (1,) + shape[k:], dtype)
    same(xp.squeeze(xp.asarray(x), axis=k), np.squeeze(x, axis=k), "squeeze")
    axis = d.draw(st.integers(-x.ndim, x.ndim - 1), "axis")
    same(tuple(xp.unstack(xp.asarray(x), axis=axis)), tuple(np.unstack(x, axis=axis)), "unstack")
    n = x.shape[axis]
    idx = np.asarray(d.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=6), "indices"), np.int64)
    same(xp.take(xp.asarray(x), xp.asarray(idx), axis=axis), np.take(x, idx, axis=axis), "take")


@SETTINGS
@given(shapes, st.sampled_from(DTYPES), st.data())
def test_nonzero_sort_searchsorted(shape, dtype, d):
    x = data(shape, dtype, low=-1, high=2)
    same(xp.nonzero(xp.asarray(x)), tuple(np.nonzero(x)), "nonzero")
    if np.dtype(dtype).kind == "c":
        return                                   # the standard sorts real data types only
    axis = d.draw(st.integers(-len(shape), len(shape) - 1), "axis")
    X = xp.asarray(x)
    same(xp.sort(X, axis=axis), np.sort(x, axis=axis, kind="stable"), "sort")
    same(xp.sort(X, axis=axis, descending=True), np.flip(np.sort(x, axis=axis), axis=axis), "sort descending")
    same(xp.argsort(X, axis=axis), np.argsort(x, axis=axis, kind="stable"), "argsort")
    n = shape[axis]
    down = n - 1 - np.flip(np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable"), axis=axis)
    same(xp.argsort(X, axis=axis, descending=True), down, "argsort descending")
    a = np.sort(x.reshape(-1))
    side = d.draw(st.sampled_from(["left", "right"]), "side")
    same(xp.searchsorted(xp.asarray(a), X, side=side), np.searchsorted(a, x, side=side), "searchsorted")
    perm = np.random.default_rng(2).permutation(a.size)
    same(xp.searchsorted(xp.asarray(a[perm]), X, side=side, sorter=xp.asarray(np.argsort(perm))),
         np.searchsorted(a, x, side=side), "searchsorted with sorter")


@SETTINGS
@given(shapes, st.sampled_from([np.bool_, np.int8, np.uint16, np.float64]), st.booleans())
def test_unique(shape, dtype, nans):
    x = data(shape, dtype)
    if nans and dtype == np.float64:
        x.flat[::2] = np.nan                        # each NaN is its own value (the standard's rule)
    u = np.unique_all(x)
    order = np.argsort(u.values, kind="stable")    # NumPy's unique_all need not sort; pgas's does
    rank = np.argsort(order)
    want = (u.values[order], u.indices[order], rank[u.inverse_indices], u.counts[order])
    X = xp.asarray(x)
    same(tuple(xp.unique_all(X)), want, "unique_all")
    same(tuple(xp.unique_counts(X)), (want[0], want[3]), "unique_counts")
    same(tuple(xp.unique_inverse(X)), (want[0], want[2]), "unique_inverse")
    same(xp.unique_values(X), want[0], "unique_values")


@SETTINGS
@given(shapes, st.sampled_from([np.int8, np.int64, np.float32, np.float64, np.complex128]), st.data())
def test_vecdot_tensordot(shape, dtype, d):
    x, y = data(shape, dtype), data(shape, dtype, seed=1)
    axis = d.draw(st.integers(-len(shape), -1), "axis")
    tol = 1e-5 if dtype == np.float32 else 1e-12
    same(xp.vecdot(xp.asarray(x), xp.asarray(y), axis=axis), np.vecdot(x, y, axis=axis), "vecdot", tol)
    if axis != -len(shape):                        # the first axis broadcast (not the contracted one)
        same(xp.vecdot(xp.asarray(x), xp.asarray(y[-1:]), axis=axis), np.vecdot(x, y[-1:], axis=axis),
             "vecdot broadcast", tol)
    if np.dtype(dtype).kind not in "fc":
        return
    k = d.draw(st.integers(0, len(shape)), "axes")
    z = data(shape[len(shape) - k:] + shape[:1], dtype, seed=2)
    if x.ndim + z.ndim - 2 * k <= 4:
        same(xp.tensordot(xp.asarray(x), xp.asarray(z), axes=k), np.tensordot(x, z, axes=k), "tensordot", tol)
    pairs = ([len(shape) - 1], [0])
    w = data(shape[-1:] + (2,), dtype, seed=3)
    same(xp.tensordot(xp.asarray(x), xp.asarray(w), axes=pairs), np.tensordot(x, w, axes=pairs), "tensordot pairs",
         tol)


@SETTINGS
@given(shapes, st.sampled_from(DTYPES), st.data())
def test_elementwise_and_where_broadcast(shape, dtype, d):
    lead = d.draw(st.lists(st.integers(1, 3), max_size=4 - len(shape)).map(tuple), "lead")
    ones = tuple(d.draw(st.sampled_from([1, n]), f"axis {k}") for k, n in enumerate(shape))
    x, y = data(lead + ones, dtype), data(shape, dtype, seed=1)
    same(xp.add(xp.asarray(x), xp.asarray(y)), np.add(x, y), "add broadcast")
    same(xp.equal(xp.asarray(y), xp.asarray(x)), np.equal(y, x), "equal broadcast")
    if np.dtype(dtype).kind == "i":
        i8 = data(ones, np.int8)
        same(xp.multiply(xp.asarray(y), xp.asarray(i8)), np.multiply(y, i8), "promotion within a kind")
    same(xp.where(xp.asarray(x != 0), xp.asarray(y), xp.asarray(x)), np.where(x != 0, y, x), "where broadcast")
    if np.dtype(dtype).kind in "iuf":
        lo = data(ones, dtype, seed=2)
        same(xp.clip(xp.asarray(y), -1, 2), np.clip(y, -1, 2).astype(dtype), "clip by scalars")
        same(xp.clip(xp.asarray(y), max=xp.asarray(lo)), np.minimum(y, lo), "clip by an array")
    if np.dtype(dtype).kind in "iufc":
        same(xp.round(xp.asarray(y / 2 if np.dtype(dtype).kind in "fc" else y)),
             np.round(y / 2 if np.dtype(dtype).kind in "fc" else y), "round")


def test_errors_on_every_locale():
    A = xp.asarray(np.arange(12.0).reshape(3, 4))
    raises_alike(ValueError, lambda: xp.squeeze(A, axis=0), "squeeze of an axis of length 3")
    raises_alike(IndexError, lambda: xp.take(A, xp.asarray(np.array([0, 4])), axis=1), "take out of range")
    raises_alike(ValueError, lambda: xp.take(A, xp.asarray(np.array([0]))), "take of 2-D without axis")
    raises_alike(ValueError, lambda: xp.broadcast_to(A, (4, 4)), "broadcast_to an incompatible shape")
    raises_alike(ValueError, lambda: xp.repeat(A, xp.asarray(np.array([1, 2])), axis=0), "repeat counts' length")
    raises_alike(ValueError, lambda: xp.vecdot(A, xp.asarray(np.ones((3, 3))), axis=-1), "vecdot lengths")


def test_linalg_shares_the_namespace_functions():
    for name in ("matmul", "matrix_transpose", "tensordot", "vecdot"):
        assert getattr(xp.linalg, name) is getattr(xp, name)
    x = np.arange(6.0).reshape(2, 3)
    same(xp.linalg.vecdot(xp.asarray(x), xp.asarray(x)), np.vecdot(x, x), "linalg.vecdot", 1e-12)


def test_what_still_gathers():
    v = np.arange(5.0)
    with pytest.warns(pg.GatherWarning, match="unstack"):
        same(tuple(xp.unstack(xp.asarray(v))), tuple(np.unstack(v)), "unstack of 1-D (0-d results)")
    i = np.arange(4)
    with pytest.warns(pg.GatherWarning, match="tensordot"):
        same(xp.tensordot(xp.asarray(i), xp.asarray(i), axes=1), np.tensordot(i, i, axes=1), "integer tensordot")
    x = np.arange(6.0).reshape(2, 3)
    with pytest.warns(pg.GatherWarning, match="tile"):
        got = xp.tile(xp.asarray(x), (2, 1, 1, 1, 1))      # 5 dimensions: a NumPy array on every locale
    collective_verdict(isinstance(got, np.ndarray) and np.array_equal(got, np.tile(x, (2, 1, 1, 1, 1))), "tile 5-D")
    with pytest.warns(pg.GatherWarning, match="vecdot"):        # a non-negative axis counts each operand's own
        same(xp.vecdot(xp.asarray(x), xp.asarray(np.ones(2)), axis=0), np.vecdot(x, np.ones(2), axis=0),
             "vecdot of a 2-D and a 1-D operand along axis 0", 1e-12)
    with pytest.warns(pg.GatherWarning, match="vecdot"):
        raises_alike(ValueError, lambda: xp.vecdot(xp.asarray(x), xp.asarray(np.ones(3)), axis=1),
                     "vecdot of a 2-D and a 1-D operand along axis 1")
    empty = xp.asarray(np.zeros((0,)))
    same(xp.sort(empty), np.zeros((0,)), "sort of an empty array (gathered, nothing to warn of)")

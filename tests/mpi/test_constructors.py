"""Constructors and copies against NumPy: arange, linspace, eye, *_like, asarray, copyto, to_numpy(root).

Also: from_numpy and from_local given different arrays on different locales (raised
everywhere), and redistribution between every pair of distributions."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_axis_reduce import global_array, layouts
from util import assert_matches, collective_verdict

import pgas as pg
from pgas import comm
from pgas.layout import grids

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=20)
DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3)]


@SETTINGS
@given(st.integers(-6, 6), st.integers(-6, 20), st.sampled_from([1, 2, 3, -1, -2, 0.5, -0.75, 1.5]),
       st.sampled_from(DISTS), st.sampled_from([None, np.float64, np.int32]))
def test_arange(start, stop, step, dist, dtype):
    want = np.arange(start, stop, step, dtype=dtype)
    assert_matches(pg.arange(start, stop, step, dtype=dtype, dist=dist), want, rtol=1e-12)
    if step == 1 and dtype is None:
        assert_matches(pg.arange(start, stop, dist=dist), np.arange(start, stop))
        if stop >= 0:
            assert_matches(pg.arange(stop, dist=dist), np.arange(stop))


@SETTINGS
@given(st.floats(-10, 10), st.floats(-10, 10), st.integers(0, 13), st.booleans(), st.sampled_from(DISTS),
       st.sampled_from([None, np.float32, np.int64]))
def test_linspace(start, stop, num, endpoint, dist, dtype):
    want, wstep = np.linspace(start, stop, num, endpoint, retstep=True, dtype=dtype)
    got, step = pg.linspace(start, stop, num, endpoint, retstep=True, dtype=dtype, dist=dist)
    assert_matches(got, want, rtol=1e-6, atol=1e-12)
    collective_verdict(np.isclose(step, wstep, equal_nan=True))


@pytest.mark.parametrize("dist", DISTS)
def test_eye_identity(dist):
    for N, M, k in [(4, None, 0), (3, 5, 1), (5, 3, -2), (4, 4, 7), (0, 2, 0)]:
        assert_matches(pg.eye(N, M, k, dist=dist), np.eye(N, M, k))
    assert_matches(pg.identity(5, dtype=np.int64, dist=dist), np.identity(5, dtype=np.int64))


@SETTINGS
@given(layouts(max_ndim=3, max_extent=6), st.sampled_from([np.int64, np.float64, np.complex128, bool]))
def test_like_family(layout, dtype):
    shape, dist = layout
    G = global_array(shape, dtype)
    A = pg.from_numpy(G, dist=dist)
    for fn, ref in [(pg.zeros_like, np.zeros_like), (pg.ones_like, np.ones_like)]:
        B = fn(A)
        collective_verdict(B.layout.key == A.layout.key)
        assert_matches(B, ref(G))
        assert_matches(fn(A, dtype=np.float32), ref(G, dtype=np.float32))
    assert_matches(pg.full_like(A, 7), np.full_like(G, 7))
    E = pg.empty_like(A)
    collective_verdict(E.shape == G.shape and E.dtype == G.dtype and E.layout.key == A.layout.key)
    if len(shape) == 2:
        assert_matches(pg.zeros_like(A.T), np.zeros_like(G.T))
    collective_verdict(isinstance(pg.zeros_like(G), np.ndarray))


@SETTINGS
@given(layouts(max_ndim=3, max_extent=6), st.data())
def test_to_numpy_root_and_asarray(layout, data):
    shape, dist = layout
    G = global_array(shape, np.float64)
    A = pg.asarray(G, dist=dist)
    assert_matches(A, G)
    root = data.draw(st.integers(0, P - 1))
    with pg.comm_diagnostics() as d:
        got = A.to_numpy(root=root)
    collective_verdict(np.array_equal(got, G) if pg.here == root else got is None)
    collective_verdict(int(d.matrix.sum() - d.matrix[:, root].sum()) == 0, "only root receives")
    collective_verdict(pg.asarray(A) is A and pg.asarray(A, dist=A.dist) is A)
    other = data.draw(st.sampled_from(DISTS))
    B = pg.asarray(A, dist=other)
    assert_matches(B, G)
    C = pg.array(A)
    collective_verdict(C is not A)
    assert_matches(C, G)
    assert_matches(pg.asarray(A, dtype=np.float32), G.astype(np.float32))
    assert_matches(A.redistribute(pg.Cyclic()), G)
    if len(shape) >= 2:
        assert_matches(pg.asarray(A.T, dist=other), G.T)


@pytest.mark.parametrize("dist", DISTS)
def test_copyto(dist):
    G = np.arange(12.0).reshape(3, 4)
    A = pg.from_numpy(G, dist=dist)
    B = pg.zeros((3, 4), dist=pg.Cyclic())
    pg.copyto(B, A)
    assert_matches(B, G)
    pg.copyto(B, 5)
    assert_matches(B, np.full((3, 4), 5.0))
    mask = G > 4
    pg.copyto(B, A, where=pg.from_numpy(mask))
    assert_matches(B, np.where(mask, G, 5.0))
    pg.copyto(B[:, 1:], A[:, :3] * 2)
    want = np.where(mask, G, 5.0)
    want[:, 1:] = G[:, :3] * 2
    assert_matches(B, want)
    I = pg.zeros((3, 4), dtype=np.int64)
    with pytest.raises(TypeError, match="same_kind"):
        pg.copyto(I, A)
    with pytest.raises(TypeError, match="same_kind"):
        pg.copyto(I, 2.5)
    pg.copyto(I, A, casting="unsafe")
    assert_matches(I, G.astype(np.int64))


def test_constructor_errors_alike():
    with pytest.raises(ZeroDivisionError):
        pg.arange(0, 5, 0)
    with pytest.raises(ValueError, match="root"):
        pg.zeros(3).to_numpy(root=P)
    with pytest.raises(ValueError, match="non-negative"):
        pg.linspace(0, 1, -1)


def _attempt(f):
    """Run f on every locale; return (result, None) or (None, 'Type: message')."""
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001 - the finding is the exception itself
        return None, f"{type(e).__name__}: {e}"


def test_from_numpy_different_arrays_raise_alike():
    a = np.arange(10.0)
    b = a.copy()
    if pg.here == P - 1:
        b[7] = -0.0 if P > 1 else b[7]
        b[3] = 99.0 if P > 1 else b[3]
    _, err = _attempt(lambda: pg.from_numpy(b))
    errs = comm.allgather(err)
    if P == 1:
        collective_verdict(err is None, str(err))
    else:
        collective_verdict(all(e is not None for e in errs), f"raised only on some locales: {errs}")


@pytest.mark.parametrize("variant", ["negzero", "nan_payload", "dtype", "shape"])
def test_from_numpy_subtle_differences(variant):
    """Locales passing arrays that differ only subtly: either every locale raises, or every
    locale gets the same array (no locale silently holding different data)."""
    a = np.array([0.0, 1.0, np.nan, 3.0])
    b = a.copy()
    last = pg.here == P - 1 and P > 1
    if variant == "negzero" and last:
        b[0] = -0.0
    if variant == "nan_payload" and last:
        b = b.view(np.uint64).copy()
        b[2] ^= 1
        b = b.view(np.float64)
    if variant == "dtype" and last:
        b = b.astype(np.float32)
    if variant == "shape" and last:
        b = b.reshape(2, 2)
    A, err = _attempt(lambda: pg.from_numpy(b))
    errs = comm.allgather(err)
    collective_verdict(all(e is None for e in errs) or all(e is not None for e in errs),
                       f"raised on some locales only: {errs}")
    if err is None and variant == "negzero":
        # every locale must now hold the same value at [0]
        v = A.to_numpy()
        signs = comm.allgather(bool(np.signbit(v[0])))
        collective_verdict(len(set(signs)) == 1, f"locales disagree on sign of A[0]: {signs}")


@pytest.mark.parametrize("variant", ["dtypes", "all_empty", "some_empty", "ndim"])
def test_from_local_mixed(variant):
    if variant == "dtypes":
        blk = np.arange(3, dtype=np.int64 if pg.here % 2 else np.float64)
    elif variant == "all_empty":
        blk = np.empty(0)
    elif variant == "some_empty":
        blk = np.arange(float(pg.here)) if pg.here % 2 else np.empty(0)
    else:
        blk = np.arange(4.0).reshape(2, 2) if pg.here == P - 1 and P > 1 else np.arange(4.0).reshape(2, 2)[0]
    A, err = _attempt(lambda: pg.from_local(blk))
    errs = comm.allgather(err)
    collective_verdict(all(e is None for e in errs) or all(e is not None for e in errs),
                       f"raised on some locales only: {errs}")
    if err is None:
        blocks = comm.allgather(blk)
        want = np.concatenate(blocks)
        got = A.to_numpy()
        collective_verdict(got.shape == want.shape and np.array_equal(got, want),
                           f"from_local: {got!r} ({got.dtype}) vs concatenation {want!r} ({want.dtype})")
        collective_verdict(variant != "dtypes" or P == 1 or got.dtype == np.result_type(*[b.dtype for b in blocks]),
                           f"dtype {got.dtype}")


def _dists(nd):
    out = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]
    for i, g in enumerate(grids(P, nd)):             # one kind per grid, rotating
        out.append([pg.Block(g), pg.Cyclic(g), pg.BlockCyclic(3, g)][i % 3])
    return out


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


@pytest.mark.parametrize("dist", DISTS)
def test_arange_of_numpy_small_int_scalars_has_numpy_dtype(dist):
    # np.arange(np.int8(1), np.int8(100), np.int8(7)) is int64 in NumPy 2; pgas makes int8.
    args = (np.int8(1), np.int8(100), np.int8(7))
    assert_matches(pg.arange(*args, dist=dist), np.arange(*args))


@pytest.mark.parametrize("dist", DISTS)
def test_arange_of_int8_start_does_not_wrap(dist):
    # pgas: pg.arange(np.int8(120), 130) -> [120 ... 127, -128, -127] (int8, wrapped), silently.
    # NumPy 2.4 raises ValueError here; either raise, or give 120..129.
    try:
        A = pg.arange(np.int8(120), 130, dist=dist)
    except (ValueError, OverflowError, TypeError):
        return
    got = A.to_numpy()
    collective_verdict(bool(np.array_equal(got.astype(np.int64), np.arange(120, 130))), f"got {got!r}")


ME = pg.here


def test_from_numpy_with_different_shapes_fails_everywhere():
    """Locales passing arrays of different shapes all raise (no locale left in a collective)."""
    try:
        pg.from_numpy(np.zeros(3 + ME % 2))
        raised = False
    except ValueError:
        raised = True
    collective_verdict(raised == (P > 1), f"raised={raised}")

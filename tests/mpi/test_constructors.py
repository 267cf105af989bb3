"""Constructors and copies against NumPy: arange, linspace, eye, *_like, asarray, copyto, to_numpy(root)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from test_axis_reduce import global_array, layouts
from util import assert_matches, collective_verdict

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

"""np.diff, np.trace, np.diag (2-D), np.nan_to_num and A.fill on distributed arrays against NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg

from util import a_dist, assert_matches, collective_verdict

DTYPES = [np.float64, np.float32, np.int64, np.int8, np.uint8, np.bool_]


@st.composite
def arrays(draw, min_dims=1, max_dims=3, dtypes=DTYPES):
    ndim = draw(st.integers(min_dims, max_dims))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    a = (rng.standard_normal(shape) * 20).astype(dtype) if dtype.kind != "b" else rng.random(shape) < 0.5
    return a, draw(a_dist(ndim))


def _same(got, want, what):
    got = got.to_numpy() if hasattr(got, "to_numpy") else np.asarray(got)
    want = np.asarray(want)
    ok = got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)
    collective_verdict(ok, lambda: f"{what}: {got.dtype}{got.shape} {got.ravel()[:5]} != "
                                   f"{want.dtype}{want.shape} {want.ravel()[:5]}")


@given(case=arrays(), n=st.integers(0, 3), axis=st.integers(-3, 2), view=st.booleans())
@settings(max_examples=20, deadline=None)
def test_diff_as_numpy(case, n, axis, view):
    a, dist = case
    A = pg.from_numpy(a, dist=dist)
    if view and a.shape[0] > 1:
        a, A = a[::-1][1:], A[::-1][1:]
    if n and not -a.ndim <= axis < a.ndim:         # n=0: NumPy returns its input before checking axis
        with pytest.raises(np.exceptions.AxisError):
            np.diff(A, n, axis)
        return
    _same(np.diff(A, n, axis), np.diff(a, n, axis), f"diff(n={n}, axis={axis})")


def test_diff_prepend_append():
    a = np.arange(12.0).reshape(3, 4) ** 2
    A = pg.from_numpy(a, dist=pg.Cyclic())
    _same(np.diff(A, axis=1, prepend=0), np.diff(a, axis=1, prepend=0), "prepend=0")
    _same(np.diff(A, axis=0, append=a[:1]), np.diff(a, axis=0, append=a[:1]), "append=row")
    _same(np.diff(A, 2, axis=0, prepend=A[-1:]), np.diff(a, 2, axis=0, prepend=a[-1:]), "prepend=distributed")
    with pytest.raises(ValueError, match="non-negative"):
        np.diff(A, -1)


@given(case=arrays(2, 2, [np.float64, np.int8, np.int64, np.bool_]), k=st.integers(-7, 7),
       swap=st.booleans())
@settings(max_examples=20, deadline=None)
def test_trace_and_diag_as_numpy(case, k, swap):
    a, dist = case
    A = pg.from_numpy(a, dist=dist)
    ax = (1, 0) if swap else (0, 1)
    _same(np.trace(A, k, *ax), np.trace(a, k, *ax), f"trace(offset={k}, axes={ax})")
    _same(np.trace(A, k, dtype=np.float32), np.trace(a, k, dtype=np.float32), f"trace(offset={k}, float32)")
    _same(np.diag(A, k), np.diag(a, k), f"diag(k={k})")


def test_trace_of_other_ranks_raises():
    A = pg.zeros((2, 2, 2))
    with pytest.raises(TypeError, match="2-D"):
        np.trace(A)
    with pytest.raises(TypeError, match="2-D"):
        np.diag(pg.zeros(4))


@given(case=arrays(1, 3, [np.float64, np.float32, np.int32]), nan=st.sampled_from([0.0, -1.5, 7]),
       posinf=st.sampled_from([None, 1e5]), neginf=st.sampled_from([None, -3.0]))
@settings(max_examples=15, deadline=None)
def test_nan_to_num_as_numpy(case, nan, posinf, neginf):
    a, dist = case
    if a.dtype.kind == "f":
        flat = a.reshape(-1)
        flat[::3], flat[1::4], flat[2::5] = np.nan, np.inf, -np.inf
    A = pg.from_numpy(a, dist=dist)
    want = np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)
    _same(np.nan_to_num(A, nan=nan, posinf=posinf, neginf=neginf), want, "nan_to_num")
    _same(np.nan_to_num(A[::-1] + 0, nan=nan), np.nan_to_num(a[::-1] + 0, nan=nan), "nan_to_num(expr)")
    np.nan_to_num(A, copy=False, nan=nan, posinf=posinf, neginf=neginf)
    assert_matches(A, want)


@given(case=arrays(), value=st.sampled_from([0, 2.7, -1, True]))
@settings(max_examples=15, deadline=None)
def test_fill_as_numpy(case, value):
    a, dist = case
    A = pg.from_numpy(a, dist=dist)
    if a.dtype.kind == "u" and value == -1:
        with pytest.raises(OverflowError):
            A.fill(value)
        return
    a.fill(value)
    A.fill(value)
    assert_matches(A, a)
    if a.shape[0] > 1:
        b = a.copy()
        b[1::2].fill(5)
        A[1::2].fill(5)
        assert_matches(A, b)

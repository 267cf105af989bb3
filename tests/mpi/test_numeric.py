"""np.diff, np.trace, np.diag (2-D), np.nan_to_num and A.fill on distributed arrays against NumPy.

Also: np.round's decimals, np.isclose's weak scalars and tolerances, astype and nan_to_num
with copy=False on views, and arguments NumPy refuses."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import a_dist, assert_matches, collective_verdict
from util import same_as_numpy as _same_asnumpy

import pgas as pg

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


DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]


def _done(x):
    """A DistArray from a lazy result (expressions and views), else ``x``."""
    return x if hasattr(x, "_storage") or not hasattr(x, "eval") else x.eval()


def _same_rounding(got, want, what):
    got = _done(got)
    got = got.to_numpy() if hasattr(got, "to_numpy") else got
    ok = (type(np.asarray(got)) is type(np.asarray(want)) and np.shape(got) == np.shape(want)
          and np.asarray(got).dtype == np.asarray(want).dtype and np.array_equal(got, want, equal_nan=True))
    collective_verdict(ok, lambda: f"{what}: got {got!r}, NumPy {want!r}")


@pytest.mark.parametrize("decimals", [27, 30, 36, 45, 64, 100])
@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_round_many_decimals_as_numpy(dist, decimals):
    """Was: 10**decimals computed in steps of 1e9 (rounded differently from NumPy's C
    power_of_ten from decimals=27 on): most elements of magnitude ~10**-(decimals-2) differed."""
    rng = np.random.default_rng(decimals)
    a = rng.random(40) * 10.0 ** (3 - decimals)
    A = pg.from_numpy(a, dist=dist)
    got = _done(np.round(A, decimals))
    assert_matches(got, np.round(a, decimals), rtol=0)


@given(decimals=st.integers(-12, 40), f32=st.booleans(), dist=a_dist(1))
@settings(max_examples=15, deadline=None)
def test_round_decimals_hypothesis(decimals, f32, dist):
    rng = np.random.default_rng(abs(decimals))
    a = (rng.standard_normal(17) * 10.0 ** rng.integers(-30, 30, 17)).astype(np.float32 if f32 else np.float64)
    A = pg.from_numpy(a, dist=dist)
    with np.errstate(all="ignore"):
        want = np.round(a, decimals)
        got = _done(np.round(A, decimals))
    assert_matches(got, want, rtol=0)


def test_non_integer_arguments_raise_as_numpy():
    """Was: int() silently truncated float decimals / n / axis / k / offset (NumPy: TypeError)."""
    A = pg.from_numpy(np.arange(12.0).reshape(3, 4), dist=pg.Cyclic())
    for call in (lambda: np.round(A, 1.7), lambda: np.diff(A, n=1.5), lambda: np.diff(A, axis=0.0),
                 lambda: np.diag(A, 1.5), lambda: np.trace(A, 1.5)):
        with pytest.raises(TypeError):
            call()
    _same_rounding(np.diag(A, np.int64(1)), np.diag(A.to_numpy(), 1), "diag(k=np.int64)")
    _same_rounding(np.round(A / 7, np.int8(2)), np.round(A.to_numpy() / 7, 2), "round(decimals=np.int8)")


@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_diff_n0_ignores_prepend_append(dist):
    """Was: np.diff(A, 0, prepend=...) returned the concatenation (NumPy returns A itself)."""
    a = np.arange(6.0).reshape(2, 3) ** 2
    A = pg.from_numpy(a, dist=dist)
    for kw in ({"prepend": 5.0}, {"append": np.zeros((2, 1))}, {"prepend": 1, "append": 2}):
        got = np.diff(A, 0, **kw)
        _same_rounding(got, np.diff(a, 0, **kw), f"diff(n=0, {kw})")
        collective_verdict(got is A, "diff(n=0) is not its input (NumPy returns it itself)")
    _same_rounding(np.diff(A[::-1], 0, prepend=1.0), np.diff(a[::-1], 0, prepend=1.0), "diff(view, n=0)")


@pytest.mark.parametrize("dist", DISTS, ids=str)
@pytest.mark.parametrize("key", [np.s_[1:], np.s_[::-2], np.s_[1:5:3]], ids=str)
def test_nan_to_num_copy_false_on_a_view_writes_the_base(dist, key):
    """Was: np.nan_to_num(A[...], copy=False) returned a new array and left A unchanged
    (NumPy replaces in place, through the view)."""
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0, 2.0, np.nan], dtype=np.float32)
    A = pg.from_numpy(a, dist=dist)
    want = np.nan_to_num(a[key], copy=False, nan=7.0)
    got = np.nan_to_num(A[key], copy=False, nan=7.0)
    _same_rounding(got, want, "returned")
    assert_matches(A, a, rtol=0)


@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_fill_converts_as_numpy(dist):
    """Was: A.fill(v) was A[...] = v: NumPy scalars out of range raised (NumPy casts them),
    huge floats into integers and size-1 arrays went through silently (NumPy raises)."""
    cases = [(np.uint8, np.int64(-1)), (np.int8, np.int64(300)), (np.int64, 2.7), (np.float32, 1.5),
             (np.uint8, -1), (np.int64, np.float64(2.0 ** 70)), (np.float64, np.array([7.0])),
             (np.float64, np.array([7.0, 8.0])), (np.bool_, 5), (np.int64, "3"), (np.int64, 1 + 2j)]
    for dtype, value in cases:
        a = np.arange(5).astype(dtype)
        A = pg.from_numpy(a, dist=dist)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                a.fill(value)
                err = None
            except Exception as e:                   # noqa: BLE001 - NumPy's own error, compared below
                err = type(e)
            if err is None:
                A.fill(value)
            else:
                with pytest.raises(err):
                    A.fill(value)
        assert_matches(A, a, rtol=0)
    A = pg.zeros((4, 2), dist=dist)
    A[:, 1].fill(3)
    assert_matches(A, np.array([[0.0, 3.0]] * 4), rtol=0)
    with pytest.raises(TypeError):
        A.fill(pg.ones((4, 2), dist=dist))


@pytest.mark.parametrize("decimals", [2**31 - 1, 5000, -2**31 + 1])
def test_round_huge_decimals_ends_as_numpy(decimals):
    """Was: 10**decimals by a Python loop of decimals steps (2**31 - 1: minutes, a hang)."""
    a = np.array([1.5, -2.5, 0.0, np.inf])
    A = pg.from_numpy(a, dist=pg.Cyclic())
    with np.errstate(all="ignore"):
        _same_rounding(np.round(A, decimals), np.round(a, decimals), f"round({decimals})")
    with pytest.raises(OverflowError):
        np.round(A, 2**31)


def _raises_as_numpy(np_call, pg_call, what):
    """Both calls raise the same exception type (on every locale alike)."""
    try:
        np_call()
        want = None
    except Exception as e:                          # noqa: BLE001 - NumPy's own error, compared below
        want = type(e)
    try:
        pg_call()
        got = None
    except Exception as e:                          # noqa: BLE001
        got = type(e)
    collective_verdict(got is want and want is not None, lambda: f"{what}: raised {got}, NumPy {want}")


# ---------------------------------------------------------------------------
# np.isclose: Python scalars stay weak (NumPy compares a float32 array with 0.1 in float32)
# ---------------------------------------------------------------------------
@given(dist=a_dist(1), y=st.sampled_from([0.1, 1 / 3, 7, 2.5e-8, -0.7, 1e38, True]),
       first=st.booleans(), rtol=st.sampled_from([0.0, 1e-9, 1e-5]),
       atol=st.sampled_from([0.0, 1e-12, 1e-8]), equal_nan=st.booleans())
@settings(max_examples=25, deadline=None)
def test_isclose_python_scalar_is_weak(dist, y, first, rtol, atol, equal_nan):
    """Was: the scalar became a 0-d float64 array, so float32 data was compared in float64:
    np.isclose(float32 A, 0.1, rtol=0, atol=0) was False where NumPy says True."""
    a = np.array([0.1, 1 / 3, 7, 2.5e-8, -0.7, 1e38, 1, np.nan, np.inf, 0.1000001], dtype=np.float32)
    A = pg.from_numpy(a, dist=dist)
    kw = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan}
    args = (lambda x: (y, x)) if first else (lambda x: (x, y))
    _same_asnumpy(np.isclose(*args(A), **kw), np.isclose(*args(a), **kw), f"isclose{'(y, A)' if first else '(A, y)'}")


@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_isclose_numpy_scalars_and_bad_tolerances(dist):
    a = np.array([0.1, 0.2, np.nan, 3.0], dtype=np.float32)
    A = pg.from_numpy(a, dist=dist)
    for y in (np.float64(0.1), np.float32(0.1), np.array(0.1), 0.1 + 0j):
        _same_asnumpy(np.isclose(A, y, rtol=0, atol=0), np.isclose(a, y, rtol=0, atol=0), f"isclose(A, {y!r})")
    with pytest.warns(RuntimeWarning, match="not valid"):
        want = np.isclose(a, 0.1, atol=np.nan)
    with pytest.warns(RuntimeWarning, match="not valid"):
        got = np.isclose(A, 0.1, atol=np.nan)
    _same_asnumpy(got, want, "isclose(atol=nan)")


# ---------------------------------------------------------------------------
# astype(copy=False) and nan_to_num(copy=False) of a view: the view itself, as NumPy
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dist", DISTS, ids=str)
@pytest.mark.parametrize("key", [np.s_[::2], np.s_[1:, ::-1], np.s_[:, 1]], ids=str)
def test_astype_copy_false_of_a_view_writes_through(dist, key):
    """Was: A[key].astype(A.dtype, copy=False) returned a new array: writes to it did not reach A
    (NumPy returns the view itself)."""
    a = np.arange(20.0).reshape(5, 4)
    A = pg.from_numpy(a, dist=dist)
    a[key].astype(a.dtype, copy=False)[...] = -1.0
    B = A[key].astype(A.dtype, copy=False)
    B[...] = -1.0
    assert_matches(A, a, rtol=0)
    C = A[key].astype(np.float32, copy=False)           # another dtype: a copy, as NumPy
    C[...] = 7.0
    assert_matches(A, a, rtol=0)


@pytest.mark.parametrize("dist", DISTS, ids=str)
@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.uint8])
def test_nan_to_num_copy_false_of_an_integer_view_is_the_view(dist, dtype):
    """Was: np.nan_to_num(A[key], copy=False) of a non-float view returned a copy (NumPy: the view)."""
    a = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
    A = pg.from_numpy(a, dist=dist)
    r = np.nan_to_num(a[1:, ::2], copy=False)
    r[...] = 1
    R = np.nan_to_num(A[1:, ::2], copy=False)
    R[...] = 1
    assert_matches(A, a, rtol=0)
    R = np.nan_to_num(A, copy=True)
    R[...] = 0
    assert_matches(A, a, rtol=0)


@pytest.mark.parametrize("dist", DISTS, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_to_num_replacements_convert_as_numpy(dist, dtype):
    """Was: nan=None silently put NaN back (NumPy: TypeError), nan='x' raised ValueError
    (NumPy: TypeError), complex replacements were cast by the scalar type."""
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -2.0], dtype=dtype)
    A = pg.from_numpy(a, dist=dist)
    for kw in ({"nan": None}, {"nan": "x"}, {"posinf": 1j}, {"neginf": "1"}, {"nan": np.array([1.0, 2.0])},
               {"nan": np.complex128(1)}):
        _raises_as_numpy(lambda: np.nan_to_num(a, **kw), lambda: np.nan_to_num(A, **kw), f"nan_to_num({kw})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                   # 1e300 into float32: NumPy's overflow warning
        for kw in ({"nan": 1e300}, {"posinf": np.float64(1e-50)}, {"neginf": True}, {"nan": np.array(3)},
                   {"nan": 2**40, "posinf": -0.0}):
            _same_asnumpy(np.nan_to_num(A, **kw), np.nan_to_num(a, **kw), f"nan_to_num({kw})")


# ---------------------------------------------------------------------------
# np.trace: NumPy's errors before pgas's own limits
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_trace_errors_as_numpy(dist):
    """Was: TypeError ('not supported') where NumPy raises ValueError / AxisError."""
    a1 = np.arange(5.0)
    a2 = np.arange(12.0).reshape(3, 4)
    A1, A2 = pg.from_numpy(a1, dist=dist), pg.from_numpy(a2, dist=dist)
    _raises_as_numpy(lambda: np.trace(a1), lambda: np.trace(A1), "trace(1-D)")
    for ax in ((0, 0), (1, -1), (0, 2), (-3, 1)):
        _raises_as_numpy(lambda: np.trace(a2, 0, *ax), lambda: np.trace(A2, 0, *ax), f"trace(axes={ax})")
    for off, ax in ((1, (0, 1)), (1, (1, 0)), (-2, (-1, -2)), (2, (-2, 1))):
        _same_asnumpy(np.trace(A2, off, *ax), np.trace(a2, off, *ax), f"trace({off}, {ax})")


@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_diff_n0_is_its_input(dist):
    """Was: np.diff(A, 0) (and of a view) returned a copy; NumPy returns its input itself, so
    writes through the result reach the array."""
    a = np.arange(12.0).reshape(3, 4)
    A = pg.from_numpy(a, dist=dist)
    collective_verdict(np.diff(A, 0) is A, "diff(A, 0) is not A")
    np.diff(a[:, ::-2], 0)[...] = -1.0
    np.diff(A[:, ::-2], 0, prepend=3.0)[...] = -1.0
    assert_matches(A, a, rtol=0)
    _same_asnumpy(np.diff(A * 2, 0), np.diff(a * 2, 0), "diff(expression, 0)")

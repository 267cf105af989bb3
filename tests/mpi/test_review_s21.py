"""Review of session 21's merges (rev1): the defects found, each against NumPy at 1-4 locales."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg

from util import a_dist, assert_matches, collective_verdict

DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]


def _done(x):
    """A DistArray from a lazy result (expressions and views), else ``x``."""
    return x if hasattr(x, "_storage") or not hasattr(x, "eval") else x.eval()


def _same(got, want, what):
    got = _done(got)
    got = got.to_numpy() if hasattr(got, "to_numpy") else got
    ok = (type(np.asarray(got)) is type(np.asarray(want)) and np.shape(got) == np.shape(want)
          and np.asarray(got).dtype == np.asarray(want).dtype and np.array_equal(got, want, equal_nan=True))
    collective_verdict(ok, lambda: f"{what}: got {got!r}, NumPy {want!r}")


@pytest.mark.parametrize("dist", DISTS, ids=str)
@pytest.mark.parametrize("fn", [np.nanmin, np.nanmax])
@pytest.mark.parametrize("shape,axis,keepdims", [((5,), 0, False), ((5,), 0, True), ((5,), None, True),
                                                 ((2, 3), (0, 1), False), ((2, 3), (0, 1), True),
                                                 ((2, 3), None, True), ((2, 3), None, False)])
def test_nanminmax_all_nan_full_reduction(dist, fn, shape, axis, keepdims):
    """Was: AttributeError ('numpy.ndarray' has no 'eval') for axis=0 of 1-D / axis=(0, 1)
    of 2-D, and a scalar instead of NumPy's (1, 1) array with axis=None, keepdims=True."""
    a = np.full(shape, np.nan, dtype=np.float32)
    A = pg.from_numpy(a, dist=dist)
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        want = fn(a, axis=axis, keepdims=keepdims)
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        got = fn(A, axis=axis, keepdims=keepdims)
    _same(got, want, f"{fn.__name__}(axis={axis}, keepdims={keepdims})")
    a[..., 0] = 3.0                                  # one value: no warning, NumPy's value
    A = pg.from_numpy(a, dist=dist)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(fn(A, axis=axis, keepdims=keepdims), fn(a, axis=axis, keepdims=keepdims), "with a value")


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
    _same(np.diag(A, np.int64(1)), np.diag(A.to_numpy(), 1), "diag(k=np.int64)")
    _same(np.round(A / 7, np.int8(2)), np.round(A.to_numpy() / 7, 2), "round(decimals=np.int8)")


@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_diff_n0_ignores_prepend_append(dist):
    """Was: np.diff(A, 0, prepend=...) returned the concatenation (NumPy returns A itself)."""
    a = np.arange(6.0).reshape(2, 3) ** 2
    A = pg.from_numpy(a, dist=dist)
    for kw in ({"prepend": 5.0}, {"append": np.zeros((2, 1))}, {"prepend": 1, "append": 2}):
        got = np.diff(A, 0, **kw)
        _same(got, np.diff(a, 0, **kw), f"diff(n=0, {kw})")
        collective_verdict(got is A, "diff(n=0) is not its input (NumPy returns it itself; rev22)")
    _same(np.diff(A[::-1], 0, prepend=1.0), np.diff(a[::-1], 0, prepend=1.0), "diff(view, n=0)")


@pytest.mark.parametrize("dist", DISTS, ids=str)
@pytest.mark.parametrize("key", [np.s_[1:], np.s_[::-2], np.s_[1:5:3]], ids=str)
def test_nan_to_num_copy_false_on_a_view_writes_the_base(dist, key):
    """Was: np.nan_to_num(A[...], copy=False) returned a new array and left A unchanged
    (NumPy replaces in place, through the view)."""
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0, 2.0, np.nan], dtype=np.float32)
    A = pg.from_numpy(a, dist=dist)
    want = np.nan_to_num(a[key], copy=False, nan=7.0)
    got = np.nan_to_num(A[key], copy=False, nan=7.0)
    _same(got, want, "returned")
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
        _same(np.round(A, decimals), np.round(a, decimals), f"round({decimals})")
    with pytest.raises(OverflowError):
        np.round(A, 2**31)

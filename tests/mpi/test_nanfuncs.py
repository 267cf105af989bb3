"""np.nansum / nanprod / nanmin / nanmax / nanmean / nanvar / nanstd, np.isclose and np.round(A, decimals) on
distributed arrays against NumPy, over shapes, distributions, NaN patterns and dtypes.

Also: nanmin / nanmax of all-NaN full reductions."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import a_dist, assert_matches, collective_verdict

import pgas as pg
from pgas import comm

FLOATS = [np.float64, np.float32, np.complex128]


@st.composite
def cases(draw, dtypes=FLOATS):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    dist = draw(a_dist(ndim))
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 10).astype(dtype)
    if dtype.kind in "fc":
        a[rng.random(shape) < draw(st.sampled_from([0.0, 0.3, 1.0]))] = np.nan
        if a.size > 1 and draw(st.booleans()):
            a[tuple(0 for _ in shape)] = -np.inf
    axis = draw(st.sampled_from([None, *range(ndim), *range(-ndim, 0)]))
    keepdims = draw(st.booleans())
    return a, dist, axis, keepdims


def _same(got, want, what):
    got = got.to_numpy() if hasattr(got, "to_numpy") else np.asarray(got)
    want = np.asarray(want)
    ok = got.shape == want.shape and got.dtype == want.dtype and np.allclose(got, want, rtol=1e-5, equal_nan=True)
    collective_verdict(ok, lambda: f"{what}: {got.dtype}{got.shape} {got.ravel()[:4]} != "
                                   f"{want.dtype}{want.shape} {want.ravel()[:4]}")


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmin", "nanmax", "nanmean"])
@given(case=cases(FLOATS + [np.int64, np.int32]))
@settings(max_examples=8, deadline=None)
def test_nan_reductions_as_numpy(name, case):
    a, dist, axis, keepdims = case
    if name in ("nanmin", "nanmax") and a.dtype.kind == "c":
        return                                   # NumPy orders complex values; pgas min/max do not
    fn = getattr(np, name)
    A = pg.from_numpy(a, dist=dist)
    with warnings.catch_warnings(record=True) as w_np:
        warnings.simplefilter("always")
        want = fn(a, axis=axis, keepdims=keepdims)
    with warnings.catch_warnings(record=True) as w_pg:
        warnings.simplefilter("always")
        got = fn(A, axis=axis, keepdims=keepdims)
    _same(got, want, f"np.{name}(axis={axis}, keepdims={keepdims})")
    np_warned = any(issubclass(x.category, RuntimeWarning) for x in w_np)
    pg_warned = any(issubclass(x.category, RuntimeWarning) for x in w_pg)
    collective_verdict(np_warned == pg_warned, f"RuntimeWarning: NumPy {np_warned}, pgas {pg_warned}")


@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
@given(case=cases(FLOATS + [np.int64]), ddof=st.sampled_from([0, 1, 2]))
@settings(max_examples=8, deadline=None)
def test_nan_spreads_as_numpy(name, case, ddof):
    """The NaN-ignoring variance and deviation with ``ddof`` (NaN and one RuntimeWarning
    where at most ``ddof`` elements are left), values and warnings as NumPy's."""
    a, dist, axis, keepdims = case
    fn = getattr(np, name)
    A = pg.from_numpy(a, dist=dist)
    with warnings.catch_warnings(record=True) as w_np:
        warnings.simplefilter("always")
        want = fn(a, axis=axis, keepdims=keepdims, ddof=ddof)
    with warnings.catch_warnings(record=True) as w_pg:
        warnings.simplefilter("always")
        got = fn(A, axis=axis, keepdims=keepdims, ddof=ddof)
    _same(got, want, f"np.{name}(axis={axis}, keepdims={keepdims}, ddof={ddof})")
    if np.isinf(a).any():
        return          # inf - inf warns on the locales that hold the infinity only (a FloatingPointError is collective)
    np_warned = any(issubclass(x.category, RuntimeWarning) for x in w_np)
    pg_warned = any(issubclass(x.category, RuntimeWarning) for x in w_pg)
    collective_verdict(np_warned == pg_warned, f"RuntimeWarning: NumPy {np_warned}, pgas {pg_warned}")


@pytest.mark.parametrize("name", ["nancumsum", "nancumprod", "nanargmin", "nanargmax"])
def test_nan_scans_and_args_as_numpy(name):
    """NaN-skipping scans and arg-extremes along each axis and over all, as NumPy's; an all-NaN
    slice is NumPy's ValueError for the arg-extremes."""
    g = np.random.default_rng(11).standard_normal((5, 6))
    g[g > 1.0] = np.nan
    g[:, 0] = [0.5, np.nan, 1.5, -0.5, 0.25]
    A = pg.from_numpy(g)
    fn = getattr(np, name)
    for axis in (None, 0, 1):
        _same(fn(A, axis=axis), fn(g, axis=axis), f"np.{name}(axis={axis})")
    if name.startswith("nanarg"):
        g[2] = np.nan
        with pytest.raises(ValueError, match="All-NaN"):
            fn(pg.from_numpy(g), axis=1)


def test_nansum_dtype_and_all_nan():
    a = np.full((4, 3), np.nan, dtype=np.float32)
    a[1, 2] = 2.5
    A = pg.from_numpy(a)
    _same(np.nansum(A, dtype=np.float64), np.nansum(a, dtype=np.float64), "nansum dtype")
    _same(np.nansum(A, axis=0), np.nansum(a, axis=0), "nansum all-NaN columns")
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        got = np.nanmax(A, axis=1)
    _same(got, np.nanmax(a, axis=1), "nanmax all-NaN rows")
    with pytest.warns(RuntimeWarning, match="empty slice"):
        got = np.nanmean(pg.from_numpy(np.full(5, np.nan)))
    collective_verdict(np.isnan(got), f"nanmean of NaNs {got}")


@given(case=cases(FLOATS + [np.int64]), rtol=st.sampled_from([1e-5, 0.0, 0.5]),
       atol=st.sampled_from([1e-8, 0.0, 3.0]), equal_nan=st.booleans())
@settings(max_examples=15, deadline=None)
def test_isclose_as_numpy(case, rtol, atol, equal_nan):
    a, dist, _, _ = case
    b = a + np.asarray(np.random.default_rng(a.size).standard_normal(a.shape), dtype=a.dtype)
    b.reshape(-1)[::3] = a.reshape(-1)[::3]
    A, B = pg.from_numpy(a, dist=dist), pg.from_numpy(b)
    want = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    assert_matches(pg.asarray(np.isclose(A, B, rtol=rtol, atol=atol, equal_nan=equal_nan)), want)
    assert_matches(pg.asarray(np.isclose(A, b, rtol=rtol, atol=atol)), np.isclose(a, b, rtol=rtol, atol=atol))
    assert_matches(pg.asarray(np.isclose(A, 1.0)), np.isclose(a, 1.0))


def test_isclose_integers_do_not_overflow():
    a = np.array([np.iinfo(np.int64).min, 0, 5], dtype=np.int64)
    b = np.array([np.iinfo(np.int64).max, 0, 6], dtype=np.int64)
    A, B = pg.from_numpy(a), pg.from_numpy(b)
    assert_matches(pg.asarray(np.isclose(A, B, atol=1)), np.isclose(a, b, atol=1))


@given(case=cases([np.float64, np.float32, np.complex128, np.int64, np.int16]), decimals=st.integers(-3, 4))
@settings(max_examples=15, deadline=None)
def test_round_as_numpy(case, decimals):
    a, dist, _, _ = case
    a = a * 123.456 if a.dtype.kind in "fc" else a * 37
    A = pg.from_numpy(a, dist=dist)
    want = np.round(a, decimals)
    if a.dtype.kind == "c" and decimals:
        with pytest.raises(TypeError, match="real and imaginary parts"):
            np.round(A, decimals)
        return
    got = np.round(A, decimals)
    got = got if hasattr(got, "to_numpy") and not hasattr(got, "eval") else pg.asarray(got)
    assert_matches(got, want, rtol=0)                    # bit for bit (NaNs equal)
    assert_matches(pg.asarray(np.around(A, decimals)), want, rtol=0)


def test_round_booleans_raise_everywhere():
    A = pg.from_numpy(np.array([True, False, True]))
    with pytest.raises(TypeError, match="float16"):
        np.round(A)
    collective_verdict(comm.here() >= 0)


def test_isclose_infinities_without_warnings():
    a = np.array([np.inf, -np.inf, 1.0, np.nan, np.inf])
    b = np.array([np.inf, np.inf, np.nan, np.nan, 1.0])
    A, B = pg.from_numpy(a), pg.from_numpy(b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = np.isclose(A, B, equal_nan=True)
    assert_matches(got, np.isclose(a, b, equal_nan=True))


def test_astype_casting_and_copy():
    A = pg.from_numpy(np.arange(6.0))
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        A.astype(np.int64, casting="safe")
    with pytest.raises(TypeError, match="according to the rule 'same_kind'"):
        A[1:].astype(np.int32, casting="same_kind")
    collective_verdict(A.astype(np.float64, copy=False) is A, "copy=False made a copy")
    B = A.astype(np.float64)
    collective_verdict(B is not A, "copy=True returned the array itself")
    assert_matches(A[::2].astype(np.int16, casting="unsafe"), np.arange(0, 6, 2, dtype=np.int16))
    assert_matches((A + 1).astype(np.float32, casting="same_kind"), np.arange(1.0, 7.0, dtype=np.float32))


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
    _same_rounding(got, want, f"{fn.__name__}(axis={axis}, keepdims={keepdims})")
    a[..., 0] = 3.0                                  # one value: no warning, NumPy's value
    A = pg.from_numpy(a, dist=dist)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same_rounding(fn(A, axis=axis, keepdims=keepdims), fn(a, axis=axis, keepdims=keepdims), "with a value")


def test_warnings_name_the_callers_line():
    """The warnings pgas raises itself (NumPy's texts, as NumPy raises them) name the line
    that called pgas, as NumPy's do, not a line inside pgas, whatever the depth of the
    call: ``np.nanmax``, ``np.nanmean`` through NumPy's protocol, and a method."""
    A = pg.from_numpy(np.full((3, 4), np.nan))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        np.nanmax(A)
        np.nanmean(A, axis=0)
        pg.zeros((0, 3)).mean(axis=0)
    where = [(w.filename, str(w.message)) for w in got      # (not NumPy's own ufunc warnings, which
             if issubclass(w.category, RuntimeWarning) and "encountered in" not in str(w.message)]   # name pgas)
    collective_verdict(len(where) >= 3 and all(f == __file__ for f, _ in where), f"warned at {where}")

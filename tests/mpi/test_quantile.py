"""np.median / nanmedian / quantile / nanquantile / percentile / nanpercentile on distributed arrays
against NumPy, bit for bit: over all elements (the distributed selection, also forced through many
narrowing rounds on small arrays) and along axes (split or not), over shapes (empty, one element,
fewer elements than locales), dtypes, q values, methods, keepdims, NaNs and distributions; NumPy's
errors and warnings on every locale alike; xarray's quantile and median without gathering."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from util import a_dist, collective_verdict, equal_exactly, raises_alike

import pgas as pg
from pgas.array.quantiles import select as selection
from pgas.exec import settings as pgas_settings

FUNCS = ["median", "nanmedian", "quantile", "nanquantile", "percentile", "nanpercentile"]
METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
           "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint", "nearest"]
DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_]


@pytest.fixture
def narrow():
    """The selection's rounds on small arrays: few samples, almost nothing gathered at once."""
    was = selection.SAMPLES, selection.GATHER
    selection.SAMPLES, selection.GATHER = 6, 3
    yield
    selection.SAMPLES, selection.GATHER = was


def _values(draw, shape, dtype):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    spread = draw(st.sampled_from([3, 1000]))            # many ties, or few
    a = rng.integers(-spread, spread, shape)
    if dtype == np.bool_:
        return a % 2 == 0
    if np.dtype(dtype).kind == "u":
        return np.abs(a).astype(dtype)
    a = a.astype(dtype)
    if np.dtype(dtype).kind == "f":
        a = a * np.asarray(rng.random(shape) + 0.5, dtype) if spread > 3 else a
        a[rng.random(shape) < draw(st.sampled_from([0.0, 0.0, 0.2, 1.0]))] = np.nan
        if a.size and draw(st.booleans()):
            a.reshape(-1)[0] = draw(st.sampled_from([np.inf, -np.inf]))
    return a


@st.composite
def cases(draw, axes=True):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.sampled_from([0, 1, 2, 3, 5, 7])) for _ in range(ndim))
    dtype = draw(st.sampled_from(DTYPES))
    a = _values(draw, shape, dtype)
    name = draw(st.sampled_from(FUNCS))
    kw = {}
    if "median" not in name:
        q = draw(st.sampled_from(["float", "zero", "one", "list", "array2d", "float32"]))
        frac = draw(st.floats(0, 1))
        q = {"float": frac, "zero": 0.0, "one": 1, "list": [0.0, frac, 0.5, 1.0],
             "array2d": np.array([[0.25, frac], [0.75, 1.0]]), "float32": np.float32(frac)}[q]
        if "percentile" in name:
            q = np.multiply(q, 100).tolist() if isinstance(q, list) else q * 100
        kw = {"q": q, "method": draw(st.sampled_from(METHODS))}
    axis = draw(st.sampled_from([None, *range(-ndim, ndim)] + ([(0, ndim - 1)] if ndim > 1 else []))) if axes \
        else None
    return a, draw(a_dist(ndim)), name, kw, axis, draw(st.booleans())


def _numpy(name, a, axis, keepdims, kw):
    with warnings.catch_warnings(record=True) as w, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        try:
            res = getattr(np, name)(a, axis=axis, keepdims=keepdims, **kw)
        except Exception as e:                       # noqa: BLE001
            return e, set()
    return res, {(x.category, str(x.message)) for x in w}


def _check(case):
    a, dist, name, kw, axis, keepdims = case
    A = pg.from_numpy(a, dist=dist)
    want, warned = _numpy(name, a, axis, keepdims, kw)
    what = f"np.{name}({a.dtype}{a.shape}, axis={axis}, keepdims={keepdims}, {kw})"
    if isinstance(want, Exception):
        raises_alike(type(want), lambda: getattr(np, name)(A, axis=axis, keepdims=keepdims, **kw), what)
        return
    with warnings.catch_warnings(record=True) as w, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        got = getattr(np, name)(A, axis=axis, keepdims=keepdims, **kw)
    if isinstance(want, np.ndarray) and isinstance(got, pg.DistArray):
        got = got.to_numpy()
    else:
        collective_verdict(not isinstance(got, pg.DistArray), f"{what}: a DistArray, NumPy gives {want!r}")
    collective_verdict(type(got) is type(want) and equal_exactly(got, want),
                       lambda: f"{what}: got {got!r}, NumPy {want!r}")
    seen = {(x.category, str(x.message)) for x in w}
    collective_verdict(seen == warned, f"{what}: warned {seen}, NumPy {warned}")


@given(case=cases())
@settings(max_examples=150, deadline=None)
def test_as_numpy(case):
    """Every function, method, q, axis and keepdims as NumPy, on any distribution."""
    _check(case)


@given(case=cases(axes=False))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_selection_rounds_as_numpy(narrow, case):
    """Over all elements with the selection narrowing a few values a round."""
    _check(case)


@given(n=st.integers(1, 400), spread=st.sampled_from([2, 50, 10**6]), k=st.integers(1, 12),
       seed=st.integers(0, 2**16), dtype=st.sampled_from([np.float64, np.int64, np.uint8, np.bool_]),
       fuse=st.sampled_from([True, False]))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_select_order_statistics(narrow, n, spread, k, seed, dtype, fuse):
    """The selection itself, compiled or not: any ranks of any locale's share, ties and all."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, spread, n).astype(dtype)
    A = pg.from_numpy(a, dist=pg.Cyclic())
    want_ranks = np.unique(rng.integers(0, n, k))
    was = pgas_settings.get("fuse")
    pg.config(fuse=fuse)
    try:
        got = selection.select(A._flat_local, n, want_ranks)
    finally:
        pg.config(fuse=was)
    collective_verdict(np.array_equal(got, np.sort(a)[want_ranks]), lambda: f"{got} != {np.sort(a)[want_ranks]}")


def test_large_median_and_quantiles():
    """Several rounds at the default sizes: 2**17 values, medians and a row of quantiles."""
    a = np.random.default_rng(3).standard_normal(2**17 + 1)
    A = pg.from_numpy(a)
    q = np.linspace(0, 1, 11)
    for got, want in [(np.median(A), np.median(a)), (np.median(A[1:]), np.median(a[1:])),
                      (np.quantile(A, q), np.quantile(a, q)),
                      (np.percentile(A, 37.5, method="hazen"), np.percentile(a, 37.5, method="hazen"))]:
        collective_verdict(type(got) is type(want) and equal_exactly(got, want), f"{got!r} != {want!r}")


@pytest.mark.parametrize("grid", [None, "rows", "cols"])
def test_along_split_axes(grid):
    """Rows split over locales are made whole (any grid), the result is a DistArray of q's dims first."""
    g = np.random.default_rng(1).standard_normal((9, 11))
    P = pg.num_locales
    dist = pg.Block({None: None, "rows": (P, 1), "cols": (1, P)}[grid])
    A = pg.from_numpy(g, dist=dist)
    for axis in (0, 1, -1):
        got = np.quantile(A, [0.1, 0.5], axis=axis)
        collective_verdict(isinstance(got, pg.DistArray) and equal_exactly(got.to_numpy(),
                                                                           np.quantile(g, [0.1, 0.5], axis=axis)),
                           f"axis {axis}")
        got = np.nanmedian(A, axis=axis, keepdims=True)
        collective_verdict(equal_exactly(got.to_numpy(), np.nanmedian(g, axis=axis, keepdims=True)), f"axis {axis}")


def test_out_and_views():
    g = np.arange(24.0).reshape(4, 6)[::-1]
    A = pg.from_numpy(g)
    out = np.empty(3)
    res = np.quantile(A, [0.2, 0.5, 0.9], out=out)
    collective_verdict(res is out and equal_exactly(out, np.quantile(g, [0.2, 0.5, 0.9])), f"{out}")
    D = pg.zeros(6)
    res = np.median(A, axis=0, out=D)
    collective_verdict(res is D and equal_exactly(D.to_numpy(), np.median(g, axis=0)), "out= DistArray")
    for out, axis in [(np.empty(6), 0), (np.empty(6, np.int64), 0), (np.empty((2, 4)), 1)]:
        want = np.quantile(g, [0.3, 0.8], axis=axis, out=out.copy()) if out.ndim == 2 else \
            np.median(g, axis=axis, out=out.copy())
        res = np.quantile(A, [0.3, 0.8], axis=axis, out=out) if out.ndim == 2 else np.median(A, axis=axis, out=out)
        collective_verdict(res is out and equal_exactly(out, want), f"out= NumPy array along {axis}: {out}")
    raises_alike(ValueError, lambda: np.median(A, axis=0, out=np.empty(4)), "out= of another shape")
    got = np.median(A[1:, ::2] * 2)                        # a lazy expression of a view
    collective_verdict(equal_exactly(got, np.median(g[1:, ::2] * 2)), f"{got!r}")


def test_bad_input_raises_alike():
    A = pg.from_numpy(np.arange(10.0))
    raises_alike(ValueError, lambda: np.quantile(A, 1.5), "q > 1")
    raises_alike(ValueError, lambda: np.quantile(A, [-0.1]), "q < 0")
    raises_alike(ValueError, lambda: np.percentile(A, 101), "percentile > 100")
    raises_alike(ValueError, lambda: np.quantile(A, 0.5, method="bogus"), "bad method")
    raises_alike(np.exceptions.AxisError, lambda: np.median(A, axis=1), "bad axis")
    raises_alike(TypeError, lambda: np.quantile(pg.from_numpy(np.arange(4) + 1j), 0.5), "complex")
    raises_alike(TypeError, lambda: np.quantile(pg.from_numpy(np.arange(4) > 1), 0.5), "bool interpolation")
    raises_alike(ValueError, lambda: np.quantile(A, 0.5, weights=np.ones(10)), "weights, linear")
    raises_alike(TypeError, lambda: np.quantile(A, 0.5, method="inverted_cdf", weights=np.ones(10)),
                 "weights are not distributed")


def test_all_nan_warns_alike():
    A = pg.from_numpy(np.full((3, 4), np.nan))
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        got = np.nanmedian(A)
    collective_verdict(np.isnan(got), f"{got}")
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        got = np.nanquantile(A, [0.5], axis=0)
    collective_verdict(np.all(np.isnan(got.to_numpy())), "axis 0")


def test_xarray_quantile_and_median_do_not_gather():
    xr = pytest.importorskip("xarray")
    g = np.random.default_rng(2).standard_normal((6, 8))
    g[1, 2] = np.nan
    field, ref = (xr.DataArray(d, dims=("y", "x")) for d in (pg.from_numpy(g), g))
    calls = [lambda d: d.quantile(0.3, dim="x"), lambda d: d.quantile([0.1, 0.9], dim="y"),
             lambda d: d.median(dim="x"), lambda d: d.median(), lambda d: d.quantile([0.2, 0.5]),
             lambda d: d.median(dim="y", skipna=False)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", pg.GatherWarning)
        for k, call in enumerate(calls):
            got, want = call(field), call(ref)
            data = got.data.to_numpy() if hasattr(got.data, "to_numpy") else np.asarray(got.data)
            collective_verdict(got.dims == want.dims and np.array_equal(data, want.values, equal_nan=True),
                               f"call {k}: {got.dims} {data} != {want.dims} {want.values}")

"""Whole-array and axis reductions (sum, prod, min/max, arg-reductions, mean, var/std
with where=, initial=) against NumPy: special values, dtypes, empty arrays, fewer
elements than locales, ties across locales, warnings and errors alike on every locale."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import KEY_DTYPES as DTYPES
from util import a_dist, assert_matches, collective_verdict
from util import check_exactly as _check
from util import equal_exactly as _same_dists
from util import keys_of as _keys
from util import mixed_dists as _dists
from util import same_as_numpy as _same_asnumpy

import pgas as pg
from pgas import comm


def _attempt(f):
    """Run f on every locale; return (result, None) or (None, 'Type: message')."""
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001 - the finding is the exception itself
        return None, f"{type(e).__name__}: {e}"


# ---------------------------------------------------------------------------
# 3. Reductions to a scalar folded in a tree; from_numpy / from_local agreement
# ---------------------------------------------------------------------------
def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind in "fc":
        return bool(np.all((got == want) | (np.isnan(got) & np.isnan(want))) or
                    np.allclose(got, want, rtol=1e-12, equal_nan=True)) and \
            bool(np.all(np.signbit(np.real(got)) == np.signbit(np.real(want))) or not np.all(want == 0))
    return bool(np.all(got == want))


def _check_scalar(name, f, a, **kw):
    want, werr = _attempt(lambda: f(a, **kw))
    A = pg.from_numpy(a)
    got, gerr = _attempt(lambda: f(A, **kw))
    if werr is not None:
        collective_verdict(gerr is not None, f"{name}: NumPy raised {werr}, pgas gave {got!r}")
        return
    if gerr is not None and "not supported on pgas arrays" in gerr:
        return                                           # a clear refusal on every locale
    collective_verdict(gerr is None, f"{name}: pgas raised {gerr}, NumPy gives {want!r}")
    ok = _same(got, want)
    if ok and isinstance(want, np.generic):
        ok = np.asarray(got).dtype == want.dtype
    collective_verdict(ok, f"{name}({a.dtype}, n={a.size}, {kw}): pgas {got!r} ({np.asarray(got).dtype}), "
                           f"NumPy {want!r} ({np.asarray(want).dtype})")


SPECIAL = {
    "nan_first": np.array([np.nan, 1.0, 2.0, -1.0, 5.0]),
    "nan_last": np.array([1.0, 2.0, -1.0, 5.0, np.nan]),
    "inf": np.array([np.inf, -np.inf, 1.0, 2.0, 3.0, 0.0]),
    "negzero": np.array([-0.0, -0.0, -0.0]),
    "negzero_mixed": np.array([0.0, -0.0, 0.0, -0.0, -0.0]),
    "ties": np.array([3.0, 1.0, 1.0, 3.0, 1.0, 3.0, 1.0]),
    "one": np.array([7.0]),
    "two": np.array([2.0, 2.0]),
}


@pytest.mark.parametrize("case", list(SPECIAL))
@pytest.mark.parametrize("fn", ["min", "max", "argmin", "argmax", "sum", "mean", "var", "std", "prod",
                                "any", "all", "count_nonzero"])
def test_scalar_reductions_special_values(case, fn):
    a = SPECIAL[case]
    with np.errstate(all="ignore"):
        _check_scalar(fn, getattr(np, fn), a)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.uint64, np.int64, np.float32,
                                   np.complex128])
@pytest.mark.parametrize("fn", ["min", "max", "argmin", "argmax", "sum", "mean", "var", "std",
                                "any", "all", "count_nonzero", "ptp"])
def test_scalar_reductions_dtypes(dtype, fn):
    rng = np.random.default_rng(11)
    if dtype == np.bool_:
        a = rng.integers(0, 2, 9).astype(bool)
    elif dtype == np.complex128:
        a = (rng.integers(-3, 4, 9) + 1j * rng.integers(-3, 4, 9)).astype(dtype)
    elif dtype == np.uint64:
        a = np.array([2**64 - 1, 3, 2**63, 5, 2**64 - 2, 0, 7, 2**63 + 1, 9], dtype=np.uint64)
    else:
        a = rng.integers(-100, 100, 9).astype(dtype) if np.dtype(dtype).kind != "u" else \
            rng.integers(0, 255, 9).astype(dtype)
    with np.errstate(all="ignore"):
        _check_scalar(fn, getattr(np, fn), a)


@pytest.mark.parametrize("kw", [dict(initial=5.0), dict(where="mask"), dict(initial=-1.0, where="mask"),
                                dict(where="none")])
@pytest.mark.parametrize("fn", ["sum", "min", "max", "prod", "mean", "var", "std", "any", "all"])
def test_scalar_reductions_where_initial(fn, kw):
    a = np.array([3.0, -1.0, np.nan, 2.0, -0.0, 7.0, 1.0])
    kw = dict(kw)
    if fn in ("var", "std") and "where" in kw:
        pytest.skip("see test_var_std_where")
    if "where" in kw:
        m = np.array([True, True, False, False, True, False, True]) if kw["where"] == "mask" else np.zeros(7, bool)
        kw["where"] = m
    want, werr = _attempt(lambda: getattr(np, fn)(a, **kw))
    A = pg.from_numpy(a)
    kw2 = dict(kw)
    if "where" in kw2:
        kw2["where"] = pg.from_numpy(kw2["where"])
    with np.errstate(all="ignore"):
        got, gerr = _attempt(lambda: getattr(np, fn)(A, **kw2))
    if werr is not None:
        collective_verdict(gerr is not None, f"{fn}{kw}: NumPy raised {werr}, pgas gave {got!r}")
        return
    collective_verdict(gerr is None, f"{fn}{kw}: pgas raised {gerr}, NumPy {want!r}")
    collective_verdict(_same(got, want), f"{fn}{kw}: pgas {got!r}, NumPy {want!r}")


@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_std_where(fn):
    """np.var/np.std with where= (this used to raise a bare TypeError), whole and along axes."""
    a = np.array([3.0, -1.0, np.nan, 2.0, -0.0, 7.0, 1.0])
    m = np.array([True, True, False, False, True, False, True])
    got, err = _attempt(lambda: getattr(np, fn)(pg.from_numpy(a), where=pg.from_numpy(m)))
    collective_verdict(err is None, f"raised {err}")
    collective_verdict(np.isclose(got, getattr(np, fn)(a, where=m)), f"{got}")
    b = np.arange(35.0).reshape(5, 7) ** 1.5
    mb = (np.arange(35).reshape(5, 7) % 3) != 1
    for axis, ddof in [(0, 0), (1, 1), (None, 1)]:
        for dist in [pg.Block(), pg.Cyclic()]:
            B = pg.from_numpy(b, dist=dist)
            got = getattr(np, fn)(B, axis=axis, ddof=ddof, where=pg.from_numpy(mb, dist=dist))
            got = got.to_numpy() if hasattr(got, "to_numpy") else got
            want = getattr(np, fn)(b, axis=axis, ddof=ddof, where=mb)
            collective_verdict(np.allclose(got, want), f"{fn} axis={axis}: {got} != {want}")


@pytest.mark.parametrize("n", [0, 1, 2, 3])
@pytest.mark.parametrize("fn", ["min", "max", "argmin", "argmax", "sum", "mean", "var", "std",
                                "any", "all", "count_nonzero"])
def test_scalar_reductions_fewer_elements_than_locales(n, fn):
    a = np.arange(n, dtype=float)[::-1] - 1.0
    with np.errstate(all="ignore"):
        for dist in [pg.Block(), pg.Cyclic()]:
            want, werr = _attempt(lambda: getattr(np, fn)(a))
            A = pg.from_numpy(a, dist=dist)
            got, gerr = _attempt(lambda: getattr(np, fn)(A))
            if werr is not None:
                collective_verdict(gerr is not None, f"{fn} n={n}: NumPy raised {werr}, pgas {got!r}")
                continue
            collective_verdict(gerr is None, f"{fn} n={n}: pgas raised {gerr}, NumPy {want!r}")
            collective_verdict(_same(got, want), f"{fn} n={n} {dist}: pgas {got!r}, NumPy {want!r}")


def test_argmin_ties_across_locales_cyclic():
    """Ties spread over locales: NumPy returns the first index."""
    a = np.array([5.0, 1.0, 5.0, 1.0, 5.0, 1.0, 5.0, 1.0, 1.0])
    for dist in [pg.Cyclic(), pg.Block(), pg.BlockCyclic(2)]:
        A = pg.from_numpy(a, dist=dist)
        for f in (np.argmin, np.argmax):
            got = int(f(A))
            collective_verdict(got == int(f(a)), f"{f.__name__} {dist}: {got} vs {f(a)}")
    b = np.array([np.nan, 1.0, np.nan, 0.0])
    for dist in [pg.Cyclic(), pg.Block()]:
        B = pg.from_numpy(b[::-1].copy(), dist=dist)
        for f in (np.argmin, np.argmax):
            got = int(f(B))
            collective_verdict(got == int(f(b[::-1])), f"{f.__name__} NaN {dist}: {got} vs {f(b[::-1])}")


P = pg.num_locales


# ---------------------------------------------------------------------------
# 2. np.var / np.std with where=
# ---------------------------------------------------------------------------
DISTS = {"block": pg.Block(), "cyclic": pg.Cyclic(), "bc": pg.BlockCyclic(block=(2,))}


@pytest.mark.parametrize("dist", list(DISTS))
def test_var_std_where_match_numpy(dist):
    g = np.arange(30.0).reshape(5, 6) ** 1.3
    m = np.zeros((5, 6), bool)
    m[0, :], m[2, 1], m[3, ::2] = True, True, True            # rows 1, 4 select nothing
    A = pg.from_numpy(g, dist=DISTS[dist])
    M = pg.from_numpy(m, dist=DISTS[dist])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ax in (None, 0, 1, (0, 1)):
            for ddof in (0, 1, 3):
                want = np.var(g, axis=ax, ddof=ddof, where=m)
                got = np.var(A, axis=ax, ddof=ddof, where=m)
                got2 = np.std(A, axis=ax, ddof=ddof, where=M)
                if np.ndim(want):
                    assert_matches(got, want)
                    assert_matches(got2, np.sqrt(want))
                else:
                    collective_verdict(np.allclose([got, got2], [want, np.sqrt(want)], equal_nan=True),
                                       f"axis {ax} ddof {ddof}: {got}, {got2} vs {want}")
        assert_matches(np.var(A, axis=1, where=m, keepdims=True), np.var(g, axis=1, where=m, keepdims=True))
        assert_matches(np.var(A, axis=0, where=m[0]), np.var(g, axis=0, where=m[0]))
        gi = (g * 10).astype(np.int64)
        assert_matches(np.var(pg.from_numpy(gi, dist=DISTS[dist]), axis=0, where=m), np.var(gi, axis=0, where=m))
        gc = g + 1j * g[::-1]
        Ac = pg.from_numpy(gc, dist=DISTS[dist])
        assert_matches(np.var(Ac, axis=1, where=m), np.var(gc, axis=1, where=m))
        collective_verdict(np.isclose(np.std(Ac, where=m), np.std(gc, where=m)), "complex std")
        O = pg.zeros(6, dist=DISTS[dist])
        np.var(A, axis=0, where=m, out=O, ddof=1)
        assert_matches(O, np.var(g, axis=0, where=m, ddof=1))
        g3 = np.arange(60.0).reshape(3, 4, 5) % 7
        A3 = pg.from_numpy(g3, dist=DISTS[dist])
        assert_matches(np.var(A3, axis=(0, 2), where=g3 > 2, ddof=1), np.var(g3, axis=(0, 2), where=g3 > 2, ddof=1))
        assert_matches(np.var(A[:, 1:].T, axis=0, where=m[:, 1:].T), np.var(g[:, 1:].T, axis=0, where=m[:, 1:].T))


def test_var_where_on_a_grid_and_with_ghosts():
    g = np.arange(24.0).reshape(4, 6) ** 1.3
    m = (np.arange(24).reshape(4, 6) % 5) > 1
    grid = (2, P // 2) if P % 2 == 0 else (1, P)
    A = pg.from_numpy(g, dist=pg.Block(grid=grid))
    assert_matches(np.var(A, axis=1, where=m, ddof=1), np.var(g, axis=1, where=m, ddof=1))
    Ag = pg.from_numpy(g, ghosts=(1, 1))
    assert_matches(np.std(Ag, axis=0, where=m), np.std(g, axis=0, where=m))


def test_var_where_a_lazy_mask_as_numpy_users_write_it():
    """``np.var(A, where=A > 10)``: the mask is an unevaluated expression."""
    g = np.arange(24.0).reshape(4, 6) ** 1.3
    A = pg.from_numpy(g, dist=pg.Cyclic())
    assert_matches(np.var(A, axis=1, where=A > 3), np.var(g, axis=1, where=g > 3))


def test_var_where_warns_on_every_locale_alike():
    g = np.arange(24.0).reshape(4, 6)
    m = np.ones((4, 6), bool)
    m[1] = False                                   # row 1 selects nothing: NumPy warns
    A = pg.from_numpy(g, dist=pg.Block())
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always", RuntimeWarning)
        got = np.var(A, axis=1, where=m)
    warned = any("Degrees of freedom" in str(x.message) for x in w)
    every = comm.allgather(warned)
    collective_verdict(all(every), f"warned on locales {[r for r, x in enumerate(every) if x]} only")


def test_var_where_a_view_of_a_distributed_mask():
    g = np.arange(30.0).reshape(5, 6) ** 1.3
    m = (np.arange(30).reshape(5, 6) % 4) > 0
    A, M = pg.from_numpy(g, dist=pg.Cyclic()), pg.from_numpy(m, dist=pg.Cyclic())
    assert_matches(np.var(A.T, axis=0, where=M.T), np.var(g.T, axis=0, where=m.T))


def test_var_with_a_complex_dtype_has_numpys_result_dtype():
    g = np.arange(24.0).reshape(4, 6) ** 1.3
    A = pg.from_numpy(g)
    assert_matches(np.var(A, axis=0, dtype=np.complex128), np.var(g, axis=0, dtype=np.complex128))


def test_var_into_an_integer_out_like_numpy():
    g = np.arange(24.0).reshape(4, 6) ** 1.3
    m = (np.arange(24).reshape(4, 6) % 5) > 1
    O = pg.zeros(6, dtype=np.int64)
    np.var(pg.from_numpy(g), axis=0, where=m, out=O)
    assert_matches(O, np.var(g, axis=0, where=m, out=np.zeros(6, np.int64)))


SMALL = settings(max_examples=10)


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
                collective_verdict(_same_dists(got, np.asarray(np.sum(a, axis=axis, dtype=odt))), f"sum dtype={odt}")


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


DISTS_asnumpy = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]


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
# nanmean / mean: NumPy's errors and warnings
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dist", DISTS_asnumpy, ids=str)
@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.uint16, np.bool_])
def test_nanmean_of_floats_with_an_integer_dtype_raises(dist, dtype):
    """Was: np.nanmean(float A, dtype=int) returned truncated sums over counts (NumPy: TypeError)."""
    a = np.array([[1.5, np.nan, 2.5], [3.7, 4.2, -1.1]])
    A = pg.from_numpy(a, dist=dist)
    for axis in (None, 0, 1):
        _raises_as_numpy(lambda: np.nanmean(a, axis=axis, dtype=dtype), lambda: np.nanmean(A, axis=axis, dtype=dtype),
                         f"nanmean(axis={axis}, dtype={np.dtype(dtype)})")


def _warned(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn()
    return r, any("Mean of empty slice" in str(x.message) for x in w)


@pytest.mark.parametrize("dist", DISTS_asnumpy, ids=str)
@pytest.mark.parametrize("shape,axis,keepdims", [((0,), None, True), ((0,), 0, False), ((0, 3), 0, False),
                                                 ((0, 3), 1, False), ((3, 0), 1, True), ((3, 0), (0, 1), True),
                                                 ((3, 0), 0, False), ((2, 3), 0, False)])
@pytest.mark.parametrize("fn", [np.mean, np.nanmean])
def test_mean_of_empty_slices_warns_as_numpy(dist, shape, axis, keepdims, fn):
    """Was: np.mean / np.nanmean of integer arrays gave NaN for empty slices without NumPy's
    'Mean of empty slice' warning (axis reductions, keepdims)."""
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    A = pg.from_numpy(a, dist=dist)
    want, warned = _warned(lambda: fn(a, axis=axis, keepdims=keepdims))
    got, pg_warned = _warned(lambda: fn(A, axis=axis, keepdims=keepdims))
    _same_asnumpy(got, want, f"{fn.__name__}{shape} axis={axis}")
    collective_verdict(pg_warned == warned, f"warned {pg_warned}, NumPy {warned}")


@pytest.mark.parametrize("dist", DISTS_asnumpy, ids=str)
def test_mean_where_emptying_a_slice_warns_everywhere(dist):
    """A where= mask that leaves one slice (owned by one locale) empty: NumPy warns; so does every locale."""
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    w = np.ones((3, 4), bool)
    w[:, 3] = False
    A = pg.from_numpy(a, dist=dist)
    want, warned = _warned(lambda: np.mean(a, axis=0, where=w))
    got, pg_warned = _warned(lambda: np.mean(A, axis=0, where=w))
    _same_asnumpy(got, want, "mean(where=)")
    collective_verdict(pg_warned and warned, f"warned {pg_warned}, NumPy {warned}")
    _, pg_warned = _warned(lambda: np.mean(A, axis=1, where=w))
    collective_verdict(not pg_warned, "warned with no empty slice")


@pytest.mark.parametrize("fn", [np.mean, np.nanmean])
def test_float32_mean_divides_by_the_count_as_numpy(fn):
    """Was: the full mean divided a float32 sum by the count in float32 (a Python int is weak;
    np.nanmean forced dtype=float32), so with 2**24 + 1 elements the count became 2**24 and
    the mean of ones was 1.0 where NumPy (dividing in float64, then casting) gives 0.99999994."""
    n = 2**24 + 1
    a = np.ones(n, np.float32)
    A = pg.ones(n, dtype=np.float32, dist=pg.Block())
    for kw in ({}, {"axis": 0}, {"keepdims": True}):
        _same_asnumpy(fn(A, **kw), fn(a, **kw), f"{fn.__name__}({kw})")


@pytest.mark.parametrize("op", ["argmin", "argmax"])
@pytest.mark.parametrize("shape, axis", [((0, 0), 0), ((0, 0), -1), ((0, 0, 0), 1), ((3, 0, 0), 2)])
def test_arg_reduction_over_an_empty_axis_raises_even_for_an_empty_result(op, shape, axis):
    # pgas returned an empty index array; NumPy raises ValueError whenever the reduced axis is empty
    A = pg.zeros(shape, dist=pg.Cyclic())
    with pytest.raises(ValueError):
        getattr(np, op)(np.zeros(shape), axis=axis)
    try:
        getattr(np, op)(A, axis=axis)
        raised = None
    except ValueError as e:
        raised = e
    collective_verdict(raised is not None, f"{op}(axis={axis}) of shape {shape} ran; NumPy raises ValueError")
    for ok_shape, ok_axis in [((3, 0), 0), ((0, 4), 1), ((2, 0, 3), 0)]:  # a non-empty axis: an empty result
        B = pg.zeros(ok_shape, dist=pg.Cyclic())
        got = getattr(np, op)(B, axis=ok_axis).to_numpy()
        want = getattr(np, op)(np.zeros(ok_shape), axis=ok_axis)
        collective_verdict(got.shape == want.shape and got.dtype == want.dtype, f"{got!r} vs {want!r}")


DISTS_api = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3)]


@pytest.mark.parametrize("dist", DISTS_api)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("shape,axis,keepdims", [((3, 0), 0, False), ((3, 0), -2, True), ((0, 3), -1, True),
                                                  ((0, 3), 1, False)])
def test_argmax_along_axis_with_empty_result(dist, op, shape, axis, keepdims):
    # NumPy: np.argmax(zeros((3, 0)), axis=0) is an empty int64 array (nothing to reduce is empty
    # only along the other axis); pgas raises "attempt to get argmax of an empty sequence".
    G = np.zeros(shape)
    A = pg.from_numpy(G, dist=dist)
    assert_matches(getattr(np, op)(A, axis=axis, keepdims=keepdims), getattr(np, op)(G, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dist", DISTS_api)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_var_with_small_integer_dtype(dist, dtype):
    # Was: NumPy computes var in the given dtype (wrapping); pgas gave a different value silently
    # (e.g. np.var(u8 array, dtype=np.uint8): pgas 1, NumPy 2 at 1 locale, Block).
    rng = np.random.default_rng(1)
    rng.integers(-128, 127, (5, 6))
    G = rng.integers(0, 255, (5, 6)).astype(np.uint8)
    A = pg.from_numpy(G, dist=dist)
    # pgas refuses an integer dtype= for var/std (a clear error on every locale) rather than
    # copying NumPy's truncated mean; a floating dtype gives NumPy's value.
    for fn in (np.var, np.std):
        with pytest.raises(TypeError, match="floating dtype"):
            fn(A, dtype=dtype)
    got, want = np.var(A, dtype=np.float32), np.var(G, dtype=np.float32)
    collective_verdict(got.dtype == want.dtype and np.isclose(got, want, rtol=1e-6), f"got {got!r}, want {want!r}")
    assert_matches(np.std(A, axis=0, dtype=np.float64), np.std(G, axis=0, dtype=np.float64))

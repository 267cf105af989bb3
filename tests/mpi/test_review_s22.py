"""Review of sessions 21-22's merges (rev22): the NumPy functions on DistArrays, the copy
kernel's overlap guard and the persistent-request gathers of index plans, each against
NumPy at 1-4 locales.  The defects found are fixed and tested here; the plan tests hold
the gather's contract (they passed before as well)."""

import gc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from util import a_dist, assert_matches, collective_verdict
from util import same_as_numpy as _same

P = pg.num_locales
ME = pg.here
DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]


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
    _same(np.isclose(*args(A), **kw), np.isclose(*args(a), **kw), f"isclose{'(y, A)' if first else '(A, y)'}")


@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_isclose_numpy_scalars_and_bad_tolerances(dist):
    a = np.array([0.1, 0.2, np.nan, 3.0], dtype=np.float32)
    A = pg.from_numpy(a, dist=dist)
    for y in (np.float64(0.1), np.float32(0.1), np.array(0.1), 0.1 + 0j):
        _same(np.isclose(A, y, rtol=0, atol=0), np.isclose(a, y, rtol=0, atol=0), f"isclose(A, {y!r})")
    with pytest.warns(RuntimeWarning, match="not valid"):
        want = np.isclose(a, 0.1, atol=np.nan)
    with pytest.warns(RuntimeWarning, match="not valid"):
        got = np.isclose(A, 0.1, atol=np.nan)
    _same(got, want, "isclose(atol=nan)")


# ---------------------------------------------------------------------------
# nanmean / mean: NumPy's errors and warnings
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dist", DISTS, ids=str)
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


@pytest.mark.parametrize("dist", DISTS, ids=str)
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
    _same(got, want, f"{fn.__name__}{shape} axis={axis}")
    collective_verdict(pg_warned == warned, f"warned {pg_warned}, NumPy {warned}")


@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_mean_where_emptying_a_slice_warns_everywhere(dist):
    """A where= mask that leaves one slice (owned by one locale) empty: NumPy warns; so does every locale."""
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    w = np.ones((3, 4), bool)
    w[:, 3] = False
    A = pg.from_numpy(a, dist=dist)
    want, warned = _warned(lambda: np.mean(a, axis=0, where=w))
    got, pg_warned = _warned(lambda: np.mean(A, axis=0, where=w))
    _same(got, want, "mean(where=)")
    collective_verdict(pg_warned and warned, f"warned {pg_warned}, NumPy {warned}")
    _, pg_warned = _warned(lambda: np.mean(A, axis=1, where=w))
    collective_verdict(not pg_warned, "warned with no empty slice")


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
            _same(np.nan_to_num(A, **kw), np.nan_to_num(a, **kw), f"nan_to_num({kw})")


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
        _same(np.trace(A2, off, *ax), np.trace(a2, off, *ax), f"trace({off}, {ax})")


# ---------------------------------------------------------------------------
# Index plans' persistent gathers
# ---------------------------------------------------------------------------
def _indices(seed, r, n, k, empty):
    """Locale ``r``'s indices (repeats, negatives; none on the locales ``empty`` picks)."""
    if empty and r % 2 == (seed % 2):
        return np.zeros(0, np.int64)
    rng = np.random.default_rng([seed, r])
    i = rng.integers(0, n, k)
    i[::3] = i[0] if k else 0                            # repeats
    return np.where(rng.random(k) < 0.3, i - n, i)


@given(dist=a_dist(1), n=st.integers(1, 3 * 4 + 2), k=st.integers(0, 12), seed=st.integers(0, 100),
       empty=st.booleans(), order=st.permutations(range(6)))
@settings(max_examples=12, deadline=None)
def test_plan_gathers_interleaved_across_dtypes_arrays_and_writes(dist, n, k, seed, empty, order):
    """Two plans, gathers of several dtypes from two arrays of one layout interleaved in a
    drawn order, the arrays written between gathers, one plan dropped (and collected)
    midway: every gather equals NumPy's fancy indexing of the array as it is then."""
    i1, i2 = _indices(seed, ME, n, k, empty), _indices(seed + 7, ME, n, k + 3, not empty)
    base = np.arange(n, dtype=np.float64) * 1.5 - 3
    arrays = {dt: pg.from_numpy(base.astype(dt), dist=dist) for dt in (np.float64, np.int32, np.complex64, np.bool_)}
    ref = {dt: base.astype(dt) for dt in arrays}
    plans = [arrays[np.float64].index_plan(i1), arrays[np.int32].index_plan(i2)]
    idx = [i1, i2]
    other = pg.from_numpy(-base, dist=dist)            # another array of the same layout and dtype
    steps = [("g", 0, np.float64), ("g", 1, np.int32), ("g", 0, np.complex64), ("w", None, np.float64),
             ("g", 1, np.bool_), ("o", 0, None)]
    for rnd in range(2):
        for s in order:
            what, p, dt = steps[s]
            if what == "w":                               # a statement, then a scatter, on float64
                arrays[dt][...] = arrays[dt] * 2 + rnd
                ref[dt] = ref[dt] * 2 + rnd
                continue
            for q in ([p, 1 - p] if plans[1 - p] is not None else [p]):
                if plans[q] is None:
                    continue
                if what == "o":
                    got, want = other.gather(plans[q]), (-base)[idx[q]]
                else:
                    got, want = arrays[dt].gather(plans[q]), ref[dt][idx[q]]
                collective_verdict(got.dtype == want.dtype and np.array_equal(got, want),
                                   lambda: f"round {rnd} step {steps[s]} plan {q}: {got} != {want}")
        if rnd == 0:
            plans[1] = None                               # freed mid-program (all its dtypes' requests)
            gc.collect()
    again = arrays[np.float64].index_plan(i2)            # a new plan after the free: fresh requests
    collective_verdict(np.array_equal(arrays[np.float64].gather(again), ref[np.float64][i2]), "gather after a free")


def test_plan_gather_result_is_not_the_plans_buffer():
    """A gather's result is the caller's own: writing it, or gathering again, changes no earlier result."""
    n = 4 * P + 1
    A = pg.from_numpy(np.arange(n, dtype=np.int64), dist=pg.Block())
    mine = np.arange(n) if ME == 0 else np.zeros(0, np.int64)    # sorted, distinct: the identity case
    plan = A.index_plan(mine)
    g1 = A.gather(plan)
    A[...] = A * 10
    g2 = A.gather(plan)
    g1[...] = -1 if len(g1) else 0
    g3 = A.gather(plan)
    collective_verdict(np.array_equal(g2, mine * 10) and np.array_equal(g3, mine * 10), f"{g2} {g3}")


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
    _same(np.diff(A * 2, 0), np.diff(a * 2, 0), "diff(expression, 0)")


@pytest.mark.parametrize("fn", [np.mean, np.nanmean])
def test_float32_mean_divides_by_the_count_as_numpy(fn):
    """Was: the full mean divided a float32 sum by the count in float32 (a Python int is weak;
    np.nanmean forced dtype=float32), so with 2**24 + 1 elements the count became 2**24 and
    the mean of ones was 1.0 where NumPy (dividing in float64, then casting) gives 0.99999994."""
    n = 2**24 + 1
    a = np.ones(n, np.float32)
    A = pg.ones(n, dtype=np.float32, dist=pg.Block())
    for kw in ({}, {"axis": 0}, {"keepdims": True}):
        _same(fn(A, **kw), fn(a, **kw), f"{fn.__name__}({kw})")


def test_copied_plan_has_its_own_messages():
    """copy.copy / copy.deepcopy of an index plan gather by messages of their own: the
    copies still gather the current values after the original is collected (a copy
    sharing its persistent requests read freed buffers)."""
    import copy
    import gc

    n = 4 * P + 3
    g = np.arange(n, dtype=np.float64)
    A = pg.from_numpy(g, dist=pg.Cyclic())
    idx = (np.arange(5, dtype=np.int64) * 7 + pg.here) % n
    plan = A.index_plan(idx)
    ok = np.array_equal(A.gather(plan), g[idx])
    c1, c2 = copy.copy(plan), copy.deepcopy(plan)
    del plan
    gc.collect()
    A[:] = A * 2 + 1
    g = g * 2 + 1
    for c in (c1, c2, c1):
        ok = ok and np.array_equal(A.gather(c), g[idx])
    collective_verdict(ok, "a copied plan gathered stale values")

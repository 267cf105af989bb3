"""Irregular access (update / gather / scatter with and without index plans) against NumPy.

Every locale derives its own indices from the drawn seed and its locale number;
every locale can derive every other locale's too, so each computes the global
NumPy reference itself.


Also: every update op and dtype, plans refused on other layouts, atomics under contention
(fetch-add, compare-exchange), one-sided slices with steps, and errors raised everywhere."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import assert_matches, collective_verdict, raised_everywhere

import pgas as pg
from pgas import comm

P = pg.num_locales
ME = pg.here
MPI_SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=25)
UFUNCS = {"add": np.add, "xor": np.bitwise_xor, "or": np.bitwise_or, "and": np.bitwise_and,
          "min": np.minimum, "max": np.maximum}
PATTERNS = ["random", "empty", "local", "hot", "repeats", "one_element"]


def check(ok, what=""):
    """All locales agree on the verdict (so no locale is left in a collective)."""
    collective_verdict(bool(ok), lambda: repr(what))


def dists():
    return st.sampled_from(["block", "cyclic", "bc2", "bc3"]).map(
        lambda k: {"block": pg.Block(), "cyclic": pg.Cyclic(), "bc2": pg.BlockCyclic(2), "bc3": pg.BlockCyclic(3)}[k])


def locale_indices(A, pattern, seed, locale, n):
    """Locale ``locale``'s (k, ndim) index rows for ``pattern``: the same on every locale."""
    rng = np.random.default_rng([seed, locale])
    shape = np.array(A.shape)
    if pattern == "empty":
        k = 0 if locale % 2 == 0 else n
        return rng.integers(0, shape, size=(k, A.ndim))
    if pattern in ("local", "hot"):
        owner = locale if pattern == "local" else 0
        owned = A.layout.owned(owner)
        if any(len(o) == 0 for o in owned):
            return np.zeros((0, A.ndim), dtype=np.int64)
        return np.stack([rng.choice(o, size=n) for o in owned], axis=1)
    if pattern == "repeats":
        return rng.integers(0, np.minimum(shape, 2), size=(n, A.ndim))
    if pattern == "one_element":
        return np.zeros((n, A.ndim), dtype=np.int64) + (shape - 1)
    idx = rng.integers(0, shape, size=(n, A.ndim))
    neg = rng.random(idx.shape) < 0.2
    return np.where(neg, idx - shape, idx)                    # some negative indices


def values_for(dtype, seed, locale, n):
    rng = np.random.default_rng([seed, locale, 7])
    v = rng.integers(-20, 20, size=n)
    if np.dtype(dtype) == bool:
        return v > 0
    if np.dtype(dtype).kind == "c":
        return (v + 1j * rng.integers(-3, 3, size=n)).astype(dtype)
    return v.astype(dtype)


def as_arg(rows, ndim, form):
    """The index argument in one of the accepted forms."""
    if ndim == 1 and form == "flat":
        return rows[:, 0]
    return tuple(rows.T) if form == "tuple" else rows


def start(shape, dtype, dist, seed):
    g = values_for(dtype, seed, 99, int(np.prod(shape))).reshape(shape)
    return g, pg.from_numpy(g, dist=dist)


def reference_update(g, A, pattern, seed, n, dtype, op):
    ref = g.copy()
    for r in range(P):
        rows = locale_indices(A, pattern, seed, r, n)
        vals = values_for(dtype, seed, r, len(rows)).astype(dtype)
        idx = tuple(rows.T % np.array(A.shape)[:, None])
        if op == "replace":
            for k in range(len(vals)):
                ref[tuple(i[k] for i in idx)] = vals[k]
        else:
            UFUNCS[op].at(ref, idx, vals)
    return ref


OPS_BY_DTYPE = {np.int64: ["add", "xor", "or", "and", "min", "max", "replace"],
                np.int32: ["add", "xor", "min", "replace"],
                np.float64: ["add", "min", "max", "replace"],
                np.complex128: ["add", "replace"],
                bool: ["xor", "or", "and", "replace"]}


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 2))
    shape = tuple(draw(st.lists(st.integers(1, 13), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(list(OPS_BY_DTYPE)))
    op = draw(st.sampled_from(OPS_BY_DTYPE[dtype]))
    return (shape, dtype, op, draw(dists()), draw(st.sampled_from(PATTERNS)), draw(st.integers(0, 40)),
            draw(st.integers(0, 2 ** 16)), draw(st.sampled_from(["flat", "tuple", "rows"])), draw(st.booleans()))


@MPI_SETTINGS
@given(cases())
def test_update_matches_numpy(case):
    shape, dtype, op, dist, pattern, n, seed, form, use_plan = case
    g, A = start(shape, dtype, dist, seed)
    rows = locale_indices(A, pattern, seed, ME, n)
    vals = values_for(dtype, seed, ME, len(rows))
    arg = as_arg(rows, A.ndim, form)
    with pg.comm_diagnostics() as d:
        A.update(A.index_plan(arg) if use_plan else arg, vals, op)
    ref = reference_update(g, A, pattern, seed, n, dtype, op)
    check(np.array_equal(A.to_numpy(), ref), f"update {op} {pattern} {dist}")
    if not use_plan:
        check(d.matrix.max(initial=0) <= 1 and np.all(np.diag(d.matrix) == 0), d.matrix)


@MPI_SETTINGS
@given(cases())
def test_gather_and_scatter_match_numpy(case):
    shape, dtype, _, dist, pattern, n, seed, form, use_plan = case
    g, A = start(shape, dtype, dist, seed)
    rows = locale_indices(A, pattern, seed, ME, n)
    arg = as_arg(rows, A.ndim, form)
    plan = A.index_plan(arg)
    with pg.comm_diagnostics() as d:
        got = A.gather(plan if use_plan else arg)
    check(got.dtype == A.dtype and np.array_equal(got, g[tuple(rows.T)]), f"gather {pattern} {dist}")
    check(d.matrix.max(initial=0) <= (1 if use_plan else 2), d.matrix)
    vals = values_for(dtype, seed, ME, len(rows))
    with pg.comm_diagnostics() as d:
        A.scatter(plan if use_plan else arg, vals)
    check(np.array_equal(A.to_numpy(), reference_update(g, A, pattern, seed, n, dtype, "replace")), "scatter")
    check(d.matrix.max(initial=0) <= 1, d.matrix)


def test_plan_is_reused_and_serves_other_arrays():
    n = 50
    A = pg.from_numpy(np.arange(n, dtype=np.float64), dist=pg.Cyclic())
    B = pg.from_numpy(np.arange(n, dtype=np.int64) * 10, dist=pg.Cyclic())
    idx = np.random.default_rng(ME).integers(0, n, size=30)
    plan = A.index_plan(idx)
    assert len(plan) == 30
    for step in range(3):
        A.local[...] += 1
        check(np.array_equal(A.gather(plan), idx + step + 1.0), "gather after change")
    check(np.array_equal(B.gather(plan), idx * 10), "plan serves an array of the same layout")
    C = pg.zeros(n + 1, dist=pg.Cyclic())
    with pytest.raises(ValueError, match="another shape or distribution"):
        C.gather(plan)


def test_update_all_repeats_count():
    """Every locale adds 1 to element 0 k times: all P * k updates apply."""
    A = pg.zeros(7, dtype=np.int64, dist=pg.Block())
    k = 100
    A.update(np.zeros(k, dtype=np.int64), 1, "add")                  # a scalar value for all
    A.update(np.zeros(k + 1, dtype=np.int64), np.full(k + 1, 5, dtype=np.int64), "xor")
    check(A[0] == (P * k) ^ (5 if P % 2 else 0), A.to_numpy())


def test_single_element_operations_are_one_message():
    A = pg.from_numpy(np.arange(4 * P, dtype=np.int64), dist=pg.Block())
    target = 4 * ((ME + 1) % P) + 1                      # owned by the next locale
    remote = 0 if P == 1 else 1
    pg.barrier()                                         # constructors do not end with a barrier
    with pg.comm_diagnostics() as d:
        A.update_one(target, 100, "add")
    check(d.matrix[ME].sum() == remote and d.messages == remote * P, d.matrix)
    with pg.comm_diagnostics() as d:
        old = A.fetch_add(target, 1)
    check(old == target + 100 and d.matrix[ME].sum() == remote, (old, d.matrix))
    with pg.comm_diagnostics() as d:
        found = A.compare_exchange(target, target + 101, -5)
        again = A.compare_exchange(target, 0, 7)
    check(found == target + 101 and again == -5 and d.matrix[ME].sum() == 2 * remote, (found, again))
    with pg.comm_diagnostics() as d:
        A.update_one(4 * ME, 3, "max")                 # local: no message
    check(d.messages == 0, d.matrix)
    pg.barrier()
    want = np.arange(4 * P)
    want[1::4] = -5
    want[0::4] = np.maximum(want[0::4], 3)
    check(np.array_equal(A.to_numpy(), want), A.to_numpy())


def test_concurrent_one_sided_updates_are_atomic():
    A = pg.zeros(3, dtype=np.int64, dist=pg.Cyclic())
    pg.barrier()
    for k in range(20):
        A.update_one(k % 3, 1, "add")
        A.fetch_add(-1, 2)
    pg.barrier()
    check(np.array_equal(A.to_numpy(), [7 * P, 7 * P, 6 * P] + np.array([0, 0, 40 * P])), A.to_numpy())


def test_one_sided_ops_on_other_dtypes():
    F = pg.zeros(5, dtype=np.float64, dist=pg.Cyclic())
    pg.barrier()
    F.update_one(2, 0.5, "add")
    F.update_one(3, -1.0, "min")
    B = pg.zeros(4, dtype=bool, dist=pg.Cyclic())
    pg.barrier()
    B.update_one(1, True, "xor")
    pg.barrier()
    check(F[2] == 0.5 * P and F[3] == -1.0, F.to_numpy())
    check(B[1] == bool(P % 2), B.to_numpy())
    with pytest.raises(TypeError, match="compare_exchange needs an integer"):
        F.compare_exchange(0, 0.0, 1.0)
    with pytest.raises(TypeError, match="op 'xor' is not defined for float64"):
        F.update_one(0, 1.0, "xor")


def test_errors_are_collective_and_nothing_is_applied():
    n = 10
    A = pg.from_numpy(np.arange(n, dtype=np.int64), dist=pg.Cyclic())
    bad = n if ME == P - 1 else 0                    # only the last locale is out of range
    with pytest.raises((IndexError, pg.LocaleError), match="out of bounds"):
        A.update(np.array([1, bad]), np.array([5, 5]), "add")
    short = 1 if ME == 0 else 2                      # only locale 0 gives too few values
    with pytest.raises((ValueError, pg.LocaleError), match="values of shape"):
        A.update(np.array([2, 3]), np.ones(short, dtype=np.int64), "add")
    floats = np.float64 if ME == 0 else np.int64
    with pytest.raises((TypeError, pg.LocaleError), match="cannot store float64"):
        A.scatter(np.array([4]), np.ones(1, dtype=floats))
    with pytest.raises((IndexError, pg.LocaleError), match="out of bounds"):
        A.gather(np.array([-n - 1 if ME == 0 else 0]))
    with pytest.raises(TypeError, match="op 'xor' is not defined"):
        pg.zeros(3, dist=pg.Block()).update(np.array([0]), np.array([1.0]), "xor")
    with pytest.raises(ValueError, match="unknown update op"):
        A.update(np.array([0]), np.array([1]), "mul")
    with pytest.raises(IndexError, match="must be integers"):
        A.gather(np.array([0.5]))
    M = pg.zeros((3, 4), dist=pg.Block())
    with pytest.raises(IndexError, match=r"\(k, 2\) array"):
        M.gather(np.array([1, 2, 3]))
    check(np.array_equal(A.to_numpy(), np.arange(n)), A.to_numpy())


def test_bulk_slice_transfers_are_one_message_per_owner():
    n = 20 * P + 3
    for dist in (pg.Block(), pg.Cyclic(), pg.BlockCyclic(4)):
        A = pg.from_numpy(np.arange(n, dtype=np.int64), dist=dist)
        pg.barrier()
        lo, hi = 3 + ME, n - 2 - ME
        owners = {A.owner(i) for i in range(lo, hi)} - {ME}
        with pg.comm_diagnostics() as d:
            got = A.get(slice(lo, hi))
        check(np.array_equal(got, np.arange(lo, hi)), got)
        check(d.matrix[ME].sum() == len(owners) and d.matrix.max(initial=0) <= 1, (dist, d.matrix))
        pg.barrier()
        B = pg.zeros(n, dtype=np.int64, dist=dist)
        pg.barrier()
        part = slice(ME * 5 + 1, ME * 5 + 5)            # disjoint pieces from the middle
        owners = {B.owner(i) for i in range(part.start, part.stop)} - {ME}
        with pg.comm_diagnostics() as d:
            B.put(part, np.arange(part.start, part.stop))
        check(d.matrix[ME].sum() == len(owners), (dist, d.matrix))
        pg.barrier()
        want = np.zeros(n, dtype=np.int64)
        want[1:5 * P] = np.arange(1, 5 * P)
        want[0:5 * P:5] = 0
        check(np.array_equal(B.to_numpy(), want), B.to_numpy())


FEW = settings(max_examples=40)


OPS = {np.dtype(bool): ["xor", "or", "and", "replace"],
       np.dtype(np.int32): ["add", "xor", "or", "and", "min", "max", "replace"],
       np.dtype(np.int64): ["add", "xor", "min", "replace"],
       np.dtype(np.float64): ["add", "min", "max", "replace"],
       np.dtype(np.complex128): ["add", "replace"]}


DISTS = {"block": pg.Block, "cyclic": pg.Cyclic, "bc2": lambda: pg.BlockCyclic(2),
         "bc3": lambda: pg.BlockCyclic(3)}


def raised(fn) -> str | None:
    """The name of the exception ``fn()`` raises, or None."""
    try:
        fn()
    except Exception as e:                                   # noqa: BLE001 - any error counts here
        return type(e).__name__
    return None


def rows_for(shape, pattern, seed, locale, n, layout):
    """Locale ``locale``'s (k, ndim) index rows, with some negative indices; the same on every locale."""
    rng = np.random.default_rng([seed, locale])
    shp = np.array(shape)
    if pattern == "some_empty" and locale % 2 == 1:
        return np.zeros((0, len(shape)), dtype=np.int64)
    if pattern == "hot":                                     # everything to the last element
        return np.tile(shp - 1, (n, 1))
    if pattern == "to_one_locale":
        owned = layout.owned(P - 1)
        if any(len(o) == 0 for o in owned):
            return np.zeros((0, len(shape)), dtype=np.int64)
        return np.stack([rng.choice(o, size=n) for o in owned], axis=1)
    hi = np.minimum(shp, 2) if pattern == "repeats" else shp
    idx = rng.integers(0, hi, size=(n, len(shape)))
    return np.where(rng.random(idx.shape) < 0.3, idx - shp, idx)


def values_for_contention(dtype, seed, locale, n):
    rng = np.random.default_rng([seed, locale, 1])
    v = rng.integers(-9, 9, size=n)
    if dtype == bool:
        return v > 0
    if dtype.kind == "c":
        return (v + 1j * rng.integers(-3, 3, size=n)).astype(dtype)
    return v.astype(dtype)


@st.composite
def update_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 7), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(sorted(OPS, key=str)))
    return (shape, dtype, draw(st.sampled_from(OPS[dtype])), draw(st.sampled_from(sorted(DISTS))),
            draw(st.sampled_from(["random", "repeats", "hot", "some_empty", "to_one_locale"])),
            draw(st.integers(0, 30)), draw(st.integers(0, 1000)), draw(st.sampled_from(["tuple", "rows"])),
            draw(st.booleans()))


@FEW
@given(update_cases())
def test_update_every_op_dtype_and_index_form(case):
    """n-D update with tuple or (k, ndim) indices, negative and repeated indices, with or without a plan."""
    shape, dtype, op, dist, pattern, n, seed, form, use_plan = case
    g = values_for_contention(dtype, seed, 99, int(np.prod(shape))).reshape(shape)
    A = pg.from_numpy(g, dist=DISTS[dist]())
    ref = g.copy()
    for r in range(P):
        rows = rows_for(shape, pattern, seed, r, n, A.layout)
        idx, vals = tuple(rows.T), values_for_contention(dtype, seed, r, len(rows))
        if op == "replace":
            for k in range(len(vals)):
                ref[tuple(i[k] for i in idx)] = vals[k]
        else:
            UFUNCS[op].at(ref, idx, vals)
    rows = rows_for(shape, pattern, seed, ME, n, A.layout)
    arg = tuple(rows.T) if form == "tuple" else rows
    A.update(A.index_plan(arg) if use_plan else arg, values_for_contention(dtype, seed, ME, len(rows)), op)
    assert_matches(A, ref, rtol=1e-12)


@FEW
@given(st.sampled_from(sorted(DISTS)), st.integers(1, 40), st.integers(0, 1000))
def test_plan_serves_other_dtypes_and_scatter_repeats_keep_last(dist, size, seed):
    """A plan made on an int array gathers from a float one and scatters complex values;
    with repeated indices the last position (highest locale among locales) wins."""
    d = DISTS[dist]()
    rng = np.random.default_rng([seed, ME])
    idx = rng.integers(-size, size, size=3 * size)
    plan = pg.zeros(size, dtype=np.int64, dist=d).index_plan(idx)
    F = pg.from_numpy(np.arange(size) * 0.5, dist=d)
    got = F.gather(plan)
    collective_verdict(np.array_equal(got, (np.arange(size) * 0.5)[idx]), "gather through a reused plan")
    C = pg.zeros(size, dtype=np.complex128, dist=d)
    C.scatter(plan, idx + 1j * np.arange(len(idx)) + 100j * ME)
    ref = np.zeros(size, np.complex128)
    for r in range(P):
        ii = np.random.default_rng([seed, r]).integers(-size, size, size=3 * size)
        ref[ii] = ii + 1j * np.arange(len(ii)) + 100j * r       # NumPy: the last assignment wins
    assert_matches(C, ref)


def test_plan_is_refused_on_another_layout():
    plan = pg.zeros(17, dist=pg.BlockCyclic(2)).index_plan(np.arange(17))
    for other in (pg.zeros(18, dist=pg.BlockCyclic(2)), pg.zeros((17, 1), dist=pg.Block())):
        collective_verdict(raised(lambda: other.gather(plan)) == "ValueError", f"plan accepted by {other}")
    if P > 1:
        B = pg.zeros(17, dist=pg.BlockCyclic(3))
        collective_verdict(raised(lambda: B.scatter(plan, 1.0)) == "ValueError", "plan accepted by BlockCyclic(3)")


SLICES = [slice(None), slice(None, None, -1), slice(None, None, -2), slice(-2, 0, -3), slice(1, None, 2),
          slice(5, 1, -1), slice(None, None, -5), slice(3, 3), 0, -1]


@FEW
@given(st.integers(1, 12), st.integers(1, 12), st.integers(1, 3), st.integers(1, 3),
       st.sampled_from(SLICES), st.sampled_from(SLICES), st.integers(0, P - 1))
def test_one_sided_slices_on_block_cyclic_with_steps(n0, n1, b0, b1, k0, k1, writer):
    """get / put of 2-D keys with negative steps on BlockCyclic (the segments path), against NumPy."""
    g = np.arange(n0 * n1, dtype=np.int64).reshape(n0, n1)
    key = (k0 if isinstance(k0, slice) else k0 % n0, k1 if isinstance(k1, slice) else k1 % n1)
    A = pg.from_numpy(g, dist=pg.BlockCyclic((b0, b1)))
    got = A.get(key)
    collective_verdict(np.array_equal(got, g[key]) and np.shape(got) == np.shape(g[key]),
                       lambda: f"get {key}: {got} != {g[key]}")
    value = -1 - np.arange(np.size(g[key])).reshape(np.shape(g[key]))
    if ME == writer:
        A.put(key, value)
    pg.barrier()
    ref = g.copy()
    ref[key] = value
    assert_matches(A, ref)


@pytest.mark.parametrize("dtype, step", [(np.int64, 1), (np.int32, 3), (np.float64, 0.5)])
def test_fetch_add_under_contention_returns_every_old_value_once(dtype, step):
    """All locales hammer the last element: the final value and the set of old values are exact."""
    A = pg.zeros(2 * P + 1, dtype=dtype, dist=pg.Cyclic())
    k = 40
    olds = [float(A.fetch_add(-1, step)) for _ in range(k)]
    pg.barrier()
    every = sorted(x for part in comm.allgather(olds) for x in part)
    collective_verdict(every == [step * i for i in range(P * k)], f"old values {every[:8]}...")
    ref = np.zeros(2 * P + 1, dtype=dtype)
    ref[-1] = step * P * k
    assert_matches(A, ref)


def test_compare_exchange_under_contention_has_one_winner():
    for dtype, expected, mine in ((np.int64, 0, ME + 1), (np.int32, 0, -ME - 1), (bool, False, True)):
        A = pg.zeros(3, dtype=dtype, dist=pg.Block())
        found = A.compare_exchange(2, expected, mine)
        pg.barrier()
        winners = [r for r, f in enumerate(comm.allgather(found == expected)) if f]
        want = np.zeros(3, dtype=dtype)
        want[2] = True if dtype is bool else (winners[0] + 1) * (1 if dtype is np.int64 else -1)
        collective_verdict(len(winners) == 1, f"{dtype}: winners {winners}")
        assert_matches(A, want)


def test_update_one_under_contention_every_op():
    k = 25
    for dtype, op, v, init in ((np.int32, "add", 3, 7), (bool, "xor", True, False), (np.complex128, "add", 1 + 2j, 0),
                               (np.int64, "min", -5, 7), (bool, "or", True, False), (np.int32, "and", 6, 7),
                               (np.float64, "max", 2.5, 0), (np.int64, "replace", 4, 0)):
        A = pg.full(3, init, dtype=dtype, dist=pg.Block())
        for _ in range(k):
            A.update_one(-1, v, op)
        pg.barrier()
        ref = np.full(3, init, dtype=dtype)
        for _ in range(k * P):
            ref[-1] = v if op == "replace" else UFUNCS[op](ref[-1], v)
        assert_matches(A, ref)


BAD = {"out of range": lambda bad: ([0, 10] if bad else [0, 1], [1, 1]),
       "negative out of range": lambda bad: ([-11] if bad else [2], [1]),
       "values too short": lambda bad: ([1, 2], [1] if bad else [1, 2]),
       "float values": lambda bad: ([1], [1.5] if bad else [1]),
       "float indices": lambda bad: (np.array([1.0]) if bad else [1], [1]),
       "ragged tuple": lambda bad: ([1, 2], np.ones((2, 2)) if bad else [1, 1])}


@pytest.mark.parametrize("what", sorted(BAD))
def test_error_on_one_locale_is_raised_everywhere_and_nothing_applied(what):
    A = pg.zeros(10, dtype=np.int64, dist=pg.Block())
    idx, vals = BAD[what](ME == P - 1)
    for call in (lambda: A.update(idx, vals, "add"), lambda: A.scatter(idx, vals)):
        err = raised(call)
        every = comm.allgather(err)
        collective_verdict(all(e is not None for e in every), f"{what}: raised on {every}")
        assert_matches(A, np.zeros(10, dtype=np.int64))


@pytest.mark.parametrize("dist", [pg.Block(), pg.Cyclic()])
@pytest.mark.parametrize("failing", ["last", "first and last"])
def test_out_of_range_index_is_named_on_every_locale(failing, dist):
    """An index out of range given to ``update``, ``scatter`` or ``gather`` (with and without
    an index plan) on some locales only: every locale raises IndexError with the same
    message, naming the failing locale(s) and each one's index (the others' message named
    neither the locale nor, for several, every index)."""
    n = 3 * P + 1
    A = pg.zeros(n, dtype=np.int64, dist=dist)
    bad = {P - 1: n + 7} if failing == "last" else {0: -n - 2, P - 1: n + 7}
    idx = np.array([1, bad.get(ME, 0)], dtype=np.int64)
    calls = {"update": lambda: A.update(idx, 1), "scatter": lambda: A.scatter(idx, 5),
             "gather": lambda: A.gather(idx), "index_plan": lambda: A.index_plan(idx)}
    for name, call in calls.items():
        got = raised_everywhere(call, IndexError)
        want = [f"index {v} " for v in bad.values()]
        if P > 1:
            want += [f"(on locale {P - 1})"] if len(bad) == 1 else [f"locale {r}: " for r in bad]
        collective_verdict(all(w in got for w in want), f"{name}: raised {got!r}, wanted {want}")
        assert_matches(A, np.zeros(n, dtype=np.int64))


def test_unsupported_ops_raise_everywhere():
    for dtype, op in ((np.float64, "xor"), (bool, "add"), (np.complex128, "min"), (np.int64, "mul")):
        A = pg.zeros(4, dtype=dtype, dist=pg.Cyclic())
        for call in (lambda: A.update([0], np.ones(1, dtype), op), lambda: A.update_one(0, 1, op)):
            collective_verdict(raised(call) in ("TypeError", "ValueError"), f"{op} on {dtype} accepted")
        assert_matches(A, np.zeros(4, dtype=dtype))


def test_huge_unsigned_indices_are_out_of_range():
    A = pg.zeros(5, dtype=np.int64, dist=pg.Block())
    err = raised(lambda: A.update(np.array([2 ** 64 - 1], dtype=np.uint64), [1], "add"))
    collective_verdict(err == "IndexError", f"raised {err}; table now {A.to_numpy()}")


def test_message_counts_hot_spot_and_plans():
    """Aggregated ops: at most one message per locale pair (two for gather without a plan)."""
    A = pg.zeros(4 * P, dtype=np.int64, dist=pg.Cyclic())
    idx = np.zeros(100, np.int64) if ME % 2 else np.arange(4 * P)
    plan = A.index_plan(idx)
    for name, call, most in (("update", lambda: A.update(idx, 1), 1), ("scatter", lambda: A.scatter(idx, 2), 1),
                             ("gather", lambda: A.gather(idx), 2), ("plan gather", lambda: A.gather(plan), 1),
                             ("plan update", lambda: A.update(plan, 1, "xor"), 1)):
        with pg.comm_diagnostics() as d:
            call()
        worst = int(d.matrix.max(initial=0))
        collective_verdict(worst <= most, f"{name}: {worst} messages for one locale pair")

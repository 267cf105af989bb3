"""Adversarial review of the irregular operations and the HPC benchmarks' verification.

Each locale derives its own indices and values from the drawn data and its
locale number, and every locale can derive every other locale's, so each
builds the global NumPy reference itself.  Tests marked ``xfail(strict=True)``
expose real bugs (see their reasons).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas import comm
from pgas.array.core import DistArray
from pgas.tools.bench import isx
from pgas.tools.bench import randomaccess as ra
from pgas.tools.bench.nas_makea import CLASSES, verified
from util import assert_matches, collective_verdict

P = pg.num_locales
ME = pg.here
FEW = settings(max_examples=40)
UFUNCS = {"add": np.add, "xor": np.bitwise_xor, "or": np.bitwise_or, "and": np.bitwise_and,
          "min": np.minimum, "max": np.maximum}
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


def values_for(dtype, seed, locale, n):
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
    g = values_for(dtype, seed, 99, int(np.prod(shape))).reshape(shape)
    A = pg.from_numpy(g, dist=DISTS[dist]())
    ref = g.copy()
    for r in range(P):
        rows = rows_for(shape, pattern, seed, r, n, A.layout)
        idx, vals = tuple(rows.T), values_for(dtype, seed, r, len(rows))
        if op == "replace":
            for k in range(len(vals)):
                ref[tuple(i[k] for i in idx)] = vals[k]
        else:
            UFUNCS[op].at(ref, idx, vals)
    rows = rows_for(shape, pattern, seed, ME, n, A.layout)
    arg = tuple(rows.T) if form == "tuple" else rows
    A.update(A.index_plan(arg) if use_plan else arg, values_for(dtype, seed, ME, len(rows)), op)
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


# -- benchmark verification ---------------------------------------------------
def test_randomaccess_verification_catches_a_broken_aggregated_update(monkeypatch):
    monkeypatch.setattr(DistArray, "update", lambda self, indices, values, op="add": comm.barrier())
    T = ra.make_table(ra.table_size(5, P))
    m = ra.measure(T, "aggregated")
    collective_verdict(not m["verified"], f"a no-op update() verified with {m['errors']} errors")


def test_randomaccess_verification_catches_a_broken_update_one(monkeypatch):
    monkeypatch.setattr(DistArray, "update_one", lambda self, i, v, op="add": None)
    T = ra.make_table(ra.table_size(5, P))
    m = ra.measure(T, "update_one")
    collective_verdict(not m["verified"], f"a no-op update_one verified with {m['errors']} errors")


def test_isx_verification_catches_lost_keys_in_a_later_trial(monkeypatch):
    n, width = 500, 100
    keys = isx.make_keys(n, width, P, ME, seed=3)
    sorter = isx.Sorter(n, width)
    _, counts = isx.sort_once(sorter, keys, "spmd")
    collective_verdict(isx.verify(sorter, keys, counts)["verified"], "first trial")
    monkeypatch.setattr(DistArray, "put", lambda self, index, value: None)       # every key is lost
    _, counts = isx.sort_once(sorter, keys, "spmd")
    collective_verdict(not isx.verify(sorter, keys, counts)["verified"], "lost keys verified")


def test_cg_verification_uses_the_official_zeta():
    """NPB 3.x cg.c zeta_verify_value per class; a 1e-9 relative error fails."""
    official = {"S": 8.5971775078648, "W": 10.362595087124, "A": 17.130235054029, "B": 22.712745482631}
    params = {"S": (1400, 7, 15, 10.0), "W": (7000, 8, 15, 12.0), "A": (14000, 11, 15, 20.0), "B": (75000, 13, 75, 60.0)}
    for name, z in official.items():
        c = CLASSES[name]
        assert (c.na, c.nonzer, c.niter, c.shift) == params[name] and c.zeta == z
        assert verified(c, z) and not verified(c, z * (1 + 1e-9)) and not verified(c, float("nan"))

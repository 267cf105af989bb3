"""Index plans (gathers through persistent requests) and gather/scatter/update with
every index dtype and owner: interleaved plans, copies of plans, results not aliasing
a plan's buffer."""

import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import a_dist, assert_matches, collective_verdict

import pgas as pg
from pgas import comm

P = pg.num_locales


DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2), pg.BlockCyclic(3)]


def outcome(fn):
    """``("ok", value)`` or ``("err", exception type name)``."""
    try:
        return "ok", fn()
    except Exception as e:                       # noqa: BLE001 - compared with NumPy's
        return "err", type(e).__name__


# -- 3. locate_1d under gather / scatter / update; iallreduce -------------------------
@pytest.mark.parametrize("n", [1, 2, 5])
def test_gather_scatter_update_index_dtypes_and_owners(n):
    from pgas.exec import settings

    was = settings.get("fuse")
    pg.config(fuse=True)
    try:
        rng = np.random.default_rng(n + pg.here)
        x = np.arange(n) * 10 + 1
        for dist in DISTS:
            for dt in [np.int64, np.int32, np.uint64, ">i8", "strided", "broadcast"]:
                g = rng.integers(0 if dt is np.uint64 else -n, n, size=5)
                if dt == "broadcast":                                # read-only, stride 0
                    g = np.full(5, g[0])
                    gi = np.broadcast_to(np.int64(g[0]), (5,))
                else:
                    gi = np.repeat(g, 2)[::2] if dt == "strided" else g.astype(dt)
                everyone = comm.allgather(g)
                A = pg.from_numpy(x, dist=dist)
                got = A.gather(gi)
                collective_verdict(np.array_equal(got, x[g]), f"gather {dist} {dt}: {got} != {x[g]}")
                A.scatter(gi, np.full(5, -5))
                y = x.copy()
                for e in everyone:
                    y[e] = -5
                assert_matches(A, y)
                A.update(gi, np.ones(5, dtype=int))
                for e in everyone:
                    np.add.at(y, e, 1)
                assert_matches(A, y)
            A = pg.from_numpy(x, dist=dist)
            for bad in (n, -n - 1, 2**40):
                gi = np.array([bad] if pg.here == P - 1 else [0], dtype=np.int64)
                for op in (lambda: A.gather(gi), lambda: A.scatter(gi, np.ones(1, int)),
                           lambda: A.update(gi, np.ones(1, int))):
                    r = outcome(op)
                    kinds = comm.allgather(r[1] if r[0] == "err" else "no error")
                    collective_verdict(all(k == "IndexError" for k in kinds), f"index {bad}: {kinds}")
            assert A.gather(np.empty(0, np.int64)).size == 0
            A.update(np.empty(0, np.int64), np.empty(0, int))
            assert_matches(A, x)
    finally:
        pg.config(fuse=was)


ME = pg.here


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

"""update / scatter / gather synchronise by their own point-to-point messages, not by a
barrier (docs/memory-model.md, rule 8): what follows them on any locale still sees their
results, and what preceded them is still what they read."""

import numpy as np
import pytest

import pgas as pg
from util import assert_matches, collective_verdict

P = pg.num_locales
ME = pg.here
N = 37


def _updates(seed, locale):
    rng = np.random.default_rng([seed, locale])
    return rng.integers(0, N, size=50), rng.integers(-9, 9, size=50)


def _expected(seed, start):
    want = start.copy()
    for r in range(P):
        idx, vals = _updates(seed, r)
        np.add.at(want, idx, vals)
    return want


def test_one_sided_reads_right_after_update_see_every_locale_s_updates():
    g = np.arange(N, dtype=np.int64)
    for seed in range(4):
        A = pg.from_numpy(g, dist=pg.Cyclic())
        A.update(*_updates(seed, ME), "add")
        want = _expected(seed, g)
        got = [A.get(k) for k in range((ME * 7) % N, N, 3)]      # owned by every locale, no barrier
        collective_verdict(got == want[(ME * 7) % N::3].tolist(), lambda: (got, want))


def test_statement_right_after_update_reads_remote_results():
    g = np.arange(N, dtype=np.int64)
    A = pg.from_numpy(g, dist=pg.Block())
    B = pg.zeros(N, dtype=np.int64, dist=pg.Block())
    A.update(*_updates(7, ME), "add")
    B[:] = A[::-1] * 2
    assert_matches(B, _expected(7, g)[::-1] * 2)


def test_updates_back_to_back_then_gather_with_a_plan():
    g = np.zeros(N)
    A = pg.from_numpy(g, dist=pg.BlockCyclic(3))
    idx = np.arange(ME, N, 2)
    plan = A.index_plan(idx)
    want = g.copy()
    for step in range(5):
        A.update(plan, float(step + 1), "add")
        A.local[...] += 0.5                       # the owner's own stores, then a gather at once
        for r in range(P):
            np.add.at(want, np.arange(r, N, 2), float(step + 1))
        want += 0.5
        got = A.gather(plan)
        collective_verdict(np.array_equal(got, want[idx]), lambda: (got, want[idx]))


def test_put_barrier_then_gather_sees_the_put():
    A = pg.zeros(N, dtype=np.int64, dist=pg.Cyclic())
    k = (ME + 1) % P
    A.put(k, 100 + ME)                            # element k is owned by locale k (Cyclic)
    pg.barrier()
    plan = A.index_plan(np.arange(P))
    got = A.gather(plan)
    want = [100 + (j - 1) % P for j in range(P)]
    collective_verdict(got.tolist() == want, lambda: (got, want))


def test_scatter_then_update_then_to_numpy():
    A = pg.zeros(N, dtype=np.int32, dist=pg.Block())
    A.scatter(np.arange(ME, N, P), np.full(len(range(ME, N, P)), ME + 1, dtype=np.int32))
    A.update(np.zeros(3, dtype=np.int64), np.ones(3, dtype=np.int32), "add")
    want = np.array([j % P + 1 for j in range(N)], dtype=np.int32)
    want[0] += 3 * P
    assert_matches(A, want)


@pytest.mark.parametrize("form", ["indices", "plan", "ufunc.at"])
def test_update_blocks_synchronise_once(exchange_kind, form):
    """A loop of updates (RandomAccess's blocks) under the default, folded collective checking:
    each update's exchange is its only synchronisation (no agreement of collective calls of
    its own: the exchange carries it), so a block costs no global collective at all where every
    pair of locales messages (dense) and one (the consensus) where only non-empty parts travel;
    no barrier either way.  The results are NumPy's ``ufunc.at``'s, bit for bit."""
    blocks = 6
    pg.config(check="auto")
    try:
        A = pg.zeros(N, dtype=np.int64, dist=pg.Block())
        plan = A.index_plan(_updates(0, ME)[0])
        with pg.comm_diagnostics() as d:
            for b in range(blocks):
                idx, vals = _updates(b if form != "plan" else 0, ME)
                if form == "plan":
                    A.update(plan, vals, "xor")
                elif form == "ufunc.at":
                    np.bitwise_xor.at(A, idx, vals)
                else:
                    A.update(idx, vals, "xor")
    finally:
        pg.config()
    want = np.zeros(N, dtype=np.int64)
    for b in range(blocks):
        for r in range(P):
            idx, vals = _updates(b if form != "plan" else 0, r)
            np.bitwise_xor.at(want, idx, vals)
    assert_matches(A, want)
    sparse = P > 1 and exchange_kind == "sparse"
    collective_verdict(d.collectives == (blocks if sparse else 0) and d.barriers == 0,
                       lambda: f"{d.collectives} collectives, {d.barriers} barriers in {blocks} updates")

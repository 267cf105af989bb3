"""The runtime's exchanges (pgas.comm.exchange, dense and NBX modes) and nonblocking
collectives: back-to-back exchanges never mix, errors raise everywhere, skewed locales."""

import importlib
import time
import warnings

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg
from pgas import comm

P = pg.num_locales


me = pg.here


EXCHANGE = importlib.import_module("pgas.comm.exchange")


@pytest.fixture(params=["dense", "nbx"])
def mode(request, monkeypatch):
    """Both exchange protocols at any locale count (the same choice on every locale)."""
    monkeypatch.setattr(EXCHANGE, "DENSE_MAX", 10 ** 6 if request.param == "dense" else 1)
    return request.param


def _idx(seed, r, n, k):
    """Locale ``r``'s indices of round ``seed`` (every locale can draw every locale's)."""
    return np.random.default_rng(1000 * seed + r).integers(0, n, k)


def _skew(rnd):
    time.sleep(0.004 * ((me + rnd) % P))


# ---------------------------------------------------------------------------
# 1. Exchanges of different kinds back to back, locales skewed by sleeps
# ---------------------------------------------------------------------------
def test_back_to_back_exchanges_of_every_kind_never_mix(mode):
    """update -> axis reduction -> index plan -> gather(plan) -> scatter -> scan ->
    statement -> gather -> to_numpy(root) -> update(plan), each locale entering each
    at a different time, and every result as NumPy's (rule 8: a gather sees the
    update / scatter / statement just before it)."""
    n = 5 * P + 3
    a = np.arange(n, dtype=np.float64)
    A = pg.from_numpy(a, dist=pg.Cyclic())
    b = np.arange(6.0 * (2 * P + 1)).reshape(6, 2 * P + 1) % 7
    B = pg.from_numpy(b, dist=pg.Block())
    ok, why = True, ""
    for rnd in range(3):
        _skew(rnd)
        A.update(_idx(rnd, me, n, 7), 1.0 + rnd, "add")
        for r in range(P):
            np.add.at(a, _idx(rnd, r, n, 7), 1.0 + rnd)
        s = B.sum(axis=0)                              # axis-reduction exchange right after
        _skew(rnd + 1)
        plan = A.index_plan(_idx(rnd + 50, me, n, 5))
        g1 = A.gather(plan)
        if not np.array_equal(g1, a[_idx(rnd + 50, me, n, 5)]):
            ok, why = False, f"round {rnd}: gather(plan) {g1} after update"
        sc = _idx(rnd + 70, me, n, 3)
        A.scatter(sc, 100.0 * rnd + me)
        for r in range(P):                             # last locale's value wins on repeats
            a[_idx(rnd + 70, r, n, 3)] = 100.0 * rnd + r
        c = np.cumsum(B, axis=1)
        A[...] = A * 2 - 1                             # a statement right after exchanges
        a = a * 2 - 1
        g2 = A.gather(_idx(rnd + 90, me, n, 6))
        if not np.array_equal(g2, a[_idx(rnd + 90, me, n, 6)]):
            ok, why = False, f"round {rnd}: gather {g2} after scatter + statement"
        full = A.to_numpy(root=rnd % P)
        if me == rnd % P and not np.array_equal(full, a):
            ok, why = False, f"round {rnd}: to_numpy(root) {full}"
        A.update(plan, 0.5, "add")                     # an update through a plan
        for r in range(P):
            np.add.at(a, np.unique(_idx(rnd + 50, r, n, 5)), 0.0)
            np.add.at(a, _idx(rnd + 50, r, n, 5), 0.5)
        assert_matches(s, b.sum(axis=0))
        assert_matches(c, np.cumsum(b, axis=1))
        collective_verdict(ok, why)
        assert_matches(A, a)


def test_a_statement_right_after_a_plan_gather_does_not_overwrite_unserved_values(mode):
    """Each locale asks only the next one (the plan's pairs); it then overwrites its own
    block at once.  A locale still behind (sleeping) must be served the old values."""
    n = 4 * P
    a = np.arange(n, dtype=np.float64)
    A = pg.from_numpy(a, dist=pg.Block())
    want = 4 * ((me + 1) % P) + np.arange(4)
    plan = A.index_plan(want)
    for rnd in range(3):
        if me == rnd % P:
            time.sleep(0.05)
        got = A.gather(plan)
        A.local[...] = -1.0 - rnd                   # owner's own stores right after
        A[...] = A + 0                              # and a statement
        collective_verdict(np.array_equal(got, a[want]) if rnd == 0 else np.all(got == -float(rnd)),
                           f"round {rnd}: {got}")


def test_an_error_on_one_locale_raises_everywhere_and_leaves_no_message(mode):
    """A bad index or value shape on the last locale only: every locale raises, and
    the next exchanges (of every kind) see none of the failed one's messages."""
    n = 3 * P
    A = pg.from_numpy(np.zeros(n), dist=pg.Cyclic())
    for bad_call in (lambda: A.update(np.array([n if me == P - 1 else 0, 1]), 1.0),
                     lambda: A.update(np.arange(2), np.ones(3) if me == P - 1 else np.ones(2)),
                     lambda: A.index_plan(np.array([-n - 1 if me == P - 1 else 1])),
                     lambda: A.gather(np.array([0, n + 5 if me == P - 1 else 0]))):
        with pytest.raises((IndexError, ValueError, pg.LocaleError)):
            bad_call()
    A.update(np.arange(n), 1.0)
    B = pg.from_numpy(np.ones((4, 2 * P)))
    assert_matches(B.sum(axis=1), np.full(4, 2.0 * P))
    assert_matches(A, np.full(n, float(P)))
    got = A.gather(np.arange(n)[::-1])
    collective_verdict(np.array_equal(got, np.full(n, float(P))), f"{got}")


def test_many_small_exchanges_alternating_tags_with_skew(mode):
    """Odd and even rounds use different tags in NBX; a locale that runs ahead by one
    exchange must not take the other round's messages (RandomAccess-style loop)."""
    n = 2 * P + 1
    A = pg.zeros(n, dtype=np.int64, dist=pg.Block())
    want = np.zeros(n, np.int64)
    for rnd in range(12):
        if rnd % 4 == me % 4:
            time.sleep(0.003)
        k = (rnd + me) % 3                         # some locales send nothing
        A.update(_idx(rnd, me, n, k), rnd + 1)
        for r in range(P):
            np.add.at(want, _idx(rnd, r, n, (rnd + r) % 3), rnd + 1)
    assert_matches(A, want)


def test_raw_exchange_random_sizes_and_dtypes_back_to_back(mode):
    """comm.exchange itself: random part sizes (many empty), three dtypes in turn,
    20 rounds with skew, interleaved with exchange_known; every part as sent."""
    dts = [np.dtype(np.int64), np.dtype([("off", np.int64), ("v", np.complex64)]), np.dtype(np.uint8)]

    def part(rnd, src, dst, dt):
        rng = np.random.default_rng(7919 * rnd + 31 * src + dst)
        k = int(rng.integers(0, 4)) * int(rng.integers(0, 2))
        out = np.zeros(k, dt)
        out.view(np.uint8)[...] = rng.integers(0, 256, out.nbytes, dtype=np.uint8)
        return out
    ok, why = True, ""
    for rnd in range(20):
        dt = dts[rnd % 3]
        if (rnd + me) % 5 == 0:
            time.sleep(0.002)
        got = comm.exchange([part(rnd, me, r, dt) for r in range(P)], dt)
        for r in range(P):
            if got[r].tobytes() != part(rnd, r, me, dt).tobytes():
                ok, why = False, f"round {rnd}: from {r} got {got[r]!r}"
        if rnd % 4 == 3:                              # sizes known on both sides
            parts = {r: np.empty(len(part(rnd + 100, r, me, dts[0])), np.int64) for r in range(P) if r != me}
            EXCHANGE.exchange_known([(r, part(rnd + 100, me, r, dts[0])) for r in range(P)
                                     if r != me and len(part(rnd + 100, me, r, dts[0]))],
                                    [(r, out) for r, out in parts.items() if len(out)])
            for r in parts:
                if not np.array_equal(parts[r], part(rnd + 100, r, me, dts[0])):
                    ok, why = False, f"round {rnd}: known from {r} got {parts[r]}"
    collective_verdict(ok, why)


@pytest.mark.parametrize("dist", ["block", "cyclic"])
def test_exchanges_where_most_locales_own_nothing(mode, dist):
    """Arrays smaller than the locale count (at 9-10 locales most own nothing): axis
    reductions, masked var, scans, gathers, updates and to_numpy(root=) still agree."""
    d = {"block": pg.Block(), "cyclic": pg.Cyclic()}[dist]
    g = np.arange(6.0).reshape(2, 3) ** 1.5
    m = np.array([[True, False, True], [False, False, False]])
    A = pg.from_numpy(g, dist=d)
    assert_matches(A.sum(axis=0), g.sum(axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_matches(np.var(A, axis=1, where=m), np.var(g, axis=1, where=m))
        assert_matches(np.std(A, axis=0, where=m, keepdims=True), np.std(g, axis=0, where=m, keepdims=True))
    assert_matches(np.cumsum(A, axis=1), np.cumsum(g, axis=1))
    assert_matches(np.cumprod(A, axis=0), np.cumprod(g, axis=0))
    v = pg.from_numpy(np.arange(3.0), dist=d)
    v.update(np.array([me % 3]), 1.0)
    want = np.arange(3.0) + np.bincount(np.arange(P) % 3, minlength=3)
    assert_matches(v, want)
    got = v.gather(np.array([2, 0]) if me % 2 else np.empty(0, np.int64))
    collective_verdict(np.array_equal(got, want[[2, 0]] if me % 2 else want[:0]), f"{got}")
    full = v.to_numpy(root=P - 1)
    collective_verdict((full is None) == (me != P - 1) and (full is None or np.array_equal(full, want)), f"{full}")
    with pytest.raises(ValueError):
        v.to_numpy(root=P)


def test_iallreduce_matches_allreduce():
    me = pg.here
    for v, op in [(me + 1, "sum"), (0.5 * me, "max"), (me == 1, "lor"), (1j * me, "sum"), (np.int8(100), "sum"),
                  (np.array([me, -me]), "min"), (np.float32(1.5), "sum"), (2, "prod")]:
        a = comm.allreduce(v, op)
        pending = comm.iallreduce(v, op)
        B = pg.from_numpy(np.arange(5.))
        B.gather(np.array([4 - me % 5]))                        # other communication before the wait
        b = pending.wait()
        collective_verdict(np.array_equal(a, b) and np.asarray(a).dtype == np.asarray(b).dtype, f"{v!r} {op}: {a!r} {b!r}")


def test_diagnostics_count_the_data_that_gathers_and_data_reductions_move():
    """A gather moves each locale's part to every other locale: one message per pair with
    data; a reduction of data (``data=True``: counts, partial results) is counted as a
    binomial tree's messages, ``2 (P - 1)`` of its size; a reduction that only
    synchronises (a flag) is not a message."""
    part = np.arange(me + 1, dtype=np.int64)              # every locale sends something
    with pg.comm_diagnostics() as d:
        comm.allgatherv(part)
    collective_verdict(d.messages == P * (P - 1), f"allgatherv: {d.messages} messages")
    collective_verdict(d.bytes == (P - 1) * 8 * sum(range(1, P + 1)), f"allgatherv: {d.bytes} bytes")
    with pg.comm_diagnostics() as d:
        comm.allreduce(np.ones(3), "sum", data=True)
        comm.iallreduce(np.ones(3), "sum", data=True).wait()
    collective_verdict(d.messages == 2 * 2 * (P - 1) and d.bytes == 2 * 2 * (P - 1) * 24,
                       f"data reductions: {d.messages} messages, {d.bytes} bytes")
    collective_verdict(all(int(d.matrix[r].sum()) <= 2 * max(1, P - 1).bit_length() for r in range(P)),
                       f"a locale sends more than a tree's: {d.matrix}")
    with pg.comm_diagnostics() as d:
        comm.allreduce(np.int64(1), "max")
    collective_verdict(d.messages == 0 and d.collectives == 1, f"a flag: {d.messages} messages")


def test_quantile_selection_shows_its_samples_and_counts():
    Q = pg.from_numpy(np.random.default_rng(3).random((1 << 17) * P))
    with pg.comm_diagnostics() as d:
        got = np.quantile(Q, [0.1, 0.5, 0.9])
    want = np.quantile(Q.to_numpy(), [0.1, 0.5, 0.9])
    collective_verdict(np.array_equal(np.asarray(got), want), f"{got} != {want}")
    collective_verdict((d.messages > 0) == (P > 1), f"{d.messages} messages at {P} locales")
    collective_verdict(d.bytes < (1 << 17) * P * 8 or P == 1, f"{d.bytes} bytes: the data moved, not samples")


def test_alltoallv_buffer_receives_into_the_callers_array():
    """``out=``: what arrives lands in the caller's array (a sort's result storage), no copy."""
    counts = np.arange(1, P + 1, dtype=np.int64) + me                 # to locale r: r + 1 + me elements
    sbuf = np.concatenate([np.full(c, 100 * me + r, dtype=np.int32) for r, c in enumerate(counts)])
    rcounts = me + 1 + np.arange(P, dtype=np.int64)                     # from locale s: me + 1 + s
    out = np.empty(int(rcounts.sum()), dtype=np.int32)
    got, rc = comm.alltoallv_buffer(sbuf, counts, rcounts, out=out)
    want = np.concatenate([np.full(c, 100 * s + me, dtype=np.int32) for s, c in enumerate(rcounts)])
    collective_verdict(got is out and np.array_equal(out, want) and np.array_equal(rc, rcounts), f"{out} != {want}")


@pytest.mark.parametrize("late", range(2))
def test_reduction_tree_combines_in_locale_order_and_its_waits_run_the_stall_hooks(monkeypatch, late):
    """``allreduce_with`` (the tree of ``min``, ``argmax`` and scalar axis reductions) combines in
    locale order, and a locale waiting in it for a late one polls as every other collective
    does: the stall hooks run (a blocking MPI reduction would sit in MPI, found by no probe)."""
    waits = importlib.import_module("pgas.comm.waits")
    called = []
    monkeypatch.setattr(waits, "STALL", 0.05)
    monkeypatch.setattr(waits, "STALL_POLLS", 16)
    monkeypatch.setattr(waits, "_stall_hook", [lambda: called.append(1)])
    pg.barrier()
    if me == late % P:
        time.sleep(0.5)
    got = comm.allreduce_with([me], lambda a, b: a + b)
    assert got == list(range(P))
    if P > 1 and me != late % P:
        assert called, "a wait for the late locale ran no stall hook"

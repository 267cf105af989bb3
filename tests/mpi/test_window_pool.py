"""The window pool: a released array's window is reused only when every locale has
released it (live views, locales releasing at different times, cycles)."""

import gc

import numpy as np
import pytest
from util import assert_matches, collective_verdict, raised_everywhere

import pgas as pg
from pgas import comm

P = pg.num_locales


ME = pg.here


# -- window pool: release only when the storage is dead on every locale ------
def _key_array(value):
    return pg.full((3 * P + 1, 2), value, dtype=np.int64, dist=pg.Cyclic(grid=(P, 1)))


def test_live_view_keeps_window_out_of_the_pool():
    A = _key_array(7)
    view = A.local.T[::-1]           # a derived view outlives the array
    wid = A._win.id
    del A
    gc.collect()
    others = [_key_array(9) for _ in range(3)]
    pg.barrier()
    ok = bool(np.all(view == 7)) and all(o._win.id != wid for o in others)
    collective_verdict(ok, "memory of a live view was handed to a new array")
    del view
    B = _key_array(1)               # now released everywhere: the pool hands it back
    collective_verdict(B._win.id == wid, f"window {wid} not reused (got {B._win.id})")


def _reused_soon(wid) -> bool:
    """Whether window ``wid`` comes back within the next allocations of its key (the pool
    may first hand out other windows it holds; all are kept alive meanwhile)."""
    held = []
    for _ in range(70):
        held.append(_key_array(0))
        if held[-1]._win.id == wid:
            return True
    return False


def test_release_on_some_locales_only_is_not_reused():
    A = _key_array(5)
    wid = A._win.id
    keep = A if ME % 2 == 1 else None
    del A
    B = _key_array(6)
    reused = B._win.id == wid
    ok = (P == 1 or not reused) and (keep is None or bool(np.all(keep.local == 5)))   # locale 1 holds it if P > 1
    collective_verdict(ok, f"reused={reused}: window reused while a locale still holds the array, or not pooled")
    del keep
    collective_verdict(reused or _reused_soon(wid), "window released everywhere was not pooled")


def test_cycle_collected_on_one_locale_only_is_not_reused():
    """GC timing differs per locale: an array in a reference cycle is pooled only once
    every locale has collected it, so no locale's decision depends on its own GC."""
    was = gc.isenabled()
    gc.disable()
    try:
        A = _key_array(3)
        wid = A._win.id
        cycle = [A]
        cycle.append(cycle)
        del A, cycle
        if ME == 0:
            gc.collect()
        B = _key_array(4)
        same_everywhere = comm.allgather(B._win.id)
        ok = B._win.id != wid or P == 1
        collective_verdict(ok and len(set(same_everywhere)) == 1, f"pool decisions differ: {same_everywhere}")
        gc.collect()
        collective_verdict(B._win.id == wid or _reused_soon(wid), "window released everywhere was not pooled")
    finally:
        if was:
            gc.enable()


# -- the collective a new array costs ------------------------------------------------
def _made(make, calls=3) -> tuple[int, int]:
    """Collectives and barriers per call of ``make`` (its results dropped at once: a steady
    state that reuses pooled windows), the most of any locale."""
    for _ in range(2):
        make()
    with pg.comm_diagnostics() as d:
        for _ in range(calls):
            make()
    return d.collectives / calls, d.barriers / calls


A = pg.from_numpy(np.arange(40.0))
B = pg.from_numpy(np.ones(40))
MAKERS = {"zeros": lambda: pg.zeros(40), "empty": lambda: pg.empty(40), "A + B": lambda: A + B,
          "A.copy()": lambda: A.copy()}


@pytest.mark.parametrize("what", sorted(MAKERS))
def test_new_array_costs_one_collective(folding, what):
    """The agreement of collective calls before a new window and the window pool's decision
    are one reduction (none at one locale, which agrees with nobody); ``pg.zeros`` adds the
    barrier after its fill."""
    calls, barriers = _made(MAKERS[what])
    collective_verdict(calls == (1 if P > 1 else 0), f"{what}: {calls} collectives per call")
    collective_verdict(barriers == (1 if what == "zeros" else 0), f"{what}: {barriers} barriers per call")


def test_new_array_unchecked_costs_the_pools_reduction_only():
    pg.config(check=False)
    try:
        calls, _ = _made(MAKERS["empty"])
    finally:
        pg.config()
    collective_verdict(calls == (1 if P > 1 else 0), f"{calls} collectives per call")


def test_pool_decides_alike_beyond_what_an_agreement_carries(folding):
    """More live windows than an agreement's carried bits hold: the pool decides by a
    reduction of its own (a second collective), and still reuses what every locale released."""
    held = [pg.empty(3) for _ in range(64 * comm.check.CARRIED)]
    A = _key_array(2)
    wid = A._win.id
    del A
    calls, _ = _made(lambda: pg.empty(5))
    B = _key_array(8)
    every = comm.allgather(B._win.id)
    collective_verdict(len(set(every)) == 1 and B._win.id == wid, f"pool decisions {every}, released {wid}")
    collective_verdict(calls == (2 if P > 1 else 0), f"{calls} collectives per call")
    del held


def test_dropped_expressions_forgotten_in_the_same_collective(folding):
    """Pending expressions dropped on every locale ride in the new array's agreement too."""
    from pgas.array import engine

    X = pg.from_numpy(np.arange(12.0))
    keep = X[1:] * 2
    for _ in range(3):
        X[1:] + X[:-1]                                   # built and dropped at once
    n0 = len(engine._pending)
    with pg.comm_diagnostics() as d:
        pg.empty(7)
    collective_verdict(len(engine._pending) == n0 - 3, f"{n0} pending, {len(engine._pending)} after")
    collective_verdict(d.collectives == (1 if P > 1 else 0), f"{d.collectives} collectives")
    assert_matches(keep.eval(), np.arange(1.0, 12.0) * 2)


@pytest.mark.skipif(P == 1, reason="a mismatch needs two locales")
@pytest.mark.parametrize("other", ["sum", "barrier", "element"])
def test_new_array_against_another_collective_raises_everywhere(folding, other):
    X = pg.from_numpy(np.arange(8.0))

    def job():
        if pg.here == 0:
            pg.zeros(6)
        elif other == "sum":
            X.sum()
        elif other == "barrier":
            pg.barrier()
        else:
            X[3]

    raised_everywhere(job)
    X.sum()                                   # in step again

"""The fast path of a pshift plan run again on the same arrays (``ShiftGroup.rerun``: no
rebinding, views and checks of the last call) and the local moves in one compiled kernel
(:mod:`pgas.exec.copies`), against np.roll / NumPy end-off shifts on 1-4 locales: values
changing between runs, pending expressions on the destinations, ghosted destinations,
another destination list, errors after a fast run."""

import numpy as np
import pytest
from hypothesis import given, settings

import pgas as pg
from pgas.exec import copies
from test_shift_compiled import cases, data, want
from util import assert_matches, collective_verdict

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=12)


@pytest.fixture(params=[False, True], ids=["numpy", "kernel"])
def fuse(request):
    """Local moves by NumPy (fuse off) or the compiled kernel (fuse on)."""
    if request.param:
        pytest.importorskip("numba")
    pg.config(fuse=request.param)
    yield request.param
    pg.config(fuse="auto")


@given(cases())
@SETTINGS
def test_rerun_same_arrays_values_change(case):
    for mode in (False, True):
        pg.config(fuse=mode)
        try:
            rerun_same_arrays(case)
        finally:
            pg.config(fuse="auto")


def rerun_same_arrays(case):
    shape, dist, shifts = case
    g = data(shape, 1)
    A = pg.from_numpy(g, dist=dist)
    outs = [pg.empty_like(A) for _ in shifts]
    with pg.pshift_setup(A, shifts) as plan:
        for step in range(4):
            got = plan(A, out=outs)
            assert all(R is S for R, S in zip(got, outs))
            for R, sp in zip(outs, shifts):
                assert_matches(R, want(g, sp))
            g = g * 2 - step
            A[...] = g


def test_kernel_used_for_many_small_moves(fuse):
    g = data((4 * P, 4), 2)
    A = pg.from_numpy(g)
    shifts = [(s, ax) for ax in range(2) for s in (1, -1, 2)] + [(1, 1, 5.0), (-1, 0, -2.0)]
    outs = [pg.empty_like(A) for _ in shifts]
    before = copies.stats["kernel"]
    with pg.pshift_setup(A, shifts) as plan:
        for step in range(3):
            plan(A, out=outs)
            for R, sp in zip(outs, shifts):
                assert_matches(R, want(g, sp))
            g = g + 1
            A += 1
    used = copies.stats["kernel"] > before
    collective_verdict(used == fuse, f"kernel used: {used}, fuse {fuse}")


def test_pending_expression_on_a_destination(fuse):
    """A lazy expression reading a destination is evaluated before the rerun overwrites it."""
    g = data((3 * P, 5), 3)
    A = pg.from_numpy(g)
    shifts = [(1, 0), (-1, 1), (2, 1, 7.0)]
    outs = [pg.empty_like(A) for _ in shifts]
    with pg.pshift_setup(A, shifts) as plan:
        plan(A, out=outs)
        plan(A, out=outs)                                   # the binding kept: next runs rerun
        E = outs[0][:] * 2 + outs[2][:]
        A += 1
        plan(A, out=outs)
        assert type(E).__name__ != "DistArray"              # lazy: pending until read or written
        assert_matches(pg.asarray(E), want(g, shifts[0]) * 2 + want(g, shifts[2]))
        for R, sp in zip(outs, shifts):
            assert_matches(R, want(g + 1, sp))


def test_ghosted_destinations_stop_being_current(fuse):
    """After update_ghosts, a rerun writing a ghosted destination ends its ghost currency:
    a later statement reading across locales (which reads current ghost cells instead of
    fetching) sees the new values, not the old ghost cells."""
    g = data((4 * P, 4), 4)
    A = pg.from_numpy(g, ghosts=(1, 1))
    outs = [pg.zeros_like(A) for _ in range(2)]
    S = pg.zeros((4 * P, 4))
    with pg.pshift_setup(A, [(1, 0), (-1, 1)]) as plan:
        plan(A, out=outs)
        plan(A, out=outs)
        for step in range(2):
            outs[0].update_ghosts(periodic=True)
            g = g * 3 - 1
            A[...] = g
            plan(A, out=outs)                               # the fast path
            w = want(g, (1, 0))
            S[:-1, 1:] = outs[0][1:, :-1] + outs[0][1:, 1:]
            expect = np.zeros(S.shape)
            expect[:-1, 1:] = w[1:, :-1] + w[1:, 1:]
            assert_matches(S, expect)
            S[...] = 0


def test_other_destinations_and_errors_after_fast_runs():
    g = data((2 * P, 3), 5)
    A = pg.from_numpy(g)
    outs = [pg.empty_like(A), pg.empty_like(A)]
    other = pg.empty_like(A)
    with pg.pshift_setup(A, [(1, 0), (1, 1)]) as plan:
        plan(A, out=outs)
        plan(A, out=outs)
        plan(A, out=[other, outs[1]])                       # another list: checked, rebound
        assert_matches(other, want(g, (1, 0)))
        before = outs[0].to_numpy()
        plan(outs[0], out=outs)                             # in place: outs[0] is the source
        assert_matches(outs[0], want(before, (1, 0)))
        assert_matches(outs[1], want(before, (1, 1)))
        with pytest.raises(ValueError, match="distinct"):
            plan(A, out=[outs[0], outs[0]])
        B = pg.from_numpy(g.astype(np.float32))
        with pytest.raises(ValueError, match="set up for"):
            plan(B, out=outs)
        plan(A, out=outs)
        assert_matches(outs[1], want(g, (1, 1)))


def test_explain_describes_the_compiled_group():
    from pgas.exec import shiftgroup
    g = data((3 * P, 4), 6)
    A = pg.from_numpy(g)
    with pg.pshift_setup(A, [(1, 0), (-1, 1)]) as plan:
        text = pg.explain(lambda: plan(A))
        recv = f"receives: {1 if P > 1 else 0} message" if P <= 2 else "receives: "
        collective_verdict("runs as a compiled group" in text and recv in text and "local moves" in text, text)
        text = pg.explain(lambda: plan(A), locales=P + 1)            # another locale count: plans only
        collective_verdict("compiled group" not in text and "statement:" in text, text)
        shiftgroup.ENABLED = False
        try:
            text = pg.explain(lambda: plan(A))
        finally:
            shiftgroup.ENABLED = True
        collective_verdict("generic path" in text, text)
        outs = plan(A)
        for R, sp in zip(outs, [(1, 0), (-1, 1)]):
            assert_matches(R, want(g, sp))
    text = pg.explain(lambda: pg.cshift(A, 1, 1))
    collective_verdict("compiled group" in text and "reuses its views" not in text, text)


@pytest.mark.parametrize("axis", [0, 1])
def test_owners_go_on_before_late_readers(axis):
    """A compiled shift group's owner packs what its readers fetch and goes on: with every
    other locale late, the owners overwrite the source at once and each reader still
    gets the values of the call's start.  The halos (1100 float64, 8800 bytes) exceed
    MPI's eager limit, so a send completes only once its reader took it."""
    import time
    from pgas.comm import p2p
    m = 1100
    shape = (2 * P + 1, m) if axis == 0 else (m, 2 * P + 1)
    dist = pg.Block(grid=(P, 1) if axis == 0 else (1, P)) if P > 1 else pg.Block()
    g = data(shape, 3)
    A = pg.from_numpy(g, dist=dist)
    shifts = [(1, axis), (-1, axis)]
    outs = [pg.empty_like(A) for _ in shifts]
    with pg.pshift_setup(A, shifts) as plan:
        for step in range(4):
            if pg.here % 2 == 1:
                time.sleep(0.02)
            plan(A, out=outs)
            A[...] = -1.0 - step                       # the owners overwrite the source at once
            for R, sp in zip(outs, shifts):
                assert_matches(R, want(g, sp))
            g = g * 2 - step
            A[...] = g
    p2p.settle_all()
    collective_verdict(not any(s.inflight for s in list(p2p._inflight)), "sends left in flight")

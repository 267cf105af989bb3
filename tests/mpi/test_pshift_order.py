"""A repeated pshift plan call hands its arrays to the compiled group in the group's order
(``PShiftPlan._key_order``, ``ShiftGroup.rerun_arrays``): against np.roll / NumPy end-off
shifts at 1-4 locales, with destination lists alternating, a distributed end-off boundary
(an array the plan does not rebind: the mapping path), calls between them on the generic
path (aggregation off), another source, and the messages of the one polling loop."""

import numpy as np
from hypothesis import given, settings

import pgas as pg
from test_shift_compiled import cases, data, want
from util import assert_matches

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=10)


def check(outs, g, shifts):
    for R, sp in zip(outs, shifts):
        assert_matches(R, want(g, sp))


@given(cases())
@SETTINGS
def test_alternating_destinations_and_sources(case):
    shape, dist, shifts = case
    g, h = data(shape, 3), data(shape, 4)
    A, B = pg.from_numpy(g, dist=dist), pg.from_numpy(h, dist=dist)
    one = [pg.empty_like(A) for _ in shifts]
    two = [pg.empty_like(A) for _ in shifts]
    with pg.pshift_setup(A, shifts) as plan:
        for step in range(3):
            plan(A, out=one)
            check(one, g, shifts)
            plan(A, out=two)
            check(two, g, shifts)
            plan(B, out=one)                             # another source, the same outputs
            check(one, h, shifts)
            plan(A, out=one)
            plan(A, out=one)                             # the ordered fast path
            check(one, g, shifts)
            g = g * 3 - step
            A[...] = g


def test_distributed_boundary_is_not_rebound():
    n = 4 * P + 1
    g = data((n, 3), 5)
    A = pg.from_numpy(g)
    bnd = np.arange(3, dtype=float) + 100
    Bd = pg.from_numpy(bnd)
    shifts = [(1, 0, Bd), (-2, 0, 7.0), (1, 1)]
    outs = [pg.empty_like(A) for _ in shifts]
    with pg.pshift_setup(A, shifts) as plan:
        for step in range(4):
            plan(A, out=outs)
            for R, (s, ax, *b) in zip(outs, shifts):
                assert_matches(R, want(g, (s, ax) if not b else (s, ax, bnd if b[0] is Bd else b[0])))
            g = g + step + 1
            A[...] = g
            bnd = bnd * 2
            Bd[...] = bnd


def test_generic_calls_between_fast_ones():
    g = data((3 * P + 2, 5), 6)
    A = pg.from_numpy(g)
    shifts = [(s, ax) for ax in range(2) for s in (1, -1)]
    one = [pg.empty_like(A) for _ in shifts]
    two = [pg.empty_like(A) for _ in shifts]
    with pg.pshift_setup(A, shifts) as plan:
        for step in range(5):
            outs = one if step < 2 else two               # bound to one; two goes the generic way first
            if step == 2:
                pg.config(aggregate=False)
            try:
                plan(A, out=outs)
            finally:
                pg.config(aggregate=True)
            check(outs, g, shifts)
            g = g - 2 * step
            A[...] = g


def test_one_message_per_pair_on_the_ordered_path():
    g = data((4 * P, 4 * P), 7)
    A = pg.from_numpy(g)
    shifts = [(s, ax) for ax in range(2) for s in (1, -1, 2)]
    outs = [pg.empty_like(A) for _ in shifts]
    with pg.pshift_setup(A, shifts) as plan:
        plan(A, out=outs)
        plan(A, out=outs)
        with pg.comm_diagnostics() as d:
            plan(A, out=outs)
        check(outs, g, shifts)
    assert int(d.matrix.max(initial=0)) <= 1

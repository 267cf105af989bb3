"""Compiled repeated runs (pgas.exec.shiftgroup, pgas.exec.ghostexchange): a pshift plan or a
cached cshift run again and again, on the same or other arrays, with the values changing
between runs; update_ghosts repeated with its arguments changing; grouped shifts reading
current ghost cells.  Against np.roll / NumPy end-off shifts on 1-4 locales."""

import contextlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.exec import shiftgroup
from pgas.layout import grids
from test_ghosts import expected_block
from util import a_dist, assert_matches, collective_verdict, unchecked

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=15)


def data(shape, seed=0):
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(float)


def np_eoshift(a, s, axis, boundary):
    out = np.empty_like(a)
    n = a.shape[axis]
    b = np.expand_dims(np.asarray(boundary, dtype=a.dtype), axis) if np.ndim(boundary) else boundary
    src = np.moveaxis(a, axis, 0)
    dst = np.moveaxis(out, axis, 0)
    bb = np.moveaxis(np.broadcast_to(b, a.shape), axis, 0)
    for i in range(n):
        dst[i] = src[i + s] if 0 <= i + s < n else bb[i]
    return out


def want(g, sp, bound=None):
    if len(sp) == 2:
        return np.roll(g, -sp[0], sp[1])
    return np_eoshift(g, sp[0], sp[1], bound if bound is not None else sp[2])


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, {1: 12, 2: 7, 3: 5}[ndim])) for _ in range(ndim))
    dist = draw(a_dist(ndim, max_block=3))
    shifts = []
    for _ in range(draw(st.integers(1, 5))):
        ax = draw(st.integers(0, ndim - 1))
        s = draw(st.integers(-shape[ax] - 1, shape[ax] + 1))
        kind = draw(st.sampled_from(["c", "scalar", "array"]))
        if kind == "c":
            shifts.append((s, ax))
        elif kind == "scalar":
            shifts.append((s, ax, float(draw(st.integers(-3, 3)))))
        else:
            shifts.append((s, ax, data(shape[:ax] + shape[ax + 1:], 9)))
    return shape, dist, shifts


@given(cases())
@SETTINGS
def test_plan_repeated_on_changing_values_and_arrays(case):
    shape, dist, shifts = case
    g1, g2 = data(shape, 1), data(shape, 2)
    A, B = pg.from_numpy(g1, dist=dist), pg.from_numpy(g2, dist=dist)
    outs = [pg.empty_like(A) for _ in shifts]
    with pg.pshift_setup(A, shifts) as plan:
        for step in range(4):
            src, g = (A, g1) if step % 2 == 0 else (B, g2)       # rebinding: the views are remade
            plan(src, out=outs)
            for R, sp in zip(outs, shifts):
                assert_matches(R, want(g, sp))
            g1 = g1 * 2 + step
            A[...] = g1                                           # the values change between runs
        got = plan(A)                                             # new destinations
        for R, sp in zip(got, shifts):
            assert_matches(R, want(g1, sp))


@given(cases())
@SETTINGS
def test_cached_cshift_eoshift_repeated(case):
    shape, dist, shifts = case
    g = data(shape, 3)
    A = pg.from_numpy(g, dist=dist)
    for step in range(3):
        for sp in shifts:
            R = pg.cshift(A, *sp) if len(sp) == 2 else pg.eoshift(A, *sp)
            assert_matches(R, want(g, sp))
        g = g - step - 1
        A -= step + 1


def test_distributed_boundary_in_a_plan():
    g = data((6, 5), 4)
    A = pg.from_numpy(g)
    bnd = data((6,), 5)
    Bd = pg.from_numpy(bnd)
    with pg.pshift_setup(A, [(2, 1, Bd), (-1, 0)]) as plan:
        for _ in range(2):
            R0, R1 = plan(A)
            assert_matches(R0, np_eoshift(g, 2, 1, bnd))
            assert_matches(R1, np.roll(g, 1, 0))
            bnd = bnd + 1
            Bd += 1


def test_repeated_plan_messages_and_no_notices():
    """A compiled plan sends at most one message per locale pair, the same count every run,
    and no synchronisation notice (the data messages are the synchronisation)."""
    g = data((8, 8), 6)
    A = pg.from_numpy(g)
    shifts = [(s, ax) for ax in range(2) for s in (1, -1)]
    outs = [pg.empty_like(A) for _ in shifts]
    with pg.pshift_setup(A, shifts) as plan:
        counts = []
        for _ in range(3):
            with unchecked(), pg.comm_diagnostics() as d:
                plan(A, out=outs)
            collective_verdict(int(d.matrix.max(initial=0)) <= 1, lambda: f"messages per pair:\n{d.matrix}")
            collective_verdict(int(d.sync_counts.sum()) == 0, lambda: f"notices: {d.sync_counts}")
            counts.append(d.messages)
        collective_verdict(len(set(counts)) == 1 and (P == 1 or counts[0] > 0), f"messages {counts}")
    for R, sp in zip(outs, shifts):
        assert_matches(R, want(g, sp))


@st.composite
def ghost_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, {1: 9, 2: 7, 3: 5}[ndim])) for _ in range(ndim))
    grid = draw(st.sampled_from([None] + grids(P, ndim)))
    ghosts = tuple(draw(st.integers(0, 2)) for _ in range(ndim))
    args = [(tuple(draw(st.booleans()) for _ in range(ndim)), draw(st.booleans())) for _ in range(3)]
    return shape, grid, ghosts, args


@given(ghost_cases())
@SETTINGS
def test_update_ghosts_repeated_with_changes(case):
    """The compiled ghost exchange, run again after the interior changed and with other
    arguments, fills every ghost cell as NumPy says."""
    shape, grid, ghosts, args = case
    G = data(shape, 7)
    A = pg.from_numpy(G, dist=pg.Block(grid), ghosts=ghosts)
    for step, (periodic, corners) in enumerate(args + args[:1]):
        before = A.local_with_ghosts.copy()
        with pg.comm_diagnostics() as d:
            A.update_ghosts(periodic=periodic, corners=corners)
        got = A.local_with_ghosts
        ok = np.array_equal(got, expected_block(A, G, periodic, corners, before)) if A.local.size else True
        collective_verdict(ok, lambda: f"step {step}: padded block\n{got}")
        collective_verdict(int(d.matrix.max(initial=0)) <= 1, lambda: f"messages per pair:\n{d.matrix}")
        G = G * 3 - step
        A[...] = G


@contextlib.contextmanager
def generic_groups():
    """Groups run by the generic path (run_together), not compiled."""
    shiftgroup.ENABLED = False
    try:
        yield
    finally:
        shiftgroup.ENABLED = True


@given(st.integers(1, 3), st.integers(1, 2))
@SETTINGS
def test_grouped_shifts_read_current_ghosts(ndim, gw):
    with generic_groups():
        grouped_ghost_reads(ndim, gw)


def grouped_ghost_reads(ndim, gw):
    """Run by the generic path, pshift of a ghosted array after update_ghosts moves no
    message (shifts within the ghost width, wraps included); after a write it fetches
    again; NumPy's answer throughout."""
    shape = {1: (12,), 2: (6, 6), 3: (4, 4, 4)}[ndim]
    g = data(shape, 8)
    A = pg.from_numpy(g, ghosts=(gw,) * ndim)
    shifts = [(s, ax) for ax in range(ndim) for s in (gw, -gw)] + [(1, 0, 2.0)]
    A.update_ghosts(periodic=True, corners=False)
    for step in range(2):
        with unchecked(), pg.comm_diagnostics() as d:
            outs = pg.pshift(A, shifts)
        for R, sp in zip(outs, shifts):
            assert_matches(R, want(g, sp))
        collective_verdict(d.messages == 0, lambda: f"step {step}: {d.messages} messages with current ghosts")
    g = g + 1
    A += 1                                                   # ghosts stale: fetch again
    with unchecked(), pg.comm_diagnostics() as d:
        outs = pg.pshift(A, shifts)
    for R, sp in zip(outs, shifts):
        assert_matches(R, want(g, sp))
    blocks = sum(1 for n, p in zip(shape, A.layout.grid) if p > 1 and n > p)
    collective_verdict(d.messages > 0 or blocks == 0, f"{d.messages} messages after a write")
    with pg.pshift_setup(A, shifts) as plan:                 # a plan too, after an update
        A.update_ghosts(periodic=True, corners=False)
        with unchecked(), pg.comm_diagnostics() as d:
            outs = plan(A)
        for R, sp in zip(outs, shifts):
            assert_matches(R, want(g, sp))
        collective_verdict(d.messages == 0, f"plan: {d.messages} messages with current ghosts")


@given(st.integers(1, 3), st.integers(1, 2))
@SETTINGS
def test_compiled_shifts_of_ghosted_arrays(ndim, gw):
    """Compiled, shifts of a ghosted array send their borders (current ghost cells or not):
    NumPy's answer, at most one message per pair, before and after writes and updates."""
    shape = {1: (12,), 2: (6, 6), 3: (4, 4, 4)}[ndim]
    g = data(shape, 10)
    A = pg.from_numpy(g, ghosts=(gw,) * ndim)
    shifts = [(s, ax) for ax in range(ndim) for s in (gw, -gw)] + [(1, 0, 2.0)]
    with pg.pshift_setup(A, shifts) as plan:
        for step in range(3):
            if step == 1:
                A.update_ghosts(periodic=True)
            with unchecked(), pg.comm_diagnostics() as d:
                outs = plan(A)
            for R, sp in zip(outs, shifts):
                assert_matches(R, want(g, sp))
            collective_verdict(int(d.matrix.max(initial=0)) <= 1, lambda: f"messages per pair:\n{d.matrix}")
            g = g * 2 - 1
            A[...] = g


def test_update_ghosts_one_sided_path_kept():
    """The one-sided update_ghosts (ghosts.COMPILED off) still fills the same cells."""
    from pgas.array import ghosts
    G = data((7, 6), 11)
    A = pg.from_numpy(G, ghosts=(1, 2))
    ghosts.COMPILED = False
    try:
        for periodic, corners in [((True, False), True), ((False, True), False)]:
            before = A.local_with_ghosts.copy()
            A.update_ghosts(periodic=periodic, corners=corners)
            got = A.local_with_ghosts
            ok = np.array_equal(got, expected_block(A, G, periodic, corners, before)) if A.local.size else True
            collective_verdict(ok, lambda: f"padded block\n{got}")
    finally:
        ghosts.COMPILED = True


def test_freed_evicted_and_collected_groups():
    """Compiled groups released every way (plan.free, template eviction, garbage collection
    of an unfreed plan and of a ghosted array) leave later shifts right."""
    import gc

    from pgas.array.shifts import statements as shiftspec
    g = data((9, 4), 12)
    A = pg.from_numpy(g)
    plan = pg.pshift_setup(A, [(1, 0), (-2, 1)])
    plan(A)
    del plan                                             # never freed: collected
    gc.collect()
    G = pg.from_numpy(g, ghosts=1)
    G.update_ghosts(periodic=True)
    del G
    gc.collect()
    was = shiftspec.TEMPLATES
    shiftspec.TEMPLATES = 2
    try:
        for rep in range(2):
            for s in (1, 2, 3, -1):                      # four call shapes through a cache of two
                assert_matches(pg.cshift(A, s, 0), np.roll(g, -s, 0))
    finally:
        shiftspec.TEMPLATES = was
    with pg.pshift_setup(A, [(1, 1)]) as p2:
        assert_matches(p2(A)[0], np.roll(g, -1, 1))

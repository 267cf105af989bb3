"""pg.cshift / pg.eoshift / pg.pshift without a plan lower and plan once per (layout, dtype,
shifts): repeated calls reuse the template and still give NumPy's answers.

Also: cached shifts after writes, freed and reallocated arrays, grouped and compiled shifts
over ghosts, and changing boundaries."""

import gc
import time

import numpy as np
import pytest
from util import assert_matches

import pgas as pg
from pgas.array.shifts import statements as shiftspec


def test_repeated_cshift_reuses_template():
    g = np.arange(30.0).reshape(5, 6)
    A = pg.from_numpy(g)
    before = len(shiftspec._templates)
    R1 = pg.cshift(A, 2, 1)
    mid = len(shiftspec._templates)
    B = pg.from_numpy(g * 3)
    R2 = pg.cshift(B, 2, 1)
    assert len(shiftspec._templates) == mid <= before + 1
    assert_matches(R1, np.roll(g, -2, 1))
    assert_matches(R2, np.roll(g * 3, -2, 1))
    pg.cshift(A, -1, 0, out=R1)                          # another shift: another template
    assert_matches(R1, np.roll(g, 1, 0))
    assert len(shiftspec._templates) == mid + 1 or mid == shiftspec.TEMPLATES


def test_eoshift_boundaries_keyed_exactly():
    g = np.arange(7.0)
    A = pg.from_numpy(g)
    R = pg.eoshift(A, 2, 0, 0.0)
    S = pg.eoshift(A, 2, 0, -0.0)
    assert np.signbit(S.to_numpy()[-1]) and not np.signbit(R.to_numpy()[-1])
    T = pg.eoshift(A, -3, 0, 5.5)
    want = np.concatenate([[5.5] * 3, g[:-3]])
    assert_matches(T, want)
    M = pg.from_numpy(np.arange(12.0).reshape(3, 4))
    bd = pg.from_numpy(np.array([7.0, 8.0, 9.0]))                        # distributed: lowered per call
    for _ in range(2):
        E = pg.eoshift(M, 1, 1, bd)
    want = np.concatenate([np.arange(12.0).reshape(3, 4)[:, 1:], [[7.0], [8.0], [9.0]]], axis=1)
    assert_matches(E, want)


def test_ghosted_source_and_explain():
    g = np.arange(24.0).reshape(4, 6)
    A = pg.from_numpy(g, ghosts=(1, 1))
    for _ in range(2):
        R = pg.cshift(A, 1, 0)
    assert_matches(R, np.roll(g, -1, 0))
    txt = pg.explain(lambda: pg.cshift(A, 1, 0, out=R))
    assert "pg.cshift: 2 statements" in txt


P = pg.num_locales


def data(shape, seed=0):
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(float)


def np_eo(a, s, axis, b):
    n = a.shape[axis]
    out = np.empty_like(a)
    src, dst = np.moveaxis(a, axis, 0), np.moveaxis(out, axis, 0)
    bb = np.moveaxis(np.broadcast_to(np.expand_dims(np.asarray(b, float), axis) if np.ndim(b) else b, a.shape),
                     axis, 0)
    for i in range(n):
        dst[i] = src[i + s] if 0 <= i + s < n else bb[i]
    return out


def skew():
    if pg.here == 0:
        time.sleep(0.05)


DISTS = [None, "cyclic", ("blockcyclic", 2)]


def mk(g, dist, **kw):
    if dist is None:
        return pg.from_numpy(g, **kw)
    if dist == "cyclic":
        return pg.from_numpy(g, dist=pg.Cyclic(), **kw)
    return pg.from_numpy(g, dist=pg.BlockCyclic(dist[1]), **kw)


@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("how", ["stmt", "local", "put", "scatter", "update"])
def test_cached_cshift_sees_every_write_between_calls(dist, how):
    n = 7
    G = data(n, 1)
    A = mk(G, dist)
    for step in range(4):
        for s in (1, -2, n, -n, 3):
            assert_matches(pg.cshift(A, s), np.roll(G, -s))
            assert_matches(np.roll(A, s), np.roll(G, s))
        skew()
        if how == "stmt":
            A[1:] = A[1:] * 2 + step
            G[1:] = G[1:] * 2 + step
        elif how == "local":
            if pg.here == step % P:
                A.local[...] += 10
            own = A.layout.owned(step % P)
            G[np.ix_(*own)] += 10
        elif how == "put":
            A.put((step % n,), 100.0 + step)
            pg.barrier()
            G[step % n] = 100.0 + step
        elif how == "scatter":
            mine = pg.here == 0
            A.scatter(np.array([[step % n]] if mine else np.empty((0, 1), int)), np.full(int(mine), -5.0 - step))
            G[step % n] = -5.0 - step
        else:
            A.update(np.array([[(step * 3) % n]]), np.array([1.0]))
            G[(step * 3) % n] += P


def test_interleaved_plans_skewed_2d():
    shape = (5, 6)
    G1, G2 = data(shape, 1), data(shape, 2)
    A = pg.from_numpy(G1)
    B = pg.from_numpy(G2, dist=pg.Cyclic())
    s1 = [(1, 0), (-1, 1), (2, 1, 3.0)]
    s2 = [(-2, 0), (6, 1), (-1, 0, -1.0)]
    with pg.pshift_setup(A, s1) as p1, pg.pshift_setup(B, s2) as p2:
        o1 = [pg.empty_like(A) for _ in s1]
        o2 = [pg.empty_like(B) for _ in s2]
        for step in range(5):
            if pg.here == step % P:
                time.sleep(0.03)
            p1(A, out=o1)
            p2(B, out=o2)
            r = pg.cshift(A, 1, 1)
            for R, sp in zip(o1, s1):
                assert_matches(R, np.roll(G1, -sp[0], sp[1]) if len(sp) == 2 else np_eo(G1, *sp))
            for R, sp in zip(o2, s2):
                assert_matches(R, np.roll(G2, -sp[0], sp[1]) if len(sp) == 2 else np_eo(G2, *sp))
            assert_matches(r, np.roll(G1, -1, 1))
            A[...] = A + 1
            G1 = G1 + 1
            if pg.here == 0:
                B.local[...] *= -1
            G2[np.ix_(*B.layout.owned(0))] *= -1


def test_plan_on_freed_and_reallocated_arrays():
    shape = (6, 4)
    A = pg.from_numpy(data(shape, 0))
    shifts = [(1, 0), (-1, 0), (1, 1, 2.0)]
    with pg.pshift_setup(A, shifts) as plan:
        for step in range(4):
            G = data(shape, step + 3)
            del A
            gc.collect()
            A = pg.from_numpy(G)
            outs = plan(A)
            for R, sp in zip(outs, shifts):
                assert_matches(R, np.roll(G, -sp[0], sp[1]) if len(sp) == 2 else np_eo(G, *sp))
            del outs
            gc.collect()
            r = pg.cshift(A, 2, 0)                     # cached template on a new array too
            assert_matches(r, np.roll(G, -2, 0))


def test_eoshift_boundary_changes_between_calls():
    shape = (4, 5)
    G = data(shape, 4)
    A = pg.from_numpy(G)
    for b in (0.0, 1.0, -0.0, 7.0, np.arange(4.0), np.arange(4.0) * 2, 1.0):
        for s in (2, -1, 5, -5):
            assert_matches(pg.eoshift(A, s, 1, b), np_eo(G, s, 1, b))
    for k in range(3):                                 # a distributed boundary, changed between calls
        bd = pg.from_numpy(np.arange(4.0) + k)
        assert_matches(pg.eoshift(A, 1, 1, bd), np_eo(G, 1, 1, np.arange(4.0) + k))
        bd[...] = bd * 3
        assert_matches(pg.eoshift(A, -2, 1, bd), np_eo(G, -2, 1, (np.arange(4.0) + k) * 3))


def test_small_shapes_shift_full_length():
    for n in (1, 2, 3):
        G = data(n, n)
        for dist in DISTS:
            A = mk(G, dist)
            for s in (n, -n, 2 * n + 1, -1, 0):
                assert_matches(pg.cshift(A, s), np.roll(G, -s))
                assert_matches(pg.eoshift(A, s, 0, 9.0), np_eo(G, s, 0, 9.0))


def test_ghosted_grouped_shift_generic_path_after_writes():
    shape = (6, 6)
    G = data(shape, 6)
    A = pg.from_numpy(G, ghosts=1)
    for step in range(3):
        A.update_ghosts(periodic=bool(step % 2 == 0), corners=bool(step % 2))
        bd = pg.from_numpy(np.full(6, 5.0 + step))        # distributed boundary: generic path
        outs = pg.pshift(A, [(1, 0), (-1, 1), (1, 1, bd), (-1, 0)])
        assert_matches(outs[0], np.roll(G, -1, 0))
        assert_matches(outs[1], np.roll(G, 1, 1))
        assert_matches(outs[2], np_eo(G, 1, 1, np.full(6, 5.0 + step)))
        assert_matches(outs[3], np.roll(G, 1, 0))
        if pg.here == step % P:
            A.local[...] += 1
        G[np.ix_(*A.layout.owned(step % P))] += 1


def test_3d_cached_pshift_with_ghosts_and_out_of_other_arrays():
    shape = (3, 4, 5)
    G = data(shape, 8)
    A = pg.from_numpy(G, ghosts=1)
    shifts = [(1, 0), (-4, 1), (5, 2), (2, 2, -1.0)]
    outs = [pg.empty_like(A) for _ in shifts]
    for step in range(3):
        A.update_ghosts(periodic=True)
        pg.pshift(A, shifts, out=outs)
        for R, sp in zip(outs, shifts):
            assert_matches(R, np.roll(G, -sp[0], sp[1]) if len(sp) == 2 else np_eo(G, *sp))
        A[1:, :, :] = A[1:, :, :] - 2
        G[1:] -= 2


def test_source_is_view_or_expression_repeated():
    G = data((6, 5), 9)
    A = pg.from_numpy(G)
    for step in range(3):
        assert_matches(np.roll(A[::2], -1, 0), np.roll(G[::2], -1, 0))
        assert_matches(np.roll(A.T, 2, 1), np.roll(G.T, 2, 1))
        assert_matches(np.roll(A + 1, -2, 1), np.roll(G + 1, -2, 1))
        assert_matches(np.roll(A[1:, 1:], 3), np.roll(G[1:, 1:], 3))
        A[...] = np.roll(A, 1, 0)                      # the result assigned over its source
        G = np.roll(G, 1, 0)
        assert_matches(A, G)


@pytest.mark.parametrize("slow", [0, 1])
def test_compiled_write_after_skewed_generic_read(slow):
    """A statement reads R across locales; a slow reader; then a compiled shift writes R
    (write-after-read) and a compiled shift reads A before a statement overwrites A."""
    n = 12
    GA, GR = data(n, 11), data(n, 12)
    A, R = pg.from_numpy(GA), pg.from_numpy(GR)
    C = pg.zeros(n)
    for step in range(3):
        if pg.here % 2 == slow:
            time.sleep(0.05)
        C[:-3] = R[3:] * 2 + R[:-3]
        pg.cshift(A, 5 + step, out=R)
        want = np.zeros(n)
        want[:-3] = GR[3:] * 2 + GR[:-3]
        GR = np.roll(GA, -(5 + step))
        assert_matches(C, want)
        assert_matches(R, GR)
        with pg.pshift_setup(A, [(1, 0), (-3, 0, 1.0)]) as plan:
            o = plan(A)
            if pg.here % 2 == slow:
                time.sleep(0.05)
            A[:-4] = A[4:] + 1
            GA2 = GA.copy(); GA2[:-4] = GA[4:] + 1
            assert_matches(o[0], np.roll(GA, -1))
            assert_matches(o[1], np_eo(GA, -3, 0, 1.0))
            o = plan(A)
            GA = GA2
            assert_matches(o[0], np.roll(GA, -1))


@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.complex128, np.float32])
def test_dtypes_repeated_and_axis_none(dtype):
    G = (data((3, 5), 13) > 0) if dtype is np.bool_ else data((3, 5), 13).astype(dtype)
    if dtype is np.complex128:
        G = G + 1j * data((3, 5), 14)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    b = np.zeros((), dtype)[()] if dtype is not np.bool_ else True
    for s in (np.int64(1), -16, 10**12 + 3, 15, 0):
        assert_matches(np.roll(A, s), np.roll(G, s))
        assert_matches(np.roll(A, s, axis=1), np.roll(G, s, axis=1))
        assert_matches(pg.eoshift(A, int(s) % 7 - 3, 1, b), np_eo(G, int(s) % 7 - 3, 1, b).astype(dtype))
        outs = pg.pshift(A, [(1, 1), (1, 1), (-1, 0, b)])
        assert_matches(outs[0], np.roll(G, -1, 1))
        assert_matches(outs[1], np.roll(G, -1, 1))
        A[...] = np.roll(A, 1, axis=0)
        G = np.roll(G, 1, axis=0)


def test_ghosted_destination_of_compiled_shift_then_ghost_reads():
    n = 10
    G = data(n, 20)
    X = pg.from_numpy(G, ghosts=1)
    R = pg.zeros(n, ghosts=1)
    B = pg.zeros(n)
    with pg.pshift_setup(X, [(1, 0), (-2, 0, 3.0)]) as plan:
        R2 = pg.zeros(n, ghosts=1)
        for step in range(3):
            pg.cshift(X, step + 1, out=R)
            R.update_ghosts(periodic=True)
            B[1:-1] = R[:-2] + R[2:]
            B[:1] = R[-1:]
            Rg = np.roll(G, -(step + 1))
            want = np.zeros(n); want[1:-1] = Rg[:-2] + Rg[2:]; want[0] = Rg[-1]
            assert_matches(B, want)
            plan(X, out=[R, R2])                         # a compiled write of R: its ghosts are stale
            B[1:-1] = R[:-2] + R[2:]
            B[:1] = R[-1:]
            Rg = np.roll(G, -1)
            want = np.zeros(n); want[1:-1] = Rg[:-2] + Rg[2:]; want[0] = Rg[-1]
            assert_matches(B, want)
            X[...] = X + 1
            G = G + 1

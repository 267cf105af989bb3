"""Stencils on 2-D and 3-D locale grids with compiled kernels: every task, those over a
border column too (a strided inner axis: pgas.exec.fuserows's ``"t"`` rows), runs as a
row kernel, a repeat on the persistent path makes its last run's kernel calls again, and
the values are NumPy's bit for bit: PolyBench's jacobi-2d, fdtd-2d and heat-3d on Block and
Block-Cyclic over the locales' own grid, a square one and one of columns only, under the
generic path (``packed``) and the persistent one (``auto``)."""

import numpy as np
import pytest
from util import collective_verdict

import pgas as pg
from pgas.comm import check
from pgas.exec import fuse, persistent

pytest.importorskip("numba")

P = pg.num_locales


def dists(ndim):
    """Block and Block-Cyclic over the default grid, over columns only (every border task a
    column: strided rows), and over a square grid where the locale count has one."""
    cols = (1,) * (ndim - 1) + (P,)
    out = [pg.Block(), pg.BlockCyclic(3), pg.Block(grid=cols), pg.BlockCyclic(2, grid=cols)]
    if P % 2 == 0 and P > 2:
        sq = (1,) * (ndim - 2) + (2, P // 2)
        out += [pg.Block(grid=sq), pg.BlockCyclic(2, grid=sq)]
    return out


@pytest.fixture(autouse=True)
def _defaults():
    yield
    pg.config()


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).reshape(a.shape + (a.itemsize,))


def jacobi(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def fdtd(ex, ey, hz):
    ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
    ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
    hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def heat(A, B):
    for X, Y in ((A, B), (B, A)):
        c = X[1:-1, 1:-1, 1:-1]
        Y[1:-1, 1:-1, 1:-1] = (0.125 * (X[2:, 1:-1, 1:-1] - 2.0 * c + X[:-2, 1:-1, 1:-1])
                               + 0.125 * (X[1:-1, 2:, 1:-1] - 2.0 * c + X[1:-1, :-2, 1:-1])
                               + 0.125 * (X[1:-1, 1:-1, 2:] - 2.0 * c + X[1:-1, 1:-1, :-2]) + c)


KERNELS = {"jacobi-2d": (jacobi, (2 * P + 5, 2 * P + 3), 2),
           "fdtd-2d": (fdtd, (2 * P + 3, 2 * P + 6), 3),
           "heat-3d": (heat, (5, P + 4, 2 * P + 3), 2)}


@pytest.mark.parametrize("protocol", ["packed", "auto"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_stencils_on_grids_run_row_kernels_and_match_numpy_bit_for_bit(name, protocol):
    step, shape, count = KERNELS[name]
    rng = np.random.default_rng(7)
    start = [rng.standard_normal(shape) for _ in range(count)]
    want = [g.copy() for g in start]
    for _ in range(4):
        step(*want)
    pg.config(fuse=True, protocol=protocol)
    for dist in dists(len(shape)):
        arrays = [pg.from_numpy(g, dist=dist) for g in start]
        fused, rows, calls = fuse.stats["fused"], fuse.stats["rows"], persistent.stats["calls"]
        for _ in range(4):
            step(*arrays)
        fused, rows = fuse.stats["fused"] - fused, fuse.stats["rows"] - rows
        calls = persistent.stats["calls"] - calls
        got = [a.to_numpy() for a in arrays]
        same = all(np.array_equal(bits(g), bits(w)) for g, w in zip(got, want))
        collective_verdict(same, lambda: f"{name} on {dist}: values differ from NumPy's")
        collective_verdict(rows == fused, lambda: f"{name} on {dist}: {fused} tasks fused, {rows} by row kernels")
        if protocol == "auto" and not check.enabled:     # (alike on every locale: a collective follows)
            # from the second repeat on, each statement's tasks are its last run's kernel calls
            # (a locale with no task here has none to keep)
            collective_verdict(calls > 0 or not fused, lambda: f"{name} on {dist}: no repeat made its kept kernel calls")


@pytest.mark.parametrize("grid", ["default", "columns"])
def test_auto_mode_runs_a_stencils_border_tasks_by_its_kernels(grid):
    """Under "auto", once the interior (a large task) has a kernel, the border tasks
    (small, reading the neighbours' rows) use kernels too: no task of the hot
    statement goes to NumPy, and the values are NumPy's bit for bit."""
    n = 300 * max(P, 2)                               # each locale's interior well over FUSE_MIN elements
    G = np.random.default_rng(5).standard_normal((n, n // 2))
    dist = pg.Block() if grid == "default" else pg.Block(grid=(1, P))
    A, B = pg.from_numpy(G, dist=dist), pg.zeros((n, n // 2), dist=dist)
    want = np.zeros_like(G)
    want[1:-1, 1:-1] = 0.2 * (G[1:-1, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:] + G[2:, 1:-1] + G[:-2, 1:-1])

    def step():
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    for _ in range(fuse.FUSE_AFTER + 1):
        step()
    fuse.stats.update(fused=0, numpy=0)
    step()
    collective_verdict(fuse.stats["numpy"] == 0 and fuse.stats["fused"] >= 1, f"{fuse.stats}")
    got = B.to_numpy()
    collective_verdict(np.array_equal(bits(got), bits(want)), "values differ from NumPy's")

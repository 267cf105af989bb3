"""Row kernels (pgas.exec.fuserows): 2-D statements run as rows of a loop (vectorised
where the inner axis is contiguous), bit for bit like the NumPy path and NumPy itself:
stencils, in-place updates that read the written view itself, broadcast and replicated
operands, views with a strided inner axis (reversed, transposed, strided, single
columns), and a dozen operands, on several distributions and dtypes."""

import numpy as np
import pytest

import pgas as pg
from pgas.exec import fuse
from util import collective_verdict

pytest.importorskip("numba")

DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]
R, C = 11, 9


@pytest.fixture(autouse=True)
def _defaults():
    pg.config()
    yield
    pg.config()


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).reshape(a.shape + (a.itemsize,))


def same_bits(got, want, what):
    collective_verdict(got.dtype == want.dtype and np.array_equal(bits(got), bits(want)),
                       lambda: f"{what}: got {got!r}, expected {want!r}")


def grid(dtype, seed):
    g = np.random.default_rng(seed).standard_normal((R, C)) * 5
    return g.astype(dtype)


CASES = {
    "stencil": lambda A, B, T, v, w: T.__setitem__(
        (slice(1, -1), slice(1, -1)),
        0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])),
    "self": lambda A, B, T, v, w: A.__setitem__((slice(1, None), slice(None)), A[1:, :] - 0.5 * (B[1:, :] - B[:-1, :])),
    "self-cols": lambda A, B, T, v, w: A.__setitem__((slice(None), slice(1, None)), A[:, 1:] - 0.5 * (B[:, 1:] - B[:, :-1])),
    "self-shifted": lambda A, B, T, v, w: A.__setitem__((slice(1, None), slice(None)), A[:-1, :] * 2 + A[1:, :]),
    "self-twice": lambda A, B, T, v, w: A.__setitem__(slice(None), A * A - A),
    "row-vector": lambda A, B, T, v, w: T.__setitem__(slice(None), A * v + B),
    "column": lambda A, B, T, v, w: T.__setitem__(slice(None), A - w[:, None] * B),
    "reversed": lambda A, B, T, v, w: T.__setitem__(slice(None), A[::-1, :] + B[:, ::-1] * 3),
    "transposed": lambda A, B, T, v, w: T.__setitem__((slice(None, C), slice(None)), A[2:, :].T - B[:C, :]),
    "strided-write": lambda A, B, T, v, w: T.__setitem__((slice(None), slice(None, None, 2)),
                                                         A[:, ::2] + B[:, ::2] * 2),
    "columns": lambda A, B, T, v, w: T.__setitem__((slice(None), slice(1, 2)), A[:, :1] - B[:, 2:3] * 3),
    "twelve-leaves": lambda A, B, T, v, w: T.__setitem__(       # leaf 1's offset names are not leaf 10's
        (slice(1, -1), slice(1, -1)),
        A[:-2, :-2] + A[:-2, 1:-1] + A[:-2, 2:] + A[1:-1, :-2] + A[1:-1, 1:-1] + A[1:-1, 2:] + A[2:, :-2]
        + A[2:, 1:-1] + A[2:, 2:] + B[:-2, 2:] * B[2:, :-2] + B[1:-1, 1:-1]),
}


def run(case, dtype, dist, mode):
    """The case on DistArrays in fuse ``mode`` (or on NumPy arrays with ``mode`` None)."""
    gA, gB, gv, gw = grid(dtype, 1), grid(dtype, 2), grid(dtype, 3)[0], grid(dtype, 4)[:, 0]
    if mode is None:
        A, B, T = gA, gB, np.zeros((R, C), dtype)
    else:
        pg.config(fuse=mode)
        A, B = pg.from_numpy(gA, dist=dist), pg.from_numpy(gB, dist=dist)
        T = pg.zeros((R, C), dtype=dtype, dist=dist)
    CASES[case](A, B, T, gv, gw)
    return [x if mode is None else x.to_numpy() for x in (A, B, T)]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_row_kernels_match_numpy_bit_for_bit(case, dtype):
    with np.errstate(all="ignore"):
        want = run(case, dtype, None, None)
        for dist in DISTS:
            for mode in (True, False):
                got = run(case, dtype, dist, mode)
                for g, w, name in zip(got, want, "ABT"):
                    same_bits(g, w, f"{case} {np.dtype(dtype)} {dist} fuse={mode} {name}")


def test_row_kernels_are_used():
    fuse.stats.update(rows=0, fused=0)
    run("stencil", np.float64, pg.Block(), True)
    run("self", np.float64, pg.Block(), True)
    rows = pg.comm.allreduce(fuse.stats["rows"], "sum")
    collective_verdict(rows >= 2, f"{fuse.stats}: no row kernel ran")


def test_strided_inner_axes_run_row_kernels():
    """Single columns, transposed and strided views: every fused task a row kernel."""
    fuse.stats.update(rows=0, fused=0)
    for case in ("columns", "transposed", "strided-write", "reversed"):
        for dist in DISTS:
            run(case, np.float64, dist, True)
    got = pg.comm.allreduce(np.array([fuse.stats["fused"], fuse.stats["rows"]]), "sum")
    collective_verdict(got[0] > 0 and got[0] == got[1], f"fused, rows: {got}")

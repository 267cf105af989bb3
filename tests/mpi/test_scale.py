"""A small set of statements at any locale count, run by the suite at 1-4 locales and
again at 8 and 16 oversubscribed locales (tests/run_mpi.py's scale stage): tiny
arrays, every distribution, against NumPy."""

import os
import sys

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg
from pgas.array import irregular

P = pg.num_locales
DISTS = {"block": pg.Block(), "cyclic": pg.Cyclic(), "bc2": pg.BlockCyclic(2)}


@pytest.mark.parametrize("kind", sorted(DISTS))
def test_stencil_sweeps(kind):
    n = 2 * P + 3
    g = np.random.default_rng(1).random((n, n))
    A = pg.from_numpy(g, dist=DISTS[kind])
    B = pg.zeros((n, n), dist=DISTS[kind])
    for _ in range(3):
        B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
        A[1:-1, 1:-1] = B[1:-1, 1:-1]
        b = g.copy()
        b[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
        g = b
    assert_matches(A, g)


@pytest.mark.parametrize("kind", sorted(DISTS))
def test_shifted_slices_and_mixed_distributions(kind):
    n = 3 * P + 1
    g = np.arange(n, dtype=np.int64)
    A = pg.from_numpy(g, dist=DISTS[kind])
    C = pg.zeros(n, dtype=np.int64, dist=pg.Cyclic() if kind != "cyclic" else pg.Block())
    C[2:] = A[:-2] * 3 + A[1:-1]
    A[::-1] = C                               # reversed, across distributions
    c = np.zeros(n, np.int64)
    c[2:] = g[:-2] * 3 + g[1:-1]
    assert_matches(C, c)
    assert_matches(A, c[::-1])


@pytest.mark.parametrize("owner", ["write", "cost"])
def test_reduction_forall(owner):
    n, m = P + 2, 2 * P + 1
    a = np.arange(n * m, dtype=float).reshape(n, m)
    y = np.arange(m, dtype=float)
    A = pg.from_numpy(a, dist=pg.Cyclic())
    Y = pg.from_numpy(y, dist=pg.Block())
    X = pg.zeros(n, dist=pg.BlockCyclic(2))
    def body(i, j):
        X[i] += A[i, j] * Y[j]

    pg.config(owner=owner)
    try:
        pg.forall((range(n), range(m)), body)
    finally:
        pg.config()
    assert_matches(X, a @ y)
    total = X.sum()
    collective_verdict(np.isclose(total, (a @ y).sum()), f"sum {total}")


# -- the irregular executors' work per call grows with the peers, not the locale count --------
_PGAS_DIR = os.path.dirname(pg.__file__)


_WAITS = ("yielding_wait", "poll")


def _in_wait(frame):
    """Whether ``frame`` is a wait's polling loop or runs inside one (its test of requests,
    its yields): the frames up to the caller of the wait."""
    while frame is not None:
        if frame.f_code.co_name in _WAITS and frame.f_code.co_filename.startswith(_PGAS_DIR):
            return True
        frame = frame.f_back
    return False


def _lines_run(fn):
    """``(fn(), the Python lines it ran in pgas's own code)``: a count of the work done
    per call that needs no timing (a loop over every locale shows as one line per locale).
    The polls of a wait are not counted: their number depends on when the peers arrive."""
    count = [0]

    def local(frame, event, arg):
        if event == "line":
            count[0] += 1
        return local

    def calls(frame, event, arg):
        # not the polling of a wait: how often it polls is timing, not work
        return local if frame.f_code.co_filename.startswith(_PGAS_DIR) and not _in_wait(frame) else None

    sys.settrace(calls)
    try:
        out = fn()
    finally:
        sys.settrace(None)
    return out, count[0]


#: Python lines of one gather by a plan whose locale talks to two peers, whatever the
#: locale count (measured 40-45 at 2-16 locales; a loop over every locale would add one line
#: or more per locale and per loop: the code before per-peer plans ran 150+ at 16 locales).
GATHER_LINES = 60


@pytest.mark.parametrize("kind", ["block", "cyclic"])
def test_plan_gather_work_grows_with_peers_not_locales(kind):
    """A ring pattern (each locale reads one element of each neighbour and one of its own):
    the plan's per-call structures list only the peers, and one gather runs the same
    Python lines at every locale count; values as NumPy's."""
    me, n = pg.here, 3 * P
    g = np.arange(n, dtype=np.float64) * 1.5
    A = pg.from_numpy(g, dist=DISTS[kind])
    owner = np.asarray(A.layout.owners((np.arange(n),))).reshape(-1)
    idx = np.array([np.flatnonzero(owner == (me + 1) % P)[0], np.flatnonzero(owner == me)[-1],
                    np.flatnonzero(owner == (me - 1) % P)[-1]], dtype=np.int64)
    plan = A.index_plan(idx)
    gat = plan.gathering()
    peers = {(me + 1) % P, (me - 1) % P} - {me}
    ok = {r for r, *_ in gat.recvs} == peers and {r for r, _ in gat.sends} == peers
    for _ in range(2):
        ok = ok and np.array_equal(irregular.gather(A, plan), g[idx])
    got, lines = _lines_run(lambda: irregular.gather(A, plan))
    run = plan._runs[A.dtype]
    ok = ok and len(run.sends) == len(peers) and (run.msgs is None or len(run.msgs._reqs) == 2 * len(peers))
    collective_verdict(ok and np.array_equal(got, g[idx]) and lines <= GATHER_LINES,
                       lambda: f"peers {peers}, recvs {gat.recvs}, sends {gat.sends}, got {got}, lines {lines}")


#: Python lines a replayed 5-point stencil statement may run on Block's own grid beyond what it
#: runs on a grid of rows: the grid's locales have more tasks (up to 9 against 3: the interior,
#: border rows and columns, corners), each one more kernel call, and up to 4 peers against 2
#: (measured: 817 against 786-803 lines at 4 locales, 893 against 803 at 16; when the border
#: columns' tasks took the generic path on every replay, 1527 at 4 locales).
GRID_LINES = 150


def test_replayed_stencil_lines_on_a_2d_grid_as_on_rows():
    """Jacobi's sweep, fused and replayed (persistent transfers, kept kernel calls) on Block's
    own grid (2 x 2 at 4 locales, 4 x 4 at 16) runs at most :data:`GRID_LINES` more Python
    lines than on P x 1 rows, whatever the locale count; values as NumPy's."""
    pytest.importorskip("numba")
    n = 2 * P + 7
    g = np.random.default_rng(3).random((n, n))
    want = np.zeros((n, n))
    want[1:-1, 1:-1] = 0.2 * (g[1:-1, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:] + g[2:, 1:-1] + g[:-2, 1:-1])
    pg.config(fuse=True, protocol="auto", check="auto")     # (strict checking replays nothing)
    lines = []
    try:
        for dist in (pg.Block(), pg.Block(grid=(P, 1))):
            A = pg.from_numpy(g, dist=dist)
            B = pg.zeros((n, n), dist=dist)

            def sweep(A=A, B=B):
                B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
            for _ in range(4):
                sweep()
            lines.append(_lines_run(sweep)[1])
            assert_matches(B, want, rtol=0.0)
    finally:
        pg.config()
    most = pg.comm.allreduce(np.array(lines), "max")
    collective_verdict(most[0] <= most[1] + GRID_LINES,
                       f"lines per replayed statement, most of any locale: grid {most[0]}, rows {most[1]}")

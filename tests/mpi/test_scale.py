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

"""Review s26 of the persistent two-sided statements and their recorded repeats
(pgas.exec.persistent): what the receive-buffer budget (KEEP_BYTES) bounds, and what a
statement over it does to the others kept."""

import numpy as np
import pytest

import pgas as pg
from pgas.comm import check
from pgas.exec import persistent
from util import assert_matches, collective_verdict

P = pg.num_locales


@pytest.fixture(autouse=True)
def _defaults():
    pg.config(protocol="auto")              # the library's default (the suite pins "packed": conftest)
    was = persistent.KEEP_BYTES
    persistent.clear()
    yield
    persistent.KEEP_BYTES = was
    persistent.clear()
    pg.config()


def _held_bytes() -> int:
    """Bytes of receive buffers that compiled statements reachable from the module (the
    cache and the recorded statements) still hold."""
    seen = {}
    fss = list(persistent._cache.values()) + [r.fs for r in persistent._replays.values() if r.fs is not None]
    for fs in fss:
        for _, buf, _ in getattr(fs, "recvs", None) or []:
            seen[id(buf)] = buf.nbytes
    return sum(seen.values())


def test_recorded_statements_hold_no_buffers_beyond_the_budget():
    """Many statements, each repeated (so recorded), with room for about one statement's
    buffers: the compiled statements dropped from the cache must let their receive buffers
    go, although a recorded statement still names them (it held them all: 16 times the
    budget here, up to 256 statements of up to KEEP_BYTES each by default)."""
    persistent.KEEP_BYTES = 4000
    n = 200 * P
    G = np.arange(n * 1.0)
    A, B = pg.from_numpy(G, dist=pg.Cyclic()), pg.zeros(n, dist=pg.Block())
    want = np.zeros(n)
    for s in range(1, 40):
        for _ in range(2):
            B[s:] = A[:-s] + 1.0
        want[s:] = G[:-s] + 1.0
    assert_matches(B, want, rtol=0.0)
    held = _held_bytes()
    collective_verdict(held <= max(persistent.KEEP_BYTES, persistent._kept[0]),
                       f"{held} bytes of receive buffers held, budget {persistent.KEEP_BYTES}, "
                       f"counted {persistent._kept[0]}")


def test_a_statement_over_the_budget_leaves_the_others_kept():
    """A time loop with one statement whose buffers exceed the budget (freed after each
    run, as documented) and a small one: the small one is compiled once (and, without
    PGAS_CHECK, runs as recorded).  (The big one's build dropped every other compiled
    statement each step, so the small one was rebuilt every step and never replayed.)"""
    persistent.KEEP_BYTES = 300
    n = 100 * P
    G = np.arange(n * 1.0)
    A, B, C = pg.from_numpy(G, dist=pg.Cyclic()), pg.zeros(n, dist=pg.Block()), pg.zeros(n, dist=pg.Block())
    steps = 8
    reruns, built = persistent.stats["reruns"], persistent.stats["built"]
    for _ in range(steps):
        C[1:] = B[:-1] + 1.0              # a halo of one element: kept
        B[:] = A[::-1] * 1.0              # most of the array moves: over the budget
    want_b = G[::-1] * 1.0
    want_c = np.zeros(n)
    want_c[1:] = want_b[:-1] + 1.0
    assert_matches(B, want_b, rtol=0.0)
    assert_matches(C, want_c, rtol=0.0)
    built = persistent.stats["built"] - built
    collective_verdict(built <= steps + 1, f"{built} statements compiled in {steps} steps")
    got = persistent.stats["reruns"] - reruns
    collective_verdict(got >= steps - 2 or check.enabled, f"{got} statements run as recorded in {steps} steps")
    collective_verdict(persistent._kept[0] <= persistent.KEEP_BYTES, f"{persistent._kept[0]} bytes counted")

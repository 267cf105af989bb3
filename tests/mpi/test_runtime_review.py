"""Review of the scalable statement runtime (issue 7): one-sided operations issued
right after a statement by a locale that is not the statement's peer.

Each test makes one locale slow (a sleep, not a timing assertion) so that a locale
that is no peer of it runs ahead out of the statement, as rule 3 of
docs/memory-model.md allows; what the fast locale does next must still come after
the statement in program order."""

import time

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg
from pgas import comm

P = pg.num_locales
me = pg.here
DISTS = [pg.Block(), pg.Cyclic()]


@pytest.mark.parametrize("dist", DISTS, ids=["block", "cyclic"])
def test_put_after_a_statement_then_barrier_is_not_lost(dist):
    """Rule 5: put, barrier, then the value is there.  Here the put lands on an
    element a slow owner writes in an earlier statement (same layouts: no peers),
    and the late statement overwrites it: the put is lost, silently."""
    if P < 2:
        pytest.skip("needs two locales")
    n = 4 * P
    for trial in range(3):
        A = pg.zeros(n, dist=dist)
        B = pg.from_numpy(np.arange(n, dtype=float), dist=dist)
        mine = A.layout.owned(P - 1)[0]                 # the last locale's elements
        if me == P - 1:
            time.sleep(0.2)
        A[:] = B + 1
        if me != P - 1:
            for k in mine:
                A.put(int(k), 1000.0 + me)
        pg.barrier()
        got = np.asarray(A.local)
        ok = me != P - 1 or bool(np.all(got >= 1000.0))
        collective_verdict(ok, lambda: f"trial {trial}: the puts were lost, got {got} on the last locale")


@pytest.mark.parametrize("dist", DISTS, ids=["block", "cyclic"])
@pytest.mark.parametrize("how", ["put", "update_one"])
def test_a_statement_does_not_read_later_one_sided_writes(dist, how):
    """Rule 2/3: ``B[:] = A[::-1]`` reads the values A had before it.  A locale that
    finished its part writes A one-sidedly at once; the slow reader (locale 0)
    must not see those later writes (at 2 locales every locale is a peer)."""
    n = 4 * P
    for trial in range(3):
        A = pg.from_numpy(np.arange(n, dtype=np.int64), dist=dist)
        B = pg.zeros(n, dtype=np.int64, dist=dist)
        if me == 0:
            time.sleep(0.2)
        B[:] = A[::-1]
        if me != 0:
            for i in range(n):
                if how == "put":
                    A.put(i, -7)
                else:
                    A.update_one(i, 100)
        pg.barrier()
        assert_matches(B, np.arange(n, dtype=np.int64)[::-1])


@pytest.mark.parametrize("dist", DISTS, ids=["block", "cyclic"])
def test_get_after_a_statement_reads_its_result(dist):
    """``A[:] = 5`` then ``A.get(k)`` on another locale, no barrier: the get returns
    the old 0.0 without error while the owner is still in the statement.  Either the
    runtime orders it or docs/memory-model.md must say a barrier is needed (it says
    so only for one-sided writes); old runtime (global barrier) returned 5."""
    if P < 2:
        pytest.skip("needs two locales")
    n = 4 * P
    A = pg.zeros(n, dist=dist)
    k = int(A.layout.global_index(P - 1, (0,))[0])
    if me == P - 1:
        time.sleep(0.2)
    A[:] = 5.0
    v = A.get(k)
    collective_verdict(v == 5.0, f"A.get({k}) returned {v}, the statement wrote 5.0")

"""The node each locale runs on (:mod:`pgas.comm.node`): its locales and cores, the BLAS /
OpenMP thread limit that follows (:mod:`pgas.exec.threads`, ``pg.config(threads=N)``) and
the wait policy; statements, reductions, exchanges and barriers under every policy."""

import os
import socket

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg
from pgas import comm
from pgas.comm import node, waits
from pgas.exec import threads

P = pg.num_locales
me = pg.here


def _blas_threads() -> list[int]:
    """The thread counts threadpoolctl reports for this process's BLAS pools."""
    return [p["num_threads"] for p in threads.blas() if p.get("user_api") == "blas"]


def _skip_without_blas():
    seen = comm.allreduce(np.int32(len(_blas_threads()) > 0), "min")
    if not seen:
        pytest.skip("threadpoolctl finds no BLAS in this process (numpy's BLAS is not one it knows)")


def test_the_node_is_learned_from_the_locales_and_their_cores():
    at = node.info()
    hosts = comm.allgather(socket.gethostname())
    cpus = comm.allgather(node.affinity())
    mine = [r for r, h in enumerate(hosts) if h == hosts[me]]
    cores = len(set().union(*(set(cpus[r]) for r in mine)))
    collective_verdict(at.locales == len(mine), f"{at.locales} locales on the node, {len(mine)} on {hosts[me]}")
    collective_verdict(at.cores == cores, f"{at.cores} cores, the affinities' union has {cores}")
    collective_verdict(at.oversubscribed == (len(mine) > cores), f"oversubscribed {at.oversubscribed}")
    want_wait = os.environ.get("PGAS_WAIT", "").strip().lower() or "auto"
    want_wait = node.wait_policy(len(mine), cores) if want_wait == "auto" else want_wait
    collective_verdict(at.wait == want_wait == waits.wait_mode(), f"wait {at.wait}, in force "
                       f"{waits.wait_mode()}, expected {want_wait}")
    if not os.environ.get("PGAS_THREADS", "").strip():
        collective_verdict(at.threads == max(1, cores // len(mine)) and at.threads_from == "machine",
                           f"threads {at.threads} from {at.threads_from}")


def test_each_locale_runs_its_share_of_the_cores_in_blas():
    _skip_without_blas()
    pg.config()
    at = node.info()
    got = _blas_threads()
    collective_verdict(threads.limit() == at.threads and all(n == at.threads for n in got),
                       f"limit {threads.limit()}, node {at.threads}, BLAS pools {got}")
    if not os.environ.get("PGAS_THREADS", "").strip():
        share = max(1, at.cores // at.locales)
        collective_verdict(all(n <= share for n in got), f"BLAS pools {got} on {at.locales} locales, {at.cores} cores")
        if at.locales >= at.cores:            # e.g. 2 locales on 2 cores: one thread each
            collective_verdict(all(n == 1 for n in got), f"BLAS pools {got}")


def test_config_threads_raises_the_limit_and_the_defaults_restore_it():
    _skip_without_blas()
    at = node.info()
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: BLAS will not run two threads")
    try:
        got = pg.config(threads=2)
        collective_verdict(got["threads"] == 2 and threads.limit() == 2 and all(n == 2 for n in _blas_threads()),
                           f"config {got['threads']}, limit {threads.limit()}, BLAS {_blas_threads()}")
        a = np.arange(64.0).reshape(8, 8)
        collective_verdict(np.allclose(a @ a, np.einsum("ij,jk->ik", a, a)), "matmul under 2 threads")
    finally:
        got = pg.config()
    collective_verdict(got["threads"] == "auto" and threads.limit() == at.threads
                       and all(n == at.threads for n in _blas_threads()),
                       f"restored: config {got['threads']}, limit {threads.limit()}, BLAS {_blas_threads()}")


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2", None])
def test_a_bad_thread_count_raises_and_changes_nothing(bad):
    before = threads.limit()
    with pytest.raises(ValueError, match="threads must be"):
        pg.config(threads=bad, aggregate=False)
    collective_verdict(threads.limit() == before and pg.config(aggregate=True)["threads"] == "auto",
                       f"limit {threads.limit()}, was {before}")
    pg.config()


@pytest.mark.parametrize("policy", node.WAITS)
def test_statements_exchanges_and_barriers_complete_under_every_wait_policy(policy):
    was = waits.wait_mode()
    waits.set_wait(policy)
    try:
        n = 40
        g = np.arange(n, dtype=float)
        A = pg.from_numpy(g, dist=pg.Cyclic())
        B = pg.zeros(n, dist=pg.Block())
        for _ in range(3):
            B[1:-1] = 0.5 * (A[:-2] + A[2:])          # notices and transfers between peers
            A[1:-1] = B[1:-1]
        want = g.copy()
        for _ in range(3):
            b = want.copy()
            b[1:-1] = 0.5 * (want[:-2] + want[2:])
            want[1:-1] = b[1:-1]
        assert_matches(A, want)
        collective_verdict(A.sum() == pytest.approx(want.sum()), "sum")
        got = comm.exchange([np.full(r + 1, me, dtype=np.int64) for r in range(P)], np.int64)
        collective_verdict(all(len(got[r]) == me + 1 and (got[r] == r).all() for r in range(P)), f"exchange {got}")
        pg.barrier()
        collective_verdict(comm.allreduce(me, "max") == P - 1, "allreduce")
    finally:
        waits.set_wait(was)


def test_an_unknown_wait_policy_is_refused():
    with pytest.raises(ValueError, match="wait policy"):
        waits.set_wait("sleep")
    collective_verdict(waits.wait_mode() in node.WAITS, waits.wait_mode())


def test_a_block_may_run_more_threads_and_the_limit_comes_back():
    _skip_without_blas()
    pg.config()
    at = node.info()
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: BLAS will not run two threads")
    with threads.limited(2):
        inside = _blas_threads()
    collective_verdict(all(n == 2 for n in inside) and threads.limit() == at.threads
                       and all(n == at.threads for n in _blas_threads()),
                       f"inside {inside}, after {_blas_threads()}, limit {threads.limit()}")

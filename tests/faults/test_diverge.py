"""Locales that wait for each other at collective calls that differ (one in a statement that
needs a neighbour's halo, the other in a reduction) are found by the default collective
checking once their waits stall: the job ends with a ``CollectiveMismatch`` naming both
calls instead of hanging.  Each case starts its own job under a plain ``mpiexec``:

    python -m pytest -q tests/faults/test_diverge.py
"""

import pytest

from test_abort import MPIEXEC, plain_job
from test_faults import line_of

BOUND = 90

pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec beside this Python or on PATH")


def test_diverged_waits_end_the_job():
    r = plain_job("prog_diverge.py", env={"PGAS_STALL_SECONDS": "1", "PGAS_CHECK": ""}, bound=BOUND)
    assert r.returncode == 1, r.stderr
    assert "finished" not in r.stdout, r.stdout
    statement, reduction = line_of("prog_diverge.py", "statement"), line_of("prog_diverge.py", "reduction")
    assert "CollectiveMismatch" in r.stderr, r.stderr
    assert (f"called a statement writing B from A at prog_diverge.py:{statement}" in r.stderr
            and f"called A.sum() at prog_diverge.py:{reduction}" in r.stderr), r.stderr


@pytest.mark.parametrize("kind", ["allgather", "alltoallv", "bcast", "agree", "tree"])
def test_diverged_blocking_collective_ends_the_job(kind):
    """A locale waiting in a collective that MPI offers as a blocking call (waited for by the
    runtime's polling loop, which runs the stall probe) is found too."""
    _ends_naming("prog_diverge_blocking.py", kind, {"statement": "a statement writing B from A",
                                                     "other": "a statement writing B"})


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_diverged_update_ends_the_job(kind):
    """An update is agreed in its own exchange, not by a reduction that another locale's
    reduction would meet: a locale updating while the others reduce waits in the exchange,
    and the stall probe ends the job naming both calls."""
    _ends_naming("prog_diverge_update.py", kind, {"update": "A.update(..., op='xor')", "reduction": "A.sum()"})


def _ends_naming(prog: str, kind: str, calls: dict) -> None:
    """``prog kind`` ends (status 1, not finished) with a ``CollectiveMismatch`` naming each of
    ``calls`` (its ``# LINE`` tag -> what the report calls it) at its line."""
    r = plain_job(prog, kind, env={"PGAS_STALL_SECONDS": "1", "PGAS_CHECK": ""}, bound=BOUND)
    assert r.returncode == 1, r.stderr
    assert "finished" not in r.stdout, r.stdout
    assert "CollectiveMismatch" in r.stderr, r.stderr
    for tag, call in calls.items():
        assert f"called {call} at {prog}:{line_of(prog, tag)}" in r.stderr, r.stderr


@pytest.mark.parametrize("kind", ["kept", "merged"])
def test_diverged_compiled_step_ends_the_job(kind):
    """A locale replaying a compiled step by its kept repeats (messages synced, packed and
    started inline, waited for by p2p.wait's own polling) while the others wait in a barrier:
    the stall probe still runs in its wait."""
    _ends_naming("prog_diverge_step.py", kind, {"step": "compiled step", "barrier": "pg.barrier()"})

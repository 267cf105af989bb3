"""Locales that wait for each other at collective calls that differ (one in a statement that
needs a neighbour's halo, the other in a reduction) are found by the default collective
checking once their waits stall: the job ends with a ``CollectiveMismatch`` naming both
calls instead of hanging.  Each case starts its own job under a plain ``mpiexec``:

    python -m pytest -q tests/faults/test_diverge.py
"""

import os
import signal
import subprocess
import sys
import uuid

import pytest

from test_abort import MPIEXEC, ROOT, _OUTER
from test_faults import _wait_gone, leftovers, line_of

HERE = os.path.dirname(os.path.abspath(__file__))
BOUND = 90

pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec beside this Python or on PATH")


def test_diverged_waits_end_the_job():
    marker = f"--marker={uuid.uuid4().hex}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(_OUTER)}
    env.update(PYTHONPATH=os.pathsep.join([ROOT, *filter(None, [env.get("PYTHONPATH")])]),
               PGAS_STALL_SECONDS="1", PGAS_CHECK="")
    cmd = [MPIEXEC, "-n", "2", sys.executable, os.path.join(HERE, "prog_diverge.py"), marker]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HERE, env=env,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=BOUND)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the job did not end within {BOUND} s\n{err}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        assert not _wait_gone(marker), f"processes left behind: {leftovers(marker)}"
    assert proc.returncode == 1, err
    assert "finished" not in out, out
    statement, reduction = line_of("prog_diverge.py", "statement"), line_of("prog_diverge.py", "reduction")
    assert "CollectiveMismatch" in err, err
    assert (f"called a statement writing B from A at prog_diverge.py:{statement}" in err
            and f"called A.sum() at prog_diverge.py:{reduction}" in err), err

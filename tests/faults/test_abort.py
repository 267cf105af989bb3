"""Jobs started by a plain ``mpiexec`` (as on a cluster, no ``pgas run`` and no watchdog): an
uncaught exception on one locale ends the whole job at once, with its traceback tagged with
the locale, also under ``python -m mpi4py``; a correct job and ``sys.exit`` keep their status.
Run without MPI (each case starts its own ``mpiexec``):

    python -m pytest -q tests/faults/test_abort.py
"""

import os
import shutil
import signal
import subprocess
import sys
import uuid

import pytest

from test_faults import _wait_gone, leftovers, line_of

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BOUND = 60            # seconds: a job that hangs instead of aborting fails here
MPIEXEC = next((p for p in (os.path.join(os.path.dirname(sys.executable), "mpiexec"), shutil.which("mpiexec"))
                if p and os.access(p, os.X_OK)), None)
# what a launcher around this test (pgas run, mpiexec) set: the job below must not inherit it
_OUTER = ("PGAS_JOB_DIR", "PGAS_HANG_SAMPLE", "PMI_", "PMIX_", "OMPI_", "MPI_LOCALNRANKS", "HYDRA_")

pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec beside this Python or on PATH")


def plain_job(script: str, *args: str, n: int = 2, mpi4py: bool = False, env=None, bound: float = BOUND):
    """Run ``script args`` (a file beside this one) with ``mpiexec -n n python [-m mpi4py]``
    and ``env`` added to the environment; the finished process, after checking that it ended
    within ``bound`` seconds and left nothing behind."""
    marker = f"--marker={uuid.uuid4().hex}"
    base = {k: v for k, v in os.environ.items() if not k.startswith(_OUTER)}
    base["PYTHONPATH"] = os.pathsep.join([ROOT, *filter(None, [base.get("PYTHONPATH")])])
    cmd = [MPIEXEC, "-n", str(n), sys.executable, *(["-m", "mpi4py"] if mpi4py else []),
           os.path.join(HERE, script), *args, marker]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HERE,
                            env={**base, **(env or {})}, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=bound)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)         # the job hung: end it, locales included
        out, err = proc.communicate()
        pytest.fail(f"{script} {args}: the job did not end within {bound} s\n{out}\n{err}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert not _wait_gone(marker), f"processes left behind: {leftovers(marker)}\n{err}"
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def mpiexec(mode: str, mpi4py: bool = False, n: int = 2):
    """``prog_raise.py mode`` under :func:`plain_job`."""
    return plain_job("prog_raise.py", mode, n=n, mpi4py=mpi4py)


@pytest.mark.parametrize("mpi4py", [False, True], ids=["python", "python -m mpi4py"])
@pytest.mark.parametrize("mode, error", [("raise", "ValueError: bad value on one locale"),
                                         ("interrupt", "KeyboardInterrupt")])
def test_uncaught_exception_aborts_the_job(mode, error, mpi4py):
    r = mpiexec(mode, mpi4py)
    assert r.returncode == 1, r.stderr
    line = line_of("prog_raise.py", mode)
    assert f'[locale 1]   File "{os.path.join(HERE, "prog_raise.py")}", line {line}, in <module>\n' in r.stderr, r.stderr
    assert f"[locale 1] {error}\n" in r.stderr, r.stderr
    assert "[locale 0]" not in r.stderr, r.stderr
    # the job ended before locale 0 could finish (the MPI library's own abort line is not
    # checked: it is written as the job is torn down and is lost in some runs)
    assert "total" not in r.stdout, r.stdout


@pytest.mark.parametrize("mpi4py", [False, True], ids=["python", "python -m mpi4py"])
def test_correct_job_exits_0(mpi4py):
    r = mpiexec("clean", mpi4py)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["total", "28"], r.stdout
    assert "[locale" not in r.stderr and "Abort" not in r.stderr, r.stderr


@pytest.mark.parametrize("mpi4py", [False, True], ids=["python", "python -m mpi4py"])
@pytest.mark.parametrize("status", [0, 3])
def test_sys_exit_on_every_locale_keeps_its_status(status, mpi4py):
    r = mpiexec(f"exit{status}", mpi4py)
    assert r.returncode == status, r.stderr
    assert "[locale" not in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("mode, mpi4py", [("one-exit3", False), ("one-exit3", True), ("one-builtin3", False)],
                         ids=["sys.exit", "sys.exit under python -m mpi4py", "exit"])
def test_nonzero_exit_on_one_locale_aborts_with_its_status(mode, mpi4py):
    """Locale 1 alone calls ``sys.exit(3)`` (or ``exit(3)``) while locale 0 waits in a barrier:
    the job ends at once with status 3 (``MPI_Abort``), as ``python -m mpi4py`` ends it; it hung
    (locale 1 waited at exit in the collective freeing of windows)."""
    r = mpiexec(mode, mpi4py)
    assert r.returncode == 3, r.stderr
    assert "total" not in r.stdout and "Traceback" not in r.stderr, (r.stdout, r.stderr)


def test_exit_message_on_one_locale_aborts_with_status_1():
    r = mpiexec("one-message")
    assert r.returncode == 1, r.stderr
    assert "stopped on one locale" in r.stderr and "total" not in r.stdout, (r.stdout, r.stderr)


def test_caught_exit_does_not_abort():
    r = mpiexec("caught")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["total", "28"], r.stdout

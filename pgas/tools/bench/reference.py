"""Running a reference code (``--reference PATH``) from inside a benchmark's job.

The references (the reference build described in ``docs/benchmarks.md`` (Reference codes)) are separate programs, MPI ones
started with their own ``mpiexec``.  Locale 0 starts the reference while the
other locales sleep (polling a file, not spinning in an MPI wait, so they leave
the cores to the reference), then every locale gets its output.  The job's own
process-manager variables are removed from the reference's environment so
its ``mpiexec`` starts a job of its own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from pgas import comm

_JOB_VARS = ("PMI_", "PMIX_", "HYDRA_", "MPIR_", "MPI_LOCAL", "OMPI_", "PGAS_")


def mpiexec() -> str:
    """The ``mpiexec`` beside this Python (the ``mpich`` wheel's), else the one on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return here if os.path.exists(here) else (shutil.which("mpiexec") or "mpiexec")


def run(argv: list[str], timeout: float = 1800.0) -> dict:
    """Collective: ``argv`` run once, by locale 0; ``{"argv", "returncode", "stdout",
    "stderr", "seconds"}`` on every locale (returncode None if it could not start)."""
    flag = comm.bcast(os.path.join(tempfile.gettempdir(), f"pgas-ref-{os.getpid()}-{time.time_ns()}")
                      if comm.here() == 0 else None, 0)
    comm.barrier()
    res = None
    if comm.here() == 0:
        env = {k: v for k, v in os.environ.items() if not k.startswith(_JOB_VARS)}
        t0 = time.perf_counter()
        try:
            p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, timeout=timeout)
            res = {"returncode": p.returncode, "stdout": p.stdout, "stderr": p.stderr[-4000:]}
        except (OSError, subprocess.TimeoutExpired) as e:
            res = {"returncode": None, "stdout": "", "stderr": str(e)}
        res.update(argv=[str(a) for a in argv], seconds=time.perf_counter() - t0)
        open(flag, "w").close()
    else:
        while not os.path.exists(flag):
            time.sleep(0.05)
    res = comm.bcast(res, 0)
    comm.barrier()
    if comm.here() == 0:
        os.unlink(flag)
        if res["returncode"] != 0:
            print(failure(res), file=sys.stderr, flush=True)
    return res


def failure(res: dict) -> str:
    """Why a reference run failed, for the user: its command, exit status and the end of
    its error output (a binary built against an MPI that is gone says so there)."""
    how = "could not start" if res["returncode"] is None else f"exited with status {res['returncode']}"
    tail = "\n".join((res["stderr"] or res["stdout"]).strip().splitlines()[-5:])
    return f"[bench] reference {' '.join(res['argv'])} {how}:\n{tail}"


def number(pattern: str, text: str) -> float | None:
    """The first number captured by ``pattern`` (one group) in ``text``, or None."""
    m = re.search(pattern, text)
    return float(m.group(1)) if m else None

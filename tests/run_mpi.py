"""Run the whole test suite: the pure tests (and the package's doctests) once
without MPI, then the fault tests (``tests/faults``: hangs and dead locales under
``pgas run``, each case starting its own job), then the documentation
(``tests/docs``: the site builds with warnings as errors, its example programs run
on 2 locales), then ``tests/mpi`` under ``pgas run -n N`` for N = 1, 2, 3, 4, then
the scale stage: the runtime and scale tests at 8 and 16 oversubscribed locales.

    python tests/run_mpi.py [--ranks 1,2,3,4] [--scale 8,16] [--per-test 120] [--per-run 1200] [--no-docs]
                            [--check 2,4,8,16] [--auto 1,3,16]

Each MPI run is killed after ``--per-run`` seconds and each test after
``--per-test`` seconds (pytest-timeout, thread method: it ends the process,
which ends the job).  Stops at the first failing run.  The last line is
``P passed, F failed`` (counts over all runs); the exit status is 0 only if
nothing failed.  The MPI runs at the locale counts in ``--check`` (default 2, 4,
8 and 16) have collective call checking on (``PGAS_CHECK=1``): a test that makes
locales disagree fails with a :class:`CollectiveMismatch` naming the call sites
instead of hanging.  The runs at 1 and 3 locales keep the default, unchecked path
under test (``--check ''`` turns checking off everywhere).  The harness pins
``protocol="packed"`` (``tests/mpi/conftest.py``) so that message counts are
known; the runs at the locale counts in ``--auto`` (default 1, 3 and 16) use the
library's default, ``PGAS_PROTOCOL=auto``, under which statements move their
halos by persistent two-sided transfers (``pgas.exec.persistent``): both paths are
under test at every stage.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pure_run(per_test: int, per_run: int, tmp: str) -> tuple[int, int, int]:
    """``(passed, failed, status)`` of the pure tests and doctests."""
    return _pytest_run("pure", ["tests/pure", "--doctest-modules", "pgas"], per_test, per_run, tmp)


def docs_run(per_test: int, per_run: int, tmp: str) -> tuple[int, int, int]:
    """``(passed, failed, status)`` of the documentation build and its examples."""
    return _pytest_run("docs", ["tests/docs"], max(per_test, 600), per_run, tmp)


def _pytest_run(name: str, args: list[str], per_test: int, per_run: int, tmp: str) -> tuple[int, int, int]:
    xml = os.path.join(tmp, f"{name}.xml")
    cmd = [sys.executable, "-m", "pytest", "-q", *args, f"--timeout={per_test}", f"--junitxml={xml}"]
    status = _call(cmd, per_run)
    passed = failed = 0
    if os.path.exists(xml):
        for suite in ET.parse(xml).getroot().iter("testsuite"):
            n, bad = int(suite.get("tests", 0)), int(suite.get("failures", 0)) + int(suite.get("errors", 0))
            passed += n - bad - int(suite.get("skipped", 0))
            failed += bad
    return passed, max(failed, int(status != 0)), status


def faults_run(per_test: int, per_run: int, tmp: str) -> tuple[int, int, int]:
    """``(passed, failed, status)`` of the fault tests (run without MPI: each starts its jobs)."""
    return _pytest_run("faults", ["tests/faults"], max(per_test, 300), per_run, tmp)


#: Run again at more locales than cores (oversubscribed, tiny arrays): the scale stage.
SCALE_TESTS = ["tests/mpi/test_scale.py", "tests/mpi/test_runtime.py"]


def mpi_run(n: int, per_test: int, per_run: int, tmp: str, paths=("tests/mpi",),
            check: bool = False, auto: bool = False) -> tuple[int, int, int]:
    """``(passed, failed, status)`` of ``paths`` (default ``tests/mpi``) on ``n`` locales
    (``auto``: under the library's default protocol rather than the harness's "packed")."""
    counts = os.path.join(tmp, f"mpi{n}.json")
    env = dict(os.environ, PGAS_TEST_COUNTS=counts, **({"PGAS_CHECK": "1"} if check else {}),
               **({"PGAS_PROTOCOL": "auto"} if auto else {}))
    cmd = [sys.executable, "-m", "pgas.tools.cli", "run", "-n", str(n), "--timeout", str(per_run), "-m", "pytest",
           "-q", "-x", *paths, f"--timeout={per_test}", "--timeout-method=thread"]
    status = _call(cmd, per_run + 30, env)
    got = {"passed": 0, "failed": 0}
    if os.path.exists(counts):
        with open(counts) as f:
            got.update(json.load(f))
    return got["passed"], max(got["failed"], int(status != 0)), status


def _call(cmd: list[str], limit: float, env=None) -> int:
    shown = [f"{k}={(env or {})[k]} " for k in ("PGAS_CHECK", "PGAS_PROTOCOL") if k in (env or {})
             and (env or {})[k] != os.environ.get(k)]
    print("$ " + "".join(shown) + " ".join(cmd), flush=True)
    try:
        return subprocess.run(cmd, cwd=ROOT, env=env, timeout=limit).returncode
    except subprocess.TimeoutExpired:
        print(f"timed out after {limit} s", flush=True)
        return 124


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", default="1,2,3,4", help="locale counts for tests/mpi (default 1,2,3,4)")
    p.add_argument("--scale", default="8,16", help="locale counts for the scale stage (default 8,16; '' for none)")
    p.add_argument("--per-test", type=int, default=120, help="seconds allowed per test (default 120)")
    p.add_argument("--per-run", type=int, default=1200,
                   help="seconds allowed per pytest run (default 1200: a stage takes 3-6 minutes on an idle 2-core machine, more when it is shared)")
    p.add_argument("--no-docs", action="store_true", help="skip building the docs and running their examples")
    p.add_argument("--check", default="2,4,8,16",
                   help="locale counts whose MPI runs check collective calls (PGAS_CHECK=1; default 2,4,8,16; '' for none)")
    p.add_argument("--auto", default="1,3,16",
                   help="locale counts whose MPI runs use PGAS_PROTOCOL=auto, the library's default (default 1,3,16)")
    args = p.parse_args()
    checked = {int(n) for n in args.check.split(",") if n}
    auto = {int(n) for n in args.auto.split(",") if n}
    passed = failed = 0
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("pure", lambda: pure_run(args.per_test, args.per_run, tmp)),
                ("faults", lambda: faults_run(args.per_test, args.per_run, tmp))]
        if not args.no_docs:
            runs.append(("docs", lambda: docs_run(args.per_test, args.per_run, tmp)))
        runs += [(f"mpi -n {n}", lambda n=int(n): mpi_run(n, args.per_test, args.per_run, tmp, check=n in checked,
                                                          auto=n in auto))
                 for n in args.ranks.split(",")]
        runs += [(f"scale -n {n}", lambda n=int(n): mpi_run(n, args.per_test, args.per_run, tmp, SCALE_TESTS, n in checked,
                                                            n in auto))
                 for n in args.scale.split(",") if n]
        for name, run in runs:
            start = time.time()
            ok, bad, status = run()
            passed, failed = passed + ok, failed + bad
            print(f"[{name}] {ok} passed, {bad} failed, exit {status}, {time.time() - start:.0f} s", flush=True)
            if bad:
                break
    print(f"total time {time.time() - t0:.0f} s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Run the test suite.  Two matrices:

``python tests/run_mpi.py`` (``make test``, the default; under 10 minutes on a 2-core machine):
the pure tests and the package's doctests once without MPI (in 2 processes when pytest-xdist is
installed), the fault tests (``tests/faults``: hangs and dead locales under ``pgas run``, locales
killed mid-checkpoint, full disks and damaged checkpoints, each case starting its own job), the
documentation (``tests/docs``: the site builds with warnings as errors, its example programs run
on 2 locales; the Jupyter tutorial's notebook on 2 MPI engines in the full matrix only), then
under ``pgas run -n N``:

- N = 1: every multi-locale test (``tests/mpi``) but those in :data:`MORE_LOCALES_ONLY` (the
  fuzzers, ``tests/fuzz``, which draw 5 examples a test in this matrix, ``PGAS_FUZZ_EXAMPLES``,
  and the NAS kernels), under the library's default protocol (``PGAS_PROTOCOL=auto``);
- N = 2: every test whose behaviour depends on the locale count, i.e. all of them but those
  in :data:`ONE_LOCALE_COUNT` (dtype and promotion rules, NumPy's edge cases, compiled
  kernels' arithmetic, cache keys, printing, command lines, the README's example: what they
  check is decided by NumPy's rules or a program's text, not by the distribution);
- N = 4 (2-D grids, strict collective call checking: ``PGAS_CHECK=1``): the
  tests in :data:`CORE` (the runtime, one-sided access, exchanges, ghosts, shifts, statements
  and their messages, irregular access, redistribution, sort, scale), where a
  third or fourth locale meets cases (uneven blocks, 2 x 2 grids, locales owning nothing)
  that two do not;
- no 3-locale stage (``--ranks 1,2,3,4`` adds it: the tests in :data:`UNEVEN`, uneven blocks,
  auto protocol, checking off: ``PGAS_CHECK=0``) and no scale stage (``test_scale.py`` is in
  :data:`UNEVEN`; ``--scale 8``
  adds the stage).

``python tests/run_mpi.py --full`` (``make test-full``, what CI runs through ``.ci/run``; about
20 minutes): the same pure, fault and documentation stages, then all of ``tests/mpi`` and
``tests/fuzz`` at N = 1, 2, 3, 4, the scale stage at 8 and 16, then the package as users get it:
the wheel (``tests/wheel``: built, installed into a fresh virtual environment, the demo and a
smoke test run from it) and one MPI test file under a plain ``mpiexec -n 2`` (no ``pgas run``:
as a cluster's launcher runs a job, :data:`PLAIN_LAUNCHER_TEST`).  Every run checks collective
calls the default way (folded, ``PGAS_CHECK`` unset) but those at the locale counts in
``--check`` (strict: 2, 4, 8 and 16, 4 in the fast matrix) and ``--unchecked`` (checking off:
3 in both), and the auto protocol runs at 1, 3 and 16.

    python tests/run_mpi.py [--full] [--ranks 1,2,3,4] [--scale 8,16] [--per-test 120]
                            [--per-run 1200] [--no-docs] [--check 4] [--auto 1,3,16]

Each MPI run is killed after ``--per-run`` seconds and each test after
``--per-test`` seconds (pytest-timeout, thread method: it ends the process,
which ends the job).  Stops at the first failing run.  The last line is
``P passed, F failed`` (counts over all runs); the exit status is 0 only if
nothing failed.  The MPI runs at the locale counts in ``--check`` have strict collective
call checking (``PGAS_CHECK=1``: every call agreed before it runs, naming its call site);
those in ``--unchecked`` keep the unchecked path under test (``PGAS_CHECK=0``); the others
run with the default, folded checking.  The harness pins ``protocol="packed"`` (``tests/mpi/harness.py``) so that
message counts are known; the runs at the locale counts in ``--auto`` use the
library's default, ``PGAS_PROTOCOL=auto``, under which statements move their halos by
persistent two-sided transfers: both paths are under test in both matrices.
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
    """``(passed, failed, status)`` of the pure tests and doctests (2 processes with pytest-xdist)."""
    try:
        import xdist  # noqa: F401
        workers = ["-n", "2"]
    except ImportError:
        workers = []
    return _pytest_run("pure", [*workers, "tests/pure", "--doctest-modules", "pgas"], per_test, per_run, tmp)


#: Documentation tests that only the full matrix runs: the Jupyter tutorial's notebook (a
#: cluster of MPI engines started and stopped: 25-45 s, which the fast matrix's 10 minutes lack).
FULL_ONLY_DOCS = ["tests/docs/test_notebook.py"]


def docs_run(per_test: int, per_run: int, tmp: str, full: bool = True) -> tuple[int, int, int]:
    """``(passed, failed, status)`` of the documentation build and its examples (``full``: with
    :data:`FULL_ONLY_DOCS`)."""
    skip = [] if full else [f"--ignore={t}" for t in FULL_ONLY_DOCS]
    return _pytest_run("docs", ["tests/docs", *skip], max(per_test, 600), per_run, tmp)


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


#: The multi-locale tests: the harness's suite and the fuzzers (``tests/fuzz``).
MPI_PATHS = ["tests/mpi", "tests/fuzz"]

#: Run again at more locales than cores (oversubscribed, tiny arrays): the scale stage.
SCALE_TESTS = ["tests/mpi/test_scale.py", "tests/mpi/test_runtime.py"]

#: Tests (files, or node ids) that the fast matrix runs at one locale only: what they check is
#: decided by NumPy's rules or by a program's text, not by how the arrays are distributed.
ONE_LOCALE_COUNT = [
    "tests/mpi/test_bench_stmt.py",            # argument checks of pgas bench stmt
    "tests/mpi/test_conformance.py",           # every ufunc's verdict (works / raises), small arrays
    "tests/mpi/test_printing.py",              # repr and str of small arrays
    "tests/mpi/test_readme.py",                # the README's example runs as written
    "tests/mpi/test_dtypes.py",                # result dtypes, promotion and casting rules
    "tests/mpi/test_numeric.py",               # NumPy's edge cases of round, diff, isclose, nan_to_num
    "tests/mpi/test_kernels.py",               # compiled kernels' arithmetic, element by element
    "tests/mpi/test_kernels16.py",             # the same for float16
    "tests/mpi/test_fuse.py",                  # fused expression trees bit-identical to NumPy
    "tests/mpi/test_fuse_cache.py",            # the compiled-program cache's keys
    "tests/mpi/test_stmt_memo.py",             # the lowering memo's keys
    "tests/mpi/test_stmt_fused.py",            # test_stmt.py, test_forall.py and test_irregular.py
    "tests/mpi/test_forall_fused.py",          # again with compiled kernels (which run per locale;
    "tests/mpi/test_irregular_fused.py",       # the suites themselves run at every count)
    "tests/mpi/test_bench_scaling.py",         # a sweep's bookkeeping (its jobs start their own locales)
]

#: Tests that the fast matrix runs at 2 locales but not at 1: what one locale would check, two
#: check too (the same comparisons with NumPy, every kernel and plan path), and they take long.
MORE_LOCALES_ONLY = [
    "tests/fuzz",                               # hypothesis against NumPy: statements, views, ghosts, forall
    "tests/mpi/test_bench_nas.py",             # the NAS kernels' verification (MG, FT need 2+ for exchanges)
]

#: Tests that the fast matrix leaves to the full one at 2 locales (where it runs them at 1,
#: 2, 3 and 4): ``make test`` took 632 s with them and with ``test_shift_compiled``,
#: ``test_axis_reduce``, ``test_constructors`` and ``test_domains`` at 4 locales (now at 1 and 2
#: there, and at 1-4 in the full matrix).
FULL_ONLY_AT_TWO = [
    "tests/fuzz/test_statement_reruns.py",     # hypothesis: statements re-run with changed values (34 s)
    "tests/mpi/test_memory.py",                # peak memory of constructors and first runs (16 s; also at 1 locale)
    "tests/mpi/test_array_api_functions.py",   # the namespace's composed functions against NumPy (20 s; also at 1)
    # the slowest single tests at 2 locales (about 20 s together; each also at 1, and at 1-4 in the full matrix):
    "tests/mpi/test_window_pool.py::test_pool_decides_alike_beyond_what_an_agreement_carries",
    "tests/mpi/test_irregular_plans.py::test_plan_gathers_interleaved_across_dtypes_arrays_and_writes",
    "tests/mpi/test_shift_cache.py::test_plan_on_freed_and_reallocated_arrays",
    "tests/mpi/test_sort.py::test_views_and_expressions_sort_as_numpy",            # also at 4 (CORE)
    "tests/mpi/test_fuse_rows.py::test_row_kernels_match_numpy_bit_for_bit",       # 2 x 2 grids: test_fuse_grids at 4
    "tests/mpi/test_nanfuncs.py::test_isclose_as_numpy",
    "tests/mpi/test_linalg.py::test_norm_along_axes",
]

#: The tests that the fast matrix also runs at 4 locales: where uneven blocks, 2 x 2 grids
#: and locales owning nothing meet cases that 2 locales do not.
CORE = [
    "tests/mpi/test_runtime.py",
    "tests/mpi/test_one_sided.py",
    "tests/mpi/test_lock.py",
    "tests/mpi/test_comm.py",
    "tests/mpi/test_node.py",                  # at 4 locales on 2 cores: oversubscribed, waits nap
    "tests/mpi/test_collective_check.py",
    "tests/mpi/test_exchange_checks.py",       # calls agreed in their exchanges, counted; errors alike
    "tests/mpi/test_ghosts.py",
    "tests/mpi/test_ghost_reads.py",
    "tests/mpi/test_shift.py",
    "tests/mpi/test_stmt.py",
    "tests/mpi/test_stmt_messages.py",
    "tests/mpi/test_irregular.py",
    "tests/mpi/test_ufunc_at.py",
    "tests/mpi/test_array.py",
    "tests/mpi/test_sort.py",
    "tests/mpi/test_trace.py",                 # waits named by peer, the critical path across locales
    "tests/mpi/test_fuse_grids.py",            # stencils' border columns as row kernels on 2 x 2 grids
]

#: The tests that the fast matrix runs at 3 locales: those where uneven blocks and locales owning
#: nothing meet cases that 2 and 4 locales do not.
UNEVEN = [
    "tests/mpi/test_runtime.py",
    "tests/mpi/test_one_sided.py",
    "tests/mpi/test_lock.py",
    "tests/mpi/test_ghosts.py",
    "tests/mpi/test_shift.py",
    "tests/mpi/test_stmt.py",
    "tests/mpi/test_irregular.py",
    "tests/mpi/test_axis_reduce.py",
    "tests/mpi/test_sort.py",
    "tests/mpi/test_quantile.py",              # the selection's shares on uneven blocks and locales owning nothing
    "tests/mpi/test_scale.py",
    "tests/mpi/test_ablation.py",
    "tests/mpi/test_compile.py",               # replayed steps on uneven blocks (strict checking at 4 replays nothing)
    "tests/mpi/test_compile_merge.py",         # merged exchanges on uneven blocks (strict checking at 4 merges nothing)
    "tests/mpi/test_threads_random.py",        # statements split over threads on uneven blocks, against NumPy
]


def mpi_run(n: int, per_test: int, per_run: int, tmp: str, paths=tuple(MPI_PATHS),
            check=None, auto: bool = False, skip=()) -> tuple[int, int, int]:
    """``(passed, failed, status)`` of ``paths`` (default :data:`MPI_PATHS`) but the node ids in
    ``skip`` on ``n`` locales (``check``: "1" strict, "0" off, None the default; ``auto``: under
    the library's default protocol rather than the harness's "packed")."""
    counts = os.path.join(tmp, f"mpi{n}.json")
    env = dict(os.environ, PGAS_TEST_COUNTS=counts, **({"PGAS_CHECK": check} if check is not None else {}),
               **({"PGAS_PROTOCOL": "auto"} if auto else {}))
    cmd = [sys.executable, "-m", "pgas.tools.cli", "run", "-n", str(n), "--timeout", str(per_run), "-m", "pytest",
           "-q", "-x", *paths, *(f"--deselect={t}" for t in skip), f"--timeout={per_test}",
           "--timeout-method=thread"]
    return _counted(counts, _call(cmd, per_run + 30, env))


def _counted(counts: str, status: int) -> tuple[int, int, int]:
    """``(passed, failed, status)`` from the harness's counts file ``counts`` and the exit status."""
    got = {"passed": 0, "failed": 0}
    if os.path.exists(counts):
        with open(counts) as f:
            got.update(json.load(f))
    return got["passed"], max(got["failed"], int(status != 0)), status


# -- the package as users get it (the full matrix) ----------------------------------------------
def wheel_run(per_test: int, per_run: int, tmp: str) -> tuple[int, int, int]:
    """``(passed, failed, status)`` of ``tests/wheel``: the sdist and wheel built, the wheel
    installed into a fresh virtual environment, the demo and a smoke test run from it."""
    return _pytest_run("wheel", ["tests/wheel"], max(per_test, 900), per_run, tmp)


#: The MPI test file run under a plain ``mpiexec`` (no ``pgas run``, no watchdog), as a
#: cluster's launcher (``srun``, a site's ``mpiexec``) runs a job: one-sided windows, the
#: harness's abort on a failure and its counts must work there too.
PLAIN_LAUNCHER_TEST = "tests/mpi/test_one_sided.py"


def plain_launcher_run(per_test: int, per_run: int, tmp: str) -> tuple[int, int, int]:
    """``(passed, failed, status)`` of :data:`PLAIN_LAUNCHER_TEST` under ``mpiexec -n 2`` itself."""
    from pgas.tools.launch.launcher import mpiexec_command

    counts = os.path.join(tmp, "plain-launcher.json")
    env = {k: v for k, v in os.environ.items() if k != "PGAS_JOB_DIR"}
    env["PGAS_TEST_COUNTS"] = counts
    cmd = [*mpiexec_command(), "-n", "2", sys.executable, "-m", "pytest", "-q", "-x", PLAIN_LAUNCHER_TEST,
           f"--timeout={per_test}", "--timeout-method=thread"]
    return _counted(counts, _call(cmd, per_run, env))


def _call(cmd: list[str], limit: float, env=None) -> int:
    shown = [f"{k}={(env or {})[k]} " for k in ("PGAS_CHECK", "PGAS_PROTOCOL") if k in (env or {})
             and (env or {})[k] != os.environ.get(k)]
    print("$ " + "".join(shown) + " ".join(cmd), flush=True)
    try:
        return subprocess.run(cmd, cwd=ROOT, env=env, timeout=limit, check=False).returncode
    except subprocess.TimeoutExpired:
        print(f"timed out after {limit} s", flush=True)
        return 124


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--full", action="store_true",
                   help="the full matrix: every MPI test at 1, 2, 3, 4 locales and the scale stage at 8 and 16")
    p.add_argument("--ranks", default=None,
                   help="locale counts for the MPI tests (default 1,2,4; 1,2,3,4 with --full; 3 runs UNEVEN)")
    p.add_argument("--scale", default=None, help="locale counts for the scale stage (default none; 8,16 with --full)")
    p.add_argument("--per-test", type=int, default=120, help="seconds allowed per test (default 120)")
    p.add_argument("--per-run", type=int, default=1200,
                   help="seconds allowed per pytest run (default 1200; a full stage takes 3-6 minutes on an idle 2-core machine)")
    p.add_argument("--no-docs", action="store_true", help="skip building the docs and running their examples")
    p.add_argument("--check", default=None,
                   help="locale counts whose MPI runs check collective calls strictly (PGAS_CHECK=1; default 4; "
                        "2,4,8,16 with --full; '' for none)")
    p.add_argument("--unchecked", default="3",
                   help="locale counts whose MPI runs check nothing (PGAS_CHECK=0; default 3)")
    p.add_argument("--auto", default="1,3,16",
                   help="locale counts whose MPI runs use PGAS_PROTOCOL=auto, the library's default (default 1,3,16)")
    args = p.parse_args()
    if not args.full:                          # the fuzzers draw fewer examples (their own defaults: 6-25)
        os.environ.setdefault("PGAS_FUZZ_EXAMPLES", "5")
    scale = args.scale if args.scale is not None else ("8,16" if args.full else "")
    checked = {int(n) for n in (args.check if args.check is not None else "2,4,8,16" if args.full else "4").split(",")
               if n}
    auto = {int(n) for n in args.auto.split(",") if n}
    unchecked = {int(n) for n in args.unchecked.split(",") if n}

    def check(n: int):
        return "1" if n in checked else "0" if n in unchecked else None

    def selection(n: int) -> dict:
        """What the MPI run at ``n`` locales runs: everything under --full; all but
        :data:`MORE_LOCALES_ONLY` at 1 locale; the tests whose behaviour depends on the locale
        count at 2; :data:`UNEVEN` at 3 and :data:`CORE` at 4 and more."""
        if args.full:
            return {}
        if n == 1:
            return {"skip": MORE_LOCALES_ONLY}
        if n == 2:
            return {"skip": ONE_LOCALE_COUNT + FULL_ONLY_AT_TWO}
        return {"paths": UNEVEN if n == 3 else CORE}

    passed = failed = 0
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("pure", lambda: pure_run(args.per_test, args.per_run, tmp)),
                ("faults", lambda: faults_run(args.per_test, args.per_run, tmp))]
        if not args.no_docs:
            runs.append(("docs", lambda: docs_run(args.per_test, args.per_run, tmp, args.full)))
        runs += [(f"mpi -n {n}", lambda n=int(n): mpi_run(n, args.per_test, args.per_run, tmp, check=check(n),
                                                          auto=n in auto, **selection(n)))
                 for n in (args.ranks or ("1,2,3,4" if args.full else "1,2,4")).split(",") if n]
        runs += [(f"scale -n {n}", lambda n=int(n): mpi_run(n, args.per_test, args.per_run, tmp, SCALE_TESTS, check(n),
                                                            n in auto))
                 for n in scale.split(",") if n]
        if args.full:
            runs += [("wheel", lambda: wheel_run(args.per_test, args.per_run, tmp)),
                     ("mpiexec -n 2", lambda: plain_launcher_run(args.per_test, args.per_run, tmp))]
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

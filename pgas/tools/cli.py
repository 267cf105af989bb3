"""The ``pgas`` command: ``pgas run``, ``pgas info``, ``pgas bench``, ``pgas calibrate`` and ``pgas trace``.

``pgas run -n N [--threads T] [--timeout S] [--grace S] [--hang-timeout S] [--tag] script.py [args]``
(or ``-m module [args]``) starts N local locales with the MPI launcher
installed beside this Python (the ``mpich`` wheel's ``mpiexec``), or with the
one named by ``$PGAS_MPIEXEC`` (e.g. ``PGAS_MPIEXEC="mpirun --oversubscribe"``
for a site Open MPI).  Each locale runs ``python -m pgas.tools.launch.runner``, which aborts
the whole job when the script raises.  The launcher reads the job's standard
error: traceback lines tagged ``[locale k]`` are held until the job ends and
identical tracebacks from several locales are printed once.  The locales' output reaches
the terminal in whole lines, never mixed mid-line (:mod:`pgas.tools.launch.output`);
``--tag`` starts each line with ``[k] ``, its locale's number.  A watchdog
(:mod:`pgas.tools.launch.watch`) reports and ends a job that hangs or whose locale dies.

Exit status: the job's (a script's ``sys.exit`` status, 1 for an error); 124
when ``--timeout`` ran out; 125 when the watchdog found the job hung (a locale
ended its script and the others did not end theirs within ``--grace``, or no
progress for ``--hang-timeout``, 600 s by default); when a locale died, its ``os._exit`` status
(1 for ``os._exit(0)``) or 128 + N for signal N (139 for a segfault; 1 when
unknown); 130 after Ctrl-C; 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import re
import sys

from pgas.tools.launch.launcher import (  # noqa: F401
    HANG_TIMEOUT,
    StderrFilter,
    UsageError,
    launch,
    mpiexec_command,
    under_launcher,
)


# -- subcommands ---------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """An argument parser that raises :class:`UsageError` instead of exiting on bad arguments."""

    def error(self, message: str):
        raise UsageError(f"{self.prog}: error: {message}\n{self.format_usage().rstrip()}")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a number of seconds, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def _seconds_or_off(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a number of seconds, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0 (0: off), got {text}")
    return value


def _locales(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


_threads = _locales                     # the same check: a whole number >= 1


RUN_EPILOG = f"""\
exit status: the job's (a script's sys.exit status, 1 for an error); 124 when
--timeout ran out; 125 when the watchdog found the job hung; when a locale
died, its os._exit status or 128+N for signal N (1 if unknown); 130 after
Ctrl-C; 2 for bad arguments.

watchdog: when a locale dies (os._exit, a signal, a crash), at once; when a
locale ends its script and the others do not end theirs within --grace
seconds; or when for --hang-timeout seconds ({HANG_TIMEOUT:g} unless --hang-timeout or
$PGAS_HANG_TIMEOUT says otherwise; 0: never) no locale ends its script and
no locale's Python stack changes: pgas run prints which locales ended and
how, and the line each live locale waits at, then ends the job. Raise
--grace for jobs whose locales finish far apart, --hang-timeout for a job
with single steps (one NumPy or I/O call) longer than that.
"""


def run_parser() -> argparse.ArgumentParser:
    """The parser of ``pgas run``'s own options (those before the script or ``-m``)."""
    p = _Parser(prog="pgas run", description="Run a Python script (or module) on N local locales, one MPI\n"
                "process each, under a watchdog that reports hangs and failed locales.",
                epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                usage="pgas run [-h] -n N [--threads T] [--timeout S] [--grace S] [--hang-timeout S] [--tag] "
                      "(script.py | -m module) [args ...]")
    p.add_argument("-n", "-np", dest="n", type=_locales, required=True, metavar="N",
                   help="number of locales (MPI processes) to start")
    p.add_argument("--threads", type=_threads, default=None, metavar="T",
                   help="threads each locale runs (its kernels, reductions and BLAS pool): sets "
                        "$PGAS_THREADS for every locale (default: $PGAS_THREADS if set, else the "
                        "node's cores divided by its locales)")
    p.add_argument("--timeout", type=_seconds, default=None, metavar="S",
                   help="end the job after S seconds, reporting where each locale is (exit status 124; "
                        "default: no limit)")
    p.add_argument("--grace", type=_seconds, default=10.0, metavar="S",
                   help="seconds the other locales get to end once one locale has ended its script or "
                        "died, before the job is reported as hung (default %(default)g)")
    p.add_argument("--hang-timeout", type=_seconds_or_off, default=None, metavar="S",
                   help="report and end the job after S seconds without progress: no locale ended "
                        "and no locale's Python stack changed (default: $PGAS_HANG_TIMEOUT if set, "
                        f"else {HANG_TIMEOUT:g}; 0 turns the check off)")
    p.add_argument("--tag", action="store_true",
                   help="start each line of the locales' output with [k], its locale's number (as mpiexec -l); "
                        "lines are never split or mixed, tagged or not")
    p.add_argument("-m", dest="module", metavar="module", help="run library module as a script (as python -m)")
    p.add_argument("script", nargs="?", help="the script each locale runs (as python script.py)")
    p.add_argument("args", nargs="*", help="arguments for the script or module (passed as they are)")
    return p


_RUN_VALUED = {"-n", "-np", "--threads", "--timeout", "--grace", "--hang-timeout"}


def parse_run(argv: list[str]) -> argparse.Namespace:
    """``pgas run`` arguments: ``n``, ``timeout``, ``grace``, ``hang_timeout`` and ``target``
    (``[script, *args]`` or ``["-m", module, *args]``, passed on untouched)."""
    p, i = run_parser(), 0
    while i < len(argv) and argv[i] != "-m" and argv[i].startswith("-") and argv[i] != "-":
        a = argv[i]
        if a.split("=", 1)[0] not in (*_RUN_VALUED, "-h", "--help", "--tag") and not re.fullmatch(r"-n\d+", a):
            p.error(f"unknown option {a}")
        i += 2 if a in _RUN_VALUED else 1
    i = min(i, len(argv))
    ns = p.parse_args(argv[:i])
    ns.target = argv[i:]
    if not ns.target:
        p.error("no script or -m module given")
    if ns.target == ["-m"]:
        p.error("argument -m: expected a module name")
    return ns


def cmd_run(argv: list[str]) -> int:
    ns = parse_run(argv)
    return launch(ns.n, ns.target, ns.timeout, ns.grace, ns.hang_timeout, ns.tag, ns.threads)


def cmd_info(argv: list[str]) -> int:
    _Parser(prog="pgas info", description="Show the locales, the MPI library and the versions pgas runs "
            "with (run it under pgas run -n N to see N locales).").parse_args(argv)
    from pgas import comm
    from pgas.comm import node
    from pgas.exec import threads

    me, P = comm.here(), comm.num_locales()
    at = node.info()                   # collective: the library's communicator is made here
    if me != 0:
        return 0
    try:
        launcher = " ".join(mpiexec_command())
    except UsageError as e:
        launcher = f"none ({e})"
    locales = f"{P}" if under_launcher() else f"{P} (not under an MPI launcher; `pgas run -n N` starts N)"
    import numpy

    rows = [("pgas", _version("pgas")), ("locales", locales), ("MPI library", comm.library_version()),
            ("mpi4py", comm.mpi4py_version()), ("numpy", numpy.__version__),
            ("python", f"{platform.python_version()} ({sys.executable})"), ("mpiexec", launcher),
            ("node", f"{at.locales} locale{'s' if at.locales > 1 else ''} on {at.cores} core{'s' if at.cores > 1 else ''}"
                     f" ({'oversubscribed' if at.oversubscribed else 'a core or more per locale'})"),
            ("threads", f"{threads.limit()} per locale (kernels, reductions, BLAS / OpenMP; "
                        f"{'PGAS_THREADS' if at.threads_from == 'PGAS_THREADS' else 'cores // locales on the node'}"
                        f"{'' if threads.limit() == at.threads else ', pg.config(threads=N)'})" + _pools(threads)),
            ("waits", f"{at.wait} ({'PGAS_WAIT' if at.wait_from == 'PGAS_WAIT' else 'from the node'})")]
    for k, v in rows:
        print(f"{k + ':':13} {v}")
    return 0


def _pools(threads) -> str:
    """threadpoolctl's pools as ``"; openblas 1, ..."`` ("" where it sees none)."""
    pools = [f"{p.get('internal_api', '?')} {p.get('num_threads', '?')}" for p in threads.blas()]
    return f"; pools: {', '.join(pools)}" if pools else "; no pool seen by threadpoolctl"


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _bench_list() -> str:
    from pgas.tools import bench

    lines = []
    for name in sorted(bench.BENCHMARKS):
        doc = bench.plain((bench.load(name).__doc__ or "").split("\n\n")[0])
        lines.append(f"  {name:13} {doc}")
    return "\n".join(lines)


def _kernel_list() -> str:
    from pgas.tools.bench.kernels import KERNELS

    return "\n".join(f"  {k.name:13} {k.description} (paper size {k.paper}, test size {k.tiny})"
                     for k in KERNELS.values())


def cmd_report(argv: list[str]) -> int:
    from pgas.tools.bench.report import main as report_main

    return report_main(argv, _Parser)


def cmd_show(argv: list[str]) -> int:
    from pgas.tools.show import main as show_main

    return show_main(argv, _Parser)


def cmd_trace(argv: list[str]) -> int:
    from pgas.tools.trace import main as trace_main

    return trace_main(argv, _Parser)


def bench_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="pgas bench", usage="pgas bench [-h] [NAME [-n N] [options]]",
                description="Run a benchmark on local locales (it starts the job itself) and write its\n"
                "results as JSON; with no NAME, list the benchmarks.",
                epilog="benchmarks:\n" + _bench_list() + "\n\npgas bench NAME --help shows a benchmark's options.",
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", nargs="?", metavar="NAME", help="the benchmark to run")
    return p


def cmd_bench(argv: list[str]) -> int:
    from pgas.tools import bench

    if not argv or argv[0] in ("-h", "--help", "list"):
        if argv[:1] == ["list"] or not argv:
            print("benchmarks:\n" + _bench_list())
            print("run one with: pgas bench NAME [-n N] [options]   (pgas bench NAME --help for its options)")
            print("\nkernels (pgas bench run KERNEL --dist cyclic --locales 4 --size small):\n" + _kernel_list())
            return 0
        bench_parser().parse_args(argv)
    name, rest = argv[0], argv[1:]
    if name not in bench.BENCHMARKS:
        bench_parser().error(f"unknown benchmark {name!r} (choose from {', '.join(sorted(bench.BENCHMARKS))})")
    module = bench.load(name)
    p = module.make_parser()
    p.error = _Parser.error.__get__(p)
    args = p.parse_args(rest)          # --help and bad options are dealt with here, once, before MPI starts
    if getattr(module, "DRIVER", False):
        return bench.run(name, rest)   # it starts its own jobs (pgas bench suite)
    opts = _drop_locales(rest)
    if under_launcher():
        return bench.run(name, opts)
    return launch(args.n or getattr(module, "LOCALES", 4), ["-m", "pgas.tools.bench", name, *opts])


def _drop_locales(argv: list[str]) -> list[str]:
    """A benchmark's arguments without ``-n N`` (the locale count, which the launcher takes).

    >>> _drop_locales(["--trials", "2", "-n", "3", "-n4", "--locales", "2", "--locales=2"])
    ['--trials', '2']
    """
    out, i = [], 0
    while i < len(argv):
        if argv[i] in ("-n", "--locales"):
            i += 2
            continue
        if (argv[i].startswith("-n") and argv[i][2:].isdigit()) or argv[i].startswith("--locales="):
            i += 1
            continue
        out.append(argv[i])
        i += 1
    return out


def cmd_calibrate(argv: list[str]) -> int:
    """``pgas calibrate [-n N] [--reps R] [--out PATH]``: measure the network model's figures
    (:mod:`pgas.tools.calibrate.network`) at N locales and store them for statements to use."""
    p = _Parser(prog="pgas calibrate", description="Measure latency, start-up overhead o(b, S), gap per byte and "
                "packed vs pipelined transfer costs at N locales, and store them (keyed by host, MPI library "
                "and N) where statements load them to choose transfer protocols.")
    p.add_argument("-n", type=_locales, default=None, metavar="N",
                   help="number of locales (default 4; under pgas run, the job's)")
    p.add_argument("--reps", type=_locales, default=5, metavar="R", help="repetitions per measurement (median)")
    p.add_argument("--out", default=None, metavar="PATH", help="file to write instead of the cache file")
    args = p.parse_args(argv)
    opts = ["--reps", str(args.reps)] + (["--out", args.out] if args.out else [])
    if under_launcher():
        from pgas.tools.calibrate.network import main as measure

        return measure(opts)
    return launch(args.n or 4, ["-m", "pgas.tools.calibrate.network", *opts])


COMMANDS = {"run": cmd_run, "info": cmd_info, "bench": cmd_bench, "report": cmd_report, "show": cmd_show,
            "calibrate": cmd_calibrate, "trace": cmd_trace}


def main_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="pgas", description="pgas: distributed arrays for Python on MPI.",
                formatter_class=argparse.RawDescriptionHelpFormatter,
                epilog="commands:\n"
                       "  run    run a script or module on N local locales (pgas run -n N script.py)\n"
                       "  info   show the locales, the MPI library and the versions\n"
                       "  bench  run a benchmark (pgas bench lists them)\n"
                       "  report rebuild a benchmark suite's Markdown report and plots from its JSON\n"
                       "  show   draw distributions' ownership maps and a statement's footprints\n"
                       "  calibrate  measure the network model that picks transfer protocols\n"
                       "  trace  summarise a timeline recorded with PGAS_TRACE=DIR or pg.trace(DIR)\n\n"
                       "pgas COMMAND --help shows a command's options.")
    p.add_argument("--version", action="version", version=f"pgas {_version('pgas')}")
    p.add_argument("command", choices=sorted(COMMANDS), metavar="COMMAND", help="run, info, bench, report, show, calibrate or trace")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pgas`` command; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if not argv or argv[0] not in COMMANDS:
            if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
                main_parser().error(f"unknown option {argv[0]}")
            main_parser().parse_args(argv[:1])
            main_parser().error("a command is required")
        return COMMANDS[argv[0]](argv[1:])
    except UsageError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    except SystemExit as e:          # --help, --version
        return e.code if isinstance(e.code, int) else 0


if __name__ == "__main__":
    sys.exit(main())

"""The ``pgas`` command: ``pgas run``, ``pgas info`` and ``pgas bench``.

``pgas run -n N [--timeout S] [--grace S] [--hang-timeout S] script.py [args]``
(or ``-m module [args]``) starts N local locales with the MPI launcher
installed beside this Python (the ``mpich`` wheel's ``mpiexec``), or with the
one named by ``$PGAS_MPIEXEC`` (e.g. ``PGAS_MPIEXEC="mpirun --oversubscribe"``
for a site Open MPI).  Each locale runs ``python -m pgas._run``, which aborts
the whole job when the script raises.  The launcher reads the job's standard
error: traceback lines tagged ``[locale k]`` are held until the job ends and
identical tracebacks from several locales are printed once.  A watchdog
(:mod:`pgas._watch`) reports and ends a job that hangs or whose locale dies.

Exit status: the job's (a script's ``sys.exit`` status, 1 for an error); 124
when ``--timeout`` ran out; 125 when the watchdog found the job hung (a locale
ended its script and the others did not end theirs within ``--grace``, or no
progress for ``--hang-timeout``); when a locale died, its ``os._exit`` status
(1 for ``os._exit(0)``) or 128 + N for signal N (139 for a segfault; 1 when
unknown); 130 after Ctrl-C; 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

from pgas import _watch

# Environment variables by which MPI launchers tell a process it is one of a job.
_LAUNCHER_VARS = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS")


class UsageError(Exception):
    """Bad command-line arguments."""


def under_launcher() -> bool:
    """True when this process was started by an MPI launcher (so MPI knows the job's locales)."""
    return any(v in os.environ for v in _LAUNCHER_VARS)


def mpiexec_command() -> list[str]:
    """The launcher ``pgas run`` uses: ``$PGAS_MPIEXEC`` (split like a shell), else the
    ``mpiexec`` beside this Python (a venv's ``bin``), else the first on ``PATH``."""
    override = os.environ.get("PGAS_MPIEXEC")
    if override:
        return shlex.split(override)
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(beside, os.X_OK):
        return [beside]
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if found is None:
        raise UsageError("no mpiexec found beside this Python or on PATH; install the 'mpich' wheel "
                         "or set PGAS_MPIEXEC")
    return [found]


# -- de-duplication of locale tracebacks ---------------------------------
_TAG = re.compile(r"^\[locale (\d+)\] ?(.*)$")
_MPICH_ABORT = re.compile(r"^Abort\(\d+\) on node \d+ .*MPI_Abort")


class StderrFilter:
    """Passes the job's standard error through, holding lines tagged ``[locale k]`` until
    :meth:`finish`, which prints each distinct block (a locale's tagged lines, tag
    stripped) once, under the first locale that wrote it, and names the others.
    MPICH's ``Abort(...)`` notice is shown (once) only when no locale wrote a tagged line.

    >>> f = StderrFilter()
    >>> f.feed("[locale 1] Traceback\\n"), f.feed("[locale 0] Traceback\\n"), f.feed("plain\\n")
    ([], [], ['plain\\n'])
    >>> print("".join(f.finish()), end="")
    [locale 1] Traceback
    [pgas] locale 0 raised the same error
    """

    def __init__(self) -> None:
        self.blocks: dict[int, list[str]] = {}
        self.abort_notice: str | None = None

    def feed(self, line: str) -> list[str]:
        """The lines to write now for one input line."""
        m = _TAG.match(line.rstrip("\n"))
        if m:
            self.blocks.setdefault(int(m.group(1)), []).append(m.group(2))
            return []
        if _MPICH_ABORT.match(line):
            self.abort_notice = self.abort_notice or line
            return []
        return [line]

    def finish(self) -> list[str]:
        """The held tracebacks, each distinct one once."""
        out: list[str] = []
        first: dict[tuple, int] = {}
        same: dict[int, list[int]] = {}
        for loc, lines in self.blocks.items():
            key = tuple(lines)
            if key in first:
                same[first[key]].append(loc)
                continue
            first[key] = loc
            same[loc] = []
            out.extend(f"[locale {loc}] {s}\n" for s in lines)
        for loc, others in same.items():
            if others:
                names = ", ".join(map(str, sorted(others)))
                out.append(f"[pgas] locale{'s' if len(others) > 1 else ''} {names} raised the same error"
                           f"{'' if len(same) == 1 else f' as locale {loc}'}\n")
        if not self.blocks and self.abort_notice:
            out.append(self.abort_notice)
        self.blocks.clear()
        self.abort_notice = None
        return out


def launch(n: int, target: list[str], timeout: float | None = None, grace: float = 10.0,
           hang_timeout: float | None = None) -> int:
    """Run ``python -m pgas._run *target`` on ``n`` locales under the watchdog (see
    :mod:`pgas._watch`); return the exit status (see the module docstring)."""
    launcher = mpiexec_command()
    if os.path.exists(os.path.join(os.path.dirname(launcher[0]), "mpiexec.hydra")):
        # MPICH's hydra would kill the other locales the moment one dies, leaving no stack to
        # show and no reliable account of which locale went first: the watchdog ends the job
        launcher.append("-disable-auto-cleanup")
    cmd = [*launcher, "-n", str(n), sys.executable, "-m", "pgas._run", *target]
    job = _watch.JobDir(n)
    env = dict(os.environ, PGAS_JOB_DIR=job.path)
    if hang_timeout:
        env["PGAS_HANG_SAMPLE"] = "1"
    if sys.stdout.isatty():
        # the job's output now passes through a pipe: keep it as prompt as on a terminal
        env.setdefault("PYTHONUNBUFFERED", "1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env)
    filt = StderrFilter()
    banner = _watch.BannerFilter()
    banners = [banner, _watch.BannerFilter(shared=banner)]
    ending = threading.Event()      # set once pgas ends the job: MPI's own cleanup chatter is dropped
    pumps = [threading.Thread(target=_pump, args=(proc.stdout, sys.stdout, banners[0], None, ending), daemon=True),
             threading.Thread(target=_pump, args=(proc.stderr, sys.stderr, banners[1], filt, ending), daemon=True)]
    for t in pumps:
        t.start()
    previous = signal.signal(signal.SIGTERM, _terminated)
    verdict = None
    try:
        verdict = _watch_job(proc, job, timeout, grace, hang_timeout)
        if verdict:
            status, why = verdict
            if status is None and not _watch.explained(job):
                _await_banner(proc, banner, pumps)
            live = [k for k in job.live() if job.end(k) is None]
            lines = _watch.report(job, why, banners, job.stacks(live))
            if status is None:
                status = _watch.death_status(job, banners)
            ending.set()
            _write_err(lines)
            job.kill_all()
            _kill(proc)
            for t in pumps:
                t.join(5)
            _write_err(filt.finish() + [f"[pgas] ended the job (exit status {status})\n"])
            return status
        status = proc.wait()
    except KeyboardInterrupt:
        status, why = _watch.INTERRUPT_STATUS, "interrupted (Ctrl-C)"
    except _Terminated:
        status, why = 128 + signal.SIGTERM, "terminated (SIGTERM)"
    else:
        for t in pumps:
            t.join(5)
        dead = [k for k in job.gone if job.end(k) is None] if not job.aborting() else []
        lines = filt.finish()
        if dead:
            lines += _watch.report(job, "a locale died", banners, status=status)
            status = status if status > 0 else (128 - status if status < 0 else _watch.death_status(job, banners))
        _write_err(lines)
        return status if status >= 0 else 128 - status
    finally:
        signal.signal(signal.SIGTERM, previous)
        if verdict or proc.poll() is None:
            ending.set()
            job.kill_all()
            _kill(proc)
        job.close()
    # interrupted or terminated
    _write_err(filt.finish() + [f"[pgas] {why}: ended all {n} locales\n"])
    return status


def _await_banner(proc: subprocess.Popen, banner: "_watch.BannerFilter", pumps, wait: float = 2.0) -> None:
    """Give MPICH a moment to report how a locale that left no note of its own ended."""
    deadline = time.monotonic() + wait
    while banner.pid is None and banner.signal is None and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is not None:
        for t in pumps:
            t.join(max(0.0, deadline - time.monotonic()))


def _watch_job(proc: subprocess.Popen, job: "_watch.JobDir", timeout, grace: float, hang_timeout):
    """Wait for the job; ``(status, why)`` if the watchdog must end it, None when it ended itself."""
    t0, first_end = time.monotonic(), None
    while proc.poll() is None:
        time.sleep(0.05)
        now = time.monotonic()
        if job.aborting():              # MPI_Abort is ending the job, with the locale's own report
            if timeout and now - t0 >= timeout:
                return _watch.TIMEOUT_STATUS, f"the job timed out after {timeout:g} s (--timeout)"
            continue
        if any(job.end(k) is None for k in job.gone):
            time.sleep(0.2)             # let a crash dump finish, and near-simultaneous ends register
            return None, "a locale died"
        ended = job.ended()
        if ended and len(ended) < job.n:
            first_end = first_end or now
            if now - first_end >= grace:
                left = [k for k in range(job.n) if k not in ended]
                return _watch.HANG_STATUS, (f"the job hangs: locale{'s' if len(left) > 1 else ''} "
                                            f"{', '.join(map(str, left))} did not end within {grace:g} s (--grace) "
                                            f"of locale {min(ended, key=lambda k: job.gone.get(k, -1))} ending")
        if timeout and now - t0 >= timeout:
            return _watch.TIMEOUT_STATUS, f"the job timed out after {timeout:g} s (--timeout)"
        if hang_timeout and time.time() - job.last_progress() >= hang_timeout:
            return _watch.HANG_STATUS, (f"the job made no progress for {hang_timeout:g} s (--hang-timeout): "
                                        "no locale ended and no locale's Python stack changed")
    return None


_MPIEXEC_NOISE = re.compile(r"^\[(mpiexec|proxy)@")


def _pump(src, dst, banner: "_watch.BannerFilter", filt: "StderrFilter | None", ending: threading.Event) -> None:
    """Copy the job's ``src`` to ``dst`` line by line, dropping MPICH's termination banner (and,
    once pgas ends the job, MPICH's cleanup messages); ``filt`` holds tagged tracebacks."""
    def write(lines: list[str]) -> None:
        text = "".join(lines)
        if hasattr(dst, "buffer"):      # the job's bytes as they came (surrogateescape round trip)
            dst.flush()
            dst.buffer.write(text.encode("utf-8", "surrogateescape"))
            dst.buffer.flush()
        else:
            dst.write(text)
            dst.flush()

    for raw in src:
        for line in banner.feed(raw.decode("utf-8", "surrogateescape")):
            if ending.is_set() and _MPIEXEC_NOISE.match(line):
                continue
            out = filt.feed(line) if filt else [line]
            if out:
                write(out)
    write(banner.finish())


class _Terminated(Exception):
    """The launcher itself was asked to stop (SIGTERM)."""


def _terminated(signum, frame) -> None:
    raise _Terminated()


def _kill(proc: subprocess.Popen) -> None:
    """End the launcher and every process it started (they share its session):
    SIGTERM, up to 3 s for the launcher to clean up, then SIGKILL for any left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        if sig == signal.SIGTERM:
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                pass


def _write_err(lines: list[str]) -> None:
    if lines:
        sys.stderr.write("".join(lines))
        sys.stderr.flush()


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


def _locales(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


RUN_EPILOG = """\
exit status: the job's (a script's sys.exit status, 1 for an error); 124 when
--timeout ran out; 125 when the watchdog found the job hung; when a locale
died, its os._exit status or 128+N for signal N (1 if unknown); 130 after
Ctrl-C; 2 for bad arguments.

watchdog: when a locale dies (os._exit, a signal, a crash), at once; when a
locale ends its script and the others do not end theirs within --grace
seconds; or (with --hang-timeout S) when for S seconds no locale ends its
script and no locale's Python stack changes: pgas run prints which locales
ended and how, and the line each live locale waits at, then ends the job.
Raise --grace for jobs whose locales finish far apart.
"""


def run_parser() -> argparse.ArgumentParser:
    """The parser of ``pgas run``'s own options (those before the script or ``-m``)."""
    p = _Parser(prog="pgas run", description="Run a Python script (or module) on N local locales, one MPI\n"
                "process each, under a watchdog that reports hangs and failed locales.",
                epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                usage="pgas run [-h] -n N [--timeout S] [--grace S] [--hang-timeout S] "
                      "(script.py | -m module) [args ...]")
    p.add_argument("-n", "-np", dest="n", type=_locales, required=True, metavar="N",
                   help="number of locales (MPI processes) to start")
    p.add_argument("--timeout", type=_seconds, default=None, metavar="S",
                   help="end the job after S seconds, reporting where each locale is (exit status 124; "
                        "default: no limit)")
    p.add_argument("--grace", type=_seconds, default=10.0, metavar="S",
                   help="seconds the other locales get to end once one locale has ended its script or "
                        "died, before the job is reported as hung (default %(default)g)")
    p.add_argument("--hang-timeout", type=_seconds, default=None, metavar="S",
                   help="report and end the job after S seconds without progress: no locale ended "
                        "and no locale's Python stack changed (default: off)")
    p.add_argument("-m", dest="module", metavar="module", help="run library module as a script (as python -m)")
    p.add_argument("script", nargs="?", help="the script each locale runs (as python script.py)")
    p.add_argument("args", nargs="*", help="arguments for the script or module (passed as they are)")
    return p


_RUN_VALUED = {"-n", "-np", "--timeout", "--grace", "--hang-timeout"}


def parse_run(argv: list[str]) -> argparse.Namespace:
    """``pgas run`` arguments: ``n``, ``timeout``, ``grace``, ``hang_timeout`` and ``target``
    (``[script, *args]`` or ``["-m", module, *args]``, passed on untouched)."""
    p, i = run_parser(), 0
    while i < len(argv) and argv[i] != "-m" and argv[i].startswith("-") and argv[i] != "-":
        a = argv[i]
        if a.split("=", 1)[0] not in (*_RUN_VALUED, "-h", "--help") and not re.fullmatch(r"-n\d+", a):
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
    return launch(ns.n, ns.target, ns.timeout, ns.grace, ns.hang_timeout)


def cmd_info(argv: list[str]) -> int:
    _Parser(prog="pgas info", description="Show the locales, the MPI library and the versions pgas runs "
            "with (run it under pgas run -n N to see N locales).").parse_args(argv)
    from pgas import comm

    me, P = comm.here(), comm.num_locales()
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
            ("python", f"{platform.python_version()} ({sys.executable})"), ("mpiexec", launcher)]
    for k, v in rows:
        print(f"{k + ':':13} {v}")
    return 0


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _bench_list() -> str:
    from pgas import bench

    lines = []
    for name in sorted(bench.BENCHMARKS):
        doc = bench.plain((bench.load(name).__doc__ or "").split("\n\n")[0])
        lines.append(f"  {name:13} {doc}")
    return "\n".join(lines)


def bench_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="pgas bench", usage="pgas bench [-h] [NAME [-n N] [options]]",
                description="Run a benchmark on local locales (it starts the job itself) and write its\n"
                "results as JSON; with no NAME, list the benchmarks.",
                epilog="benchmarks:\n" + _bench_list() + "\n\npgas bench NAME --help shows a benchmark's options.",
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", nargs="?", metavar="NAME", help="the benchmark to run")
    return p


def cmd_bench(argv: list[str]) -> int:
    from pgas import bench

    if not argv or argv[0] in ("-h", "--help", "list"):
        if argv[:1] == ["list"] or not argv:
            print("benchmarks:\n" + _bench_list())
            print("run one with: pgas bench NAME [-n N] [options]   (pgas bench NAME --help for its options)")
            return 0
        bench_parser().parse_args(argv)
    name, rest = argv[0], argv[1:]
    if name not in bench.BENCHMARKS:
        bench_parser().error(f"unknown benchmark {name!r} (choose from {', '.join(sorted(bench.BENCHMARKS))})")
    module = bench.load(name)
    p = module.make_parser()
    p.error = _Parser.error.__get__(p)
    args = p.parse_args(rest)          # --help and bad options are dealt with here, once, before MPI starts
    opts = _drop_locales(rest)
    if under_launcher():
        return bench.run(name, opts)
    return launch(args.n or getattr(module, "LOCALES", 4), ["-m", "pgas.bench", name, *opts])


def _drop_locales(argv: list[str]) -> list[str]:
    """A benchmark's arguments without ``-n N`` (the locale count, which the launcher takes).

    >>> _drop_locales(["--trials", "2", "-n", "3", "-n4"])
    ['--trials', '2']
    """
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "-n":
            i += 2
            continue
        if argv[i].startswith("-n") and argv[i][2:].isdigit():
            i += 1
            continue
        out.append(argv[i])
        i += 1
    return out


COMMANDS = {"run": cmd_run, "info": cmd_info, "bench": cmd_bench}


def main_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="pgas", description="pgas: distributed arrays for Python on MPI.",
                formatter_class=argparse.RawDescriptionHelpFormatter,
                epilog="commands:\n"
                       "  run    run a script or module on N local locales (pgas run -n N script.py)\n"
                       "  info   show the locales, the MPI library and the versions\n"
                       "  bench  run a benchmark (pgas bench lists them)\n\n"
                       "pgas COMMAND --help shows a command's options.")
    p.add_argument("--version", action="version", version=f"pgas {_version('pgas')}")
    p.add_argument("command", choices=sorted(COMMANDS), metavar="COMMAND", help="run, info or bench")
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

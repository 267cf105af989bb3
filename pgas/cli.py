"""The ``pgas`` command: ``pgas run``, ``pgas info`` and ``pgas bench``.

``pgas run -n N [--timeout S] script.py [args]`` (or ``-m module [args]``) starts
N local locales with the MPI launcher installed beside this Python (the
``mpich`` wheel's ``mpiexec``), or with the one named by ``$PGAS_MPIEXEC``
(e.g. ``PGAS_MPIEXEC="mpirun --oversubscribe"`` for a site Open MPI).  Each
locale runs ``python -m pgas._run``, which aborts the whole job when the
script raises.  The launcher reads the job's standard error: traceback lines
tagged ``[locale k]`` are held until the job ends and identical tracebacks
from several locales are printed once.  The exit status is the job's (124 if
``--timeout`` ran out).
"""

from __future__ import annotations

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

USAGE = """usage:
  pgas run -n N [--timeout S] script.py [args...]   run a script on N local locales
  pgas run -n N [--timeout S] -m module [args...]   run a module on N local locales
  pgas info                                         locales, MPI library, versions
  pgas bench [NAME [-n N] [options]]                run a benchmark (no NAME: list them)
"""

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


def launch(n: int, target: list[str], timeout: float | None = None) -> int:
    """Run ``python -m pgas._run *target`` on ``n`` locales; return the job's exit status."""
    cmd = [*mpiexec_command(), "-n", str(n), sys.executable, "-m", "pgas._run", *target]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, start_new_session=True)
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        _kill(proc)

    timer = threading.Timer(timeout, expire) if timeout else None
    if timer:
        timer.daemon = True
        timer.start()
    filt = StderrFilter()
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        for raw in proc.stderr:
            _write_err(filt.feed(raw.decode("utf-8", "replace")))
        status = proc.wait()
    except KeyboardInterrupt:
        _kill(proc)
        status = 130
    except _Terminated:
        _kill(proc)
        status = 128 + signal.SIGTERM
    finally:
        signal.signal(signal.SIGTERM, previous)
        if timer:
            timer.cancel()
        _write_err(filt.finish())
    if timed_out.is_set():
        _write_err([f"[pgas] job timed out after {timeout:g} s and was killed\n"])
        return 124
    return status if status >= 0 else 128 - status


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
def parse_run(argv: list[str]) -> tuple[int, float | None, list[str]]:
    """``(locales, timeout, target)`` from ``pgas run`` arguments; ``target`` is
    ``[script, *args]`` or ``["-m", module, *args]``."""
    n, timeout, i = None, None, 0
    while i < len(argv):
        a = argv[i]
        if a in ("-n", "-np", "--timeout"):
            if i + 1 == len(argv):
                raise UsageError(f"{a} needs a value")
            if a == "--timeout":
                timeout = _number(float, a, argv[i + 1])
            else:
                n = _number(int, a, argv[i + 1])
            i += 2
        elif a.startswith("--timeout="):
            timeout, i = _number(float, "--timeout", a.split("=", 1)[1]), i + 1
        elif a == "-m":
            if i + 1 == len(argv):
                raise UsageError("-m needs a module name")
            break
        elif a.startswith("-"):
            raise UsageError(f"unknown option {a}")
        else:
            break
    target = argv[i:]
    if not target:
        raise UsageError("no script or -m module given")
    if n is None or n < 1:
        raise UsageError("give the number of locales with -n N (N >= 1)")
    if timeout is not None and timeout <= 0:
        raise UsageError("--timeout must be positive")
    return n, timeout, target


def _number(kind, opt: str, text: str):
    try:
        return kind(text)
    except ValueError:
        raise UsageError(f"{opt} expects a number, got {text!r}") from None


def cmd_run(argv: list[str]) -> int:
    n, timeout, target = parse_run(argv)
    return launch(n, target, timeout)


def cmd_info(argv: list[str]) -> int:
    if argv:
        raise UsageError("pgas info takes no arguments")
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


def cmd_bench(argv: list[str]) -> int:
    from pgas import bench

    if not argv or argv[0] in ("-h", "--help", "list"):
        print("benchmarks: " + ", ".join(sorted(bench.BENCHMARKS)))
        print("run one with: pgas bench NAME [-n N] [options]   (pgas bench NAME --help for its options)")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in bench.BENCHMARKS:
        raise UsageError(f"no benchmark {name!r}; known: {', '.join(sorted(bench.BENCHMARKS))}")
    module = bench.load(name)
    n, opts = _take_locales(rest)
    if under_launcher():
        return bench.run(name, opts)
    return launch(n or getattr(module, "LOCALES", 4), ["-m", "pgas.bench", name, *opts])


def _take_locales(argv: list[str]) -> tuple[int | None, list[str]]:
    """Split ``-n N`` (the locale count) off a benchmark's arguments."""
    if "-n" not in argv:
        return None, argv
    i = argv.index("-n")
    if i + 1 == len(argv):
        raise UsageError("-n needs a value")
    n = _number(int, "-n", argv[i + 1])
    if n < 1:
        raise UsageError("-n must be >= 1")
    return n, argv[:i] + argv[i + 2:]


COMMANDS = {"run": cmd_run, "info": cmd_info, "bench": cmd_bench}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pgas`` command; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        (sys.stdout if argv and argv[0] in ("-h", "--help") else sys.stderr).write(USAGE)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except UsageError as e:
        sys.stderr.write(f"pgas {argv[0]}: {e}\n{USAGE}")
        return 2


if __name__ == "__main__":
    sys.exit(main())

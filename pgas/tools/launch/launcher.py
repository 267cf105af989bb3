"""How ``pgas run`` starts a job and watches it: the MPI launcher, the filter of the job's
standard error (tagged tracebacks printed once), and :func:`launch`, which runs the job
under the watchdog of :mod:`pgas.tools.launch.watch` and turns what happened into an exit status
(see :mod:`pgas.tools.cli`)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

from pgas.tools.launch import output, watch

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


#: Seconds without progress after which the watchdog ends a job, unless ``--hang-timeout``
#: or ``$PGAS_HANG_TIMEOUT`` says otherwise (0: never): long enough for any one step of a
#: real job (a NumPy call, a file read), short enough that a hung job does not burn an allocation.
HANG_TIMEOUT = 600.0


def hang_timeout_default() -> float:
    """``$PGAS_HANG_TIMEOUT`` (seconds, 0 turns the check off) if set, else :data:`HANG_TIMEOUT`."""
    text = os.environ.get("PGAS_HANG_TIMEOUT", "").strip()
    if not text:
        return HANG_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise UsageError(f"PGAS_HANG_TIMEOUT expects a number of seconds (0: off), got {text!r}")
    return value


def launch(n: int, target: list[str], timeout: float | None = None, grace: float = 10.0,
           hang_timeout: float | None = None, tag: bool = False, threads: int | None = None) -> int:
    """Run ``python -m pgas.tools.launch.runner *target`` on ``n`` locales under the watchdog (see
    :mod:`pgas.tools.launch.watch`); return the exit status (see the module docstring).
    ``hang_timeout`` None: :func:`hang_timeout_default`; 0: no check for progress.  The
    locales' output comes through :mod:`pgas.tools.launch.output` in whole lines; ``tag``:
    each line starts with ``[k] ``, its locale's number; ``threads``: ``$PGAS_THREADS`` for
    every locale (None: as the environment has it)."""
    if hang_timeout is None:
        hang_timeout = hang_timeout_default()
    launcher = mpiexec_command()
    if os.path.exists(os.path.join(os.path.dirname(launcher[0]), "mpiexec.hydra")):
        # MPICH's hydra would kill the other locales the moment one dies, leaving no stack to
        # show and no reliable account of which locale went first: the watchdog ends the job
        launcher.append("-disable-auto-cleanup")
    cmd = [*launcher, "-n", str(n), sys.executable, "-m", "pgas.tools.launch.runner", *target]
    job = watch.JobDir(n)
    env = dict(os.environ, PGAS_JOB_DIR=job.path)
    if threads is not None:
        env["PGAS_THREADS"] = str(threads)
    if hang_timeout:
        env["PGAS_HANG_SAMPLE"] = "1"
    if sys.stdout.isatty():
        # the job's output now passes through a pipe: keep it as prompt as on a terminal
        env.setdefault("PYTHONUNBUFFERED", "1")
    filt = StderrFilter()

    def locale_lines(stream: str, k: int, lines: list[str]) -> None:
        if stream == "err":
            lines = [out for line in lines for out in filt.feed(line)]
        _write(sys.stderr if stream == "err" else sys.stdout, [f"[{k}] {line}" for line in lines] if tag else lines)

    collector = output.Collector(job.path, locale_lines)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env)
    banner = watch.BannerFilter()
    banners = [banner, watch.BannerFilter(shared=banner)]
    ending = threading.Event()      # set once pgas ends the job: MPI's own cleanup chatter is dropped
    lock = collector.lock
    pumps = [threading.Thread(target=_pump, args=(proc.stdout, sys.stdout, banners[0], None, ending, lock),
                              daemon=True),
             threading.Thread(target=_pump, args=(proc.stderr, sys.stderr, banners[1], filt, ending, lock),
                              daemon=True)]
    for t in pumps:
        t.start()
    previous = signal.signal(signal.SIGTERM, _terminated)
    verdict = None
    try:
        verdict = _watch_job(proc, job, timeout, grace, hang_timeout)
        if verdict:
            status, why = verdict
            if status is None and not watch.explained(job):
                _await_banner(proc, banner, pumps)
            live = [k for k in job.live() if job.end(k) is None]
            lines = watch.report(job, why, banners, job.stacks(live))
            if status is None:
                status = watch.death_status(job, banners)
            ending.set()
            _write_err(lines)
            job.kill_all()
            _kill(proc)
            for t in pumps:
                t.join(5)
            collector.join(5)
            _write_err(filt.finish() + [f"[pgas] ended the job (exit status {status})\n"])
            return status
        status = proc.wait()
    except KeyboardInterrupt:
        status, why = watch.INTERRUPT_STATUS, "interrupted (Ctrl-C)"
    except _Terminated:
        status, why = 128 + signal.SIGTERM, "terminated (SIGTERM)"
    else:
        for t in pumps:
            t.join(5)
        collector.join(5)
        dead = [k for k in list(job.gone) if job.end(k) is None] if not job.aborting() else []
        lines = filt.finish()
        if dead:
            lines += watch.report(job, "a locale died", banners, status=status)
            status = status if status > 0 else (128 - status if status < 0 else watch.death_status(job, banners))
        _write_err(lines)
        return status if status >= 0 else 128 - status
    finally:
        signal.signal(signal.SIGTERM, previous)
        if verdict or proc.poll() is None:
            ending.set()
            job.kill_all()
            _kill(proc)
        collector.close()
        job.close()
    # interrupted or terminated
    _write_err(filt.finish() + [f"[pgas] {why}: ended all {n} locales\n"])
    return status


def _await_banner(proc: subprocess.Popen, banner: "watch.BannerFilter", pumps, wait: float = 2.0) -> None:
    """Give MPICH a moment to report how a locale that left no note of its own ended."""
    deadline = time.monotonic() + wait
    while banner.pid is None and banner.signal is None and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is not None:
        for t in pumps:
            t.join(max(0.0, deadline - time.monotonic()))


def _watch_job(proc: subprocess.Popen, job: "watch.JobDir", timeout, grace: float, hang_timeout):
    """Wait for the job; ``(status, why)`` if the watchdog must end it, None when it ended itself."""
    t0, first_end = time.monotonic(), None
    while proc.poll() is None:
        time.sleep(0.05)
        now = time.monotonic()
        if job.aborting():              # MPI_Abort is ending the job, with the locale's own report
            if timeout and now - t0 >= timeout:
                return watch.TIMEOUT_STATUS, f"the job timed out after {timeout:g} s (--timeout)"
            continue
        if any(job.end(k) is None for k in list(job.gone)):   # a listener thread adds to it
            time.sleep(0.2)             # let a crash dump finish, and near-simultaneous ends register
            return None, "a locale died"
        ended = job.ended()
        if ended and len(ended) < job.n:
            first_end = first_end or now
            if now - first_end >= grace:
                left = [k for k in range(job.n) if k not in ended]
                return watch.HANG_STATUS, (f"the job hangs: locale{'s' if len(left) > 1 else ''} "
                                            f"{', '.join(map(str, left))} did not end within {grace:g} s (--grace) "
                                            f"after locale{'s' if len(ended) > 1 else ''} "
                                            f"{', '.join(map(str, sorted(ended)))} ended")
        if timeout and now - t0 >= timeout:
            return watch.TIMEOUT_STATUS, f"the job timed out after {timeout:g} s (--timeout)"
        if hang_timeout and time.time() - job.last_progress() >= hang_timeout:
            return watch.HANG_STATUS, (f"the job made no progress for {hang_timeout:g} s (--hang-timeout or "
                                        "$PGAS_HANG_TIMEOUT; 0 turns the check off): no locale ended and "
                                        "no locale's Python stack changed")
    return None


_MPIEXEC_NOISE = re.compile(r"^\[(mpiexec|proxy)@")
#: MPICH's word that a process was killed by SIGKILL, anywhere in a line: once the watchdog
#: has ended the job (and killed its locales), its report says why.
_KILLED = re.compile(r"Killed \(signal 9\)|KILLED BY SIGNAL: 9\b")


def _write(dst, lines: list[str]) -> None:
    """Write ``lines`` to ``dst``: the job's bytes as they came (surrogateescape round trip)."""
    text = "".join(lines)
    if not text:
        return
    if hasattr(dst, "buffer"):
        dst.flush()
        dst.buffer.write(text.encode("utf-8", "surrogateescape"))
        dst.buffer.flush()
    else:
        dst.write(text)
        dst.flush()


def _pump(src, dst, banner: "watch.BannerFilter", filt: "StderrFilter | None", ending: threading.Event,
          lock: threading.Lock) -> None:
    """Copy the launcher's ``src`` (what did not come through :mod:`pgas.tools.launch.output`:
    MPI's own messages, a locale's before it connected) to ``dst`` line by line, under
    ``lock`` with the locales' lines, dropping MPICH's termination banner (and, once pgas
    ends the job, MPICH's cleanup messages and its word that the locales it killed were
    killed, :data:`_KILLED`); ``filt`` holds tagged tracebacks."""
    def write(lines: list[str]) -> None:
        with lock:
            _write(dst, lines)

    for raw in src:
        for line in banner.feed(raw.decode("utf-8", "surrogateescape")):
            if ending.is_set() and (_MPIEXEC_NOISE.match(line) or _KILLED.search(line)):
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

"""The watchdog of ``pgas run``: it notices a job that hangs or a locale that dies,
says which locale and where, and ends the job.

``pgas run`` makes a job directory and passes it to every locale as
``$PGAS_JOB_DIR``; each locale (:mod:`pgas.tools.launch.runner`) writes there

* ``K.pid``: its pid and main thread id; it also connects to ``alive.sock`` and
  keeps the connection open, so the watchdog learns at once (and in order)
  when a locale's process ends, however it ends;
* ``K.stack``: its Python stack (``faulthandler``), when sent ``SIGUSR1``;
* ``K.fatal``: the fatal error and stack of a crash (segfault, abort);
* ``K.end``: how its script ended (end of script, ``sys.exit``, an error);
* ``K.exit``: where it called ``os._exit`` (which skips every other record);
* ``K.abort``: that it is ending the whole job with ``MPI_Abort`` (it raised, or
  called ``sys.exit`` with a nonzero status): the others' ends are then expected;
* ``K.beat``: touched when its Python stack changed (unless ``--hang-timeout 0``).

The job is reported and ended (exit status :data:`HANG_STATUS`) when a locale
has ended its script or died and the others have not ended theirs within the
grace period, or, with ``--hang-timeout S`` (600 s by default, see
:func:`pgas.tools.launch.launcher.hang_timeout_default`; 0: never), when for ``S`` seconds no locale
ended its script and no locale's Python stack changed (sampled every 0.5 s; a
single step longer than ``S``, such as a long NumPy call, counts as no
progress).  ``--timeout`` ends it with :data:`TIMEOUT_STATUS`.  The report names
the locales that ended and how, and, for each live locale, the line of the
user's code it waits at, then the pgas call it is in.  MPICH's own "BAD
TERMINATION ... YOU CAN IGNORE THE BELOW CLEANUP MESSAGES" banner is replaced by
this report.
"""

from __future__ import annotations

import itertools
import linecache
import os
import re
import select
import shutil
import signal
import socket
import sysconfig
import tempfile
import threading
import time

#: Exit status of ``pgas run`` when ``--timeout`` ran out (as the ``timeout`` command's).
TIMEOUT_STATUS = 124
#: Exit status of ``pgas run`` when the watchdog found the job hung.
HANG_STATUS = 125
#: Exit status after Ctrl-C (SIGINT), as a shell gives.
INTERRUPT_STATUS = 130

_HERE = os.path.dirname(os.path.abspath(__file__))
_PKG = os.path.dirname(os.path.dirname(_HERE))        # the pgas package
_RUN = os.path.join(_HERE, "runner.py")
# Where Python's own and installed packages live: frames there are not "the user's line".
_LIBS = tuple({os.path.join(sysconfig.get_paths()[k], "") for k in ("stdlib", "platstdlib", "purelib", "platlib")})


class JobDir:
    """The launcher's side of the job directory of ``n`` locales."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.path = tempfile.mkdtemp(prefix="pgas-job-")
        self.started = time.time()
        self.gone: dict[int, int] = {}      # locale -> order in which its process ended
        self._order = itertools.count()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(os.path.join(self.path, "alive.sock"))
        self._server.listen(max(n, 16))
        self._closed = False
        self._thread = threading.Thread(target=self._serve, daemon=True, name="pgas-alive")
        self._thread.start()

    def _serve(self) -> None:
        conns: dict[socket.socket, bytes] = {}
        while not self._closed:
            try:
                ready, _, _ = select.select([self._server, *conns], [], [], 0.2)
            except (OSError, ValueError):
                return
            for s in ready:
                if s is self._server:
                    conns[s.accept()[0]] = b""
                    continue
                data = s.recv(64)
                if data:
                    conns[s] += data
                    continue
                text = conns.pop(s).decode(errors="replace").strip()
                s.close()
                if text.isdigit():
                    self.gone.setdefault(int(text), next(self._order))

    def _read(self, k: int, kind: str) -> str | None:
        try:
            with open(os.path.join(self.path, f"{k}.{kind}")) as f:
                return f.read()
        except OSError:
            return None

    def pid(self, k: int) -> tuple[int, int] | None:
        """``(pid, main thread id)`` of locale ``k`` once it has started."""
        text = self._read(k, "pid")
        if not text:
            return None
        pid, ident = text.split()
        return int(pid), int(ident, 16)

    def end(self, k: int) -> str | None:
        """How locale ``k``'s script ended, or None while it runs."""
        text = self._read(k, "end")
        return text.strip() if text else None

    def aborting(self) -> bool:
        """Whether some locale is ending the job with MPI_Abort (its own report is on its way)."""
        return any(os.path.exists(os.path.join(self.path, f"{k}.abort")) for k in range(self.n))

    def ended(self) -> set[int]:
        """Locales that ended their script or whose process is gone."""
        return {k for k in range(self.n) if k in self.gone or self.end(k) is not None}

    def last_progress(self) -> float:
        """The latest time (``time.time()``) a locale started, ended or its stack changed; now
        while some locale has not started (starting up counts as progress)."""
        if any(self.pid(k) is None for k in range(self.n)):
            return time.time()
        last = self.started
        for k in range(self.n):
            for kind in ("pid", "beat", "end"):
                try:
                    last = max(last, os.path.getmtime(os.path.join(self.path, f"{k}.{kind}")))
                except OSError:
                    pass
        return last

    def live(self) -> list[int]:
        """Locales whose process has started and not ended."""
        return [k for k in range(self.n) if k not in self.gone and self.pid(k) is not None]

    def stacks(self, locales: list[int], wait: float = 2.0) -> dict[int, list[tuple[str, int, str]]]:
        """The main-thread Python stacks (most recent call first) of ``locales``, asked for with SIGUSR1."""
        asked = {}
        for k in locales:
            pid = self.pid(k)
            path = os.path.join(self.path, f"{k}.stack")
            try:
                os.truncate(path, 0)
                os.kill(pid[0], signal.SIGUSR1)
                asked[k] = (path, pid[1])
            except (OSError, TypeError):
                pass
        out: dict[int, list] = {}
        deadline = time.monotonic() + wait
        while asked and time.monotonic() < deadline:
            time.sleep(0.05)
            for k, (path, ident) in list(asked.items()):
                with open(path) as f:
                    text = f.read()
                if text.endswith("\n") and ident in parse_dump(text):
                    time.sleep(0.05)   # let the rest of the dump arrive
                    with open(path) as f:
                        out[k] = parse_dump(f.read())[ident]
                    del asked[k]
        return out

    def exit_note(self, k: int) -> str:
        """What locale ``k`` noted on calling ``os._exit`` (``called os._exit(3) at f.py:9``), or ''."""
        return (self._read(k, "exit") or "").strip()

    def fatal(self, k: int) -> str:
        """The first line of locale ``k``'s fatal error (``Segmentation fault``...), or ''."""
        text = self._read(k, "fatal") or ""
        m = re.search(r"Fatal Python error: (.*)", text)
        return m.group(1).strip() if m else ""

    def fatal_stack(self, k: int) -> list[tuple[str, int, str]]:
        dumps = parse_dump(self._read(k, "fatal") or "")
        return next(iter(dumps.values()), [])

    def kill_all(self) -> None:
        """SIGKILL every locale process still running."""
        for k in range(self.n):
            pid = self.pid(k)
            if pid and k not in self.gone:
                try:
                    os.kill(pid[0], signal.SIGKILL)
                except OSError:
                    pass

    def close(self) -> None:
        self._closed = True
        self._thread.join(1)
        self._server.close()
        shutil.rmtree(self.path, ignore_errors=True)


_THREAD = re.compile(r"^(?:Current thread|Thread) (0x[0-9a-fA-F]+)")
_FRAME = re.compile(r'^\s+File "(.*)", line (\d+) in (.*)$')


def parse_dump(text: str) -> dict[int, list[tuple[str, int, str]]]:
    """Thread id (0 for a single-thread dump) -> frames ``(file, line, function)``, most recent
    first, from a faulthandler dump.

    >>> parse_dump('Current thread 0x00ff (most recent call first):\\n  File "a.py", line 3 in f\\n')
    {255: [('a.py', 3, 'f')]}
    """
    out: dict[int, list] = {}
    frames = None
    for line in text.splitlines():
        m = _THREAD.match(line)
        if m or line.startswith("Stack (most recent call first)"):
            frames = out[int(m.group(1), 16) if m else 0] = []
            continue
        m = _FRAME.match(line)
        if m and frames is not None:
            frames.append((m.group(1), int(m.group(2)), m.group(3)))
    return out


def _show(path: str) -> str:
    """``path`` relative to the working directory (or pgas's ``pgas/...``) when shorter."""
    if path.startswith(_PKG + os.sep):
        return "pgas" + path[len(_PKG):]
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    return rel if not rel.startswith("..") else path


def describe(stack: list[tuple[str, int, str]]) -> list[str]:
    """Where a locale waits, from its stack (most recent first): the user's line, then the pgas call.

    >>> describe([(_PKG + "/comm/runtime.py", 9, "barrier"), ("/x/prog.py", 4, "<module>"),
    ...           (_RUN, 1, "main")])
    ['waits at /x/prog.py:4 (in <module>)', '  in pgas: barrier (pgas/comm/runtime.py:9)']
    """
    if any(f == _RUN and fn == "_wait_for_all" for f, _, fn in stack):
        return ["ended its script and waits at exit for the other locales"]
    frames = [fr for fr in reversed(stack) if fr[0] != _RUN and "runpy" not in fr[0]]
    if not frames:
        return ["has no Python frame to show (starting up or shutting down)"]
    first = next((i for i, fr in enumerate(frames) if fr[0].startswith(_PKG + os.sep)), None)
    outside = frames[:first] if first is not None else frames
    mine = [fr for fr in outside if not fr[0].startswith(_LIBS)]
    user = mine[-1] if mine else outside[-1] if outside else None
    lines = []
    if user is not None:
        src = linecache.getline(user[0], user[1]).strip()
        lines.append(f"waits at {_show(user[0])}:{user[1]} (in {user[2]})" + (f": {src}" if src else ""))
    if first is not None:
        calls = [frames[first]] + ([frames[-1]] if len(frames) - first > 1 else [])
        lines.append(("  in pgas: " if lines else "waits in pgas: ")
                     + " -> ".join(f"{fn} ({_show(f)}:{n})" for f, n, fn in calls))
    return lines


# -- MPICH's termination banner --------------------------------------------
_BANNER_START = re.compile(r"^={20,}\s*$")
_BANNER_END = re.compile(r"^Please see the FAQ page")
# The banner's last lines, which MPICH may write to the other stream
_BANNER_TAIL = re.compile(r"^(YOUR APPLICATION TERMINATED WITH THE EXIT STRING|This typically refers to a problem "
                          r"with your application|Please see the FAQ page)")


class BannerFilter:
    """Drops MPICH's "BAD TERMINATION ... YOU CAN IGNORE THE BELOW CLEANUP MESSAGES" banner
    from a stream, keeping what it says (pid, exit code, exit string) for pgas's report.

    >>> f = BannerFilter()
    >>> lines = ["hi\\n", "\\n", "=" * 30 + "\\n", "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\\n",
    ...          "=   PID 42 RUNNING AT vm\\n", "=   EXIT CODE: 9\\n", "=" * 30 + "\\n",
    ...          "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\\n",
    ...          "Please see the FAQ page for debugging suggestions\\n", "bye\\n"]
    >>> [out for line in lines for out in f.feed(line)] + f.finish()
    ['hi\\n', 'bye\\n']
    >>> f.pid, f.code, f.signal
    (42, 9, 9)
    """

    def __init__(self, shared: "BannerFilter | None" = None) -> None:
        self.pid = self.code = self.signal = None
        self._into = shared or self     # filters of stdout and stderr share what they read
        self._blank: str | None = None
        self._inside = False

    def feed(self, line: str) -> list[str]:
        """The lines to write now for one input line."""
        into = self._into
        if m := re.search(r"EXIT STRING: .*\(signal (\d+)\)", line):
            into.signal = int(m.group(1))
        if self._inside or _BANNER_TAIL.match(line):
            if m := re.match(r"^=\s+PID (\d+)", line):
                into.pid = int(m.group(1))
            elif m := re.match(r"^=\s+EXIT CODE: (\d+)", line):
                into.code = int(m.group(1))
            if _BANNER_END.match(line):
                self._inside = False
            return []
        if _BANNER_START.match(line):
            self._inside, self._blank = True, None
            return []
        held, self._blank = self._blank, None
        if not line.strip():
            self._blank = line
            return [held] if held is not None else []
        return [held, line] if held is not None else [line]

    def finish(self) -> list[str]:
        held, self._blank = self._blank, None
        return [held] if held is not None else []


def signal_name(num: int) -> str:
    """``SIGKILL`` for 9 (or ``signal N`` if unknown).

    >>> signal_name(9), signal_name(11)
    ('SIGKILL', 'SIGSEGV')
    """
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def death_cause(job: JobDir, k: int, banners: list[BannerFilter], status: int | None = None) -> str:
    """How locale ``k``'s process ended without ending its script: from its fatal error dump,
    else MPICH's banner about its pid, else (no banner at all) the job's exit ``status``."""
    how = job.exit_note(k)
    if how:
        return how
    fatal = job.fatal(k)
    if fatal:
        where = describe(job.fatal_stack(k))
        at = where[0][len("waits "):] if where and where[0].startswith("waits at") else ""
        return f"crashed ({fatal})" + (f" {at}" if at else "")
    pid = job.pid(k)
    first = next(iter(dead_locales(job)), None)
    for b in banners:
        if pid and b.pid == pid[0] or (b.pid is None and b.signal and k == first):
            if b.signal:
                return f"was killed by {signal_name(b.signal)}"
            if b.code is not None:
                return f"exited with status {b.code} without ending its script (os._exit?)"
    if status is not None and not any(b.pid for b in banners):
        if status > 128 or status < 0:
            return f"was killed by {signal_name(status - 128 if status > 0 else -status)}"
        return f"exited with status {status} without ending its script (os._exit?)"
    return "ended its process without ending its script (os._exit, or killed by a signal)"


def dead_locales(job: JobDir) -> list[int]:
    """The locales whose process ended without ending its script, the one that died first
    first: those that left a note of how (``os._exit``, a crash dump: they died by themselves)
    before those that did not (killed by MPI after them), each group in the order the
    listener saw them go (two that went at once may be seen in either order)."""
    gone = dict(job.gone)            # a snapshot: the listener thread adds to it
    return sorted((k for k in gone if job.end(k) is None),
                  key=lambda k: (not (job.exit_note(k) or job.fatal(k)), gone[k]))


def explained(job: JobDir) -> bool:
    """Whether the first locale that died left a note of how (``os._exit`` or a crash dump)."""
    dead = dead_locales(job)
    return bool(dead) and bool(job.exit_note(dead[0]) or job.fatal(dead[0]))


def death_status(job: JobDir, banners: list[BannerFilter] = ()) -> int:
    """The exit status for a job whose first dead locale died as it did: its ``os._exit``
    status (1 for 0), 128 + N for a crash or kill by signal N, else 1."""
    dead = dead_locales(job)
    if not dead:
        return 1
    pid = job.pid(dead[0])
    for b in banners:
        if (pid and b.pid == pid[0] or b.pid is None) and b.signal:
            return 128 + b.signal
    m = re.match(r"called os._exit\((-?\d+)\)", job.exit_note(dead[0]))
    if m:
        return int(m.group(1)) or 1
    fatal = job.fatal(dead[0])
    for sig, words in ((signal.SIGSEGV, "Segmentation"), (signal.SIGBUS, "Bus error"),
                       (signal.SIGFPE, "Floating point"), (signal.SIGABRT, "Aborted"), (signal.SIGILL, "Illegal")):
        if fatal.startswith(words):
            return 128 + sig
    return 1


def report(job: JobDir, why: str, banners: list[BannerFilter], stacks: dict | None = None,
           status: int | None = None) -> list[str]:
    """The watchdog's report: ``why`` first, then each locale that ended or died, then where each
    live locale waits (from ``stacks``); ``status`` is the job's, once it ended by itself."""
    out = [why]
    dead = dead_locales(job)
    for i, k in enumerate(dead):
        if i == 0:
            out.append(f"locale {k} died: it {death_cause(job, k, banners, status)}")
        else:
            out.append(f"locale {k} was ended by MPI after locale {dead[0]} died")
    for k in range(job.n):
        how = job.end(k)
        if how and stacks is not None:
            out.append(f"locale {k} {how}")
    for k in range(job.n) if stacks is not None else ():
        if k not in stacks and k not in job.gone and job.end(k) is None:
            out.append(f"locale {k} " + ("did not show its stack" if job.pid(k) else
                                          "had not started its script yet (starting Python, pgas or MPI)"))
    for k, stack in sorted((stacks or {}).items()):
        lines = describe(stack)
        if lines and not (job.end(k) and lines[0].startswith("ended its script")):
            out.append(f"locale {k} {lines[0]}")
            out += lines[1:]
    return [f"[pgas] {line}\n" for line in out]

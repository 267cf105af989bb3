"""What each locale runs under ``pgas run``: ``python -m pgas.tools.launch.runner script.py [args]``
or ``python -m pgas.tools.launch.runner -m module [args]``.

The script runs as ``__main__`` with ``sys.argv`` set as if Python had started
it.  If it raises, the traceback is printed tagged with this locale's id
(``[locale k] ...``) and the whole job is aborted, so no other locale is left
waiting in a collective.  ``SystemExit`` with status 0 (or ``None``) is a
normal end; any other status aborts the job with that status.

Under ``pgas run`` (``$PGAS_JOB_DIR`` set, see :mod:`pgas.tools.launch.watch`) a locale also
writes its pid there, dumps its Python stack into the job directory when sent
``SIGUSR1`` (``faulthandler``), records how its script ended, and then waits
(without blocking MPI progress) until every locale has ended its script before
taking part in the collective cleanup at exit (freeing windows, finalising
MPI): a locale that ends early never enters a collective the others are not
in, and the watchdog in ``pgas run`` reports it.
"""

from __future__ import annotations

import faulthandler
import os
import runpy
import signal
import socket
import sys
import threading
import time

from pgas.comm import abort, check, here, report_and_abort
from pgas.tools.launch import output

_SKIP = {os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>"}
#: The communication layer's files: a locale whose innermost frame is there is waiting for its
#: peers (its polling loops run Python lines, which are no progress of the program).
_COMM = os.path.dirname(os.path.abspath(check.__file__)) + os.sep


def _user_frames(exc: BaseException) -> BaseException:
    """``exc`` with the launcher's own frames (this module, runpy) cut off its traceback."""
    tb = exc.__traceback__
    while tb is not None and _launcher_frame(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return exc.with_traceback(tb)


def _launcher_frame(filename: str) -> bool:
    return filename in _SKIP or os.path.abspath(filename) in _SKIP


def _exit_status(exc: SystemExit) -> tuple[int, str]:
    """The process status Python would give for ``exc``, and what to say about it."""
    if exc.code is None or exc.code == 0:
        return 0, ""
    if isinstance(exc.code, int):
        return exc.code, f"exited with status {exc.code}"
    return 1, str(exc.code)


def _where(exc: BaseException) -> str:
    """``file:line`` of the innermost frame of ``exc``'s traceback ('' if none)."""
    tb, last = exc.__traceback__, None
    while tb is not None:
        last, tb = tb, tb.tb_next
    return "" if last is None else _at(last.tb_frame.f_code.co_filename, last.tb_lineno)


def _at(path: str, line: int) -> str:
    """`` at file:line``, the file relative to the working directory when under it."""
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    return f" at {path if rel.startswith('..') else rel}:{line}"


def run(argv: list[str]) -> None:
    """Run the script or module named by ``argv`` (``[script, *args]`` or ``["-m", module, *args]``)."""
    if argv[:1] == ["-m"] and len(argv) >= 2:
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv and not argv[0].startswith("-"):
        script = argv[0]
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        runpy.run_path(script, run_name="__main__")
    else:
        raise SystemExit("usage: python -m pgas.tools.launch.runner (script.py | -m module) [args...]")


class _Job:
    """This locale's files in the job directory of ``pgas run`` (see :mod:`pgas.tools.launch.watch`)."""

    def __init__(self, path: str, me: int) -> None:
        self.base = os.path.join(path, str(me))
        main = threading.main_thread().ident
        # raw descriptors, open until the process ends (faulthandler may write while it exits):
        # file objects would be reported unclosed (ResourceWarning) at interpreter shutdown
        self._stack = os.open(self.base + ".stack", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._fatal = os.open(self.base + ".fatal", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        faulthandler.register(signal.SIGUSR1, file=self._stack, all_threads=True)
        faulthandler.enable(file=self._fatal, all_threads=False)
        with open(self.base + ".pid.tmp", "w") as f:
            f.write(f"{os.getpid()} {main:#x}\n")
        os.replace(self.base + ".pid.tmp", self.base + ".pid")
        # The watchdog learns of this process's end (however it ends) when this socket closes.
        self._alive = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._alive.connect(os.path.join(path, "alive.sock"))
            self._alive.sendall(f"{me}\n".encode())
        except OSError:
            pass
        real_exit = os._exit

        def _exit(status, _real=real_exit):
            # os._exit skips every handler: leave a note first, so the watchdog can say how this
            # locale ended (MPICH does not reliably report the status of the locale that left).
            try:
                caller = sys._getframe(1)
                self.record("exit", f"called os._exit({status}){_at(caller.f_code.co_filename, caller.f_lineno)}")
            except Exception:  # noqa: BLE001 - never keep a process from exiting
                pass
            _real(status)

        os._exit = _exit
        if os.environ.get("PGAS_HANG_SAMPLE"):
            threading.Thread(target=self._sample, args=(main,), daemon=True, name="pgas-progress").start()

    def ended(self, how: str) -> None:
        """Record how the script ended (read by the watchdog)."""
        self.record("end", how)

    def record(self, kind: str, text: str) -> None:
        with open(f"{self.base}.{kind}.tmp", "w") as f:
            f.write(text + "\n")
        os.replace(f"{self.base}.{kind}.tmp", f"{self.base}.{kind}")

    def _sample(self, main: int) -> None:
        """Touch ``K.beat`` whenever the main thread's innermost Python frame changed since the
        last look (every 0.5 s: another frame object, code or line): the watchdog's measure of
        progress for ``--hang-timeout``.  Only the innermost frame is read: walking ``f_back``
        through another thread's stack can crash CPython 3.11 (a segfault in
        ``PyFrame_GetBack`` on a frame still being set up, seen at 3 locales in CI), and a
        change deeper in the stack changes the innermost frame too.  Every frame of
        ``pgas/comm`` counts as one and the same: a wait polls in Python (an exchange's receive
        loop, ``pause``, ``poll``), whose lines change at every look while nothing progresses."""
        last = None
        while True:
            frame = sys._current_frames().get(main)
            sig = None if frame is None else (
                "waiting" if frame.f_code.co_filename.startswith(_COMM) else (id(frame), frame.f_code, frame.f_lineno))
            if sig != last:
                last = sig
                with open(self.base + ".beat", "w"):
                    pass
            del sig, frame
            time.sleep(0.5)


def _wait_for_all() -> None:
    """Wait until every locale has ended its script, keeping MPI progressing (a non-blocking
    barrier, tested with growing pauses), so the collective cleanup at exit is safe."""
    from pgas.comm import process

    req = process.mpi().COMM_WORLD.Ibarrier()
    pause = 0.0005
    while not req.Test():
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def main() -> None:
    # Initialise MPI on every locale before the script, so any failure (even an
    # import error) knows its locale and can end the job with MPI_Abort.
    me = here()
    path = os.environ.get("PGAS_JOB_DIR")
    job = _Job(path, me) if path else None
    if path:
        output.connect(path, me)       # whole lines through the launcher (pgas.tools.launch.output)
    how = "reached the end of the script"
    try:
        run(sys.argv[1:])
    except SystemExit as exc:
        status, note = _exit_status(exc)
        if status:
            if job:
                job.record("abort", f"exited with status {status}{_where(exc)}")
            sys.stderr.write(f"[locale {here()}] {note}\n")
            abort(status)
        how = f"called sys.exit({exc.code!r}){_where(_user_frames(exc))}"
    except BaseException as exc:  # noqa: BLE001 - any failure must end the whole job, not hang it
        if job:
            job.record("abort", f"raised {type(exc).__name__}{_where(exc)}")
        report_and_abort(_user_frames(exc))
    if job:
        sys.stdout.flush()
        job.ended(how)
        check.at_end()                 # with PGAS_CHECK: a locale left in a collective is told so
        _wait_for_all()


if __name__ == "__main__":
    main()

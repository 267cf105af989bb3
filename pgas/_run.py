"""What each locale runs under ``pgas run``: ``python -m pgas._run script.py [args]``
or ``python -m pgas._run -m module [args]``.

The script runs as ``__main__`` with ``sys.argv`` set as if Python had started
it.  If it raises, the traceback is printed tagged with this locale's id
(``[locale k] ...``) and the whole job is aborted, so no other locale is left
waiting in a collective.  ``SystemExit`` with status 0 (or ``None``) is a
normal end; any other status aborts the job with that status.
"""

from __future__ import annotations

import os
import runpy
import sys

from pgas.comm import abort, here, report_and_abort

_SKIP = {os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>"}


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
        raise SystemExit("usage: python -m pgas._run (script.py | -m module) [args...]")


def main() -> None:
    # Initialise MPI on every locale before the script, so any failure (even an
    # import error) knows its locale and can end the job with MPI_Abort.
    here()
    try:
        run(sys.argv[1:])
    except SystemExit as exc:
        status, note = _exit_status(exc)
        if status:
            sys.stderr.write(f"[locale {here()}] {note}\n")
            abort(status)
    except BaseException as exc:  # noqa: BLE001 - any failure must end the whole job, not hang it
        report_and_abort(_user_frames(exc))


if __name__ == "__main__":
    main()

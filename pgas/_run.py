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

_SKIP = {os.path.abspath(__file__), os.path.abspath(runpy.__file__)}


def _user_frames(exc: BaseException) -> BaseException:
    """``exc`` with the launcher's own frames (this module, runpy) cut off its traceback."""
    tb = exc.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) in _SKIP:
        tb = tb.tb_next
    return exc.with_traceback(tb) if tb is not None else exc


def _exit_status(exc: SystemExit) -> int:
    """The process status Python would give for ``exc``; writes a non-int code to stderr."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    sys.stderr.write(f"[locale {here()}] {exc.code}\n")
    return 1


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
    try:
        run(sys.argv[1:])
    except SystemExit as exc:
        status = _exit_status(exc)
        if status != 0:
            abort(status)
    except BaseException as exc:  # noqa: BLE001 - any failure must end the whole job, not hang it
        report_and_abort(_user_frames(exc))


if __name__ == "__main__":
    main()

"""The MPI library in this process: loaded on first use, the locales, and ending the job.

Nothing here runs at import time.  MPI is initialised on first use (``here``,
``num_locales`` or any collective); outside a launcher a plain ``import pgas`` gives
one locale.

An uncaught exception on a locale of a job of several, started by anything but
``pgas run`` (plain ``mpiexec``, ``srun``, ``python -m mpi4py``), prints its
traceback tagged ``[locale k]`` and ends the whole job with ``MPI_Abort``
(status 1): without it the locale would run the collective cleanup at exit
(freeing windows) while the others wait elsewhere, and the job would hang.  So
does ``sys.exit(N)`` with a nonzero status (``MPI_Abort(N)``, as ``python -m
mpi4py`` does).
Under ``pgas run`` the runner catches the exception itself and the watchdog reports it.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
import traceback

import numpy as np

_MPI = None
_mpi_thread: list = [None]              # the thread that initialised MPI (see free_handles)


def mpi():
    """The ``mpi4py.MPI`` module, importing (and so initialising MPI) on first use."""
    global _MPI
    if _MPI is None:
        _tune_for_oversubscription()
        import mpi4py

        mpi4py.rc.threads = False
        from mpi4py import MPI

        _MPI = MPI
        _mpi_thread[0] = threading.get_ident()
        _abort_on_uncaught_exception()
    return _MPI


def _abort_on_uncaught_exception() -> None:
    """Outside ``pgas run`` (no ``$PGAS_JOB_DIR``), make an uncaught exception end the whole
    job (see the module docstring).  Python calls ``sys.excepthook`` before its exit
    handlers, so the locale aborts before any collective cleanup could hang it; a normal
    end and ``SystemExit`` do not pass through it."""
    if os.environ.get("PGAS_JOB_DIR") or getattr(sys.excepthook, "_pgas", False):
        return
    previous = sys.excepthook

    def hook(kind, value, tb):
        if _MPI is not None and _MPI.Is_initialized() and not _MPI.Is_finalized() and num_locales() > 1:
            try:
                report_and_abort(value.with_traceback(tb))
            finally:
                abort(1)
        previous(kind, value, tb)

    hook._pgas = True
    sys.excepthook = hook
    _abort_on_exit_status()


class _Exit(SystemExit):
    """The ``SystemExit`` that ``sys.exit`` and ``exit()`` raise once pgas is in use (weakly
    referable, see :func:`_abort_on_exit_status`)."""


#: The status of a ``sys.exit`` that ended the script (no ``except`` caught it), else None.
_exit_status: list = [None]


def _abort_on_exit_status() -> None:
    """Outside ``pgas run``: make ``sys.exit(N)`` (and ``exit(N)``) with a nonzero status end
    the whole job with ``MPI_Abort(N)``, as ``python -m mpi4py`` does.  Python does not
    pass ``SystemExit`` to ``sys.excepthook``, and a locale ending early would wait at exit in
    the collective cleanup (freeing windows) while the others wait elsewhere.  The exit
    functions raise a weakly referable ``SystemExit`` (:class:`_Exit`); when Python's
    top level frees it after taking its status, no Python frame is running, which tells
    it from one an ``except`` caught and dropped; the status is then kept, and the exit
    hook, run before the ``atexit`` handlers, aborts if it is nonzero.  (A bare ``raise
    SystemExit(N)`` is not seen.)"""
    import builtins
    import threading
    import weakref

    refs = set()

    def freed(ref, status) -> None:
        refs.discard(ref)
        try:
            sys._getframe(2)          # (0: here, 1: the weakref's callback) a frame dropped it: caught
        except ValueError:
            _exit_status[0] = status

    def make_exit(original):
        def exit_(status=None):
            e = _Exit(status)
            refs.add(weakref.ref(e, lambda r, s=status: freed(r, s)))
            try:
                raise e
            finally:
                del e
        exit_._pgas = True
        exit_.__doc__ = original.__doc__
        return exit_

    if not getattr(sys.exit, "_pgas", False):
        sys.exit = make_exit(sys.exit)
    for name in ("exit", "quit"):
        if hasattr(builtins, name) and not getattr(getattr(builtins, name), "_pgas", False):
            setattr(builtins, name, make_exit(getattr(builtins, name)))
    try:
        threading._register_atexit(_at_exit_status)
    except (AttributeError, RuntimeError):           # not CPython >= 3.9, or already shutting down
        atexit.register(_at_exit_status)


def exit_status():
    """The status ``sys.exit`` was given at the top level (outside ``pgas run``), None if none."""
    return _exit_status[0]


def _at_exit_status() -> None:
    status = _exit_status[0]
    if status is None or status == 0:
        return
    code = status if isinstance(status, int) else 1       # a message (printed by Python): status 1
    if _MPI is not None and _MPI.Is_initialized() and not _MPI.Is_finalized() and num_locales() > 1:
        abort(code)


def _tune_for_oversubscription() -> None:
    """With more local locales than cores, MPICH's shared-memory collectives spin against each
    other (a barrier costs milliseconds instead of tens of microseconds with the generic
    algorithms), so use the generic ones unless the user chose.  Other MPIs ignore the variable."""
    local = int(os.environ.get("MPI_LOCALNRANKS", "1"))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if local > cores:
        os.environ.setdefault("MPIR_CVAR_DEVICE_COLLECTIVES", "none")


def here() -> int:
    """This locale's number, ``0 <= here < num_locales``."""
    return mpi().COMM_WORLD.Get_rank()


def num_locales() -> int:
    """The number of locales (MPI processes) running the program."""
    return mpi().COMM_WORLD.Get_size()


_TYPES: dict = {}


def mpi_type(dtype):
    """The MPI datatype of a NumPy dtype."""
    t = _TYPES.get(dtype)                 # a dtype seen before: no normalisation
    if t is None:
        dtype = np.dtype(dtype)
        t = _TYPES.get(dtype)
        if t is None:
            t = _TYPES[dtype] = mpi().Datatype.fromcode(dtype.char)
    return t


def abort(code: int = 1) -> None:
    """End the whole job at once (every locale), with exit status ``code``."""
    sys.stdout.flush()
    sys.stderr.flush()
    if _MPI is not None and mpi().Is_initialized() and not mpi().Is_finalized():
        if num_locales() > 1:
            # MPI_Abort tears the job down at once; give the process manager a moment
            # to forward what this locale just wrote (without it a traceback was lost
            # in about one run in five)
            time.sleep(0.25)
        mpi().COMM_WORLD.Abort(code)
    os._exit(code)


def report_and_abort(exc: BaseException, code: int = 1) -> None:
    """Print ``exc``'s traceback tagged with this locale, then end the job."""
    where = here() if _MPI is not None else 0
    lines = "".join(traceback.format_exception(exc)).rstrip("\n").split("\n")
    sys.stderr.write("".join(f"[locale {where}] {line}\n" for line in lines))
    abort(code)


def library_version() -> str:
    """The MPI library's own version line."""
    return mpi().Get_library_version().strip().splitlines()[0]


def mpi4py_version() -> str:
    """The version of mpi4py in use."""
    import mpi4py

    return mpi4py.__version__

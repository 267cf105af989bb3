"""The MPI runtime: locales, the library's communicator, collectives, errors.

Nothing here runs at import time.  MPI is initialised on first use (``here``,
``num_locales`` or any collective); the library talks on its own duplicate of
``COMM_WORLD``, made the first time a collective needs it.  Outside a launcher
a plain ``import pgas`` gives one locale.

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
import pickle
import sys
import threading
import time
import traceback
import weakref
import zlib

import numpy as np

from . import node as _nodes
from . import trace
from .counters import record, record_barrier, record_collective, record_each, record_sync

_MPI = None
_comm = None
_mpi_thread: list = [None]              # the thread that initialised MPI (see free_handles)
_windows: "weakref.WeakSet" = weakref.WeakSet()


class LocaleError(RuntimeError):
    """An error raised on every locale alike, carrying the message of the first locale that failed."""


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


def comm():
    """The library's communicator (a duplicate of ``COMM_WORLD``); collective on first call,
    which also makes the communicator of the synchronisation notices (a locale may send
    its first notice long after another locale's first collective)."""
    global _comm, _ncomm, _scomm, _acomm
    if _comm is None:
        c = mpi().COMM_WORLD.Dup()
        _same_environment(c)
        try:
            learned = _nodes.learn(c, mpi())      # the node's locales and cores; raises alike on bad settings
        except ValueError:
            c.Free()
            raise
        set_wait(learned.wait)
        _comm = c
        _ncomm = mpi().COMM_WORLD.Dup()
        _scomm = mpi().COMM_WORLD.Dup()
        _acomm = mpi().COMM_WORLD.Dup()
        _epochs.open(_comm)
        _nodes.run_hooks()
        trace.from_environment()                  # PGAS_TRACE=DIR: the whole run recorded
    return _comm


class _Silent:
    """Stands for the library's communicators while :func:`silent` holds: any use raises."""

    def __init__(self, error) -> None:
        self._error = error

    def __getattr__(self, name):
        raise self._error(name)


def silent(error):
    """Until the returned callable is called, every use of the library's communicators
    (:func:`comm` and the notices' ones) raises ``error(name of the MPI call)``: a caller
    that must run no collective operation (a dry run that only records statements) learns
    of one before anything is sent.  Collective the first time (it makes the communicators)."""
    global _comm, _ncomm, _scomm, _acomm
    comm()
    saved = (_comm, _ncomm, _scomm, _acomm)
    _comm = _ncomm = _scomm = _acomm = _Silent(error)

    def restore() -> None:
        global _comm, _ncomm, _scomm, _acomm
        _comm, _ncomm, _scomm, _acomm = saved
    return restore


#: Environment variables every locale must read alike, each with how its value reads
#: (``{name: reader}``, the reader taking the stripped, lower-cased value, "" when unset),
#: registered by the layer that reads them (:func:`agree_on_environment`): locales that
#: read different values could plan one statement differently and wait for each other forever.
_agreed_env: dict = {}


def agree_on_environment(readers: dict) -> None:
    """Register environment variables (``{name: reader}``) that every locale must read
    alike; they are compared once, when the library's communicator is made (the first
    collective), so register them on import."""
    _agreed_env.update(readers)


agree_on_environment(_nodes.ENV)            # PGAS_THREADS, PGAS_WAIT
agree_on_environment({"PGAS_TRACE": bool})   # set on every locale or none: recording begins with a barrier


def _same_environment(c) -> None:
    """Once, when the library's communicator is made: every locale must read the registered
    variables (:func:`agree_on_environment`) alike; otherwise every locale raises the same
    ``RuntimeError`` naming them (one small allreduce per job, nothing per statement)."""
    names = sorted(_agreed_env)
    raw = [os.environ.get(k, "").strip().lower() for k in names]
    mine = [(_agreed_env[k](v), v) for k, v in zip(names, raw)]
    key = zlib.crc32(repr([x for x, _ in mine]).encode())
    span = np.array([key, -key], dtype=np.int64)
    c.Allreduce(mpi().IN_PLACE, span, op=mpi().MIN)         # O(log P): the values are gathered only if they differ
    if span[0] == -span[1]:
        return
    every = c.allgather(mine)
    c.Free()
    diff = []
    for i, k in enumerate(names):
        if len({e[i][0] for e in every}) > 1:
            vals = sorted({e[i][1] for e in every})
            where = "; ".join(f"{v or '(unset)'!r} on locales {[r for r, e in enumerate(every) if e[i][1] == v]}"
                              for v in vals)
            diff.append(f"{k} is {where}")
    raise RuntimeError("pgas: settings that change how statements are planned or how locales wait differ "
                       "between locales, so they could plan a statement differently and hang: " + ", ".join(diff) +
                       ". Set them alike on every locale (or unset them).")


class _Epochs:
    """How many collective writes (statements) each locale has completed, readable by
    one-sided gets: a one-sided operation towards a locale first waits until that locale
    has completed every statement this one has (read once per target after each new
    statement, then cached), so it never races with a statement still running there,
    even on a locale that was no peer of it.  ``pg.barrier()`` makes every cache current."""

    def __init__(self) -> None:
        self.win = None
        self.count = None
        self.mine = 0
        self.seen: dict[int, int] = {}
        self.all_seen = 0
        self.probe = np.zeros(1, dtype=np.int64)

    def open(self, c) -> None:
        MPI = mpi()
        self.win = MPI.Win.Allocate(8, 8, comm=c)
        self.win.Lock_all()
        self.count = np.frombuffer(self.win.tomemory(), dtype=np.int64)
        self.count[0] = 0
        self.win.Sync()
        atexit.register(self.close)             # collective, like the array windows' free at exit

    def done(self) -> None:
        self.mine += 1
        if self.count is not None:
            self.count[0] = self.mine
            self.win.Sync()

    def wait(self, target: int) -> None:
        if self.all_seen >= self.mine or self.seen.get(target, -1) >= self.mine or target == here():
            return
        pause = 0.00002
        while True:
            self.win.Get([self.probe, mpi().INT64_T], target, 0)
            self.win.Flush(target)
            if self.probe[0] >= self.mine:
                self.seen[target] = int(self.probe[0])
                return
            time.sleep(pause)
            pause = min(2 * pause, 0.005)

    def close(self) -> None:
        if self.win is not None:
            self.win.Unlock_all()
            self.count = None
            self.win.Free()
            self.win = None


_epochs = _Epochs()


def statement_done() -> None:
    """This locale completed one collective write (a statement): see :class:`_Epochs`."""
    _epochs.done()


def await_target(target: int) -> None:
    """Before a one-sided operation towards ``target``: wait until it has completed every
    statement this locale has (usually one cached comparison)."""
    _epochs.wait(target)


def here() -> int:
    """This locale's number, ``0 <= here < num_locales``."""
    return mpi().COMM_WORLD.Get_rank()


def num_locales() -> int:
    """The number of locales (MPI processes) running the program."""
    return mpi().COMM_WORLD.Get_size()


def register_window(win) -> None:
    _windows.add(win)


def barrier(windows=None, agree: bool = False, words: np.ndarray | None = None):
    """Wait for every locale; writes made before it (local stores and one-sided puts) are
    visible after it.  ``windows`` limits that to the given windows (a statement passes
    its arrays'), so the cost does not grow with the number of live arrays.  ``agree``
    (``pg.barrier``): the wait is a reduction of the windows this locale wrote one-sided
    since the last such barrier (:func:`mark_one_sided`), and the :func:`on_barrier`
    hooks learn which windows any locale wrote; ``words`` (uint64, with ``agree``) ride in
    the same reduction, or'ed bitwise over locales: the reduced words are returned."""
    global _one_sided
    t0 = trace.on and trace.now()
    wins = [w for w in _windows if w.in_use] if windows is None else windows
    for w in wins:
        w.complete()
        w.sync()
    record_barrier()
    if agree:
        head = 0 if words is None else len(words)
        mine = np.zeros(head + _WORDS, dtype=np.uint64)
        if head:
            mine[:head] = words
        if _one_sided:
            mine[head:] = np.frombuffer(_one_sided.to_bytes(8 * _WORDS, "little"), dtype=np.uint64)
            _one_sided = 0
        if t0:
            trace.waiting = "barrier (pg.barrier)"
        got = bitwise_or(mine, counted=False)  # a barrier, carrying the bits
    else:
        if t0:
            trace.waiting = "barrier"
        yielding_wait([comm().Ibarrier()])
    _epochs.all_seen = _epochs.mine            # every locale has completed what this one has
    for w in wins:
        w.sync()
    if t0:
        trace.waiting = None
        trace.add("mpi", "MPI_Barrier" if not agree else "MPI_Iallreduce (pg.barrier)", t0)
    if not agree:
        return None
    bits = int.from_bytes(got[head:].tobytes(), "little")
    if bits:
        for hook in _barrier_hooks:
            hook(bits)
    return got[:head]


def bitwise_or(words: np.ndarray, counted: bool = True) -> np.ndarray:
    """Collective: the bitwise or over locales of a uint64 array (one allreduce, waited
    for by the wait policy), on a communicator of its own: agreements of collective calls
    (:mod:`pgas.comm.check`) and ``pg.barrier()`` pair only with each other, never with a
    collective made inside another call that some locale made instead.  ``counted``: a
    collective for :mod:`pgas.comm.counters` (``pg.barrier()``'s counts as its barrier)."""
    if counted:
        record_collective()
    if not _agree_type:
        _agree_type.extend((mpi_type(np.dtype(np.uint64)), mpi().BOR))
    t0 = trace.on and trace.now()
    got = np.empty_like(words)
    comm()
    req = _acomm.Iallreduce([words, _agree_type[0]], [got, _agree_type[0]], op=_agree_type[1])
    if t0:
        trace.waiting = trace.waiting or "agreement"
    if not req.Test():
        yielding_wait([req])
    if t0:
        if trace.waiting == "agreement":
            trace.waiting = None
        trace.add("mpi", "MPI_Allreduce (agreement of collective calls)", t0)
    return got


#: Windows this locale wrote one-sided since the last ``pg.barrier()``: bit ``id % BITS``.
_one_sided = 0
_WORDS = 4
#: How many words of one-sided bits ``pg.barrier()``'s reduction carries after its callers' words.
BARRIER_WORDS = _WORDS
BITS = 64 * _WORDS
_barrier_hooks: list = []
_agree_type: list = []                      # (MPI datatype, BOR), set at the first use


def mark_one_sided(window_id: int) -> None:
    """Record a one-sided write to window ``window_id`` (see :func:`barrier`)."""
    global _one_sided
    _one_sided |= 1 << (window_id % BITS)


def on_barrier(hook) -> None:
    """Register ``hook(bits)``, called at a ``pg.barrier()`` after which some locale's
    one-sided writes became visible: bit ``id % BITS`` of ``bits`` is set for every window
    some locale wrote one-sided (two windows may share a bit: a hook must accept extra
    ones).  Every locale calls it alike."""
    _barrier_hooks.append(hook)


_barriers = 0


def barrier_count() -> int:
    """How many ``pg.barrier()`` calls this locale has made (the same on every locale
    between two of them): one-sided writes become visible at one, so ghost cells filled
    before it are not current after it."""
    return _barriers


def count_user_barrier() -> None:
    """Count one ``pg.barrier()`` (see :func:`barrier_count`)."""
    global _barriers
    _barriers += 1


# -- point-to-point synchronisation with peers ------------------------------
_ncomm = None
_scomm = None                   # what stalled waits tell each other (:func:`on_stall`)
_acomm = None                   # agreements of collective calls (:func:`bitwise_or`), and nothing else
_EMPTY = np.zeros(1, dtype=np.uint8)


def _notices():
    """The communicator of synchronisation notices (made with :func:`comm`)."""
    if _ncomm is None:
        raise RuntimeError("synchronisation notices before the first collective: create an array first")
    return _ncomm


def notify(targets, tag: int) -> list:
    """Start a zero-byte notice with ``tag`` to each of ``targets``; returns the requests.
    Notices between two locales with one tag arrive in the order sent (MPI's
    non-overtaking rule), which is what lets statements pair them up."""
    if not targets:
        return []
    t0 = trace.on and trace.now()
    c, byte = _notices(), mpi().BYTE
    record_sync(len(targets))
    reqs = [c.Isend([_EMPTY, 0, byte], t, tag) for t in targets]
    if t0:
        trace.add("mpi", f"MPI_Isend notice ({trace.tag_name(tag)})", t0, {"peers": list(targets)})
    return reqs


def expect(sources, tag: int) -> list:
    """Post the receipt of one notice with ``tag`` from each of ``sources``."""
    if not sources:
        return []
    t0 = trace.on and trace.now()
    c, byte = _notices(), mpi().BYTE
    reqs = [c.Irecv([_EMPTY, 0, byte], s, tag) for s in sources]
    if t0:
        trace.add("mpi", f"MPI_Irecv notice ({trace.tag_name(tag)})", t0, {"peers": list(sources)})
    return reqs


def notify_values(targets, tag: int, values: np.ndarray) -> list:
    """As :func:`notify`, but each notice carries ``values`` (a few int64: an array's write
    versions); the receiver posts :func:`expect_values` with the same count."""
    if not targets:
        return []
    t0 = trace.on and trace.now()
    c, t = _notices(), mpi().INT64_T
    values = np.ascontiguousarray(values, dtype=np.int64)
    record_sync(len(targets))
    reqs = [c.Isend([values, t], r, tag) for r in targets]
    if t0:
        trace.add("mpi", f"MPI_Isend notice ({trace.tag_name(tag)})", t0, {"peers": list(targets)})
    return reqs


def expect_values(sources, tag: int, count: int):
    """Post the receipt of one notice of ``count`` int64 with ``tag`` from each of
    ``sources``; returns ``(requests, buffer)``, row ``k`` of the buffer being what
    ``sources[k]`` sent (valid once the requests completed)."""
    buf = np.zeros((len(sources), count), dtype=np.int64)
    if not sources:
        return [], buf
    t0 = trace.on and trace.now()
    c, t = _notices(), mpi().INT64_T
    reqs = [c.Irecv([buf[k], t], s, tag) for k, s in enumerate(sources)]
    if t0:
        trace.add("mpi", f"MPI_Irecv notice ({trace.tag_name(tag)})", t0, {"peers": list(sources)})
    return reqs, buf


def wait(requests) -> None:
    """Wait for the requests of :func:`notify` / :func:`expect`."""
    if requests:
        yielding_wait(requests)


def arrived(requests) -> bool:
    """True if every one of ``requests`` (of :func:`notify` / :func:`expect`) has completed
    (a test: never waits)."""
    return not requests or bool(mpi().Request.Testall(requests))


def allgather(obj) -> list:
    """Every locale's ``obj`` (pickled), in locale order, on every locale."""
    t0 = trace.on and trace.now()
    data = np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)
    got = [pickle.loads(part) for part in allgatherv(data, count=False)]
    if t0:
        trace.add("mpi", "MPI_Allgather", t0)
    return got


def waited(request):
    """Wait for a started nonblocking collective ``request`` by the wait policy
    (:func:`yielding_wait`, which calls the :func:`on_stall` hooks when it goes on): what
    a blocking MPI call would do, except that a locale left waiting in it while the others
    are elsewhere is found."""
    record_collective()
    if not request.Test():
        yielding_wait([request])


def allreduce(value, op: str = "sum"):
    """Reduce a scalar or NumPy array over all locales; ``op`` in sum, prod, min, max, land, lor, band, bor."""
    t0 = trace.on and trace.now()
    mop = _mpi_op(op)
    arr = np.array(value, ndmin=1)
    out = np.empty_like(arr)
    t = mpi_type(arr.dtype)
    _collective_wait(comm().Iallreduce([arr, t], [out, t], op=mop), "allreduce", f"MPI_Allreduce ({op})", t0)
    return out if _ndim(value) else out[0]


def _collective_wait(req, waiting: str, label: str, t0) -> None:
    """Wait for collective ``req`` by the wait policy; under ``pg.trace`` (``t0`` its start) the
    wait is named ``waiting`` and the call recorded as an MPI span ``label``."""
    record_collective()
    if t0:
        trace.waiting = waiting
    if not req.Test():
        yielding_wait([req])
    if t0:
        trace.waiting = None
        trace.add("mpi", label, t0)


def exscan(value: np.ndarray) -> np.ndarray:
    """The sum of the arrays ``value`` (one shape and dtype on every locale) of the locales
    before this one, in locale order (zeros on locale 0): one ``MPI_Exscan``, log P steps,
    where an allgather would hand every locale all P arrays."""
    t0 = trace.on and trace.now()
    arr = np.ascontiguousarray(value)
    out = np.zeros_like(arr)
    t = mpi_type(arr.dtype)
    _collective_wait(comm().Iexscan([arr, t], [out, t], op=_mpi_op("sum")), "exscan", "MPI_Exscan (sum)", t0)
    if here() == 0:
        out[...] = 0                    # MPI leaves locale 0's result undefined
    return out


def _ndim(value) -> int:
    """``np.ndim(value)``, without its cost for a Python number (the usual reduced value)."""
    return 0 if type(value) in (float, int, bool, complex) else np.ndim(value)


_OPS: dict = {}


def _mpi_op(op: str):
    """The MPI reduction operation named ``op`` (KeyError if none is)."""
    if not _OPS:
        MPI = mpi()
        _OPS.update(sum=MPI.SUM, prod=MPI.PROD, min=MPI.MIN, max=MPI.MAX,
                    land=MPI.LAND, lor=MPI.LOR, band=MPI.BAND, bor=MPI.BOR)
    return _OPS[op]


class PendingReduction:
    """A started :func:`iallreduce`; :meth:`wait` gives its value (what :func:`allreduce` returns)."""

    def __init__(self, value, op: str) -> None:
        mop = _mpi_op(op)
        self._in = np.array(value, ndmin=1)
        self._scalar = not _ndim(value)
        self._out = np.empty_like(self._in)
        t = mpi_type(self._in.dtype)
        record_collective()
        self._req = comm().Iallreduce([self._in, t], [self._out, t], op=mop)

    def wait(self):
        """Wait for the reduction (collective: every locale started it) and return its value."""
        if self._req is not None:
            traced = trace.on
            if traced:
                trace.waiting = "allreduce"
            if not self._req.Test():
                yielding_wait([self._req])
            if traced:
                trace.waiting = None
            self._req = None
        return self._out[0] if self._scalar else self._out


def iallreduce(value, op: str = "sum") -> PendingReduction:
    """Start :func:`allreduce` of ``value`` and return at once; ``.wait()`` on the result
    gives the reduced value.  Other communication (a gather, an exchange) may run
    before the wait: MPI progresses the reduction while this locale waits for those,
    so the two latencies overlap.  Every locale must start the same reductions in
    the same order (as for any collective)."""
    return PendingReduction(value, op)


_yield = os.sched_yield if hasattr(os, "sched_yield") else (lambda: None)

#: How waits poll (one of :data:`pgas.comm.node.WAITS`): set from the node when the library's
#: communicator is made (:mod:`pgas.comm.node`); "nap" until then.
_wait = "nap"


def set_wait(policy: str) -> None:
    """Make waits poll by ``policy``: ``"spin"`` (no yield), ``"yield"`` (yield the core
    between polls) or ``"nap"`` (yield, and where a wait asks for it sleep after some polls)."""
    global _wait
    if policy not in _nodes.WAITS:
        raise ValueError(f"wait policy must be one of {_nodes.WAITS}, got {policy!r}")
    _wait = policy


def wait_mode() -> str:
    """The wait policy in force (see :func:`set_wait`)."""
    return _wait


def pause() -> None:
    """Between two polls of a waiting loop: yield the core, unless the policy is to spin."""
    if _wait != "spin":
        _yield()


#: Seconds a wait polls before the :func:`on_stall` hook is called (then again every
#: :data:`STALL_POLLS` polls); ``$PGAS_STALL_SECONDS`` sets it.
STALL = float(os.environ.get("PGAS_STALL_SECONDS", "5") or 5)
STALL_POLLS = 4096
_stall_hook: list = []


def on_stall(hook) -> None:
    """Register ``hook()``, called by a wait that has polled for :data:`STALL` seconds and
    again every :data:`STALL_POLLS` polls while it goes on (it may raise, or end the job)."""
    _stall_hook.append(hook)


def agreement_allgather(obj) -> list:
    """Every locale's ``obj`` (pickled, small), on the communicator of agreements: what
    locales that found their calls differ tell each other (:mod:`pgas.comm.check`)."""
    comm()
    record_collective()
    return _acomm.allgather(obj)


def stall_comm():
    """The communicator on which stalled waits exchange what they wait for (never used by
    anything else: a stalled locale's messages cannot meet another operation's)."""
    comm()
    return _scomm


def _stalled(since: float | None) -> float:
    """Every :data:`STALL_POLLS` polls of a wait: the time it started polling (set at the
    first call), and the stall hooks called once it has waited :data:`STALL` seconds."""
    now = time.monotonic()
    if since is None:
        return now
    if now - since > STALL:
        for hook in _stall_hook:
            hook()
    return since


def stall_probe(since: float | None) -> float | None:
    """For a waiting loop of its own (an exchange's, which receives as it polls): call every
    :data:`STALL_POLLS` polls with what the last call returned (None at first), as
    :func:`poll` does, so that its wait runs the :func:`on_stall` hooks too."""
    return _stalled(since)


def yielding_wait(requests, spins: int | None = None, nap: float = 5e-5) -> None:
    """Wait for ``requests``, polling as the node's wait policy says (:func:`set_wait`,
    :mod:`pgas.comm.node`).  ``"yield"`` and ``"nap"`` give the core away between polls:
    with more processes than cores (a shared machine) a spinning wait takes the time
    the peers need to get there; on an idle core the yield returns at once.  Under
    ``"nap"`` only, with ``spins``, after that many yielding polls the wait sleeps
    ``nap`` seconds between polls instead (it leaves the run queue; see
    :data:`pgas.comm.p2p.SPINS`).  ``"spin"`` polls without yielding.  A wait that
    goes on for :data:`STALL` seconds calls the :func:`on_stall` hooks."""
    if trace.on:
        _traced_wait(requests, spins, nap)
        return
    testall = mpi().Request.Testall
    poll(lambda: testall(requests), spins, nap)


#: Frees of MPI handles that a finalizer asked for on another thread (:func:`free_handles`).
_deferred: list = []


def free_handles(free) -> None:
    """Call ``free()``, which frees MPI handles (requests, datatypes: local calls, no message),
    from a finalizer (``__del__``, a ``weakref`` callback): now on the thread that initialised
    MPI, else at that thread's next wait (:func:`poll`).  MPI runs at ``MPI_THREAD_SINGLE``
    (``mpi4py.rc.threads`` is off), so no other thread may call it; but a finalizer runs on
    whichever thread the garbage collector runs on, that is any thread that allocates
    (``pgas run``'s progress sampler, a timer), while the main thread may be inside MPI (a
    wait releases the GIL).  An error of ``free()`` is dropped, as in a finalizer (a request
    still active, after a run that raised)."""
    if _mpi_thread[0] is None or threading.get_ident() == _mpi_thread[0]:
        _free_quietly(free)
    else:
        _deferred.append(free)


def free_deferred() -> None:
    """Call the frees :func:`free_handles` deferred (on the thread that initialised MPI)."""
    if threading.get_ident() != _mpi_thread[0]:
        return
    while _deferred:
        _free_quietly(_deferred.pop(0))


def _free_quietly(free) -> None:
    try:
        free()
    except Exception:                   # noqa: BLE001 - a finalizer's free: nothing to report it to
        pass


def poll(ready, spins: int | None = None, nap: float = 5e-5) -> None:
    """Call ``ready()`` (a one-sided read of another locale's memory, a test of requests for
    :func:`yielding_wait`) until it returns true, giving the core away between calls as the
    wait policy says: ``"yield"`` yields, ``"nap"`` yields and,
    after ``spins`` calls, sleeps ``nap`` seconds between them, ``"spin"`` does neither.
    A poll that goes on for :data:`STALL` seconds calls the :func:`on_stall` hooks."""
    if _deferred:
        free_deferred()
    k, since = 0, None
    spins = spins if _wait == "nap" else None
    while not ready():
        k += 1
        if _wait == "spin":
            pass
        elif spins is None or k < spins:
            _yield()
        else:
            time.sleep(nap)
        if not k % STALL_POLLS:
            since = _stalled(since)


def fence() -> None:
    """Complete every one-sided operation this locale started on any live window and order
    its local stores and loads with the other locales' one-sided access (``MPI_Win_flush_all``
    and ``MPI_Win_sync`` on each): what a lock does on acquiring and before releasing, so
    that the writes of one holder are seen by the next."""
    for w in [w for w in _windows if w.in_use]:
        w.flush()
        w.sync()


def _traced_wait(requests, spins, nap) -> None:
    """:func:`yielding_wait` while tracing: the same polling, by ``Testsome`` so that the span
    names the receives completed last (their sources and tags, :func:`pgas.comm.trace.add_wait`)."""
    MPI = mpi()
    if _deferred:
        free_deferred()
    t0 = trace.now()
    statuses = [MPI.Status() for _ in requests]
    left, last, k, since = len(requests), [], 0, None
    while True:
        done = MPI.Request.Testsome(requests, statuses)
        if done is None:                          # none active left
            break
        if done:
            last = [(statuses[j].Get_source(), statuses[j].Get_tag()) for j in range(len(done))]  # (in completion order)
            left -= len(done)
            if left <= 0:
                break
            continue
        k += 1
        if not k % STALL_POLLS:
            since = _stalled(since)
        if _wait == "spin":
            continue
        if _wait != "nap" or spins is None or k < spins:
            _yield()
        else:
            time.sleep(nap)
    trace.add_wait(t0, [(s, g) for s, g in last if s >= 0 and g >= 0])


def allreduce_with(value, combine):
    """Every locale's ``value`` combined in locale order by ``combine(a, b)`` (associative;
    pickled objects, for small values): a reduction tree of O(log P) steps, where an
    allgather would hand every locale all P values."""
    op = mpi().Op.Create(lambda a, b, datatype=None: combine(a, b), commute=False)
    record_collective()
    try:
        return comm().allreduce(value, op=op)
    finally:
        op.Free()


def bcast_value(value, dtype, root: int):
    """One element of ``dtype`` from ``root`` on every locale (counted as one message per receiver)."""
    buf = np.array([value if here() == root else 0], dtype=dtype)
    waited(comm().Ibcast([buf, mpi_type(buf.dtype)], root=root))
    if here() == root:
        for r in range(num_locales()):
            if r != root:
                record(r, buf.itemsize)
    return buf[0]


def allgatherv(local: np.ndarray, count: bool = True) -> list[np.ndarray]:
    """Every locale's 1-D array, in locale order, on every locale (one message per locale
    pair, counted in the diagnostics unless ``count`` is false, as for reductions)."""
    local = np.ascontiguousarray(local).reshape(-1)
    counts = np.empty(num_locales(), dtype=np.int64)
    waited(comm().Iallgather(np.array([local.size], dtype=np.int64), counts))
    displs = np.concatenate([[0], np.cumsum(counts)[:-1]])
    out = np.empty(int(counts.sum()), dtype=local.dtype)
    mt = mpi_type(local.dtype)
    waited(comm().Iallgatherv([local, mt], [out, (counts, displs), mt]))
    me = here()
    if local.size and count:
        for r in range(num_locales()):
            if r != me:
                record(r, local.nbytes)
    return [out[d:d + c] for d, c in zip(displs, counts)]


def bcast(obj, root: int):
    """``obj`` from ``root`` on every locale (pickled; for small values)."""
    c, mine = comm(), here() == root
    data = np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8) if mine else None
    size = np.array([0 if data is None else data.size], dtype=np.int64)
    waited(c.Ibcast([size, mpi_type(size.dtype)], root=root))
    buf = data if mine else np.empty(int(size[0]), dtype=np.uint8)
    waited(c.Ibcast([buf, mpi().BYTE], root=root))
    return obj if mine else pickle.loads(buf)


def alltoallv(send: list[np.ndarray], dtype, rcounts: np.ndarray | None = None) -> list[np.ndarray]:
    """Personalised exchange: ``send[r]`` goes to locale ``r``; returns what each locale sent here.
    One message per non-empty (source, target) pair.  ``rcounts[r]``, the elements locale ``r``
    sends here, when the caller knows them, saves the all-to-all of counts."""
    dtype = np.dtype(dtype)
    counts = np.fromiter((len(s) for s in send), dtype=np.int64, count=len(send))
    sbuf = np.concatenate([np.ascontiguousarray(s, dtype=dtype) for s in send]) if len(send) else np.empty(0, dtype)
    rbuf, rcounts = alltoallv_buffer(sbuf, counts, rcounts)
    rdis = np.cumsum(rcounts) - rcounts
    return [rbuf[a:a + c] for a, c in zip(rdis.tolist(), rcounts.tolist())]


def alltoallv_buffer(sbuf: np.ndarray, counts: np.ndarray,
                     rcounts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`alltoallv` of one contiguous 1-D buffer holding ``counts[r]`` elements for each
    locale ``r`` in turn; returns what arrived, in locale order, and the elements from each
    locale (``rcounts``, computed by an all-to-all of counts unless given)."""
    me = here()
    counts = np.asarray(counts, dtype=np.int64)
    if rcounts is None:
        rcounts = np.empty_like(counts)
        waited(comm().Ialltoall(counts, rcounts))
    else:
        rcounts = np.asarray(rcounts, dtype=np.int64)
    sbuf = np.ascontiguousarray(sbuf)
    rbuf = np.empty(int(rcounts.sum()), dtype=sbuf.dtype)
    mt = mpi_type(sbuf.dtype)
    waited(comm().Ialltoallv([sbuf, (counts, np.cumsum(counts) - counts), mt],
                             [rbuf, (rcounts, np.cumsum(rcounts) - rcounts), mt]))
    sent = counts.copy()
    sent[me] = 0
    record_each(sent * sbuf.dtype.itemsize, sent > 0)
    return rbuf, rcounts


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


def agree(error: BaseException | None) -> None:
    """Collective: if any locale passes an error, raise it on every locale alike.

    Use where locales may see different inputs (their own indices, say); errors
    that follow from replicated arguments are raised directly, with no messages.
    A locale that passed an error raises it; the others raise an instance of the
    same type that is also a :class:`LocaleError` (see :func:`raise_agreed`), so
    ``except IndexError`` catches it on every locale.
    """
    t0 = trace.on and trace.now()
    flags = np.array([0 if error is None else 1], dtype=np.int64)
    failed = np.empty_like(flags)
    waited(comm().Iallreduce([flags, mpi().INT64_T], [failed, mpi().INT64_T], op=mpi().SUM))
    if t0:
        trace.add("mpi", "MPI_Allreduce (agree on errors)", t0)
    if failed[0]:
        raise_agreed(error)


def raise_agreed(error: BaseException | None) -> None:
    """Collective, once every locale knows some locale failed: raise ``error`` here, or
    on a locale without one the first failing locale's error, as an instance of a
    subclass of both its type and :class:`LocaleError`, with ``.locale`` (the first
    failing locale, also set on the failing locales' own errors); plain
    :class:`LocaleError` if the type cannot be subclassed or made from a message.

    With several locales, every locale's message names the failing locales and what
    each said (:func:`where_failed`): ``"index 9 is out of bounds ... (on locale 1)"``,
    or ``"locale 1: index 9 ...; locale 3: index -20 ..."``; a failing locale's own
    error carries the same text.  Where a failing locale's message is not its one argument
    (an ``OSError``'s errno and text), every locale keeps the first one's message as it is."""
    own = error is not None and len(error.args) == 1 and isinstance(error.args[0], str) and \
        str(error) == error.args[0]                 # its message is its one argument: it can name the locales
    msgs = allgather(None if error is None else
                            (type(error).__module__, type(error).__qualname__, str(error), own))
    first = next(i for i, m in enumerate(msgs) if m is not None)
    if all(m is None or m[3] for m in msgs):
        text = where_failed([m[2] if m is not None else None for m in msgs])
    else:                                           # (an OSError's errno and text): as it said itself
        text = msgs[first][2]
    if error is not None:
        try:
            error.locale = first
            if own:
                error.args = (text,)
        except AttributeError:
            pass
        raise error
    module, qualname, _, _ = msgs[first]
    exc = _typed(module, qualname, text)
    if exc is None:
        exc = LocaleError(f"{qualname}: {text}")
    exc.locale = first
    raise exc


#: How many different messages :func:`where_failed` quotes.
QUOTED = 4


def where_failed(texts: list) -> str:
    """One message for every locale from each locale's error message (None where it had
    none), naming the failing locales: the message and ``(on locale k)`` (or ``(on locales
    1, 3)``) if they all said the same (unchanged at one locale, or if it already says
    ``locale k``), else ``locale k: message`` per message, the first :data:`QUOTED` of them,
    then the count of the others."""
    from .check import _locales

    if len(texts) == 1:
        return texts[0]
    said: dict[str, list[int]] = {}
    for r, t in enumerate(texts):
        if t is not None:
            said.setdefault(t, []).append(r)
    if len(said) == 1:
        (text, ranks), = said.items()
        if len(ranks) == 1 and f"locale {ranks[0]}" in text:
            return text
        return f"{text} (on {_locales(ranks)})"
    parts = [f"{_locales(ranks)}: {text}" for text, ranks in list(said.items())[:QUOTED]]
    rest = len(said) - QUOTED
    return "; ".join(parts) + (f"; and {rest} more message{'s' if rest > 1 else ''}" if rest > 0 else "")


_TYPED: dict = {}


def _typed(module: str, qualname: str, text: str):
    """An instance of the ``LocaleError`` subclass of the named exception type, or None."""
    try:
        cls = sys.modules[module]
        for part in qualname.split("."):
            cls = getattr(cls, part)
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            return None
        if issubclass(cls, LocaleError):
            return cls(text)
        sub = _TYPED.get(cls)
        if sub is None:
            sub = _TYPED[cls] = type(cls.__name__, (cls, LocaleError), {"__module__": "pgas.comm"})
        return sub(text)
    except Exception:  # noqa: BLE001 - a layout conflict, a constructor needing other arguments...
        return None


def record_to_all(root: int, nbytes: int) -> None:
    """Count a broadcast of ``nbytes`` from ``root`` as one message to every other locale."""
    if here() == root:
        for r in range(num_locales()):
            if r != root:
                record(r, nbytes)


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

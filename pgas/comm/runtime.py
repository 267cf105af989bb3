"""The library's communicators: a duplicate of ``COMM_WORLD`` made the first time a
collective needs it (with the notices', the stalled waits' and the agreements' own),
silenced while a compiled step runs dry, and the environment every locale must read alike."""

from __future__ import annotations

import os
import weakref
import zlib

import numpy as np

from . import node as _nodes
from . import trace
from .epochs import _epochs
from .process import mpi
from .waits import set_wait

_comm = None
_windows: "weakref.WeakSet" = weakref.WeakSet()


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


def comm_argument(call: str):
    """:func:`comm` to pass to an MPI call (``comm=``) named ``call``: while :func:`silent`
    holds, raises as a method call on the communicator does (rather than MPI's type error)."""
    c = comm()
    if type(c) is _Silent:
        getattr(c, call)
    return c


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


def register_window(win) -> None:
    _windows.add(win)


# -- point-to-point synchronisation with peers ------------------------------
_ncomm = None
_scomm = None                   # what stalled waits tell each other (:func:`on_stall`)
_acomm = None                   # agreements of collective calls (:func:`bitwise_or`), and nothing else


def _notices():
    """The communicator of synchronisation notices (made with :func:`comm`)."""
    if _ncomm is None:
        raise RuntimeError("synchronisation notices before the first collective: create an array first")
    return _ncomm


def stall_comm():
    """The communicator on which stalled waits exchange what they wait for (never used by
    anything else: a stalled locale's messages cannot meet another operation's)."""
    comm()
    return _scomm

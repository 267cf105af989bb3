"""Collective call checking: locales agree on which collective comes next.

Every locale of an SPMD program must make the same collective calls in the
same order.  When they do not (``if pg.here == 0: print(A[1, 2])``), MPI pairs
unrelated operations: the job hangs or, worse, returns a wrong value.  With
checking on (``$PGAS_CHECK=1`` or ``pg.config(check=True)``, the same on every
locale), each collective entry point first calls :func:`collective` with its
*signature*: what it is (a template such as ``"{0}.sum()"``, the ``{k}``
standing for its arrays), the arrays' identities (creation number, shape,
dtype), its relevant arguments, and the user's call site (the first stack
frame outside the ``pgas`` package).  The locales compare a 64-bit hash of it
in ONE small allreduce; only on a mismatch do they exchange the signatures, and
every locale raises the same :class:`CollectiveMismatch` naming what each group
of locales called and where::

    locale 0 called A.to_numpy() at job.py:12; locales 1-3 called A.sum() at job.py:14

This layer knows nothing of arrays: callers pass plain strings and integers
(and, for naming, the Python ``id`` of each array, looked up among the
caller's variables only when a message is written).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import sys
import threading

import numpy as np

from . import runtime

#: Whether collective calls are checked (set through ``pg.config(check=...)``, whose default
#: :mod:`pgas.exec.settings` reads from ``$PGAS_CHECK`` on import).
enabled = False

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_NUMPY = os.path.dirname(os.path.abspath(np.__file__)) + os.sep      # operators forward through its mixins
_MASK = (1 << 62) - 1
_LOW = np.iinfo(np.int64).min


class CollectiveMismatch(RuntimeError):
    """Locales made different collective calls (or the same call with different
    arguments) at the same point of the program; raised on every locale alike."""


def set_enabled(on: bool) -> None:
    """Turn checking on or off (every locale must do the same)."""
    global enabled
    enabled = bool(on)


def call_site():
    """The user's frame: the first one outside the ``pgas`` package (and NumPy, whose
    operator mixins forward ``A += 1`` to pgas); None if none."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith((_PKG, _NUMPY)):
        f = f.f_back
    return f


def _where(frame) -> str:
    if frame is None:
        return ""
    return f" at {os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


_hooked = False
_ended = False
_END = "the end of the program"


def _hook_exit() -> None:
    """Arrange a last check at interpreter exit, so a locale still waiting in a collective
    that the others never made gets a :class:`CollectiveMismatch` instead of hanging
    while they end.  It must run before the ``atexit`` handlers (freeing windows is
    collective too), so it goes where Python runs exit calls before them."""
    global _hooked
    _hooked = True
    try:
        threading._register_atexit(_at_exit)
    except (AttributeError, RuntimeError):           # not CPython >= 3.9, or already shutting down
        atexit.register(_at_exit)


def _at_exit() -> None:
    global _ended
    if _ended or not enabled or runtime._MPI is None or runtime.mpi().Is_finalized():
        return
    _ended = True
    try:
        collective(_END)
    except CollectiveMismatch as e:
        runtime.report_and_abort(e)


def at_end() -> None:
    """The last check (once), when a locale's script ends: under ``pgas run`` before it
    waits for the others, so a locale left in a collective they never made gets a
    :class:`CollectiveMismatch` rather than the watchdog's hang report."""
    _at_exit()


def _hash(obj) -> int:
    return int.from_bytes(hashlib.blake2b(repr(obj).encode(), digest_size=8).digest(), "little") & _MASK


def collective(op: str, arrays=(), args=(), detail=None, error: BaseException | None = None, show=None) -> None:
    """Collective: agree that every locale is making this call; raise otherwise.

    Parameters
    ----------
    op : str
        What the call is, as shown in messages: a template whose ``{0}``, ``{1}``...
        stand for ``arrays`` (``"{0}.sum()"``).  Part of the signature.
    arrays : tuple
        Per array a plain tuple ``(number, shape, dtype, id, name)``: the first three
        are the signature, ``id`` (the Python object id) and ``name`` only name it.
    args : tuple
        Further plain values that must agree (part of the signature).
    detail : hashable, optional
        Arguments compared only once every locale is known to make this call without
        an ``error`` (a scalar index): a difference is a mismatch too.
    error : BaseException, optional
        An error this locale already has for this call (an index out of range): if
        the signatures agree, it is raised on every locale (see :func:`runtime.agree`).
    show : callable, optional
        Makes the displayed call (``op`` with ``detail`` filled in) on a mismatch.
    """
    if not _hooked:
        _hook_exit()
    frame = call_site() if op != _END else None
    site = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None
    h = _hash((op, tuple(a[:3] for a in arrays), args, site))
    k = 0 if error is not None or detail is None else _hash(detail)
    e = int(error is not None)
    h0, h1, failed, k0, k1 = _max(np.array([h, -h, e, k, -k], dtype=np.int64)).tolist()
    if h0 != -h1:
        _mismatch(op if show is None else show(), arrays, frame, error, args)
    if failed:
        runtime.raise_agreed(error)
    if k0 != -k1:
        _mismatch(op if show is None else show(), arrays, frame, error, args)


def _max(buf: np.ndarray) -> np.ndarray:
    """The element-wise maximum over locales of an int64 array (one allreduce)."""
    out = np.empty_like(buf)
    runtime.comm().Allreduce(buf, out, op=runtime.mpi().MAX)
    return out


def element(code: int, array: tuple, loc, error, value, dtype, show):
    """Collective, without checking on: a scalar read (``code`` 1; ``value`` the owner's
    element as a 1-element array, else None) or write (``code`` 2) of element
    ``loc = (owner, offset)`` of ``array``.

    One allreduce agrees on the kind, the array and the element, spreads any
    ``error`` (a bad index or value on some locale, raised on all alike) and, for
    a read, carries the owner's value (its bytes in the last two words; the others
    put the smallest int64 there).  Returns the value read (or None)."""
    owner, flat = (-1, -1) if loc is None else loc
    n = array[0]
    buf = np.array([int(error is not None), code, -code, n, -n, owner, -owner, flat, -flat, _LOW, _LOW],
                   dtype=np.int64)
    if value is not None:
        buf[9:] = 0
        buf.view(np.uint8)[72:72 + value.itemsize] = value.view(np.uint8)
    out = _max(buf)
    o = out[:9].tolist()
    if o[0]:
        runtime.raise_agreed(error)
    if o[1] != -o[2] or o[3] != -o[4] or o[5] != -o[6] or o[7] != -o[8]:
        _mismatch(show(), (array,), call_site(), None)
    if code != 1:
        return None
    if value is not None:
        runtime.record_to_all(owner, dtype.itemsize)
    return out.view(np.uint8)[72:72 + dtype.itemsize].view(dtype)[0]


def _mismatch(shown: str, arrays, frame, error, args=()) -> None:
    """Collective: exchange what each locale called and raise :class:`CollectiveMismatch`."""
    def calls(name) -> list[str]:
        try:
            text = shown.format(*[name(a) for a in arrays])
        except (IndexError, KeyError, ValueError):
            text = shown
        if error is not None:
            text += f" ({type(error).__name__}: {error})"
        return runtime.allgather(f"{text}{_where(frame)}")

    seen = calls(lambda a: _name(a, frame))
    if all(c == seen[0] for c in seen):     # the same text everywhere: name the arrays in full
        seen = calls(lambda a: f"{_name(a, frame)} (array #{a[0]}, {np.dtype(a[2])} of shape {a[1]})")
        if all(c == seen[0] for c in seen):
            seen = [f"{c} with arguments {x!r}" for c, x in zip(seen, runtime.allgather(args))]
    groups: dict[str, list[int]] = {}
    for r, c in enumerate(seen):
        groups.setdefault(c, []).append(r)
    raise CollectiveMismatch("; ".join(f"{_locales(rs)} called {c}" for c, rs in groups.items()))


def _name(array: tuple, frame) -> str:
    """The caller's variable bound to the array with this id, else its name or number."""
    number, _, _, ident, name = array
    if frame is not None:
        for scope in (frame.f_locals, frame.f_globals):
            for var, val in scope.items():
                if id(val) == ident and not var.startswith("_"):
                    return var
    return name if name else f"array#{number}"


def _locales(ranks: list[int]) -> str:
    """``locale 0``, ``locales 1-3``, ``locales 0, 2``."""
    if len(ranks) == 1:
        return f"locale {ranks[0]}"
    runs, start = [], ranks[0]
    for a, b in zip(ranks, ranks[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}-{a}" if a > start else f"{a}")
            start = b
    return "locales " + ", ".join(runs)


def barrier() -> None:
    """Collective: wait for every locale; writes made before it (local stores and one-sided
    puts) are visible after it.  (``pg.barrier``; checked like every collective.)"""
    if enabled:
        collective("pg.barrier()")
    runtime.barrier(agree=True)
    runtime.count_user_barrier()              # ghost cells stop being current (one-sided writes)

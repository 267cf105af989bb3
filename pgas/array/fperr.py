"""Floating-point errors that ``np.errstate(...="raise")`` turns on, raised on every
locale alike.

Under ``np.errstate(divide="raise")`` NumPy raises ``FloatingPointError`` when an
element divides by zero.  In a distributed statement only the locales holding such
an element would raise, in the middle of the statement's messages, and the others
would wait for them forever; and a compiled (numba) kernel raises nothing at all.
So while a statement runs with any category set to ``"raise"``, :func:`run`
turns those categories into ``"call"`` (NumPy reports each error to a callback and
goes on), keeps every task on the NumPy path (whose ufuncs check the flags), and
after the statement agrees by one reduction whether any locale saw an error: if
so, every locale raises ``FloatingPointError`` (the locales that saw none raise one
that is also a :class:`pgas.comm.LocaleError`).  The statement has then run to its
end, as a NumPy ufunc with ``out=`` does before it raises.  Reductions (:func:`agreeing`)
report the errors of their local parts and of combining done by NumPy; partial results
combined by an MPI reduction (a whole-array float ``sum``) report none, so a sum that
overflows only when the locales' partial sums are added gives NumPy's ``inf`` without
the error.  Nothing changes, and no
message is sent, when no category is set to ``"raise"``.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

import numpy as np

from .. import comm

#: Nonzero while a statement runs under :func:`run` with errors to report: every
#: task takes the NumPy path (:func:`pgas.exec.fuse.evaluate` reads it), whose
#: integer powers are :func:`power` (:func:`pgas.exec.run.evaluate`).
numpy_only = 0


def run(fn, arg, collective: bool = True, powers: bool = False):
    """``fn(arg)`` (a statement's execution, collective), with NumPy's ``"raise"``
    categories reported to a callback while it runs, then ``FloatingPointError`` raised on
    every locale alike if any locale saw one.  ``powers``: the statement has an integer
    power whose exponent is data no check has seen (a ``pg.forall`` body's ``A[i] **
    X[i]``): its tasks record NumPy's ``ValueError`` for a negative exponent instead of
    raising (:func:`power`), and it is raised on every locale alike after the statement.
    Without either, inside another such run, or without ``collective`` (``pg.explain``,
    which runs nothing and may run on one locale): just ``fn(arg)``."""
    if numpy_only or not collective or not (powers or "raise" in np.geterr().values()):
        return fn(arg)
    with _agreed():
        return fn(arg)


def power(a, b, **kwargs):
    """``np.power(a, b)`` while a statement runs under :func:`run`: an integer power with a
    negative exponent element records NumPy's ``ValueError`` (raised on every locale
    after the statement) and computes the rest with those exponents taken as 0."""
    try:
        return np.power(a, b, **kwargs)
    except ValueError as e:
        if "negative integer powers" not in str(e):
            raise
        if not _seen:
            _seen.append(ValueError(str(e)))
        return np.power(a, np.maximum(b, 0), **kwargs)


def agreeing(fn):
    """Decorator: the collective ``fn(*args, **kw)`` run under :func:`run` (a reduction: its
    local parts raise on every locale alike)."""
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        return run(lambda _: fn(*args, **kw), None)
    return wrapper


@contextmanager
def _agreed():
    global numpy_only
    raising = [k for k, v in np.geterr().items() if v == "raise"]

    def report(kind, flag):
        if not _seen:
            _seen.append(FloatingPointError(f"{kind} encountered in a distributed statement"))

    _seen.clear()
    numpy_only += 1
    try:
        with np.errstate(call=report, **{k: "call" for k in raising}):
            yield
    finally:
        numpy_only -= 1
    err = _seen[0] if _seen else None
    _seen.clear()
    comm.agree(err)


#: The first error a statement under :func:`run` met on this locale (at most one).
_seen: list = []

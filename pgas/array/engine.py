"""The array layer's door to the statement engine.

DistArray and View forward non-scalar indexing, assignment and mixed-layout
ufuncs here.  This module builds the front-end objects and hands them to
:mod:`pgas.array.statements`, which lowers them and runs them on the engine
(:mod:`pgas.exec`).  It also keeps the ordered list of *pending* expressions,
so an expression is materialised before a statement overwrites its operands.

An expression is pending from its creation until it is used: as an operand of
another expression, as the value of a statement, or by being evaluated.  Being
used is a fact of program order, the same on every locale, so every locale
materialises the same pending expressions before a write without exchanging a
word (garbage collection, which differs between locales, decides nothing alone:
an expression dropped on every locale is forgotten by agreement, :class:`_Sweep`).  An
expression that was used and is evaluated again after one of its operands was
written would need the old values: that raises :class:`StaleExpression` rather
than give new ones.
"""

from __future__ import annotations

import itertools
import sys
import weakref

import numpy as np

from .. import comm as _comm
from ..comm.userwarn import warn
from . import expr as _expr
from . import fancy
from . import view as _view

_array_types: tuple = ()
_pending: dict[int, object] = {}       # sequence number -> pending expression (program order)
_seq = itertools.count()
_tracers: list = []
#: The recording of a compiled step (:mod:`pgas.array.step`) while its function runs dry:
#: its assignments are recorded instead of run.
capturing: list = []


def register_array(cls) -> None:
    """Tell the engine which class is the distributed array."""
    global _array_types
    _array_types = (cls,)


def is_array(x) -> bool:
    return isinstance(x, _array_types)


def as_operand(x):
    """``x`` as an expression operand: whole arrays become views, lazy objects and
    scalars stay, anything else becomes a NumPy array (replicated on every locale)."""
    if is_array(x):
        return _view.View.whole(x)
    if isinstance(x, (_expr.Lazy, _expr.Affine)):
        return x
    if isinstance(x, (int, float, complex, bool, np.generic, _expr.Param)):
        return x
    return np.asarray(x)


def getitem(src, key):
    """``src[key]`` for a non-scalar key (see :func:`pgas.array.view.select`); an advanced
    key (index arrays, masks) outside ``forall`` gives a new array (:mod:`pgas.array.fancy`)."""
    key = fancy.scalar_key(key)
    if not _tracers and fancy.is_advanced(key):
        return fancy.getitem(src, key)
    return _view.select(src, key)


def setitem(src, key, value) -> None:
    """``src[key] = value`` for a non-scalar key: one collective statement (an advanced key:
    an aggregated scatter, :mod:`pgas.array.fancy`)."""
    key = fancy.scalar_key(key)
    if not _tracers and fancy.is_advanced(key):
        return fancy.setitem(src, key, value)
    assign(_view.select(src, key, for_write=True), value)


def assign(target, value, casting: str = "unsafe") -> None:
    """Run ``target = value`` (``target`` a View, or a Ref inside forall)."""
    if capturing and not _tracers:
        return capturing[-1].assign(target, value, casting)
    if not isinstance(value, (np.ndarray, _expr.Lazy, _expr.Affine)) and not is_array(value):
        value = _python_value(target, value)           # Python and NumPy scalars, lists
    if isinstance(target, (_expr.Ref, _expr.IndirectRef)):
        if isinstance(value, (_expr.Ref, _expr.IndirectRef)) and target.same(value):
            return
        _record(target, as_operand(value), None, None)
        return
    if isinstance(value, _view.View) and target.same(value):
        return
    try:
        if isinstance(value, _expr.Expr) and value._value is None and value._seen:
            for b, v in value._seen:                   # a used expression whose operands were written since
                if version(b) != v:
                    raise StaleExpression(f"{b.label} was written after this expression was built and used; its "
                                          "old values are gone. Evaluate it first (E = E.eval(), a DistArray)")
        statements.assign(target, as_operand(value), casting)
    finally:
        used(value)                 # even when the statement raised: it was the value of a write


def _python_value(target, value):
    """A Python or NumPy scalar or a list converted to the target's dtype as NumPy converts
    it (``2**40`` or ``np.int64(2**40)`` into int32 raises OverflowError, ``1j`` into float
    TypeError).  A scalar is converted by NumPy's own element assignment, which a slice
    assignment shares (``np.float64(300.0)`` or a NaN into int8 raise, ``np.int64(-1)``
    into uint8 is 255), as ``A[i] = v`` and ``A.fill(v)`` convert it."""
    from .index import convert
    if isinstance(value, (int, float, complex, np.generic)):
        out = np.empty((), target.dtype)
        try:
            out[()] = value
        except (TypeError, ValueError, OverflowError) as e:
            raise type(e)(f"{target.base.label}: cannot store {value!r} in a {target.dtype} array: {e}") from None
        return out[()]
    out = convert(value, target.dtype, target.base)
    return out[()] if out.ndim == 0 else out


def ufunc(uf, method, inputs, out, kwargs):
    """A NumPy ufunc on lazy operands: an expression, or with ``out=`` a statement."""
    if method != "__call__" or uf.nout != 1:
        return NotImplemented
    if "where" in kwargs:
        if kwargs["where"] is not True:
            raise TypeError(f"{uf.__name__}: where= is not supported on distributed operands; use pg.where")
        kwargs = {k: v for k, v in kwargs.items() if k != "where"}     # NumPy's default, spelt out
    value = _expr.Expr(uf, [as_operand(x) for x in inputs], kwargs)
    if out is None:
        return value
    target = out[0] if isinstance(out, tuple) else out
    if is_array(target):
        target = _view.View.whole(target)
    if isinstance(target, (_expr.Ref, _expr.IndirectRef)):
        other = [a for a in value.args if not (isinstance(a, (_expr.Ref, _expr.IndirectRef)) and a.same(target))]
        _record(target, value, uf, other[0] if len(other) == 1 and len(value.args) == 2 else None)
        return out[0] if isinstance(out, tuple) else out
    if not isinstance(target, _view.View):
        raise TypeError(f"{uf.__name__}: out= must be a distributed array or view, got {type(target).__name__}")
    if capturing:
        capturing[-1].assign(target, value, "same_kind")
        return out[0] if isinstance(out, tuple) else out
    try:
        statements.assign(target, value, "same_kind")
    finally:
        used(value)
    return out[0] if isinstance(out, tuple) else out


def materialise(x, dtype=None):
    """Collective: a new DistArray holding the value of view or expression ``x``."""
    return statements.materialise(x, dtype)


# -- pending expressions -----------------------------------------------------
class StaleExpression(RuntimeError):
    """An expression already used was evaluated after one of its operands was written."""


def pending(e) -> None:
    """Remember a new expression, under a sequence number (program order)."""
    e._seq = next(_seq)
    _pending[e._seq] = e


def used(e) -> None:
    """``e`` (if an expression) was used: it is no longer pending."""
    if isinstance(e, _expr.Expr):
        _pending.pop(e._seq, None)


def version(base) -> int:
    """How many collective writes ``base`` has seen (see :func:`before_write`)."""
    return base.store.writes


def before_write(base, value) -> None:
    """Collective: materialise every pending expression that reads ``base``, except
    those inside ``value`` (the statement about to write it), in program order; then
    count the write.  No communication beyond the materialising statements: the
    pending set is the same on every locale."""
    if not _pending or (len(_pending) == 1 and type(value) is _expr.Expr
                                              and _pending.get(getattr(value, "_seq", None)) is value):
        base.store.writes += 1              # the common case: every expression but the statement's value used
        return
    mine = set()
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, _expr.Expr):
            mine.add(id(x))
            stack.extend(x.args)
    for k in [k for k, e in _pending.items() if id(e) not in mine and e.reads(base)]:
        e = _pending.get(k)
        if e is None:
            continue
        if e.stale() is not None:      # an operand was written one-sided (a barrier said so): its old
            _pending.pop(k)            # values are gone; evaluating it raises StaleExpression
            continue
        e.eval()
    base.store.writes += 1


def materialise_readers(bases) -> None:
    """Collective: materialise every pending expression that reads one of ``bases``, in
    program order, counting no write (a replayed compiled step, before its first statement:
    what a statement's :func:`before_write` would evaluate in the step builds compiled forms,
    and may free the kept ones the replay runs by after checking them)."""
    if not _pending:
        return
    for k in [k for k, e in _pending.items() if any(e.reads(b) for b in bases)]:
        e = _pending.get(k)
        if e is None:
            continue
        if e.stale() is not None:
            _pending.pop(k)
            continue
        e.eval()


def _refcounts(items: dict) -> list:
    """``sys.getrefcount`` of each value of ``items``, read the same way every time."""
    return [sys.getrefcount(e) for e in items.values()]


#: What :func:`_refcounts` reads for a value that only its dict holds, measured on this
#: interpreter (the references a loop and a call add differ between Python versions,
#: and a guessed constant would judge a held expression dropped: it would then read the
#: new values after a write, a silent wrong answer).
_ALONE = _refcounts({0: object()})[0]


def _held(items: dict) -> list:
    """For each pending expression in ``items``: whether the program still holds it."""
    return [n > _ALONE for n in _refcounts(items)]


class _Sweep:
    """Pending expressions the program dropped on every locale are forgotten instead of
    kept (with their operand arrays) until an operand is written: agreed in the window
    pool's collection (:func:`pgas.comm.window.on_collect`), which runs when an array is
    made, so garbage collection, which may differ between locales, decides nothing alone."""

    def count(self) -> int:
        return len(_pending)

    def flags(self) -> np.ndarray:
        return np.array([not h for h in _held(_pending)], dtype=np.uint8)

    def drop(self, flags) -> None:
        for k, gone in zip(list(_pending), flags):
            if gone:
                del _pending[k]


class PendingExpressionWarning(UserWarning):
    """A one-sided write to an array that a pending (unassigned, unused) expression reads."""


def one_sided_write(base, what: str) -> None:
    """Hook of every one-sided write to ``base`` on this locale (``put``, ``update_one``,
    atomics).  Such a write is not collective, so it cannot materialise a pending
    expression as a statement does (:func:`before_write`): the expression, computed
    when first used, may then read the new value where NumPy would have kept the old
    one.  Warn (on this locale only: warning exchanges nothing and waits for nobody)."""
    _comm.mark_one_sided(base._win.id)             # agreed at the next pg.barrier() (see _after_barrier)
    if not _pending:
        return
    held = _held(_pending)                         # first: the loop's references would count
    for e, h in zip(_pending.values(), held):
        if h and e.reads(base):                     # (a warning is local: garbage may differ)
            warn(
                f"{base.label}.{what}: an expression that reads {base.label} was built and not used yet; it is "
                "computed when first used, so it may read this write's value (NumPy would have computed it "
                "when written). Evaluate it before one-sided writes (E = E.eval()) to keep the old values",
                PendingExpressionWarning)
            return


# -- forall tracing ----------------------------------------------------------
def tracing() -> bool:
    """Whether a forall body is being traced (subscripts are then accesses, not reads)."""
    return bool(_tracers)


def trace_push(tracer) -> None:
    _tracers.append(tracer)


def trace_pop() -> None:
    _tracers.pop()


def decide(cond) -> bool:
    """The branch a Python ``if`` on traced condition ``cond`` takes in this trace of a
    forall body (the tracer runs the body once per path, :mod:`pgas.array.branches`)."""
    return _tracers[-1].decide(cond)


def _record(target, value, uf, other) -> None:
    if not _tracers:
        raise _expr.TraceError("subscripts with loop variables are only valid inside a pg.forall body")
    _tracers[-1].record(target, value, uf, other)


def is_scalar(x) -> bool:
    """True for Python and NumPy scalars and 0-d arrays (constants in expressions)."""
    return isinstance(x, (int, float, complex, bool, np.generic)) or (isinstance(x, np.ndarray) and x.ndim == 0)


#: Live arrays by the bit of their window id (``id % BITS``), then by window id (weak
#: references, each dropping its entry when its array goes), for :func:`_after_barrier`.
_by_bit: dict = {}


def allocated(array) -> None:
    """Hook of every array's creation (see :func:`_after_barrier`)."""
    wid = array._win.id
    arrays = _by_bit.setdefault(wid % _comm.collectives.BITS, {})

    def gone(ref, wid=wid, arrays=arrays):
        if arrays.get(wid) is ref:
            del arrays[wid]
    arrays[wid] = weakref.ref(array, gone)


def _after_barrier(bits: int) -> None:
    """At a ``pg.barrier()`` after which one-sided writes (``put``, ``update_one``, atomics)
    became visible, every locale counts a write of each array some locale wrote that way
    (and of any sharing its bit: a spurious count only makes an expression raise
    :class:`StaleExpression` instead of reading old values): a lazy expression reading it,
    built before, then raises :class:`StaleExpression` when evaluated instead of reading
    the new values (NumPy would have computed it when written).  The work grows with the
    arrays written, not with the live ones."""
    while bits:
        low = bits & -bits
        bits ^= low
        for ref in list(_by_bit.get(low.bit_length() - 1, {}).values()):
            a = ref()
            if a is not None:
                a.store.writes += 1


def _install_sweep() -> None:
    _comm.window.on_collect(_Sweep())
    _comm.on_barrier(_after_barrier)


_install_sweep()


# The statements module imports this one (its names are used only at run time); imported
# last, so that whichever of the two is imported first finds the other complete enough.
from . import statements  # noqa: E402

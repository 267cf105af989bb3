"""Lowering: front-end objects (views, refs, expressions) to the engine's statement form
(:class:`pgas.exec.lowered.Lowered`).

A slice statement iterates over the target view's shape (one unit-stride loop
variable per view dim); each operand view is aligned to the right, as NumPy
broadcasting does, so a dim of extent 1 becomes a zero column.  A forall
statement iterates over its domain, and its refs already are affine maps.
The expression becomes a small *program* (:mod:`pgas.exec.lowered`).

A statement repeated in a loop is lowered once: :func:`lower_view` and
:func:`lower_ref` look the statement up by its *structure* first (one pass
over the tree: each array's slot, each view's shape and affine map, each
function and keyword, each constant's type and exact bits, the domain and the
reduction), which determines the lowered statement and program completely,
so a hit only rebinds the arrays.  Anything whose value the structure cannot
pin exactly (a replicated NumPy array, a float NaN, an unhashable keyword) is
lowered afresh every time.
"""

from __future__ import annotations

import numpy as np

from ..comm.check import meaningful
from ..exec.lowered import Lowered, slot_name
from ..plan import Access, Statement
from .expr import Affine, Expr, IndirectRef, Ref, TraceError
from .view import View


class _Builder:
    def __init__(self, box_shape=None) -> None:
        self.arrays: list = []
        self.accesses: list[Access] = []
        self.index: dict = {}
        self.box_shape = box_shape

    def slot(self, base) -> int:
        for k, a in enumerate(self.arrays):
            if a is base:
                return k
        self.arrays.append(base)
        return len(self.arrays) - 1

    def access(self, base, M, c, write=False) -> int:
        x = Access(self.slot(base), M, c)
        if write:
            self.accesses.append(x)
            return len(self.accesses) - 1
        if x not in self.index:
            self.accesses.append(x)
            self.index[x] = len(self.accesses) - 1
        return self.index[x]

    def view_access(self, v: View, what: str) -> tuple:
        """Columns of a view aligned to the right of the box; broadcast dims become 0."""
        S = self.box_shape
        nb = len(S)
        M = [[0] * nb for _ in v.M]
        for k, n in enumerate(v.shape):
            var = nb - v.ndim + k
            if var >= 0 and n == S[var]:
                for d, row in enumerate(v.M):
                    M[d][var] = row[k]
            elif n != 1:
                raise ValueError(f"could not broadcast {what} of shape {v.shape} into shape {tuple(S)}")
        return M, v.c

    def program(self, node, what="input"):
        if isinstance(node, Expr) and node._value is not None:     # already materialised: read its value
            return self.program(View.whole(node._value), what)
        if isinstance(node, Expr):
            return ("call", node.func, tuple(self.program(a) for a in node.args), tuple(node.kwargs.items()))
        if isinstance(node, View):
            M, c = self.view_access(node, what + " view")
            return ("acc", self.access(node.base, M, c))
        if isinstance(node, Ref):
            return ("acc", self.access(node.base, node.M, node.c))
        if isinstance(node, Affine):
            return ("aff", node.coefs, node.const)
        if isinstance(node, np.ndarray) and node.ndim:
            if self.box_shape is None:
                raise TraceError("NumPy arrays cannot be indexed by loop variables: distribute them "
                                 "with pg.from_numpy and subscript the DistArray")
            S = tuple(self.box_shape)
            a = node
            while a.ndim > len(S) and a.shape[0] == 1:
                a = a[0]
            try:
                return ("np", np.broadcast_to(a, S))
            except ValueError:
                raise ValueError(f"could not broadcast {what} of shape {node.shape} into shape {S}") from None
        return ("const", node)


#: Lowered ``(statement, program)`` by structure (:func:`_key`), oldest dropped first.
_memo: dict = {}
MEMO_SIZE = 1024


class _Uncachable(Exception):
    """A leaf whose value the structure key cannot pin exactly."""


def _const_key(v):
    """A key equal for two constants only if they act identically in the program."""
    t = type(v)
    if t is int or t is bool or t is str or v is None:
        return (t, v)
    if t is float:
        if v != v:
            raise _Uncachable
        return (t, v.hex())                    # tells -0.0 from 0.0
    if t is complex:
        if v != v:
            raise _Uncachable
        return (t, v.real.hex(), v.imag.hex())
    if isinstance(v, np.generic):              # immutable: its dtype and bits are its value
        return (t, v.dtype, meaningful(v).tobytes())
    if t is np.dtype or t is type or isinstance(v, np.dtype):
        return (t, v)
    raise _Uncachable                          # a 0-d array (mutable), or anything unknown


def _key(node, bases: list):
    """The structure of an expression tree (see the module docstring); ``bases`` gets
    the arrays in slot order, as :class:`_Builder` numbers them."""
    t = type(node)
    if t is float:                             # the common leaves first
        if node != node:
            raise _Uncachable
        return (t, node.hex())
    if t is Expr or isinstance(node, Expr):
        if node._value is None:
            kw = tuple([(k, _const_key(v)) for k, v in node.kwargs.items()]) if node.kwargs else ()
            return (0, node.func, kw, *[_key(a, bases) for a in node.args])
        node = View.whole(node._value)
        t = View
    view = t is View or isinstance(node, View)
    if view or isinstance(node, Ref):
        base = node.base
        k = 0
        for a in bases:
            if a is base:
                break
            k += 1
        else:
            bases.append(base)
        return (1, k, node.M, node.c, node.shape) if view else (2, k, node.M, node.c)
    if isinstance(node, Affine):
        return (3, node.coefs, node.const)
    if isinstance(node, IndirectRef):
        return (4, _key(View.whole(node.base), bases), tuple(_key(s, bases) for s in node.subs))
    return _const_key(node)


def _recall(key, bases):
    """The memoised :class:`Lowered` of ``key`` over ``bases`` (None if not memoised)."""
    got = _memo.get(key)
    if got is None:
        return None
    return Lowered(got[0], bases, got[1], [slot_name(a, k) for k, a in enumerate(bases)])


def _remember(key, low: Lowered) -> Lowered:
    if len(_memo) >= MEMO_SIZE:
        del _memo[next(iter(_memo))]
    _memo[key] = (low.stmt, low.prog)
    return low


def structure(target: View, value):
    """``(key, bases)``: the structure of ``target = value`` (what :func:`lower_view`
    memoises by, with the arrays in slot order), or None when it cannot be pinned."""
    bases = [target.base]
    try:
        key = (target.shape, target.M, target.c, _key(value, bases))
        hash(key)
    except (_Uncachable, TypeError):
        return None
    return key, bases


_UNKNOWN = object()


def lower_view(target: View, value, known=_UNKNOWN) -> Lowered:
    """``target = value`` over the target view's shape (memoised by structure;
    ``known``: :func:`structure`'s answer for this very statement, if made)."""
    known = structure(target, value) if known is _UNKNOWN else known
    if known is None:
        return _lower_view(target, value)
    key, bases = known
    low = _recall(key, bases)
    return low if low is not None else _remember(key, _lower_view(target, value))


def _lower_view(target: View, value) -> Lowered:
    """``target = value`` over the target view's shape.  Target dims of extent 1 that
    no array index depends on (``None`` in the key) are dropped from the box: they
    are no reduction, only a broadcast."""
    b = _Builder(target.shape)
    b.access(target.base, target.M, target.c, write=True)
    prog = b.program(value, "input")
    keep = [v for v, n in enumerate(target.shape) if n != 1 or any(row[v] for row in target.M)]
    accesses = b.accesses
    if len(keep) < len(target.shape):
        drop = tuple(v for v in range(len(target.shape)) if v not in keep)
        accesses = [Access(x.slot, [[row[v] for v in keep] for row in x.M], x.c) for x in accesses]
        prog = _squeeze(prog, drop)
    box = tuple((0, 1, target.shape[v]) for v in keep)
    stmt = Statement(box, tuple(accesses), 0)
    return Lowered(stmt, b.arrays, prog, [slot_name(a, k) for k, a in enumerate(b.arrays)])


def _squeeze(prog, axes: tuple):
    """``prog`` with the replicated NumPy leaves' ``axes`` (all of extent 1) removed."""
    if prog[0] == "np":
        return ("np", np.squeeze(prog[1], axis=axes))
    if prog[0] == "call":
        return ("call", prog[1], tuple(_squeeze(a, axes) for a in prog[2]), prog[3])
    return prog


def lower_ref(domain, target: Ref, value, reduce_name: str | None) -> Lowered:
    """``target = value`` over a forall ``domain`` (a :class:`pgas.exec.domain.Domain`),
    memoised by structure."""
    bases = [target.base]
    try:
        key = (domain.box, domain.parts, domain.clips, domain.count, target.M, target.c, reduce_name,
               _key(value, bases))
        hash(key)
    except (_Uncachable, TypeError):
        return _lower_ref(domain, target, value, reduce_name)
    low = _recall(key, bases)
    return low if low is not None else _remember(key, _lower_ref(domain, target, value, reduce_name))


def _lower_ref(domain, target: Ref, value, reduce_name: str | None) -> Lowered:
    b = _Builder(None)
    m = domain.ndim
    if any(len(row) != m for row in target.M):
        target = Ref(target.base, [tuple(row) + (0,) * (m - len(row)) for row in target.M], target.c)
    b.access(target.base, target.M, target.c, write=True)
    prog = b.program(value)
    accesses = tuple(Access(x.slot, [tuple(r) + (0,) * (m - len(r)) for r in x.M], x.c) for x in b.accesses)
    stmt = Statement(domain.box, accesses, 0, reduce_name, domain.parts, domain.clips, domain.count)
    return Lowered(stmt, b.arrays, prog, [slot_name(a, k) for k, a in enumerate(b.arrays)])

"""A task's values: strided views of flat buffers, and an expression program evaluated on them.

Every path that runs a planned statement (the generic one, :mod:`pgas.exec.run`; strips,
:mod:`pgas.exec.strip`; groups, :mod:`pgas.exec.group` and :mod:`pgas.exec.shiftgroup`;
persistent transfers, :mod:`pgas.exec.persistent`; inspector plans,
:mod:`pgas.exec.inspected`) computes a task the same way: each access is a strided view
of the local storage or of a message buffer (:class:`TaskContext`), and the lowered
program (:mod:`pgas.exec.lowered`) is evaluated on those views by NumPy (:func:`evaluate`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..layout.boxes import BOX, box_shape, boxes
from . import fperr

#: Reduction ufunc used to combine the values a write receives over the loop
#: variables it ignores, per combining (in-place) ufunc.
REDUCE_WITH = {"add": np.add, "subtract": np.add, "multiply": np.multiply, "true_divide": np.multiply,
               "divide": np.multiply,
               "bitwise_or": np.bitwise_or, "bitwise_and": np.bitwise_and, "bitwise_xor": np.bitwise_xor,
               "minimum": np.minimum, "maximum": np.maximum, "fmin": np.fmin, "fmax": np.fmax,
               "logical_or": np.logical_or, "logical_and": np.logical_and}


def combiners(stmt):
    """``(combine, reduce)`` ufuncs of a reduction statement (``A[...] += ...``): the one that
    combines a value into the target, the one that reduces values over ignored loop
    variables (:data:`REDUCE_WITH`); ``(None, None)`` for a plain write."""
    if stmt.reduce is None:
        return None, None
    return getattr(np, stmt.reduce), REDUCE_WITH[stmt.reduce]


def strided(buf: np.ndarray, offset: int, strides, shape) -> np.ndarray:
    """The view of flat ``buf`` at element ``offset`` with element ``strides`` (checked to
    lie inside ``buf``; ``np.ndarray`` on the buffer is several times cheaper than
    ``as_strided``, which is kept for buffers that are not contiguous)."""
    item = buf.itemsize
    st = tuple(s * item for s in strides)
    if buf.flags.c_contiguous:
        return np.ndarray(tuple(shape), buf.dtype, buffer=buf, offset=offset * item, strides=st)
    return as_strided(buf[offset:], shape=tuple(shape), strides=st)


def evaluate(prog, ctx):
    """Run an expression program (see :mod:`pgas.exec.lowered`) with leaf values from ``ctx``."""
    kind = prog[0]
    if kind == "acc":
        return ctx.access(prog[1])
    if kind == "const":
        return prog[1]
    if kind == "np":
        return ctx.replicated(prog[1])
    if kind == "aff":
        return ctx.affine(prog[1], prog[2])
    args = [evaluate(a, ctx) for a in prog[2]]
    if prog[1] is np.power and fperr.power_errors is not None:
        args = fperr.power_args(args, dict(prog[3]))     # a forall's negative integer exponent, raised alike
    return prog[1](*args, **dict(prog[3]))


#: Elements per box of :func:`evaluate_boxes` ...
STRIP = BOX
#: ... and tasks of more elements than this take the NumPy path box by box.
LARGE = 2 * BOX


def large(prog, shape) -> bool:
    """True if the NumPy path evaluates a task of ``shape`` box by box (:func:`evaluate_boxes`):
    a call (a lone leaf makes no temporary) on more than :data:`LARGE` elements, with no
    array among its keyword arguments."""
    return prog[0] == "call" and math.prod(shape) > LARGE and not _array_kwargs(prog)


def _array_kwargs(prog) -> bool:
    return prog[0] == "call" and (any(isinstance(v, np.ndarray) for _, v in prog[3])
                                  or any(_array_kwargs(a) for a in prog[2]))


def evaluate_boxes(prog, ctx, shape, target=None, where=None):
    """The value of ``prog`` on a task of ``shape`` by NumPy, as :func:`evaluate` gives it,
    computed box by box (:func:`pgas.layout.boxes.boxes`, :data:`BOX` elements), so that
    no temporary is larger than a box, as numexpr evaluates by blocks.  The leaves are
    made once (views, the small affine values; a replicated NumPy operand is cut per box)
    and each box of every leaf is a view.  With ``target`` (a writable view of ``shape``,
    see :func:`pgas.exec.fuse.in_place`) each box is stored there as it is computed
    (converted as assignment converts) and None is returned; otherwise a new array of the
    result's dtype.  With ``where`` as well, box ``key`` is stored only where ``where(key)``
    holds (a clipped domain's points)."""
    bound = _bind(prog, ctx)
    out, ndim = target, len(shape)
    for key in boxes(shape, STRIP):
        value = _run(bound, ctx, key, ndim)
        if out is None:
            out = np.empty(shape, np.asarray(value).dtype)
        if where is None:
            out[key] = value
        else:
            np.copyto(out[key], value, casting="unsafe", where=where(key))
    return out if target is None else None


def evaluate_reduced(prog, ctx, shape, axes, reducer, inside=None):
    """``reducer.reduce(value, axis=axes, keepdims=True)`` of ``prog``'s value on a task of
    ``shape`` (a reduction over the loop variables its write ignores), computed box by box
    as :func:`evaluate_boxes` computes: each box spans the reduced ``axes`` whole and as
    many elements of the others as make :data:`STRIP` elements (one at least), so the
    values each written element receives are reduced together, by the same call as on
    the whole value.  With ``inside`` (a clipped domain, :mod:`pgas.exec.clipped`),
    ``inside(key, value)`` gives box ``key``'s values to reduce."""
    axes = tuple(axes)
    ndim = len(shape)
    kept = [d for d in range(ndim) if d not in axes]
    span = math.prod(shape[d] for d in axes)
    bound = _bind(prog, ctx)
    out = None
    for part in boxes([shape[d] for d in kept], max(STRIP // max(span, 1), 1)):
        key = [slice(None)] * ndim
        for d, k in zip(kept, part):
            key[d] = k
        key = tuple(key)
        value = np.broadcast_to(_run(bound, ctx, key, ndim), box_shape(shape, key))
        if inside is not None:
            value = inside(key, value)
        value = reducer.reduce(value, axis=axes, keepdims=True)
        if out is None:
            out = np.empty(tuple(1 if d in axes else n for d, n in enumerate(shape)), value.dtype)
        out[key] = value
    return out


def _bind(prog, ctx):
    """``prog`` with its leaves' values made (a replicated operand is left to cut per box)."""
    kind = prog[0]
    if kind == "call":
        return ("call", prog[1], tuple(_bind(a, ctx) for a in prog[2]), dict(prog[3]))
    if kind == "np" and isinstance(ctx, TaskContext):
        return prog
    return ("val", evaluate(prog, ctx))


def _run(node, ctx, key, ndim):
    kind = node[0]
    if kind == "val":
        return _cut(node[1], key, ndim)
    if kind == "np":
        return ctx.replicated(node[1], key)
    args = [_run(a, ctx, key, ndim) for a in node[2]]
    if node[1] is np.power and fperr.power_errors is not None:
        args = fperr.power_args(args, node[3])
    return node[1](*args, **node[3])


def _cut(value, key, ndim):
    """Box ``key`` of a leaf value that broadcasts to an ``ndim``-dimensional task (a view;
    axes of extent 1 and missing leading axes are kept to broadcast)."""
    if not isinstance(value, np.ndarray) or value.ndim == 0:
        return value
    lead = ndim - value.ndim
    return value[tuple(k if value.shape[d - lead] != 1 else slice(None) for d, k in enumerate(key) if d >= lead)]


class TaskContext:
    """The leaf values of one task of a pieces plan: its accesses as views of the local
    storage (``flats``) or of the message buffers (``bufs``; per message when
    ``aggregate``, else per ``(piece, access)``), replicated operands and affine
    subscripts over its lattice."""

    def __init__(self, low, plan, task, flats, bufs, aggregate, copies=None) -> None:
        self.low, self.plan, self.task = low, plan, task
        self.flats, self.bufs, self.aggregate = flats, bufs, aggregate
        self.copies = copies                  # access -> its local values read through the window

    def access(self, k):
        ref = self.task.refs[k]
        slot = self.plan.stmt.accesses[k].slot
        if self.copies and k in self.copies:
            return self.copies[k]
        if ref.msg < 0:
            return strided(self.flats[slot], ref.offset, ref.strides, self.task.shape)
        if self.aggregate:
            return strided(self.bufs[ref.msg], ref.boffset, ref.bstrides, self.task.shape)
        return self.bufs[(self.task.piece, k)]

    def address(self, k):
        """``(flat buffer, element offset, element strides)`` of access ``k`` (what
        :meth:`access` makes its view of), or ``(None, 0, ())`` without a flat buffer."""
        ref = self.task.refs[k]
        if self.copies and k in self.copies:
            return None, 0, ()
        if ref.msg < 0:
            return self.flats[self.plan.stmt.accesses[k].slot], ref.offset, ref.strides
        if self.aggregate:
            return self.bufs[ref.msg], ref.boffset, ref.bstrides
        return None, 0, ()

    def _values(self, v):
        lat = self.plan.pieces[self.task.piece][v]
        return np.asarray(lat.values(), dtype=np.int64)

    def replicated(self, arr, key=()):
        """The task's part of a replicated operand (of its box ``key`` only, when given:
        each loop variable's values run over two axes of the task)."""
        vals = [self._values(v) for v in range(self.plan.stmt.nvars)]
        shape = self.task.shape
        for v in range(len(vals)):
            cut = key[2 * v:2 * v + 2]
            if cut:
                vals[v] = vals[v].reshape(shape[2 * v:2 * v + 2])[cut].reshape(-1)
        return arr[np.ix_(*vals)].reshape(box_shape(shape, key))

    def affine(self, coefs, const):
        out = np.full((1,) * len(self.task.shape), const, dtype=np.int64)
        for v, a in enumerate(coefs):
            if a:
                shape = [1] * len(self.task.shape)
                shape[2 * v:2 * v + 2] = self.task.shape[2 * v:2 * v + 2]
                out = out + a * self._values(v).reshape(shape)
        return out

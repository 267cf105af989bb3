"""Running a plan on this locale: fetch, compute, write back.

1. If any locale fetches: barrier (earlier writes become visible), then one
   ``get_regions`` per planned message into a contiguous buffer, then barrier
   (nobody overwrites data another locale is still reading).
2. Compute every task with NumPy on strided views: local accesses view the
   local storage directly (``as_strided``, no per-element locality test),
   remote ones view their message buffer.  All values are computed before
   anything is written, so ``A[1:] = A[:-1]`` reads the old values.
3. If any locale writes back: barrier, store, one ``put_regions`` per
   message, barrier.  Local stores are plain NumPy assignments.
   A reduction run on a read's owner (``plan.accumulate``) instead combines
   its partial results per owner of the written elements into one buffer
   (starting from the op's identity), barrier, one ``accumulate_regions``
   per message, barrier, and only then combines its own elements with NumPy,
   so local stores never race with other locales' accumulates.

In baseline mode (``pg.config(aggregate=False)``) steps 1 and 3 move one
element per message instead, as an unoptimised PGAS runtime does.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import comm
from ..plan import ACCUMULATE_OPS
from ..plan.inspector import box_points
from ..plan.transfers import expand

#: Reduction ufunc used to combine the values a write receives over the loop
#: variables it ignores, per combining (in-place) ufunc.
REDUCE_WITH = {"add": np.add, "subtract": np.add, "multiply": np.multiply, "true_divide": np.multiply,
               "bitwise_or": np.bitwise_or, "bitwise_and": np.bitwise_and, "bitwise_xor": np.bitwise_xor,
               "minimum": np.minimum, "maximum": np.maximum, "fmin": np.fmin, "fmax": np.fmax,
               "logical_or": np.logical_or, "logical_and": np.logical_and}


def accumulable(reduce: str | None, dtype) -> bool:
    """True if a reduction ``reduce`` into an array of ``dtype`` may accumulate
    remotely (an MPI op exists for it on that type)."""
    op = ACCUMULATE_OPS.get(reduce)
    kind = np.dtype(dtype).kind
    if op in ("sum", "prod"):
        return kind in "iufc"
    if op in ("min", "max"):
        return kind in "iuf"
    return op is not None and kind in "iu"


def _identity(op: str, dtype) -> np.ndarray:
    """The neutral element of MPI ``op`` in ``dtype``."""
    dtype = np.dtype(dtype)
    if op == "prod":
        return np.ones((), dtype)
    if op == "band":
        return ~np.zeros((), dtype)
    if op in ("min", "max"):
        big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
        small = -np.inf if dtype.kind == "f" else np.iinfo(dtype).min
        return np.asarray(big if op == "min" else small, dtype)
    return np.zeros((), dtype)


def strided(buf: np.ndarray, offset: int, strides, shape) -> np.ndarray:
    """The view of flat ``buf`` at element ``offset`` with element ``strides``."""
    item = buf.itemsize
    return as_strided(buf[offset:], shape=tuple(shape), strides=tuple(s * item for s in strides))


def evaluate(prog, ctx):
    """Run an expression program (see :mod:`pgas.exec.lower`) with leaf values from ``ctx``."""
    kind = prog[0]
    if kind == "acc":
        return ctx.access(prog[1])
    if kind == "const":
        return prog[1]
    if kind == "np":
        return ctx.replicated(prog[1])
    if kind == "aff":
        return ctx.affine(prog[1], prog[2])
    return prog[1](*[evaluate(a, ctx) for a in prog[2]], **dict(prog[3]))


class _TaskContext:
    def __init__(self, low, plan, task, flats, bufs, aggregate) -> None:
        self.low, self.plan, self.task = low, plan, task
        self.flats, self.bufs, self.aggregate = flats, bufs, aggregate

    def access(self, k):
        ref = self.task.refs[k]
        slot = self.plan.stmt.accesses[k].slot
        if ref.msg < 0:
            return strided(self.flats[slot], ref.offset, ref.strides, self.task.shape)
        if self.aggregate:
            return strided(self.bufs[ref.msg], ref.boffset, ref.bstrides, self.task.shape)
        return self.bufs[(self.task.piece, k)]

    def _values(self, v):
        lat = self.plan.pieces[self.task.piece][0][v]
        return np.asarray(lat.values(), dtype=np.int64)

    def replicated(self, arr):
        vals = [self._values(v) for v in range(self.plan.stmt.nvars)]
        return arr[np.ix_(*vals)].reshape(self.task.shape)

    def affine(self, coefs, const):
        out = np.full((1,) * len(self.task.shape), const, dtype=np.int64)
        for v, a in enumerate(coefs):
            if a:
                shape = [1] * len(self.task.shape)
                shape[2 * v:2 * v + 2] = self.task.shape[2 * v:2 * v + 2]
                out = out + a * self._values(v).reshape(shape)
        return out


def _get_elements(arr, ref, shape) -> np.ndarray:
    """Baseline: one message per element of the access (repeats included)."""
    offs = expand(ref.offset, shape, ref.strides)
    out = np.empty(len(offs), dtype=arr.dtype)
    for k, o in enumerate(offs.tolist()):
        arr._win.get(ref.owner, o, out[k:k + 1])
    return out.reshape(shape)


def _barrier(low) -> None:
    """A barrier that makes earlier writes to this statement's arrays visible."""
    comm.barrier([a._win for a in low.arrays])


def run(low, plan, aggregate: bool) -> None:
    """Collective: execute ``plan`` (made from ``low``) on every locale."""
    if plan.kind == "inspector":
        _run_inspector(low, plan, aggregate)
    else:
        _run_pieces(low, plan, aggregate)


def _combine(stmt):
    if stmt.reduce is None:
        return None, None
    return getattr(np, stmt.reduce), REDUCE_WITH[stmt.reduce]


def _run_pieces(low, plan, aggregate: bool) -> None:
    me = comm.here()
    lp = plan.locales[me]
    stmt = plan.stmt
    W = stmt.write
    warr = low.arrays[stmt.accesses[W].slot]
    flats = [a.local.reshape(-1) for a in low.arrays]
    wflat = flats[stmt.accesses[W].slot]
    if plan.any_fetch:
        _barrier(low)
    bufs = []
    if aggregate:
        for m in lp.fetches:
            buf = np.empty(m.size, dtype=low.arrays[m.slot].dtype)
            low.arrays[m.slot]._win.get_regions(m.peer, list(m.regions), buf)
            bufs.append(buf)
    else:
        bufs = {(task.piece, k): _get_elements(low.arrays[stmt.accesses[k].slot], ref, task.shape)
                for task in lp.tasks for k, ref in enumerate(task.refs) if ref.msg >= 0 and k != W}
    if plan.any_fetch:
        _barrier(low)
    combine, reducer = _combine(stmt)
    axes = plan.reduce_axes
    results = []
    for task in lp.tasks:
        value = evaluate(low.prog, _TaskContext(low, plan, task, flats, bufs, aggregate))
        value = np.broadcast_to(value, task.shape)
        if axes:
            value = reducer.reduce(value, axis=axes, keepdims=True)
        elif np.may_share_memory(value, wflat):
            value = value.copy()
        results.append(value)
    if plan.accumulate:
        _accumulate(plan, lp, warr, wflat, results, aggregate)
        return
    if plan.any_writeback:
        _barrier(low)
    wbufs = [np.empty(m.size, dtype=warr.dtype) for m in lp.writebacks] if aggregate else []
    for task, value in zip(lp.tasks, results):
        ref = task.refs[W]
        if ref.msg < 0:
            target = strided(wflat, ref.offset, ref.strides, task.shape)
        elif aggregate:
            target = strided(wbufs[ref.msg], ref.boffset, ref.bstrides, task.shape)
        else:
            _put_elements(warr, ref, task.shape, value)
            continue
        if axes:
            target = target[tuple(slice(0, 1) if a in axes else slice(None) for a in range(len(task.shape)))]
            target[...] = combine(target, value)
        else:
            target[...] = value
    for m, buf in zip(lp.writebacks, wbufs):
        warr._win.put_regions(m.peer, list(m.regions), buf)
    if plan.any_writeback:
        _barrier(low)


def _reduced(target, axes, ndim):
    return target[tuple(slice(0, 1) if a in axes else slice(None) for a in range(ndim))]


def _accumulate(plan, lp, warr, wflat, results, aggregate: bool) -> None:
    """Send each task's partial results to the owners of its written elements:
    combined per message buffer, one ``accumulate_regions`` per message (one
    accumulate per element in baseline mode); own elements are combined after
    the closing barrier."""
    stmt, W, axes, op = plan.stmt, plan.stmt.write, plan.reduce_axes, plan.accumulate
    combine, reducer = _combine(stmt)
    negate = stmt.reduce == "subtract"
    if plan.any_writeback:
        comm.barrier([warr._win])
    wbufs = [np.full(m.size, _identity(op, warr.dtype)) for m in lp.writebacks] if aggregate else []
    own = []
    for task, value in zip(lp.tasks, results):
        ref = task.refs[W]
        if ref.msg < 0:
            own.append((task, value))
        elif aggregate:
            target = _reduced(strided(wbufs[ref.msg], ref.boffset, ref.bstrides, task.shape), axes, len(task.shape))
            target[...] = reducer(target, value)
        else:
            data = np.ascontiguousarray(value, dtype=warr.dtype).reshape(-1)
            data = -data if negate else data
            for k, o in enumerate(expand(ref.offset, value.shape, ref.strides).tolist()):
                warr._win.accumulate(ref.owner, o, data[k:k + 1], op)
    for m, buf in zip(lp.writebacks, wbufs):
        warr._win.accumulate_regions(m.peer, list(m.regions), -buf if negate else buf, op)
    if plan.any_writeback:
        comm.barrier([warr._win])
    for task, value in own:
        ref = task.refs[W]
        target = _reduced(strided(wflat, ref.offset, ref.strides, task.shape), axes, len(task.shape))
        target[...] = combine(target, value)


def _put_elements(arr, ref, shape, value) -> None:
    """Baseline write-back: one message per element."""
    offs = expand(ref.offset, shape, ref.strides)
    data = np.ascontiguousarray(np.broadcast_to(value, shape), dtype=arr.dtype).reshape(-1)
    for k, o in enumerate(offs.tolist()):
        arr._win.put(ref.owner, o, data[k:k + 1])


class _InspectorContext:
    def __init__(self, low, plan, lp, bufs) -> None:
        self.low, self.plan, self.lp, self.bufs = low, plan, lp, bufs
        self._pts = None

    def access(self, k):
        g = self.lp.gathers[k]
        arr = self.low.arrays[self.plan.stmt.accesses[k].slot]
        out = np.empty(self.lp.count, dtype=arr.dtype)
        out[g.local_pos] = arr.local.reshape(-1)[g.local_off]
        for i, pos, bpos in g.remote:
            out[pos] = self.bufs[i][bpos]
        return out

    def points(self):
        if self._pts is None:
            self._pts = [p[self.lp.iters] for p in box_points(self.plan.stmt)]
        return self._pts

    def replicated(self, arr):
        return arr.reshape(-1)[self.lp.iters]

    def affine(self, coefs, const):
        out = np.full(self.lp.count, const, dtype=np.int64)
        for a, p in zip(coefs, self.points()):
            out += a * p
        return out


def _run_inspector(low, plan, aggregate: bool) -> None:
    me = comm.here()
    lp = plan.locales[me]
    stmt = plan.stmt
    if plan.any_fetch:
        _barrier(low)
    bufs = []
    for m in lp.fetches:
        arr = low.arrays[m.slot]
        buf = np.empty(m.size, dtype=arr.dtype)
        if aggregate:
            arr._win.get_indexed(m.peer, m.offsets, buf)
        else:
            for k, o in enumerate(m.offsets.tolist()):
                arr._win.get(m.peer, o, buf[k:k + 1])
        bufs.append(buf)
    if plan.any_fetch:
        _barrier(low)
    if not lp.count:
        return
    value = np.broadcast_to(evaluate(low.prog, _InspectorContext(low, plan, lp, bufs)), (lp.count,))
    warr = low.arrays[stmt.accesses[stmt.write].slot]
    wflat = warr.local.reshape(-1)
    offs = lp.gathers[stmt.write].local_off
    combine, reducer = _combine(stmt)
    if combine is None:
        wflat[offs] = value
        return
    order = np.argsort(offs, kind="stable")
    uniq, starts = np.unique(offs[order], return_index=True)
    part = reducer.reduceat(np.asarray(value)[order], starts)
    wflat[uniq] = combine(wflat[uniq], part)

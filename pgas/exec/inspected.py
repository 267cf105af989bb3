"""Running an inspector plan (:mod:`pgas.plan.inspector`): statements whose subscripts
are not separable (``A[i + j]``), planned from the iterations this locale owns.

Such a plan lists the elements it reads from each owner, but an owner does not
know who reads from it, so the fetch sits between two global barriers: the first
makes earlier writes visible, the second keeps any locale from writing before
every locale has read.  Fetches go as one indexed get per owner (one get per
element in baseline mode); values are computed on this locale's iterations and
written, or combined in NumPy's order for ``+=``-style statements, a chunk of at
most :data:`~pgas.plan.inspector.CHUNK` iterations at a time where the plan's chunks may
be cut (:func:`pgas.plan.inspector.whole_from`: a one-to-one plain write, or a
reduction whose reduced loop variables are the innermost), so the per-iteration
index arrays and temporaries are a chunk's; the fetched buffers hold the distinct
remote elements read.
"""

from __future__ import annotations

import numpy as np

from .. import comm
from ..plan import inspector
from . import tasks
from .tasks import combiners, evaluate


def _barrier(low) -> None:
    """A global barrier that makes earlier writes to this statement's arrays visible."""
    comm.barrier([a.store.window for a in low.arrays])


class _InspectorContext:
    """The leaf values of one :class:`~pgas.plan.inspector.Chunk` of iterations."""

    def __init__(self, low, plan, chunk, bufs) -> None:
        self.low, self.plan, self.chunk, self.bufs = low, plan, chunk, bufs

    def access(self, k):
        g = self.chunk.gathers[k]
        arr = self.low.arrays[self.plan.stmt.accesses[k].slot]
        out = np.empty(self.chunk.count, dtype=arr.dtype)
        out[g.local_pos] = arr.store.storage[g.local_off]
        for i, pos, bpos in g.remote:
            out[pos] = self.bufs[i][bpos]
        return out

    def points(self):
        return list(self.chunk.points)

    def replicated(self, arr):
        return arr.reshape(-1)[self.chunk.iters]

    def affine(self, coefs, const):
        out = np.full(self.chunk.count, const, dtype=np.int64)
        for a, p in zip(coefs, self.points()):
            out += a * p
        return out


def run_inspector(low, plan, aggregate: bool) -> None:
    """Execute this locale's inspector ``plan``: fetch the listed elements between two
    global barriers, compute, and write (or combine) this locale's own elements."""
    lp = plan.inspector
    stmt = plan.stmt
    _barrier(low)
    bufs = []
    for m in lp.fetches:
        arr = low.arrays[m.slot]
        buf = np.empty(m.size, dtype=arr.dtype)
        if aggregate:
            arr.store.window.get_indexed(m.peer, m.offsets, buf)
        else:
            for k, o in enumerate(m.offsets.tolist()):
                arr.store.window.get(m.peer, o, buf[k:k + 1])
        bufs.append(buf)
    _barrier(low)
    if not lp.count:
        return
    wflat = low.arrays[stmt.accesses[stmt.write].slot].store.storage
    combine, reducer = combiners(stmt)
    for chunk in lp.chunks(min(inspector.CHUNK, tasks.STRIP)):
        offs = chunk.gathers[stmt.write].local_off
        value = np.broadcast_to(evaluate(low.prog, _InspectorContext(low, plan, chunk, bufs)), (chunk.count,))
        if combine is None:
            wflat[offs] = value
            continue
        order = np.argsort(offs, kind="stable")
        uniq, starts = np.unique(offs[order], return_index=True)
        part = reducer.reduceat(np.asarray(value)[order], starts)
        wflat[uniq] = combine(wflat[uniq], part)


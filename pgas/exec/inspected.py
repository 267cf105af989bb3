"""Running an inspector plan (:mod:`pgas.plan.inspector`): statements whose subscripts
are not separable (``A[i + j]``), planned from the iterations this locale owns.

Such a plan lists the elements it reads from each owner, but an owner does not
know who reads from it, so the fetch sits between two global barriers: the first
makes earlier writes visible, the second keeps any locale from writing before
every locale has read.  Fetches go as one indexed get per owner (one get per
element in baseline mode); values are computed on this locale's iterations and
written, or combined in NumPy's order for ``+=``-style statements.  A plain write of
more than :data:`~pgas.exec.tasks.LARGE` iterations that reads no array it writes is
computed and stored a box of :data:`~pgas.exec.tasks.STRIP` iterations at a time, so
its temporaries are a few boxes (the plan's index arrays are the plan's).
"""

from __future__ import annotations

import numpy as np

from .. import comm
from . import tasks
from .tasks import combiners, evaluate


def _barrier(low) -> None:
    """A global barrier that makes earlier writes to this statement's arrays visible."""
    comm.barrier([a.store.window for a in low.arrays])


class _InspectorContext:
    """The leaf values of iterations ``lo:hi`` of this locale's (all by default)."""

    def __init__(self, low, plan, lp, bufs, lo=0, hi=None) -> None:
        self.low, self.plan, self.lp, self.bufs = low, plan, lp, bufs
        self.lo, self.hi = lo, lp.count if hi is None else hi

    def _part(self, pos):
        """The slice of the sorted positions ``pos`` that fall in ``lo:hi``."""
        return slice(*np.searchsorted(pos, [self.lo, self.hi]))

    def access(self, k):
        g = self.lp.gathers[k]
        arr = self.low.arrays[self.plan.stmt.accesses[k].slot]
        out = np.empty(self.hi - self.lo, dtype=arr.dtype)
        part = self._part(g.local_pos)
        out[g.local_pos[part] - self.lo] = arr.store.storage[g.local_off[part]]
        for i, pos, bpos in g.remote:
            part = self._part(pos)
            out[pos[part] - self.lo] = self.bufs[i][bpos[part]]
        return out

    def points(self):
        return [p[self.lo:self.hi] for p in self.lp.points]

    def replicated(self, arr):
        return arr.reshape(-1)[self.lp.iters[self.lo:self.hi]]

    def affine(self, coefs, const):
        out = np.full(self.hi - self.lo, const, dtype=np.int64)
        for a, p in zip(coefs, self.points()):
            out += a * p
        return out


def _reads_apart(stmt) -> bool:
    """True if ``stmt`` reads no array it writes (so values stored by one box of iterations
    are read by no later box: every box reads the values from before the statement)."""
    slot = stmt.accesses[stmt.write].slot
    return all(x.slot != slot for k, x in enumerate(stmt.accesses) if k != stmt.write)


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
    warr = low.arrays[stmt.accesses[stmt.write].slot]
    wflat = warr.store.storage
    offs = lp.gathers[stmt.write].local_off
    combine, reducer = combiners(stmt)
    if combine is None and lp.count > tasks.LARGE and _reads_apart(stmt):      # a box of iterations at a time
        for lo in range(0, lp.count, tasks.STRIP):
            hi = min(lo + tasks.STRIP, lp.count)
            wflat[offs[lo:hi]] = np.broadcast_to(evaluate(low.prog, _InspectorContext(low, plan, lp, bufs, lo, hi)),
                                                 (hi - lo,))
        return
    value = np.broadcast_to(evaluate(low.prog, _InspectorContext(low, plan, lp, bufs)), (lp.count,))
    if combine is None:
        wflat[offs] = value
        return
    order = np.argsort(offs, kind="stable")
    uniq, starts = np.unique(offs[order], return_index=True)
    part = reducer.reduceat(np.asarray(value)[order], starts)
    wflat[uniq] = combine(wflat[uniq], part)


"""Running a plan in strips (:mod:`pgas.plan.strips`): fetch strip k + 1 while computing strip k.

Used when a statement's reads need more aggregation buffer on this locale than
``pg.config(buffer_limit=...)`` allows.  Each strip's fetches are started with
request-based operations (so completing strip k does not wait for strip k + 1),
with each message's protocol chosen as for a whole statement (but no bounding
reads: their scratch would break the bound); at most two strips' buffers exist
at once.  The synchronisation with peers is the
statement's, unchanged: strips only reorder this locale's own work.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..comm.window import wait_requests
from ..plan.strips import footprint, strips
from . import settings, transfer

_cache: dict = {}
CACHE = 256


def strip_plan(low, plan):
    """``(pieces, strips)`` of ``plan`` under the buffer limit, or None (cached per plan)."""
    if not plan.fetches or plan.stmt.clips:          # clipped tasks run whole (pgas.exec.clipped)
        return None
    sizes = tuple(a.dtype.itemsize for a in low.arrays)
    limit = settings.get("buffer_limit")
    if footprint(plan, sizes) <= limit:
        return None
    key = (id(plan), sizes, limit)
    got = _cache.get(key)
    if got is None or got[0] is not plan:
        got = (plan, strips(plan, sizes, limit))
        if len(_cache) >= CACHE:
            _cache.clear()
        _cache[key] = got
    return got[1]


def _start(low, strip):
    bufs, reqs, finish, nbytes = [], [], [], 0
    for m in strip.fetches:
        arr = low.arrays[m.slot]
        buf = np.empty(m.size, dtype=arr.dtype)
        nbytes += buf.nbytes
        transfer.hold(buf.nbytes)
        f = transfer.start_get(arr._win, m, buf, arr.dtype.itemsize, reqs, room=[0])
        if f is not None:
            finish.append(f)
        bufs.append(buf)
    return bufs, reqs, finish, nbytes


def run_strips(low, plan, striped, flats):
    """Fetch and compute ``plan`` strip by strip; returns ``(plan of the sub-tasks, results)``,
    the plan's write references still pointing into its own write-back buffers."""
    from .run import _TaskContext, _combine, evaluate

    pieces, parts = striped
    wplan = dataclasses.replace(plan, pieces=pieces, tasks=tuple(t for s in parts for t in s.tasks))
    stmt = plan.stmt
    wflat = flats[stmt.accesses[stmt.write].slot]
    _, reducer = _combine(stmt)
    axes = plan.reduce_axes
    results = []
    pending = _start(low, parts[0])
    for k, s in enumerate(parts):
        bufs, reqs, finish, nbytes = pending
        wait_requests(reqs)
        for f in finish:
            f()
        if k + 1 < len(parts):
            pending = _start(low, parts[k + 1])             # in flight while strip k computes
        for task in s.tasks:
            value = evaluate(low.prog, _TaskContext(low, wplan, task, flats, bufs, True))
            value = np.broadcast_to(value, task.shape)
            if axes:
                value = reducer.reduce(value, axis=axes, keepdims=True)
            elif np.may_share_memory(value, wflat) or any(np.may_share_memory(value, b) for b in bufs):
                value = value.copy()                        # the strip's buffers go now
            results.append(value)
        transfer.hold(-nbytes)
    return wplan, results

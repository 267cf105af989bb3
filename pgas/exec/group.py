"""Several statements with ONE exchange phase (the polyshift; see docs/polyshift.md).

Built from the same pieces as a statement alone (:mod:`pgas.exec.run`): the same
notices (:mod:`pgas.exec.notices`), the same non-blocking multi-region gets and the
same task evaluation (:mod:`pgas.exec.tasks`), only shared by all the statements of a
group.
"""

from __future__ import annotations

import math

import numpy as np

from .. import comm
from ..comm import check, trace
from . import ghostread, settings, transfer
from .notices import DONE_READ, READY, sync_windows
from .tasks import TaskContext, evaluate, evaluate_boxes, large, strided


def groupable(plan) -> bool:
    """True if ``plan`` can join :func:`run_together`: a pieces plan whose writes are all
    local (owner computes by the write), so only its fetches communicate."""
    return (plan.kind == "pieces" and plan.stmt.reduce is None and not plan.stmt.clips and not plan.writebacks
            and not plan.writers)


def fits(items) -> bool:
    """True if :func:`run_together`, which holds the fetch buffers of all the statements
    ``[(low, plan), ...]`` at once, stays within ``pg.config(buffer_limit=...)`` on
    EVERY locale: decided from replicated figures only (each read fetches at most
    one element per iteration of its locale, and no locale owns more of the
    written array than locale 0's share), so every locale takes the same path with
    no agreement.  A group that may not fit runs statement by statement instead,
    each strip-mined to the limit as a statement alone is; its statements write
    distinct arrays that none of them reads, so the order does not change the
    result."""
    limit, need = settings.get("buffer_limit"), 0
    for low, _ in items:
        stmt = low.stmt
        w = stmt.accesses[stmt.write]
        most = math.prod(m.local_size(0) for m in low.arrays[w.slot].layout.maps)
        per = min(stmt.size, most)
        for k, x in enumerate(stmt.accesses):
            if k != stmt.write:
                need += per * low.arrays[x.slot].dtype.itemsize
        if need > limit:
            return False
    return True


def run_together(items) -> None:
    """Run several statements ``[(low, plan), ...]`` (every plan :func:`groupable`) with
    ONE exchange phase: one READY / DONE_READ notice per peer for them all, every fetch
    towards one (window, target) merged into one message (their regions back to back),
    all in flight together with one flush per (window, target); then every value is
    computed before any is stored.  Collective over the union of the plans' peers."""
    groups: dict = {}                       # (window id, peer) -> [window, peer, [(item, fetch)], size]
    arrays = {}
    for k, (low, plan) in enumerate(items):
        for a in low.arrays:
            arrays[id(a.store.window)] = a.store.window
        for j, m in enumerate(plan.fetches):
            win = low.arrays[m.slot].store.window
            g = groups.setdefault((id(win), m.peer), [win, m.peer, [], 0])
            g[2].append((k, j, g[3], m))
            g[3] += m.size
    sources = sorted({m.peer for _, p in items for m in p.fetches})
    readers = sorted({r for _, p in items for r in p.readers})
    if sources or readers:
        sync_windows(arrays.values())
    garrs = _ghosted(items)                 # READY carries their write versions (replicated list)
    ready, vers = comm.expect_values(sources, READY, len(garrs)) if garrs else (comm.expect(sources, READY), None)
    readers_done = comm.expect(readers, DONE_READ)
    sent = (comm.notify_values(readers, READY, ghostread.versions(garrs)) if garrs
            else comm.notify(readers, READY))
    comm.wait(ready)
    bufs = [[None] * len(p.fetches) for _, p in items]
    served = [ghostread.serve(low, p, sources, vers, garrs) if garrs else {} for low, p in items]
    if any(served) and not check.enabled:           # served fetches move no message
        groups = _regroup(items, served)
        for k, got in enumerate(served):
            for j, buf in got.items():
                bufs[k][j] = buf
    held = 0
    for win, peer, parts, size in groups.values():
        buf = np.empty(size, dtype=win.dtype)
        held += buf.nbytes
        transfer.hold(buf.nbytes)                   # counted against the buffer limit (see fits)
        regions = [r for _, _, _, m in parts for r in m.regions]
        win.get_regions(peer, regions, buf, flush=False)
        for k, j, start, m in parts:
            bufs[k][j] = buf[start:start + m.size]
    transfer.flush_all([(g[0], g[1]) for g in groups.values()])
    sent += comm.notify(sources, DONE_READ)
    stale = None
    if check.enabled and any(served):                # check mode: served fetches were fetched too
        for k, (low, p) in enumerate(items):
            stale = stale or ghostread.verify(low, p, served[k], bufs[k])
    written = {id(low.arrays[low.stmt.accesses[low.stmt.write].slot]) for low, _ in items}
    results = []
    t0 = trace.on and trace.now()
    for k, (low, plan) in enumerate(items):
        flats = [a.store.storage for a in low.arrays]
        W = low.stmt.accesses[low.stmt.write].slot
        reads_written = any(id(a) in written for j, a in enumerate(low.arrays) if j != W)
        vals = []
        for task in plan.tasks:
            ctx = TaskContext(low, plan, task, flats, bufs[k], True)
            if large(low.prog, task.shape):
                vals.append(evaluate_boxes(low.prog, ctx, task.shape))     # a new array: bounded temporaries
                continue
            value = np.broadcast_to(evaluate(low.prog, ctx), task.shape)
            if reads_written or np.may_share_memory(value, flats[W]):
                value = value.copy()
            vals.append(value)
        results.append(vals)
    if t0:
        trace.add("kernel", "NumPy tasks", t0)
    transfer.hold(-held)
    comm.wait(readers_done)                           # nobody reads my memory any more
    for (low, plan), vals in zip(items, results):
        stmt = plan.stmt
        wflat = low.arrays[stmt.accesses[stmt.write].slot].store.storage
        for task, value in zip(plan.tasks, vals):
            ref = task.refs[stmt.write]
            strided(wflat, ref.offset, ref.strides, task.shape)[...] = value
    comm.wait(sent)
    if garrs and check.enabled:
        comm.agree(stale)                             # a ghost read differed from its owner's elements
    comm.statement_done()


def _ghosted(items) -> list:
    """The distinct arrays with ghost cells of all the statements, in order (replicated)."""
    out, seen = [], set()
    for low, _ in items:
        for a in ghostread.ghosted(low):
            if id(a) not in seen:
                seen.add(id(a))
                out.append(a)
    return out


def _regroup(items, served) -> dict:
    """The messages of the fetches not in ``served``: ``(window id, peer) -> [window, peer,
    [(item, fetch, start, message)], size]``."""
    groups: dict = {}
    for k, (low, plan) in enumerate(items):
        for j, m in enumerate(plan.fetches):
            if j in served[k]:
                continue
            win = low.arrays[m.slot].store.window
            g = groups.setdefault((id(win), m.peer), [win, m.peer, [], 0])
            g[2].append((k, j, g[3], m))
            g[3] += m.size
    return groups

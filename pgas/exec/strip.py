"""Running a plan in strips (:mod:`pgas.plan.strips`): fetch strip k + 1 while computing strip k.

How many strips: the overlap model's choice (:mod:`pgas.plan.overlap`, with the
calibrated figures of :mod:`pgas.exec.calibration`), never fewer than a statement's
reads need under ``pg.config(buffer_limit=...)`` (each strip gets half the limit:
two are in flight at once); ``pg.config(strips=N)`` pins the count (still never
fewer than the limit forces).  The choice is made once per plan and cached.
Each strip's fetches are started with request-based operations (so completing
strip k does not wait for strip k + 1), with each message's protocol chosen as
for a whole statement (but no bounding reads: their scratch would break the
bound); at most two strips' buffers exist at once.  The synchronisation with
peers is the statement's, unchanged: strips only reorder this locale's own work.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import calibration as calibrate
from ..comm.window import wait_requests
from ..plan import overlap
from ..plan.strips import forced, strips
from . import ablation, fuse, interior, settings, transfer
from .tasks import TaskContext, combiners, evaluate, evaluate_boxes, evaluate_reduced, large, strided

_cache: dict = {}
CACHE = 256


def _ops(prog) -> int:
    """Operations per element of a task's program (its calls)."""
    if not isinstance(prog, tuple) or not prog or prog[0] != "call":
        return 0
    return 1 + sum(_ops(a) for a in prog[2])


def decide(low, plan, optional: bool = True):
    """``(choice, striped)``: the :class:`pgas.plan.overlap.Choice` of strip count for
    ``plan`` and its ``(pieces, strips)`` (None when it runs whole); ``optional=False``
    strips only when the buffer limit (or a pin) asks for it.  Cached per plan."""
    sizes = tuple(a.dtype.itemsize for a in low.arrays)
    limit, pin = settings.get("buffer_limit"), settings.get("strips")
    model = calibrate.current()
    key = (id(plan), sizes, limit, pin, optional, id(model))
    got = _cache.get(key)
    if got is None or got[0] is not plan or got[3] is not model:
        got = (plan, *_decide(low, plan, sizes, limit, None if pin == "auto" else pin, optional, model), model)
        if len(_cache) >= CACHE:
            _cache.clear()
        _cache[key] = got
    return got[1], got[2]


def _decide(low, plan, sizes, limit, pin, optional, model):
    k_min = forced(plan, sizes, limit)
    if pin is None and not optional:
        choice = overlap.Choice(k_min, "none" if k_min == 1 else "buffer limit", k_min, ())
    elif pin is None and model.overlap <= 0:         # no overlap: no count beats k_min (nothing to price)
        choice = overlap.Choice(k_min, "model" if k_min == 1 else "buffer limit", k_min, ())
    else:
        ops = _ops(low.prog) + (plan.stmt.reduce is not None)
        choice = overlap.choose(model, overlap.work(plan, sizes, ops), k_min, pin)
    return choice, (strips(plan, sizes, limit, choice.k) if choice.k > 1 else None)


def choices() -> list:
    """``(choice, strips made)`` of the plans decided since :func:`clear` (for
    benchmarks and calibration)."""
    return [(got[1], len(got[2][1]) if got[2] is not None else 1) for got in _cache.values()]


def clear() -> None:
    """Forget the cached strip choices."""
    _cache.clear()


def strip_plan(low, plan, optional: bool = True):
    """``(pieces, strips)`` of ``plan`` (see :func:`decide`), or None to run it whole."""
    if not plan.fetches or plan.stmt.clips:          # clipped tasks run whole (pgas.exec.clipped)
        return None
    return decide(low, plan, optional)[1]


def explain(low, plan) -> str | None:
    """A line for ``pg.explain``: the strip count of ``plan`` and why, or None for a plan
    without remote reads."""
    if plan.kind != "pieces" or not plan.fetches:
        return None
    if plan.stmt.clips:
        return "strips: 1 (a clipped domain runs whole)"
    from . import ghostread

    choice, striped = decide(low, plan, not ghostread.ghosted(low))
    n = sum(1 for st in striped[1] if st.fetches) if striped is not None else 1
    local = len(striped[1]) - n if striped is not None else 0
    got = f"{n} strips" if striped is not None else "1 strip (no strip-mining)"
    got += f" (and {local} of local work only)" if local else ""
    if n != choice.k:
        got += f" (asked for {choice.k}: the tasks cut no finer)" if n < choice.k else f" (asked for {choice.k})"
    limit = settings.get("buffer_limit")
    if choice.why == "none":
        why = "arrays with ghost cells are fetched whole (their reads may be served from the ghosts)"
    elif choice.why == "pinned":
        why = f"pinned by pg.config(strips={choice.k})"
    elif choice.why == "buffer limit":
        why = f"the buffer limit of {limit} bytes forces at least {choice.k_min}"
        why += f" (pg.config(strips={settings.get('strips')}) asked fewer)" if settings.get("strips") != "auto" else ""
    elif not choice.times:
        model = calibrate.current()
        why = (f"overlap model ({model.source}): no overlap measured (overlap {model.overlap:.2f}), so more "
               "strips cannot pay")
    else:
        t1, tk = choice.predicted(choice.k_min), choice.predicted(choice.k)
        model = calibrate.current()
        why = (f"overlap model ({model.source}; overlap {model.overlap:.2f}): predicted "
               f"{tk * 1e3:.3g} ms" + (f" vs {t1 * 1e3:.3g} ms in {choice.k_min}" if choice.k != choice.k_min else
                                        f", no count predicted {overlap.MARGIN:.0%} faster"))
        if choice.k_min > 1:
            why += f"; the buffer limit forces at least {choice.k_min}"
    return f"strips: {got}; {why}"


def _start(low, strip):
    bufs, reqs, finish, nbytes = [], [], [], 0
    for m in strip.fetches:
        arr = low.arrays[m.slot]
        buf = np.empty(m.size, dtype=arr.dtype)
        nbytes += buf.nbytes
        transfer.hold(buf.nbytes)
        f = transfer.start_get(arr.store.window, m, buf, arr.dtype.itemsize, reqs, room=[0])
        if f is not None:
            finish.append(f)
        bufs.append(buf)
    return bufs, reqs, finish, nbytes


def run_strips(low, plan, striped, flats, inplace: bool = False):
    """Fetch and compute ``plan`` strip by strip; returns ``(plan of the sub-tasks, results)``,
    the plan's write references still pointing into its own write-back buffers.  Tasks
    with no remote reads are computed first, while the first strip is in flight,
    unless :data:`pgas.exec.interior.MODE` is ``"off"`` (the default).  With ``inplace``
    (:func:`pgas.exec.fuse.in_place`) a task's values are stored into its own written
    elements as soon as they are computed (its result None), so no strip's values
    outlive its buffers: memory stays within two strips' buffers."""
    pieces, parts = striped
    wplan = dataclasses.replace(plan, pieces=pieces, tasks=tuple(t for s in parts for t in s.tasks))
    stmt = plan.stmt
    wflat = flats[stmt.accesses[stmt.write].slot]
    _, reducer = combiners(stmt)
    axes = plan.reduce_axes
    dtypes = [low.arrays[x.slot].dtype for x in stmt.accesses]
    results = [None] * len(wplan.tasks)

    def compute(i, task, bufs):
        ctx = TaskContext(low, wplan, task, flats, bufs, True,
                          ablation.local_copies(low, wplan, i))   # privatise=False: own reads through the window
        ref = task.refs[stmt.write]
        target = strided(wflat, ref.offset, ref.strides, task.shape) if inplace and ref.msg < 0 else None
        value = fuse.evaluate(low.prog, ctx, task.shape, dtypes, target)   # None: the NumPy path
        if value is fuse.WRITTEN:
            return                                          # a kernel stored it in place
        if value is None and large(low.prog, task.shape):           # bounded temporaries
            results[i] = (evaluate_reduced(low.prog, ctx, task.shape, axes, reducer) if axes
                          else evaluate_boxes(low.prog, ctx, task.shape, target))
            return
        value = evaluate(low.prog, ctx) if value is None else value
        value = np.broadcast_to(value, task.shape)
        if axes:
            value = reducer.reduce(value, axis=axes, keepdims=True)
        elif target is not None:
            target[...] = value                             # stored now: the strip's buffers go next
            return
        elif np.may_share_memory(value, wflat) or any(np.may_share_memory(value, b) for b in bufs):
            value = value.copy()                            # the strip's buffers go now
        results[i] = value

    local = interior.local_reads(wplan) if interior.MODE != "off" else []
    pending = _start(low, parts[0])
    for i in local:                                         # no remote reads: while strip 0 is in flight
        compute(i, wplan.tasks[i], [])
    local, first = set(local), 0
    for k, s in enumerate(parts):
        bufs, reqs, finish, nbytes = pending
        wait_requests(reqs)
        for f in finish:
            f()
        if k + 1 < len(parts):
            pending = _start(low, parts[k + 1])             # in flight while strip k computes
        for i, task in enumerate(s.tasks, first):
            if i not in local:
                compute(i, task, bufs)
        first += len(s.tasks)
        transfer.hold(-nbytes)
    return wplan, results

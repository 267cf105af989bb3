"""Running one locale's plan: fetch, compute, write back, synchronising with peers only.

A statement synchronises with the locales it exchanges data with, never with
all of them (the plan names its peers: the owners it reads from or writes to,
and the ``readers`` and ``writers`` of its own memory), by zero-byte notices:

1. Every locale tells its readers that its data is ready (its earlier
   statements are complete), waits for the same word from the owners it reads
   from, starts ALL its gets (one per planned message, in flight together),
   completes them with one flush per target, and tells those owners it is done
   reading.
2. It computes every task with NumPy on strided views: local accesses view the
   local storage directly (``as_strided``, no per-element locality test),
   remote ones view their message buffer.  All values are computed before
   anything is written, so ``A[1:] = A[:-1]`` reads the old values.  The tasks
   with local reads only (the interior) may be computed while the owners are
   not yet ready or while the fetches are in flight (:mod:`pgas.exec.interior`,
   off by default).
3. Before writing, it waits until its readers are done.  A locale that writes
   back into another (``owner="cost"`` plans) waits for that owner's word that
   its own readers are done, puts (or accumulates) all its messages, completes
   them and says so; the owner waits for those words before it combines its
   own elements and before the statement ends.

So when a statement returns on a locale, every write into its memory is
complete and nobody still reads it, and any later statement sees the results:
a locale that is no peer of a statement never waits for it.  Inspector plans
(non-separable subscripts) do not know their readers and keep two global
barriers around the fetch.  In baseline mode (``pg.config(aggregate=False)``)
the transfers move one element per message instead, as an unoptimised PGAS
runtime does.  (Inspector plans run in :mod:`pgas.exec.inspected`; step 3's writes are
:mod:`pgas.exec.writeback`'s.)
"""

from __future__ import annotations

import numpy as np

from .. import comm
from ..comm import check, trace
from ..plan.transfers import expand
from . import ablation, clipped, fuse, ghostread, interior, persistent, settings
from .inspected import run_inspector
from .notices import DONE_READ, DONE_WRITE, READY, WRITE_OK, sync_windows
from .strip import run_strips, strip_plan
from .tasks import TaskContext, combiners, evaluate, evaluate_boxes, evaluate_reduced, large, strided
from .writeback import accumulate_results, write_results


def _get_elements(arr, ref, shape, clip=()) -> np.ndarray:
    """Baseline: one message per element of the access (repeats included; inside
    the clips only, for a piece of a clipped domain)."""
    offs = expand(ref.offset, shape, ref.strides)
    out = np.zeros(len(offs), dtype=arr.dtype) if clip else np.empty(len(offs), dtype=arr.dtype)
    ks = np.flatnonzero(np.broadcast_to(clipped.mask(shape, clip), shape)).tolist() if clip else range(len(offs))
    for k in ks:
        arr.store.window.get(ref.owner, int(offs[k]), out[k:k + 1])
    return out.reshape(shape)


def run(low, plan, aggregate: bool) -> None:
    """Execute this locale's ``plan`` (made from ``low``); collective over its peers."""
    if plan.kind == "inspector":
        ablation.test_affinity(plan, tuple(a.layout for a in low.arrays))   # forall=False: every iteration's owner
        run_inspector(low, plan, aggregate)
    elif aggregate and settings.fast_paths() and persistent.qualifies(low, plan):
        try:
            persistent.get(low, plan).run(low, compute_tasks, write_results)     # persistent two-sided transfers
        finally:            # an error raised here alone (a warning made an error): its transfers are
            comm.statement_done()     # complete, so it is done, as on the others
        return
    else:
        try:
            _run_pieces(low, plan, aggregate)
        finally:            # an error raised here alone: the statement's messages are complete
            comm.statement_done()     # (see _run_pieces), so it is done, as on the others
        return
    comm.statement_done()                 # one-sided operations towards here may now proceed


#: What a plan's runs share, worked out on its first run: ``id(plan)`` ->
#: ``(plan, sources, targets, peers)`` (holding the plan: its id is not reused meanwhile).
_statics: dict = {}
STATICS = 1024


def _static(plan) -> tuple:
    got = _statics.get(id(plan))
    if got is not None and got[0] is plan:
        return got
    sources = sorted({m.peer for m in plan.fetches})
    targets = sorted({m.peer for m in plan.writebacks})
    got = (plan, sources, targets, bool(sources or targets or plan.readers or plan.writers),
           fuse.in_place(plan, None, plan.reduce_axes, True))
    if len(_statics) >= STATICS:
        _statics.clear()
    _statics[id(plan)] = got
    return got


def _run_pieces(low, plan, aggregate: bool) -> None:
    stmt = plan.stmt
    W = stmt.write
    warr = low.arrays[stmt.accesses[W].slot]
    ablation.test_affinity(plan, tuple(a.layout for a in low.arrays))   # forall=False: every iteration's owner
    flats = [a.store.storage for a in low.arrays]
    wflat = flats[stmt.accesses[W].slot]
    _, sources, targets, peers, inplace = _static(plan)
    wins = {id(a.store.window): a.store.window for a in low.arrays}.values() if peers else ()
    if peers:
        sync_windows(wins)                                   # my earlier stores, visible to my readers
    garrs = ghostread.ghosted(low)                    # READY carries their write versions
    ready, vers = comm.expect_values(sources, READY, len(garrs)) if garrs else (comm.expect(sources, READY), None)
    readers_done = comm.expect(plan.readers, DONE_READ)
    writes_done = comm.expect(plan.writers, DONE_WRITE)
    sent = (comm.notify_values(plan.readers, READY, ghostread.versions(garrs)) if garrs
            else comm.notify(plan.readers, READY))
    striped = strip_plan(low, plan, not garrs) if aggregate else None
    dtypes = [low.arrays[x.slot].dtype for x in stmt.accesses]
    served, stale, results, early = {}, None, [None] * len(plan.tasks), []
    failed: list = []             # an error raised on this locale alone (a warning made an error by a
    #                               filter for this module only, a user's error callback): the statement's
    #                               notices and write-backs still go out, so no peer waits for them,
    #                               and the error is raised at the end
    when = interior.when(plan, ready, aggregate and striped is None and not stmt.clips)
    if when == "idle":                                # the peers are not ready: compute what is local meanwhile
        early = interior.local_reads(plan)
        _guarded(failed, compute_tasks, low, plan, early, flats, None, inplace, results)
    comm.wait(ready)
    if striped is not None:
        plan, results = run_strips(low, plan, striped, flats, inplace)     # fetched and computed strip by strip
    elif aggregate:
        served = ghostread.serve(low, plan, sources, vers) if garrs else {}
        bufs, complete = (interior.start_fetch(low, plan, None if check.enabled else served) if plan.fetches
                          else ([], _nothing))
        if when == "in flight":                       # the interior, while the halo is in flight
            early = interior.local_reads(plan)
            _guarded(failed, compute_tasks, low, plan, early, flats, bufs, inplace, results)
        complete()                                    # the halo has arrived
        stale = ghostread.verify(low, plan, served, bufs) if served and check.enabled else None
    else:
        bufs = {(task.piece, k): _get_elements(low.arrays[stmt.accesses[k].slot], ref, task.shape, task.clip)
                for task in plan.tasks for k, ref in enumerate(task.refs) if ref.msg >= 0 and k != W}
    sent += comm.notify(sources, DONE_READ)
    if striped is None:
        done = set(early)
        _guarded(failed, compute_tasks, low, plan, [i for i in range(len(plan.tasks)) if i not in done], flats, bufs,
                 inplace, results, aggregate, dtypes)
    comm.wait(readers_done)                           # nobody reads my memory any more
    sent += comm.notify(plan.writers, WRITE_OK)
    t0 = trace.on and trace.now()
    if plan.accumulate:
        accumulate_results(plan, warr, wflat, results, aggregate, targets, writes_done, failed)
    else:
        write_results(plan, warr, wflat, results, aggregate, targets, writes_done, failed)
    if t0:
        trace.add("pack", "store results", t0)
    comm.wait(sent)
    if plan.writers:
        sync_windows(wins)                                   # remote writes into my memory, visible to me
    if garrs and check.enabled:
        comm.agree(stale)                             # a ghost read differed from its owner's elements
    if failed:
        raise failed[0]


def _guarded(failed: list, fn, *args) -> None:
    """``fn(*args)`` unless an earlier step failed; an error it raises is appended to ``failed``."""
    if failed:
        return
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - raised once the statement's messages are complete
        failed.append(e)


def _nothing() -> None:
    pass


def compute_tasks(low, plan, which, flats, bufs, inplace, results, aggregate=True, dtypes=None) -> None:
    """Compute the tasks at positions ``which`` of ``plan`` into ``results`` (None for a
    task a kernel stored in place, see :func:`pgas.exec.fuse.in_place`)."""
    stmt = plan.stmt
    W = stmt.write
    wflat = flats[stmt.accesses[W].slot]
    _, reducer = combiners(stmt)
    axes = plan.reduce_axes
    if dtypes is None:
        dtypes = [low.arrays[x.slot].dtype for x in stmt.accesses]
    for i in which:
        task = plan.tasks[i]
        ctx = TaskContext(low, plan, task, flats, bufs, aggregate,
                          ablation.local_copies(low, plan, i))    # privatise=False: own reads through the window
        ref = task.refs[W]
        target = strided(wflat, ref.offset, ref.strides, task.shape) if inplace and ref.msg < 0 else None
        if task.clip:                                 # a piece of a clipped domain (pgas.exec.clipped)
            with np.errstate(all="ignore"):
                if large(low.prog, task.shape):       # box by box: bounded temporaries (a kernel's value
                    results[i] = clipped.finish_boxes(task, low.prog, ctx, axes, reducer, target)   # is the hull's)
                    continue
                value = fuse.evaluate(low.prog, ctx, task.shape, dtypes, None)
                value = evaluate(low.prog, ctx) if value is None else value
                results[i] = clipped.finish(task, np.broadcast_to(value, task.shape), axes, reducer)
            if target is not None:                    # stored now: no task's values wait for the others
                clipped.store(target, results[i])
                results[i] = None
            continue
        value = fuse.evaluate(low.prog, ctx, task.shape, dtypes, target)   # None: the NumPy path
        if value is fuse.WRITTEN:
            results[i] = None                         # a kernel stored it in place
            continue
        if value is None and large(low.prog, task.shape):                 # box by box: bounded temporaries
            results[i] = (evaluate_reduced(low.prog, ctx, task.shape, axes, reducer) if axes
                          else evaluate_boxes(low.prog, ctx, task.shape, target))  # (None: stored in place)
            continue
        if value is None:
            t0 = trace.on and trace.now()
            value = evaluate(low.prog, ctx)
            if t0:
                trace.add("kernel", "NumPy task", t0, {"shape": list(task.shape)})
        value = np.broadcast_to(value, task.shape)
        if axes:
            value = reducer.reduce(value, axis=axes, keepdims=True)
        elif target is not None:
            target[...] = value                       # stored now: no task's values wait for the others
            results[i] = None
            continue
        elif np.may_share_memory(value, wflat):
            value = value.copy()
        results[i] = value

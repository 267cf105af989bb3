"""Writing a statement's computed values: own elements in place, the others back to their
owners (put, or accumulated for a reduction), per message (:mod:`pgas.exec.transfer`) or
one element per message in baseline mode.

A locale that writes into another waits for that owner's word that its readers are done
(``WRITE_OK``), starts every write-back, completes them and says so (``DONE_WRITE``); an
owner combines its own elements of a reduction once every writer into it is done (see
:mod:`pgas.exec.run` for the whole protocol).
"""

from __future__ import annotations

import numpy as np

from .. import comm
from ..plan import ACCUMULATE_OPS
from ..plan.transfers import expand
from . import clipped, transfer
from .notices import DONE_WRITE, WRITE_OK
from .tasks import combiners, strided


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


def _send_back(warr, plan, targets, send) -> list:
    """Wait for the owners' word, start every write-back, complete them, say so."""
    comm.wait(comm.expect(targets, WRITE_OK))
    send()
    for t in targets:
        warr.store.window.flush(t)
    return comm.notify(targets, DONE_WRITE)


def write_results(plan, warr, wflat, results, aggregate, targets, writes_done, failed=None) -> None:
    """Store :func:`pgas.exec.run.compute_tasks`' ``results`` into the written array ``warr`` (its storage
    ``wflat``): own elements in place, the others into write-back messages (or one put per
    element without ``aggregate``) sent to ``targets`` once they allow it; then wait for
    this locale's writers (``writes_done``).  With a list ``failed``, an error storing the
    values (a cast's warning made an error) is appended to it and the messages still go
    out, so no peer waits for them."""
    W = plan.stmt.write
    axes = plan.reduce_axes
    combine, _ = combiners(plan.stmt)
    wbufs = [np.empty(m.size, dtype=warr.dtype) for m in plan.writebacks] if aggregate else []
    remote = []
    try:
        _store(plan, W, axes, combine, wflat, wbufs, results, aggregate, remote)
    except Exception as e:  # noqa: BLE001 - the caller raises it once the messages are complete
        if failed is None:
            raise
        failed.append(e)
        remote.clear()

    def send():
        if failed:                                    # values not all computed: only the notices go out
            return
        for m, buf in zip(plan.writebacks, wbufs):
            transfer.start_put(warr.store.window, m, buf, warr.dtype.itemsize)
        for ref, shape, value in remote:
            _put_elements(warr, ref, shape, value)

    sent = _send_back(warr, plan, targets, send) if targets else []
    comm.wait(writes_done)
    comm.wait(sent)


def _store(plan, W, axes, combine, wflat, wbufs, results, aggregate, remote) -> None:
    """:func:`write_results`' local part: each task's values into its own elements or its
    write-back buffer (``remote``: the per-element writes of baseline mode)."""
    for task, value in zip(plan.tasks, results):
        if value is None:
            continue                                  # stored in place by a fused kernel
        ref = task.refs[W]
        if ref.msg < 0:
            target = strided(wflat, ref.offset, ref.strides, task.shape)
        elif aggregate:
            target = strided(wbufs[ref.msg], ref.boffset, ref.bstrides, task.shape)
        else:
            remote.append((ref, task.shape, value))
            continue
        if axes:
            target = _reduced(target, axes, len(task.shape))
        if isinstance(value, clipped.Clipped):
            clipped.store(target, value, combine if axes else None)
        elif axes:
            target[...] = combine(target, value)
        else:
            target[...] = value


def _reduced(target, axes, ndim):
    return target[tuple(slice(0, 1) if a in axes else slice(None) for a in range(ndim))]


def accumulate_results(plan, warr, wflat, results, aggregate, targets, writes_done, failed=None) -> None:
    """Send each task's partial results to the owners of its written elements:
    combined per message buffer, one ``accumulate_regions`` per message (one
    accumulate per element in baseline mode); own elements are combined once
    every writer into this locale is done.  ``failed``: as for :func:`write_results`
    (a task not computed, None, is left out)."""
    stmt, W, axes, op = plan.stmt, plan.stmt.write, plan.reduce_axes, plan.accumulate
    combine, reducer = combiners(stmt)
    negate = stmt.reduce == "subtract"
    wbufs = [np.full(m.size, _identity(op, warr.dtype)) for m in plan.writebacks] if aggregate else []
    own, remote = [], []
    try:
        for task, value in zip(plan.tasks, results):
            ref = task.refs[W]
            if value is None:
                continue
            if ref.msg < 0:
                own.append((task, value))
            elif aggregate:
                target = _reduced(strided(wbufs[ref.msg], ref.boffset, ref.bstrides, task.shape), axes,
                                  len(task.shape))
                target[...] = reducer(target, value)
            else:
                remote.append((ref, value))
    except Exception as e:  # noqa: BLE001 - the caller raises it once the messages are complete
        if failed is None:
            raise
        failed.append(e)
        own, remote = [], []

    def send():
        if failed:                                    # as in write_results
            return
        for m, buf in zip(plan.writebacks, wbufs):
            transfer.start_put(warr.store.window, m, buf, warr.dtype.itemsize, op, negate)
        for ref, value in remote:
            data = np.ascontiguousarray(value, dtype=warr.dtype).reshape(-1)
            data = -data if negate else data
            for k, o in enumerate(expand(ref.offset, value.shape, ref.strides).tolist()):
                warr.store.window.accumulate(ref.owner, o, data[k:k + 1], op)

    sent = _send_back(warr, plan, targets, send) if targets else []
    comm.wait(writes_done)
    if plan.writers:
        warr.store.window.sync()
    try:
        for task, value in own:
            ref = task.refs[W]
            target = _reduced(strided(wflat, ref.offset, ref.strides, task.shape), axes, len(task.shape))
            target[...] = combine(target, value)
    except Exception as e:  # noqa: BLE001 - as above
        if failed is None:
            raise
        failed.append(e)
    comm.wait(sent)


def _put_elements(arr, ref, shape, value) -> None:
    """Baseline write-back: one message per element."""
    offs = expand(ref.offset, shape, ref.strides)
    data = np.ascontiguousarray(np.broadcast_to(value, shape), dtype=arr.dtype).reshape(-1)
    for k, o in enumerate(offs.tolist()):
        arr.store.window.put(ref.owner, o, data[k:k + 1])

"""A statement's interior computed while its halo is awaited.

The planner already cuts a locale's iteration domain into tasks by the owners of
their reads (:mod:`pgas.plan.pieces`): a 5-point stencil on row blocks has one task
for the rows whose reads are all local (the *interior*) and one per border row
reading a neighbour's row (the *halo*).  :mod:`pgas.exec.run` computes the interior
tasks (:func:`local_reads`) before the rest (with :data:`MODE` ``"auto"``; the
default, ``"off"``, keeps the plain order), at one of two moments (:func:`when`):

- ``"idle"``: the owners it reads from have not yet said they are ready (their
  READY notice has not arrived; tested, not waited for): the interior is computed
  first and the wait comes after it;
- ``"in flight"``: they are ready: the fetches are started (:func:`start_fetch`),
  the interior is computed, and only then are the fetches completed (flushed) and
  the border tasks computed from the arrived buffers.

Either way a task that reads a message buffer is computed only after the buffer's
flush, every element is computed by the same operations in the same order as
before (each task is a whole task of the plan, fused or in NumPy), and what is
written in place during the interior (:func:`pgas.exec.fuse.in_place`) is an array
no other locale reads in the statement and none still reads from an earlier one
(each statement waits for its readers before it returns).  Strip-mined plans
compute their local tasks while the first strip is in flight
(:func:`pgas.exec.strip.run_strips`).

:data:`MODE` is for tests and measurement: ``"auto"`` as above; ``"idle"`` only
the first moment (the peers ready: fetch, then compute everything); ``"before"``
always before waiting for the peers; ``"in flight"`` always after starting the
fetches; ``"off"``: fetch, then compute everything, in the plan's order.
"""

from __future__ import annotations

import numpy as np

from .. import comm
from . import settings, transfer

#: When to compute the interior (see the module's docstring).  Off by default: no other
#: mode has been measured faster than ``"off"``.
MODE = "off"

#: Tasks computed before their statement's remote reads had arrived (``"tasks"``),
#: and how often that happened while the peers were not yet ready (``"idle"``).
stats = {"tasks": 0, "idle": 0}


def local_reads(plan) -> list:
    """Positions in ``plan.tasks`` of the tasks that read no message buffer (every
    access but the write is local): the interior of this locale's pieces."""
    W = plan.stmt.write
    got = [i for i, t in enumerate(plan.tasks) if all(r.msg < 0 for k, r in enumerate(t.refs) if k != W)]
    stats["tasks"] += len(got)
    return got


def when(plan, ready, eligible: bool) -> str | None:
    """``"idle"``, ``"in flight"`` or None (no interior first) for a plan with remote
    reads whose READY notices are ``ready``; ``eligible``: whole (not strip-mined),
    aggregated and unclipped."""
    if not eligible or not plan.fetches or MODE == "off":
        return None
    if MODE == "in flight":
        return "in flight"
    if MODE != "before" and comm.arrived(ready):
        return "in flight" if MODE == "auto" else None
    stats["idle"] += 1
    return "idle"


def start_fetch(low, plan, served=None):
    """``(buffers, complete)``: every fetch of ``plan`` started with its protocol
    (:mod:`pgas.exec.transfer`) but those in ``served`` (index: buffer,
    :mod:`pgas.exec.ghostread`); the buffers hold their data only once ``complete()``
    (one flush per window and target) has returned."""
    bufs, finish, held = [], [], 0
    overlap = settings.get("nonblocking")
    served = served or {}
    fetches = [m for k, m in enumerate(plan.fetches) if k not in served]
    room = [settings.get("buffer_limit") - sum(m.size * low.arrays[m.slot].dtype.itemsize for m in fetches)]
    for k, m in enumerate(plan.fetches):
        if k in served:
            bufs.append(served[k])
            continue
        arr = low.arrays[m.slot]
        buf = np.empty(m.size, dtype=arr.dtype)
        held += buf.nbytes
        transfer.hold(buf.nbytes)
        f = transfer.start_get(arr.store.window, m, buf, arr.dtype.itemsize, room=room)
        if not overlap:
            arr.store.window.flush(m.peer)
            f = f() if f is not None else None
        if f is not None:
            finish.append(f)
        bufs.append(buf)

    def complete():
        transfer.flush_all({(id(low.arrays[m.slot].store.window), m.peer): (low.arrays[m.slot].store.window, m.peer)
                            for m in fetches}.values())
        for f in finish:
            f()
        transfer.hold(-held)
    return bufs, complete

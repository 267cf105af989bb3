"""The engine with one of the XL UPC runtime's optimisations turned off (``pg.config``'s
``privatise=False`` and ``forall=False``), for measuring what each gains.

- **Privatised local access off.** Normally a task reads the locale's own elements
  as plain memory (a strided view of the storage).  With ``privatise=False`` every
  such read goes through the array's MPI window instead: one one-sided get of the
  task's strided box from the locale itself into a buffer (:func:`local_copies`),
  as a UPC runtime that does not know an access is local dereferences a fat pointer.
  Each get is counted by ``pg.comm_diagnostics`` as a ``local_window_accesses``
  (never as a message: no other locale is involved).
- **Forall simplification off.** Normally a locale enumerates only the iterations it
  owns (the planner's pieces), with no test in the loop.  With ``forall=False`` every
  locale walks the statement's whole iteration domain and tests, for each
  iteration, whether it owns the element of the owning access (the affinity test of
  an unoptimised ``upc_forall``), in chunks of :data:`CHUNK` iterations
  (:func:`test_affinity`); the iterations that pass are exactly the ones its tasks
  then compute.  Each test is counted as ``affinity_tests``, the iterations that
  passed as ``affine_iterations``.

Inspector plans (non-separable subscripts, :mod:`pgas.exec.inspected`) run the affinity
test too but read their own elements as plain memory either way.  Neither switch
changes a result: the same tasks compute the same values from the same elements.
``oneway=False`` (updates as read-modify-write round trips) lives with the updates,
in :mod:`pgas.array.ablated`.
"""

from __future__ import annotations

import numpy as np

from ..comm import counters
from ..plan.clip import points_mask
from . import settings

#: Iterations whose affinity is tested at once by :func:`test_affinity` (bounds its memory).
CHUNK = 1 << 16


def local_copies(low, plan, i) -> dict | None:
    """With ``privatise=False``: ``{access: values}`` for every read of the locale's own
    memory by task ``i`` of ``plan``, each fetched by a one-sided get through the array's
    window; None with ``privatise`` on (reads view the storage)."""
    if settings.get("privatise"):
        return None
    stmt, task = plan.stmt, plan.tasks[i]
    copies = {}
    for k, ref in enumerate(task.refs):
        if k == stmt.write or ref.msg >= 0:
            continue
        arr = low.arrays[stmt.accesses[k].slot]
        out = np.empty(task.shape, dtype=arr.dtype)
        if out.size:
            win = arr.store.window
            win.get_regions(win.me, [(int(ref.offset), tuple(task.shape), tuple(ref.strides))], out)
            counters.record_local()
        copies[k] = out
    return copies


def test_affinity(plan, layouts) -> int:
    """With ``forall=False``: test, for every iteration of the statement's domain, whether
    this locale owns the owning access's element (counted); returns the iterations that
    passed (0 with ``forall`` on: nothing is tested)."""
    if settings.get("forall"):
        return 0
    stmt = plan.stmt
    acc = stmt.accesses[plan.owning]
    layout = layouts[acc.slot]
    M, c = np.array(acc.M, dtype=np.int64).reshape(len(acc.c), stmt.nvars), np.array(acc.c, dtype=np.int64)
    mine = tested = 0
    for box in stmt.boxes():
        counts = [n for _, _, n in box]
        total = int(np.prod(counts, dtype=np.int64)) if counts else 1
        start = np.array([a for a, _, _ in box], dtype=np.int64)
        step = np.array([b for _, b, _ in box], dtype=np.int64)
        for lo in range(0, total, CHUNK):
            flat = np.arange(lo, min(lo + CHUNK, total), dtype=np.int64)
            it = np.array(np.unravel_index(flat, counts), dtype=np.int64).reshape(len(counts), -1) if counts \
                else np.zeros((0, 1), dtype=np.int64)
            idx = M @ (start[:, None] + step[:, None] * it) + c[:, None]
            mask = layout.owners(tuple(idx)) == plan.locale
            if stmt.clips:
                mask &= points_mask(start[:, None] + step[:, None] * it, stmt.clips)
            mine += int(np.count_nonzero(mask))
            tested += len(flat)
    counters.record_affinity(tested, mine)
    return mine

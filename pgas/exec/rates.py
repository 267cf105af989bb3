"""The strip model's per-strip cost, measured through the statement runtime (``pgas calibrate``).

The network figures come from :mod:`pgas.comm.calibrate`; what one more strip
costs a statement beyond its transfers (allocating and starting its messages,
waiting for them, evaluating its sub-tasks in Python) is measured here on a
real strip-mined statement: the vector-matrix product ``y[i] += A[j, i] * x[j]``
with ``A`` Block-distributed by rows (the paper's Figure 2 kernel), small enough
that its transfers and arithmetic are negligible, run whole and in about
:data:`STRIPS` strips alternately; the difference per extra strip (the slowest
locale's, median over the repetitions) is ``strip_overhead``, the model's
``strip`` figure.
"""

from __future__ import annotations

import time

import numpy as np

from .. import comm

#: Strips of the stripped run.
STRIPS = 8


def measure(reps: int = 5) -> dict:
    """Collective: ``{"strip_overhead": seconds, "strip_count": strips}`` (empty at one
    locale, where nothing is fetched)."""
    import pgas as pg

    from . import settings, strip

    P = comm.num_locales()
    if P < 2:
        return {}
    n = 16 * P
    rng = np.random.default_rng(0)
    A = pg.from_numpy(rng.random((n, n)), dist=pg.Block())
    x = pg.from_numpy(rng.random(n), dist=pg.Block())
    y = pg.zeros(n, dist=pg.Block())

    def body(i, j):
        y[i] += A[j, i] * x[j]

    saved = {k: settings.get(k) for k in ("buffer_limit", "strips")}
    ts: dict = {1: [], STRIPS: []}
    try:
        pg.config(buffer_limit=1 << 40)
        strip.clear()
        for k in (1, STRIPS):
            pg.config(strips=k)
            pg.forall((range(n), range(n)), body)           # plan it (untimed)
        counts = {c.k: m for c, m in strip.choices()}
        for _ in range(reps):
            for k in ts:
                pg.config(strips=k)
                comm.barrier()
                t0 = time.perf_counter()
                pg.forall((range(n), range(n)), body)
                ts[k].append(float(comm.allreduce(time.perf_counter() - t0, "max")))
    finally:
        pg.config(**saved)
    got = max(2, counts.get(STRIPS, STRIPS))
    extra = (float(np.median(ts[STRIPS])) - float(np.median(ts[1]))) / (got - 1)
    return {"strip_overhead": max(0.0, extra), "strip_count": got}

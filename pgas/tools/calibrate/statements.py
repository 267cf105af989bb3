"""The strip model's per-strip cost, measured through the statement runtime (``pgas calibrate``).

The network figures come from :mod:`pgas.tools.calibrate.network`; what one more strip
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

from pgas import comm

#: Strips of the stripped run.
STRIPS = 8

#: Statements per timed repetition of the write-back measurement.
BURST = 5


def _vecmat(dist):
    """Collective: ``(n, A, x, y, body)`` of ``y[i] += A[j, i] * x[j]`` with ``n = 16 P``,
    every array distributed by ``dist`` (``body`` is the forall body)."""
    import pgas as pg

    n = 16 * comm.num_locales()
    rng = np.random.default_rng(0)
    A = pg.from_numpy(rng.random((n, n)), dist=dist)
    x = pg.from_numpy(rng.random(n), dist=dist)
    y = pg.zeros(n, dist=dist)

    def body(i, j):
        y[i] += A[j, i] * x[j]
    return n, A, x, y, body


def measure(reps: int = 5) -> dict:
    """Collective: ``{"strip_overhead": seconds, "strip_count": strips}`` (empty at one
    locale, where nothing is fetched)."""
    import pgas as pg
    from pgas.exec import settings, strip

    if comm.num_locales() < 2:
        return {}
    n, A, x, y, body = _vecmat(pg.Block())

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


def measure_writeback(reps: int = 5) -> dict:
    """Collective: the write-back measurement (empty at one locale): ``writeback_times``
    (seconds per statement, the slowest locale's, median over ``3 * reps``
    repetitions) and ``writeback_plans`` (elements moved, messages and write-back
    messages over all locales) of the ``"write"`` and ``"accumulate"`` runs, from
    which :func:`writeback` fits the figure."""
    import pgas as pg
    from pgas.exec import settings
    from pgas.plan import Access, Statement, plan

    if comm.num_locales() < 2:
        return {}
    n, A, x, y, body = _vecmat(pg.Cyclic())

    stmt = Statement(((0, 1, n), (0, 1, n)), (Access(0, ((1, 0),), (0,)), Access(1, ((0, 1), (1, 0)), (0, 0)),
                                              Access(2, ((0, 1),), (0,))), 0, "add")
    layouts = (y.layout, A.layout, x.layout)
    modes = {"write": "write", "accumulate": "cost"}
    plans = {}
    for name, owner in modes.items():
        g = plan(stmt, layouts, owner)
        plans[name] = [g.moved, g.messages, sum(len(lp.writebacks) for lp in g.locales)]
    saved = {k: settings.get(k) for k in ("owner", "protocol")}
    ts: dict = {k: [] for k in modes}
    try:
        for name, owner in modes.items():            # plan them (untimed); "packed": fewest elements own
            pg.config(owner=owner, protocol="packed")
            pg.forall((range(n), range(n)), body)
        for _ in range(3 * reps):
            for name, owner in modes.items():
                pg.config(owner=owner, protocol="packed")
                comm.barrier()
                t0 = time.perf_counter()
                for _ in range(BURST):
                    pg.forall((range(n), range(n)), body)
                ts[name].append(float(comm.allreduce((time.perf_counter() - t0) / BURST, "max")))
    finally:
        pg.config(**saved)
    return {"writeback_times": {k: float(np.median(v)) for k, v in ts.items()}, "writeback_plans": plans,
            "writeback_locales": comm.num_locales()}


def writeback(meas: dict, per_element: float, per_message: float, default: float) -> float:
    """The ``writeback`` figure from :func:`measure_writeback`'s results: the accumulate
    run's extra time over the write-owner run, as a sum over the locales (the owner
    choice ranks totals), less what the transfer model already predicts for the two
    plans' elements and messages, per write-back message; ``default`` when nothing
    was measured (one locale, an older file).

    >>> m = {"writeback_times": {"write": 1e-3, "accumulate": 1.2e-3}, "writeback_locales": 4,
    ...      "writeback_plans": {"write": [1000, 8, 0], "accumulate": [100, 8, 4]}}
    >>> round(writeback(m, 1e-9, 5e-6, 1e-4) * 1e6, 1)       # (4 * 200 us + 0.9 us) / 4
    200.2
    """
    times, plans = meas.get("writeback_times"), meas.get("writeback_plans")
    if not times or not plans:
        return default
    (mw, nw, bw), (ma, na, ba) = plans["write"], plans["accumulate"]
    if ba <= bw:
        return default
    extra = meas["writeback_locales"] * (times["accumulate"] - times["write"])
    predicted = (ma - mw) * per_element + (na - nw) * per_message
    return max(0.0, (extra - predicted) / (ba - bw))

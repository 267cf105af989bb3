"""``pgas bench memory --fill FRACTION``: Jacobi steps on arrays that fill a node's memory.

Two float64 arrays ``A`` and ``B`` of ``n x n``, sized so that together they take
``FRACTION`` of the node's memory (``MemTotal`` in ``/proc/meminfo``), are made
(``A`` ones, ``B`` zeros), and ``--steps`` Jacobi steps run on them
(``B[1:-1, 1:-1] = 0.25 * (A[1:-1, :-2] + A[1:-1, 2:] + A[:-2, 1:-1] + A[2:, 1:-1])``,
then ``A[1:-1, 1:-1] = B[1:-1, 1:-1]``), first runs included, under
``pg.config(fuse="auto")``.  Each locale reports its data (its part of the two
arrays), its resident set before making them, and its peak resident set over the
whole run (``VmHWM``; its growth over the resident set before is compared to the
data).  ``A``'s sum is checked (``A`` stays ones: each interior value is the mean of
four ones).
"""

from __future__ import annotations

import math

import numpy as np

import pgas as pg
from pgas import comm


def mem_total() -> int:
    """The node's memory in bytes (``MemTotal`` of ``/proc/meminfo``)."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    raise OSError("/proc/meminfo has no MemTotal")


def side(fraction: float, total: int) -> int:
    """The side of two square float64 arrays that take ``fraction`` of ``total`` bytes.

    >>> side(0.5, 2 * 1024**3)
    8192
    """
    return int(math.isqrt(int(fraction * total) // 16))


def run(fraction: float, steps: int, status, reset_peak, progress) -> dict:
    """Collective: make the arrays and run the steps; the rows of every locale (on each)."""
    n = side(fraction, mem_total())
    comm.barrier()
    reset_peak()
    before = status("VmRSS")
    progress(f"two {n} x {n} float64 arrays: {2 * n * n * 8 / 2**30:.2f} GiB in all "
             f"({fraction:.2f} of {mem_total() / 2**30:.1f} GiB)")
    A, B = pg.ones((n, n)), pg.zeros((n, n))
    progress("made")
    for s in range(steps):
        B[1:-1, 1:-1] = 0.25 * (A[1:-1, :-2] + A[1:-1, 2:] + A[:-2, 1:-1] + A[2:, 1:-1])
        A[1:-1, 1:-1] = B[1:-1, 1:-1]
        progress(f"step {s + 1} of {steps}")
    ok = float(A.sum()) == float(n) ** 2
    data = A.local.nbytes + B.local.nbytes
    mine = {"locale": comm.here(), "data_mib": data / 2**20, "before_mib": before / 2**20,
            "peak_mib": status("VmHWM") / 2**20}
    mine["growth_over_data"] = (mine["peak_mib"] - mine["before_mib"]) / max(mine["data_mib"], 1e-9)
    rows = comm.allgather(mine)
    del A, B
    return {"side": n, "fraction": fraction, "steps": steps, "mem_total_gib": mem_total() / 2**30,
            "values_checked": bool(comm.allreduce(np.int64(ok), "min")), "rows": rows}

"""One measured or planned kernel run: the rows ``pgas bench run`` and ``pgas bench suite`` write.

A *run* is one kernel of :data:`pgas.tools.bench.kernels.KERNELS` at one size, on one
distribution (``Block``, ``Cyclic`` or ``BlockCyclic`` with a block size), in one
mode, on this job's locales:

- ``baseline``: ``pg.config(aggregate=False)``, one message per remote element
  access (an unoptimised PGAS runtime, Chapel's original Cyclic follower);
- ``aggregated``: plain aggregation, each iteration on the owner of the
  element it writes, remote elements fetched in one packed message per peer
  (``pg.config(protocol="packed")``);
- ``auto``: aggregated, with the owner of each statement chosen by the cost
  model (``pg.config(owner="cost")``) and each message's protocol by the
  calibrated model, with its guard against aggregation slower than the
  per-element path (``pg.config(protocol="auto")``, :mod:`pgas.exec.calibration`).

:func:`measure` runs one untimed warm-up step (which also plans), then
``steps`` timed steps whose messages and bytes it counts, then checks every
result array against the kernel's serial NumPy reference.  A result that
differs is never reported as a measurement: the row says ``"correct": false``
and carries the largest difference, and every caller exits with status 1.
:func:`planned` counts the messages of one step on any locale count by
planning alone (``pg.explain``), without running it.
"""

from __future__ import annotations

import math
import re
import time

import numpy as np

import pgas as pg
from pgas import comm

DISTS = ("Block", "Cyclic", "BlockCyclic")
MODES = ("baseline", "aggregated", "auto")


def make_dist(dist: str, block: int | None = None):
    """The distribution named ``dist`` (one of :data:`DISTS`; ``block`` for BlockCyclic)."""
    if dist == "Block":
        return pg.Block()
    if dist == "Cyclic":
        return pg.Cyclic()
    if dist == "BlockCyclic":
        if not block or block < 1:
            raise ValueError(f"BlockCyclic needs a block size >= 1, got {block!r}")
        return pg.BlockCyclic(int(block))
    raise ValueError(f"unknown distribution {dist!r}; choose from {', '.join(DISTS)}")


def dist_label(dist: str, block: int | None) -> str:
    """``"Cyclic"`` or ``"BlockCyclic(4)"``.

    >>> dist_label("BlockCyclic", 4), dist_label("Block", None)
    ('BlockCyclic(4)', 'Block')
    """
    return f"BlockCyclic({block})" if dist == "BlockCyclic" else dist


def _mode_settings(mode: str) -> dict:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose from {', '.join(MODES)}")
    return {"aggregate": mode != "baseline", "owner": "cost" if mode == "auto" else "write",
            "protocol": "auto" if mode == "auto" else "packed"}


def _compare(got: np.ndarray, want: np.ndarray) -> float:
    """The largest difference relative to the reference's scale (0 when equal); inf
    when the shapes differ or a value is NaN where the reference has none."""
    if got.shape != want.shape:
        return math.inf
    if want.dtype.kind in "iub":
        return 0.0 if np.array_equal(got, want) else math.inf
    diff = np.abs(got.astype(float) - want.astype(float))
    if np.isnan(diff).any() and not np.array_equal(np.isnan(got), np.isnan(want)):
        return math.inf
    scale = max(float(np.nanmax(np.abs(want))) if want.size else 0.0, 1e-300)
    return float(np.nanmax(diff)) / scale if diff.size else 0.0


#: Largest relative difference from the NumPy reference accepted as equal.
RTOL = 1e-9


def timed_steps(kernel, state, steps: int, warmup: int = 1):
    """Collective: steps 0..``warmup - 1`` untimed (plans made, caches warm), then the next
    ``steps`` timed between barriers; ``(seconds, diagnostics)`` with the slowest locale's
    seconds and the messages of the timed steps.  (On fresh arrays the first steps after
    the plans' are still slower, 2.5, 1.5, 1.35 then 1.2 ms for mvt at 2 locales: a
    steady-state figure needs ``warmup`` 3 or more.)"""
    for t in range(warmup):
        kernel.step(state, t)
    with pg.comm_diagnostics() as d:
        comm.barrier()
        t0 = time.perf_counter()
        for t in range(warmup, warmup + steps):
            kernel.step(state, t)
        comm.barrier()
        dt = time.perf_counter() - t0
    return float(comm.allreduce(dt, "max")), d


def measure(kernel, n: int, dist: str, block: int | None, mode: str, steps: int = 2) -> dict:
    """Collective: run ``kernel`` at size ``n`` in ``mode``; its messages, bytes and
    seconds per step, and whether it matches NumPy (see the module docstring).

    Parameters
    ----------
    kernel : pgas.tools.bench.kernels.Kernel
        The kernel to run.
    n : int
        Its input size.
    dist, block : str, int or None
        The distribution (:data:`DISTS`) and, for BlockCyclic, its block size.
    mode : str
        ``baseline``, ``aggregated`` or ``auto``.
    steps : int
        Timed steps after the warm-up step.

    Returns
    -------
    dict
        The run's row (identical on every locale).
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    pg.config(**_mode_settings(mode))
    try:
        state = kernel.setup(n, make_dist(dist, block))
        dt, d = timed_steps(kernel, state, steps)
        got = {k: state[k].to_numpy() for k in kernel.result}
    finally:
        pg.config()
    err = 0.0
    if comm.here() == 0:
        want = kernel.reference(n, steps + 1)
        err = max(_compare(np.asarray(got[k]), np.asarray(want[k])) for k in kernel.result)
    err = float(comm.bcast(err, 0))
    itemsize = max(state[k].dtype.itemsize for k in kernel.result)
    msgs = d.messages / steps
    return {"kernel": kernel.name, "n": int(n), "dist": dist, "block": block, "locales": comm.num_locales(),
            "mode": mode, "steps": steps, "messages_per_step": msgs, "bytes_per_step": d.bytes / steps,
            "elements_per_message": d.bytes / itemsize / d.messages if d.messages else 0.0,
            "max_elements_per_message": d.largest_bytes / itemsize,
            "seconds_per_step": dt / steps, "correct": bool(err <= RTOL), "max_rel_error": err}


_TOTALS = re.compile(r"all (\d+) locales: (\d+) messages, (\d+) elements moved \(([^)]*)\)")


def planned(kernel, n: int, dist: str, block: int | None, locales: int, mode: str = "aggregated") -> dict:
    """The messages and elements one step of ``kernel`` would move on ``locales``
    locales, by planning alone (``pg.explain``; exact up to 64 locales, estimated
    from a sample beyond).  Collective: the kernel's arrays are made on this
    job's locales (the suite plans in a 1-locale job)."""
    row = {"kernel": kernel.name, "n": int(n), "dist": dist, "block": block, "locales": int(locales), "mode": mode}
    pg.config(**_mode_settings(mode))
    try:
        state = kernel.setup(n, make_dist(dist, block))
        text = pg.explain(lambda: kernel.step(state, 1), locales=locales)
    except Exception as e:                     # a kernel explain cannot follow: say so, count nothing
        return {**row, "error": f"{type(e).__name__}: {e}"}
    finally:
        pg.config()
    totals = [(int(m), int(e), how) for _, m, e, how in _TOTALS.findall(text)]
    msgs, moved = sum(t[0] for t in totals), sum(t[1] for t in totals)
    return {**row, "statements": len(totals), "messages": msgs, "elements_moved": moved,
            "elements_per_message": moved / msgs if msgs else 0.0,
            "exact": all(t[2] == "exact" for t in totals)}


#: Input sizes of the ``small`` preset (a couple of minutes for the whole suite on
#: a 2-core machine); kernels not listed run at four times their test size.
SMALL = {"jacobi1D": 2000, "jacobi2D": 48, "stencil9": 48, "fdtd-2d": 48, "mvt": 48, "folding": 2016,
         "pascal": 4000}
PRESETS = ("tiny", "small", "bench", "paper")


def size_of(kernel, size) -> int:
    """The input size ``size`` names for ``kernel``: a whole number, or a preset:
    ``tiny`` (the tests'), ``small``, ``bench`` (``pgas bench stmt``'s) or ``paper``
    (Figure 11's).

    >>> from pgas.tools.bench.kernels import KERNELS
    >>> size_of(KERNELS["jacobi2D"], "paper"), size_of(KERNELS["jacobi2D"], "small"), size_of(KERNELS["mvt"], "7")
    (400, 48, 7)
    """
    if isinstance(size, int) or str(size).isdigit():
        if int(size) < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        return int(size)
    if size == "tiny":
        return kernel.tiny
    if size == "small":
        return SMALL.get(kernel.name, min(kernel.bench_size, 4 * kernel.tiny))
    if size == "bench":
        return kernel.bench_size
    if size == "paper":
        return kernel.paper
    raise ValueError(f"size must be a whole number or one of {', '.join(PRESETS)}, got {size!r}")

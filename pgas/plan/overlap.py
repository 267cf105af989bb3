"""How many strips a plan runs in: the overlap model of strip-mining (pure, no MPI).

A plan's reads can be fetched whole and then computed, or cut into ``k`` strips
(:mod:`pgas.plan.strips`) whose transfers are double buffered: strip ``j + 1`` is
fetched while strip ``j`` is computed.  Finer strips overlap more but pay each
strip's start-up (latency and issue of its messages, and Python bookkeeping);
coarser ones amortise start-up but overlap less (the paper, section 3).  With

- ``x(k)``: the predicted time of one strip's transfers (each fetch message cut
  into ``k``, priced by the calibrated transfer model, :class:`pgas.exec.calibration.Model`),
  at least ``x(k_min) * k_min / k``: a measured grid may price ``k`` small messages below one
  large one (often noise), and that is no gain of strip-mining,
- ``eta``: the fraction of a transfer that proceeds while this locale computes
  (``Model.overlap``, measured by ``pgas calibrate``; 0 when a transfer is a copy
  by the same core, as through shared memory),
- ``c(k)``: one strip's compute, ``elements * ops * Model.compute / k`` plus the
  fixed cost ``Model.task`` of each of its tasks,
- ``s``: what one more strip costs besides its transfers (``Model.strip``:
  starting and waiting for its messages, evaluating its sub-tasks in Python),

the predicted time of ``k`` strips is::

    T(k) = k * s + k * (1 - eta) * x(k)              # start-ups and the CPU part of each transfer
         + eta * x(k)                                # the first transfer, exposed
         + (k - 1) * max(eta * x(k), c(k)) + c(k)    # pipelined, then the last strip's compute

so ``T(1)`` is fetch-then-compute.  :func:`choose` picks the ``k`` minimising it
among a few counts from ``k_min`` (what the buffer limit forces) upwards, and
keeps ``k_min`` unless another count is predicted at least :data:`MARGIN` faster.

>>> from pgas.exec.calibration import DEFAULTS, Model
>>> w = Work(messages=((1, 8 << 20, 8 << 20, 8),), elements=1 << 20, ops=2, tasks=1)
>>> choose(Model(**DEFAULTS), w).k                      # no overlap measured: never strip-mine
1
>>> quick = Model(**{**DEFAULTS, "overlap": 1.0, "compute": 2e-9})
>>> c = choose(quick, w)
>>> c.k > 1 and c.why == "model"
True
>>> choose(quick, w, k_min=300).k                       # never fewer than the buffer limit forces
300
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import lmad

#: Another strip count replaces the forced minimum only if predicted this much faster.
MARGIN = 0.1

#: Most strips the model considers.
MAX_STRIPS = 256

#: Multiples of ``k_min`` tried.
_STEPS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)


@dataclass(frozen=True)
class Work:
    """What one locale's plan moves and computes: per fetch message ``(runs, bytes,
    span bytes, itemsize)``, the elements it computes, operations per element, and
    its number of tasks."""

    messages: tuple
    elements: int
    ops: int
    tasks: int

    @property
    def nbytes(self) -> int:
        return sum(m[1] for m in self.messages)


@dataclass(frozen=True)
class Choice:
    """``k`` strips, ``why`` (``"model"``, ``"buffer limit"``, ``"pinned"``, ``"none"``),
    the least count the buffer limit forces, and the predicted seconds per count tried."""

    k: int
    why: str
    k_min: int
    times: tuple

    def predicted(self, k: int) -> float | None:
        return dict(self.times).get(k)


def work(plan, itemsizes, ops: int) -> Work:
    """The :class:`Work` of one locale's plan (``itemsizes`` per array slot)."""
    msgs = []
    for m in plan.fetches:
        size = int(itemsizes[m.slot])
        offs, lens = lmad.runs(m.regions)
        lo, hi = lmad.bounding(m.regions)
        msgs.append((len(offs), int(lens.sum()) * size, (hi - lo) * size, size))
    elements = sum(math.prod(t.shape) for t in plan.tasks)
    return Work(tuple(msgs), int(elements), max(1, int(ops)), len(plan.tasks))


def _transfer(model, work: Work, k: int) -> float:
    """Seconds of one strip's transfers when every message is cut into ``k``."""
    allowed = ("packed", "pipelined", "bounding") if k == 1 else ("packed", "pipelined")
    t = 0.0
    for runs, nbytes, span, size in work.messages:
        size = max(1, size)
        r = max(1, -(-runs // k))
        b = max(1, -(-nbytes // (size * k))) * size              # whole elements, rounded up
        best, times = model.choose(r, b, max(b, -(-span // k)), False, size, allowed)
        t += times[best]
    return t


def strip_time(model, work: Work, k: int, ref: int = 1, ref_transfer: float | None = None) -> float:
    """Predicted seconds of ``work`` in ``k`` strips (see the module text), the strip
    transfers priced at least as ``ref`` strips' share them (``ref_transfer``: the
    transfer time of one of ``ref`` strips, when known)."""
    if k < 1:
        raise ValueError(f"a strip count must be at least 1, got {k}")
    eta = min(1.0, max(0.0, float(model.overlap)))
    x = _transfer(model, work, k) if work.messages else 0.0
    if k > ref and x:           # strips are for overlap: never credit cutting the transfers alone
        base = _transfer(model, work, ref) if ref_transfer is None else ref_transfer
        x = max(x, base * ref / k)
    c = work.elements * work.ops * model.compute / k + model.task * max(1.0, work.tasks / k)
    return k * model.strip + k * (1 - eta) * x + eta * x + (k - 1) * max(eta * x, c) + c


def candidates(k_min: int, k_max: int) -> list[int]:
    """The strip counts tried: ``k_min`` times a few factors, up to ``k_max``."""
    return sorted({k_min * f for f in _STEPS if k_min * f <= max(k_min, k_max)})


def choose(model, work: Work, k_min: int = 1, pinned: int | None = None, k_max: int = MAX_STRIPS) -> Choice:
    """The strip count for ``work``: ``pinned`` (at least ``k_min``), else the count
    among :func:`candidates` with the least :func:`strip_time`, kept at ``k_min``
    unless one is predicted :data:`MARGIN` faster.  Without overlap (``model.overlap``
    0) no count can be (see the module text), and none is priced (``times`` empty)."""
    k_min = max(1, int(k_min))
    if pinned is not None:
        k = max(k_min, int(pinned))
        return Choice(k, "pinned" if k == pinned else "buffer limit", k_min,
                      ((k, strip_time(model, work, k, k_min)),))
    if not work.messages:
        return Choice(k_min, "none" if k_min == 1 else "buffer limit", k_min, ())
    if model.overlap <= 0:
        return Choice(k_min, "model" if k_min == 1 else "buffer limit", k_min, ())
    k_max = min(k_max, max(1, work.elements))
    x0 = _transfer(model, work, k_min)
    times = tuple((k, strip_time(model, work, k, k_min, x0)) for k in candidates(k_min, k_max))
    base = times[0][1]
    k, t = min(times, key=lambda kt: (kt[1], kt[0]))
    if t >= (1 - MARGIN) * base:
        k = k_min
    why = "model" if k > k_min or k_min == 1 else "buffer limit"
    return Choice(k, why, k_min, times)

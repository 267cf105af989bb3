"""Instantiating a plan's transfer groups: the protocol of each message, and starting it.

Every protocol fills (or sends) the same contiguous message buffer, laid out as
the planner laid it out, so computing never knows how the data came:

- ``packed``: one ``get_regions`` / ``put_regions`` / ``accumulate_regions`` with a
  derived datatype;
- ``pipelined``: one contiguous non-blocking operation per run of the message's
  LMADs (:func:`pgas.plan.lmad.runs`);
- ``bounding``: one contiguous get of the interval holding every element into a
  scratch buffer, gathered into the message buffer after the flush (reads only;
  a write pinned to it goes packed: a put of the interval would overwrite the
  elements between the regions);
- ``elements``: one get/put per element (the guard's choice when the model
  predicts every aggregated protocol slower).

The protocol is ``pg.config(protocol=...)`` or, for ``"auto"``, the calibrated
model's (:mod:`pgas.exec.calibration`) choice, cached per message.
"""

from __future__ import annotations

from collections import OrderedDict
from functools import lru_cache

import numpy as np

from . import calibration as calibrate
from ..plan import lmad
from . import settings

_choices: OrderedDict = OrderedDict()
CHOICE_CACHE = 4096

#: Peak bytes of fetch buffers (message buffers and bounding scratch) held at once by
#: one statement on this locale, since the last :func:`reset_peak`.
_peak = [0, 0]                  # [now, peak]


def clear_choices() -> None:
    """Forget the protocols chosen by messages' regions (a statement planned afresh then
    chooses again, as its first plan did)."""
    _choices.clear()


def reset_peak() -> int:
    """Return the peak of aggregation-buffer bytes since the last call, and restart it."""
    p = _peak[1]
    _peak[:] = [0, 0]
    return p


def hold(nbytes: int) -> None:
    """Count ``nbytes`` of aggregation buffers as held (negative: released)."""
    _peak[0] += nbytes
    _peak[1] = max(_peak[1], _peak[0])


@lru_cache(maxsize=2048)
def shape_of(regions) -> tuple[int, int, int, int]:
    """``(runs, elements, lo, hi)`` of a message's regions."""
    offs, lens = lmad.runs(regions)
    lo, hi = lmad.bounding(regions)
    return len(offs), int(lens.sum()), lo, hi


def protocol(m, itemsize: int, write: bool) -> str:
    """The protocol of message ``m`` (elements of ``itemsize`` bytes): the pinned one, or
    the model's choice under ``"auto"``."""
    pinned = settings.get("protocol")
    if pinned != "auto":
        if pinned not in calibrate.PROTOCOLS:
            raise ValueError(f"protocol must be one of auto, {', '.join(calibrate.PROTOCOLS)}, got {pinned!r}")
        return "packed" if pinned == "bounding" and write else pinned
    model, limit = calibrate.current(), settings.get("buffer_limit")
    mine = _by_message.get((id(m), itemsize, write))
    if mine is not None and mine[0] is m and mine[1] is model and mine[2] == limit:
        return mine[3]                  # this very message (of a cached plan): chosen once
    key = (m.regions, itemsize, write, model, limit)
    got = _choices.get(key)
    if got is None:
        got = choose(m.regions, itemsize, write)[0]
        _choices[key] = got
        if len(_choices) > CHOICE_CACHE:
            _choices.popitem(last=False)
    if len(_by_message) >= CHOICE_CACHE:
        _by_message.clear()
    _by_message[(id(m), itemsize, write)] = (m, model, limit, got)   # holds m: its id is not reused
    return got


#: :func:`protocol`'s choice per message object (a cached plan's), without hashing its regions.
_by_message: dict = {}


def choose(regions, itemsize: int, write: bool) -> tuple[str, dict]:
    """The model's ``(protocol, predicted seconds per protocol)`` for one message."""
    runs, n, lo, hi = shape_of(regions)
    span = (hi - lo) * itemsize
    if span > settings.get("buffer_limit"):
        span = 1 << 62                                  # a bounding buffer must fit the limit
    return calibrate.current().choose(runs, n * itemsize, span, write, itemsize)


def start_get(win, m, buf: np.ndarray, itemsize: int, requests=None, room: list | None = None):
    """Start reading message ``m`` into ``buf``; returns a function to call after the
    flush (or the requests' completion) that finishes it, or None.  ``room[0]`` is
    the scratch space (bytes) the buffer limit leaves: a bounding read whose
    scratch does not fit goes packed instead (and takes its room when it fits)."""
    proto = protocol(m, itemsize, False)
    if proto == "bounding" and room is not None:
        lo, hi = _of(m, "bounds")
        if (hi - lo) * itemsize > room[0]:
            proto = "packed"
        else:
            room[0] -= (hi - lo) * itemsize
    burst = settings.get("burst")
    if proto == "packed":
        if requests is None:
            win.get_regions(m.peer, m.regions, buf, flush=False)
        else:
            requests.append(win.get_regions_req(m.peer, m.regions, buf))
        return None
    if proto == "pipelined":
        offs, lens = _of(m, "runs")
        win.get_runs(m.peer, offs, lens, buf, burst, requests)
        return None
    if proto == "bounding":
        lo, hi = _of(m, "bounds")
        scratch = np.empty(hi - lo, dtype=buf.dtype)
        hold(scratch.nbytes)
        win.get_runs(m.peer, np.array([lo]), np.array([hi - lo]), scratch, 0, requests)
        idx = _of(m, "scatter")

        def finish():
            np.take(scratch, idx, out=buf)
            hold(-scratch.nbytes)
        return finish
    offs = _of(m, "gather")
    win.get_runs(m.peer, offs, np.ones(len(offs), dtype=np.int64), buf, 1, requests)
    return None


def _of(m, what: str):
    """Message ``m``'s ``"bounds"`` (:func:`pgas.plan.lmad.bounding`), ``"runs"``
    (:func:`pgas.plan.lmad.runs`), ``"gather"`` (its elements' offsets) or ``"scatter"`` (the
    same from the bounding interval's start), worked out
    once per message object (a cached plan's), without hashing its regions again."""
    got = _per_message.get((id(m), what))
    if got is not None and got[0] is m:
        return got[1]
    if what == "bounds":
        val = shape_of(m.regions)[2:]
    elif what == "runs":
        val = lmad.runs(m.regions)
    elif what == "scatter":
        val = _gather(m.regions, shape_of(m.regions)[2])
    else:
        val = _gather(m.regions, 0)
    if len(_per_message) >= CHOICE_CACHE:
        _per_message.clear()
    _per_message[(id(m), what)] = (m, val)          # holds m: its id is not reused meanwhile
    return val


_per_message: dict = {}


@lru_cache(maxsize=256)
def _gather(regions, lo: int) -> np.ndarray:
    idx = np.concatenate([lmad.expand(*r) for r in regions]) - lo
    idx.flags.writeable = False
    return idx


def flush_all(pairs) -> None:
    """Complete the started transfers: one flush per ``(window, target)`` of ``pairs``."""
    for win, peer in pairs:
        win.flush(peer)


def start_put(win, m, buf: np.ndarray, itemsize: int, op: str | None = None, negate: bool = False) -> None:
    """Start writing (``op`` None) or accumulating ``buf`` into message ``m``'s regions;
    completed by the caller's flush of ``m.peer``."""
    proto = protocol(m, itemsize, True)
    data = np.negative(buf, out=buf) if negate else buf          # in place: must live until the flush
    if proto == "packed":
        if op is None:
            win.put_regions(m.peer, m.regions, data, flush=False)
        else:
            win.accumulate_regions(m.peer, m.regions, data, op, flush=False)
        return
    if proto == "pipelined":
        offs, lens = _of(m, "runs")
        burst = settings.get("burst")
    else:                                               # "elements": the guard's choice
        offs = _of(m, "gather")
        lens, burst = np.ones(len(offs), dtype=np.int64), 1
    win.put_runs(m.peer, offs, lens, data, burst, op)


def describe(m, itemsize: int, write: bool, two_sided: bool = False) -> str:
    """One line: the message's LMADs, runs, and the protocol with the model's predictions
    (``two_sided``: a persistent two-sided transfer, :mod:`pgas.exec.persistent`)."""
    runs, n, lo, hi = shape_of(m.regions)
    more = f"; ... {len(m.regions) - 3} more" if len(m.regions) > 3 else ""
    head = f"LMADs {'; '.join(lmad.text(r) for r in m.regions[:3]) + more}; {runs} run{'s' if runs != 1 else ''}; "
    if two_sided:
        return head + "two-sided (the owner sends it from its storage in one datatype, into a buffer kept with the plan)"
    proto = protocol(m, itemsize, write)
    _, times = choose(m.regions, itemsize, write)
    pred = ", ".join(f"{p} {t * 1e6:.1f}" for p, t in sorted(times.items(), key=lambda kv: kv[1]))
    how = "model's choice" if settings.get("protocol") == "auto" else "pinned by pg.config"
    return head + f"{proto} ({how}; predicted us: {pred})"

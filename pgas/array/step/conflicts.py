"""Which statements' messages may travel together in a replay: a statement's messages
cannot go before earlier statements that write what they carry."""

from __future__ import annotations

from ..expr import Expr
from ..view import View
from .record import Stmt, all_bases


def moved_arrays(fs, s: Stmt) -> set:
    """The ids of the arrays that statement ``s`` (compiled as ``fs``) moves in messages from
    or to this locale."""
    slots = {m.slot for m in fs.plan.fetches} | {slot for _, slot, _, _ in fs.sends}
    bases = all_bases(s)                             # (the recording's arrays, slot by slot)
    return {id(bases[k]) for k in slots}


def conflict(run, s: Stmt, first: int, moved: set) -> str | None:
    """Why statement ``s``'s messages cannot travel before the statements ``run`` (the first
    numbered ``first``, from 0): it moves (``moved``: the ids of the arrays it moves in
    messages here) a region of an array that one of them writes; None if it moves none
    (regions by their bounding boxes in the whole array; reads of arrays that travel in
    no message here are computed in order, after the writes)."""
    reads = [v for v in _views(s.value) if id(v.base) in moved]
    for k, m in enumerate(run):
        t = m.target
        box = None
        for v in reads:
            if v.base is t.base:
                box = box or _box(t)
                if _overlap(box, _box(v)):
                    return (f"reads {t.base.label} where statement {first + k + 1} writes it: its messages "
                            "must carry the new values")
    return None


def _views(node) -> list:
    out: list = []
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, View):
            out.append(x)
        elif isinstance(x, Expr):
            stack.extend(x.args)
    return out


def _box(v: View) -> tuple:
    """The bounding box of view ``v``'s elements in its base: ``(low, high)`` per dimension."""
    out = []
    for row, c in zip(v.M, v.c):
        lo = hi = c
        for m, n in zip(row, v.shape):
            if n == 0:
                return ()
            step = m * (n - 1)
            lo, hi = lo + min(step, 0), hi + max(step, 0)
        out.append((lo, hi))
    return tuple(out)


def _overlap(a: tuple, b: tuple) -> bool:
    if not a or not b:
        return False                                   # an empty view
    return all(lo1 <= hi2 and lo2 <= hi1 for (lo1, hi1), (lo2, hi2) in zip(a, b))

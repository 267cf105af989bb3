"""Inspector fallback for statements the piece decomposition cannot separate.

An array dim driven by two loop variables (``A[i + j]``) has no periodic
owner per variable, so the planner enumerates the iterations instead: each
iteration runs on the owner of the write; every other access's elements are
bucketed by owner, and the distinct offsets wanted from one (locale, array)
go in ONE indexed message.  Planning costs time proportional to the box;
the plan is cached like any other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Statement
from .result import Plan


@dataclass(frozen=True, eq=False)
class Gather:
    """How to assemble one access's values for a locale's iterations: positions
    served from local storage (``local_pos`` <- ``local_off``) and, per fetch
    message index, positions served from that message's buffer."""

    local_pos: np.ndarray
    local_off: np.ndarray
    remote: tuple            # (msg index, positions, buffer positions)


@dataclass(frozen=True, eq=False)
class IndexedMessage:
    """Elements at ``offsets`` of array ``slot`` on locale ``peer``, in one message."""

    peer: int
    slot: int
    offsets: np.ndarray

    @property
    def size(self) -> int:
        return len(self.offsets)


@dataclass(frozen=True, eq=False)
class InspectorLocale:
    """One locale's part: its iterations (``iters``, positions in the flattened box, and
    ``points``, their loop variable values),
    one :class:`Gather` per access (the write's holds the local offsets written),
    and its fetch messages."""

    iters: np.ndarray
    gathers: tuple
    fetches: tuple
    writebacks: tuple = ()
    points: tuple = ()       # the loop variable values of ``iters``

    @property
    def count(self) -> int:
        return len(self.iters)


def box_points(stmt: Statement) -> list[np.ndarray]:
    """Loop variable values of every iteration (flattened C order over the box, part
    after part for a non-rectangular domain)."""
    if stmt.parts:
        per = [box_points(sub) for sub in stmt.rectangles()]
        return [np.concatenate([p[v] for p in per]) for v in range(stmt.nvars)]
    axes = [start + step * np.arange(count, dtype=np.int64) for start, step, count in stmt.box]
    return [g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")] if axes else []


def global_indices(x, pts) -> tuple[np.ndarray, ...]:
    """Per array dim, the global index of access ``x`` at each iteration."""
    n = len(pts[0]) if pts else 1
    out = []
    for row, c in zip(x.M, x.c):
        g = np.full(n, c, dtype=np.int64)
        for a, vals in zip(row, pts):
            if a:
                g += a * vals
        out.append(g)
    return tuple(out)


def owned_points(stmt: Statement, wx, layout, me: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """The iterations whose element of the write ``wx`` locale ``me`` owns: their positions
    in the flattened box (as :func:`box_points` orders it) and their loop variable values.

    When each subscript of the write is driven by at most one loop variable (and each
    variable drives at most one subscript), the candidates come from ``me``'s owned
    indices per dimension, so the work grows with what ``me`` computes, not with the
    box; otherwise every iteration is enumerated."""
    if stmt.parts:
        pos, vals, base = [], [], 0
        for sub in stmt.rectangles():
            p, v = owned_points(sub, wx, layout, me)
            pos.append(p + base)
            vals.append(v)
            base += sub.size
        return np.concatenate(pos), [np.concatenate([v[k] for v in vals]) for k in range(stmt.nvars)]
    ks = _owned_steps(stmt.box, wx, layout.owned(me))
    if ks is None:
        pts = box_points(stmt)
        execs = np.broadcast_to(np.asarray(layout.owners(global_indices(wx, pts))), (stmt.size,))
        mine = np.flatnonzero(execs == me)
        return mine, [p[mine] for p in pts]
    counts = [c for _, _, c in stmt.box]
    grid = [g.reshape(-1) for g in np.meshgrid(*ks, indexing="ij")] if ks else []
    pos = np.ravel_multi_index(grid, counts) if ks else np.zeros(1, np.int64)
    pts = [start + step * k for (start, step, _), k in zip(stmt.box, grid)]
    if stmt.size == 0 or not len(pos):
        return np.zeros(0, np.int64), [np.zeros(0, np.int64) for _ in stmt.box]
    owners = np.broadcast_to(np.asarray(layout.owners(global_indices(wx, pts))), (len(pos),))
    keep = np.flatnonzero(owners == me)           # a check: the candidates are exactly these
    return pos[keep].astype(np.int64), [p[keep] for p in pts]


def _owned_steps(box, wx, owned) -> list[np.ndarray] | None:
    """Per loop variable, the sorted step numbers ``k`` (value ``start + step * k``) that can
    write an element whose index is in ``owned`` (per dimension); None if the write's
    subscripts are not one variable each."""
    ks: list = [np.arange(c, dtype=np.int64) for _, _, c in box]
    seen = set()
    for d, (row, c) in enumerate(zip(wx.M, wx.c)):
        vs = [v for v, a in enumerate(row) if a]
        if len(vs) > 1 or (vs and vs[0] in seen):
            return None
        idx = np.asarray(owned[d], dtype=np.int64)
        if not vs:                                  # a constant subscript: all or nothing
            if not np.any(idx == c):
                return [np.zeros(0, np.int64) for _ in box]
            continue
        v = vs[0]
        seen.add(v)
        start, step, count = box[v]
        num, den = idx - c - row[v] * start, row[v] * step
        k = num[num % den == 0] // den
        ks[v] = np.unique(k[(k >= 0) & (k < count)])
    return ks


def plan_inspector(stmt: Statement, layouts, P: int, me: int):
    """A :class:`~pgas.plan.result.Plan` of kind ``"inspector"`` for ``stmt`` on locale
    ``me``: its iterations (those whose write it owns) and its indexed fetches.  The
    readers of its memory are not worked out (that would take every locale's
    iterations), so the executor synchronises inspector statements globally."""
    wx = stmt.accesses[stmt.write]
    mine, pts = owned_points(stmt, wx, layouts[wx.slot], me)
    per = []
    for x in stmt.accesses:
        g = global_indices(x, pts)
        L = layouts[x.slot]
        owners = np.broadcast_to(np.asarray(L.owners(g)), (len(mine),))
        per.append((owners, np.broadcast_to(L.local_flat(g, owners), (len(mine),))))
    wanted = {}
    for a, x in enumerate(stmt.accesses):
        if a == stmt.write:
            continue
        ow = per[a][0]
        for src in np.unique(ow[ow != me]):
            wanted.setdefault((int(src), x.slot), []).append(per[a][1][ow == src])
    keys = sorted(wanted)
    offsets = {k: np.unique(np.concatenate(wanted[k])) for k in keys}
    fetches = tuple(IndexedMessage(k[0], k[1], offsets[k]) for k in keys)
    gathers = []
    for a, x in enumerate(stmt.accesses):
        ow, off = per[a]
        loc = np.flatnonzero(ow == me)
        remote = []
        for i, k in enumerate(keys):
            if k[1] != x.slot:
                continue
            pos = np.flatnonzero(ow == k[0])
            if len(pos):
                remote.append((i, pos, np.searchsorted(offsets[k], off[pos])))
        gathers.append(Gather(loc, off[loc], tuple(remote)))
    lp = InspectorLocale(mine, tuple(gathers), fetches, points=tuple(pts))
    return Plan(stmt, P, me, "inspector", stmt.write, (), (), fetches, (), inspector=lp)

"""Inspector fallback for statements the piece decomposition cannot separate.

An array dim driven by two loop variables (``A[i + j]``) has no periodic
owner per variable, so the planner enumerates the iterations instead: each
iteration runs on the owner of the write; every other access's elements are
bucketed by owner, and the distinct offsets wanted from one (locale, array)
go in ONE indexed message.  Planning costs time proportional to the box;
the plan is cached like any other.

The iterations are enumerated in *chunks* (C-order runs of the domain of at most
a given number of points, :func:`owned_chunks`), so the per-iteration index
arrays (loop variable values, owners, offsets) exist for one chunk at a time:
the plan keeps the messages' offsets (the distinct remote elements read) and
remakes a chunk's index arrays when it runs (:meth:`InspectorLocale.chunks`),
unless all plans' kept chunks fit in :data:`KEEP` bytes.
Chunks never split what must be computed together (:func:`whole_from`): the
iterations that reduce into one element, or those of a statement whose values
could read what another chunk writes.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..layout.boxes import BOX, boxes
from .clip import points_mask
from .model import Statement
from .result import Plan

#: Points of the domain in one chunk by default: an eighth of a box, as a chunk's index
#: arrays are many (values, owners and offsets of every access; 256 KiB each).
CHUNK = BOX // 8

#: Bytes of chunks' index arrays that inspector plans keep between runs, all plans together
#: (a plan whose chunks do not fit remakes them at each run).
KEEP = 32 << 20
_kept = [0]                                      # bytes kept now

#: Offsets (int64) gathered from chunks before they are merged into the distinct ones (or
#: twice the distinct ones, when more).
MERGE = 4 * BOX


@dataclass(frozen=True, eq=False)
class Gather:
    """How to assemble one access's values for a chunk's iterations: positions
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
class Chunk:
    """Some of a locale's iterations: ``iters`` (positions in the flattened domain, as
    :func:`box_points` orders it), ``points`` (their loop variable values) and one
    :class:`Gather` per access (the write's holds the local offsets written), with
    positions counted from the chunk's first iteration."""

    iters: np.ndarray
    points: tuple
    gathers: tuple

    @property
    def count(self) -> int:
        return len(self.iters)


@dataclass(frozen=True, eq=False)
class InspectorLocale:
    """One locale's part: its fetch messages and the number of its iterations, whose
    :class:`Chunk` s :meth:`chunks` makes."""

    stmt: Statement
    layouts: tuple
    me: int
    fetches: tuple
    count: int
    kept: dict = field(default_factory=dict)     # chunk size -> the chunks, while they fit in KEEP

    def chunks(self, most: int = CHUNK):
        """This locale's iterations as :class:`Chunk` s of at most ``most`` points of the
        domain each where :func:`whole_from` lets them be cut, in the domain's order.  The
        chunks are kept with the plan while all plans' kept chunks fit in :data:`KEEP`
        bytes, and remade at each run otherwise."""
        got = self.kept.get(most)
        if got is not None:
            yield from got
            return
        index = {(m.peer, m.slot): (i, m.offsets) for i, m in enumerate(self.fetches)}
        wx = self.stmt.accesses[self.stmt.write]
        per_iteration = 8 * (1 + self.stmt.nvars + 2 * len(self.stmt.accesses))
        made = [] if _kept[0] + per_iteration * self.count <= KEEP else None
        size = 0
        for pos, pts in owned_chunks(self.stmt, wx, self.layouts[wx.slot], self.me, most, whole_from(self.stmt)):
            per = _resolve(self.stmt, self.layouts, pts, len(pos), self.me)
            chunk = Chunk(pos, tuple(pts), tuple(_gather(x, ow, off, self.me, index)
                                                 for x, (ow, off) in zip(self.stmt.accesses, per)))
            if made is not None:
                size += _nbytes(chunk)
                made.append(chunk)
            yield chunk
        if made is not None and _kept[0] + size <= KEEP:
            _kept[0] += size
            self.kept[most] = tuple(made)
            weakref.finalize(self, _release, size)


def _nbytes(chunk: Chunk) -> int:
    """Bytes of ``chunk``'s index arrays."""
    arrays = [chunk.iters, *chunk.points]
    for g in chunk.gathers:
        arrays += [g.local_pos, g.local_off] + [a for _, pos, bpos in g.remote for a in (pos, bpos)]
    return sum(a.nbytes for a in arrays)


def _release(size: int) -> None:
    _kept[0] -= size


def box_points(stmt: Statement) -> list[np.ndarray]:
    """Loop variable values of every iteration (flattened C order over the box, part
    after part for a non-rectangular domain, the box's points inside its clips for
    a clipped one)."""
    if stmt.parts:
        per = [box_points(sub) for sub in stmt.rectangles()]
        return [np.concatenate([p[v] for p in per]) for v in range(stmt.nvars)]
    axes = [start + step * np.arange(count, dtype=np.int64) for start, step, count in stmt.box]
    pts = [g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")] if axes else []
    if stmt.clips:
        keep = points_mask(pts, stmt.clips)
        pts = [p[keep] for p in pts]
    return pts


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


def whole_from(stmt: Statement) -> int:
    """The first loop variable from which on a chunk holds every value (the outer ones are
    cut): ``nvars`` (cut anywhere) for a plain write that is one-to-one and reads the
    array it writes, if at all, at the written element; for a reduction into
    elements that a one-to-one map of the other variables writes, on one box, the
    first reduced variable (an element's iterations then fall in one chunk, in their
    order); 0 (one chunk) otherwise: the values of a statement whose iterations write
    one element several times, or read elements that other iterations write, are
    computed all before any is stored, as are a reduction's over a domain of parts."""
    wx = stmt.accesses[stmt.write]
    if any(x.slot == wx.slot and (x.M, x.c) != (wx.M, wx.c) for x in stmt.accesses):
        return 0
    keep = [v for v in range(stmt.nvars) if v not in stmt.reduced_vars]
    if keep and np.linalg.matrix_rank(np.array([[row[v] for v in keep] for row in wx.M], dtype=float)) < len(keep):
        return 0
    if not stmt.reduced_vars:
        return stmt.nvars
    return 0 if stmt.parts else min(stmt.reduced_vars)


def owned_points(stmt: Statement, wx, layout, me: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """The iterations whose element of the write ``wx`` locale ``me`` owns: their positions
    in the flattened domain (as :func:`box_points` orders it) and their loop variable
    values (all :func:`owned_chunks` together)."""
    pos, vals = [], []
    for p, v in owned_chunks(stmt, wx, layout, me):
        pos.append(p)
        vals.append(v)
    if not pos:
        return np.zeros(0, np.int64), [np.zeros(0, np.int64) for _ in range(stmt.nvars)]
    return np.concatenate(pos), [np.concatenate([v[k] for v in vals]) for k in range(stmt.nvars)]


def owned_chunks(stmt: Statement, wx, layout, me: int, most: int = CHUNK, whole: int | None = None):
    """:func:`owned_points` in chunks, in order: ``(positions, values)`` of C-order runs of
    the domain (each part's, for a domain of parts) of at most ``most`` points, the loop
    variables from ``whole`` on (all by default: none) never cut, so a chunk may hold
    more; ``whole`` 0 gives one chunk of every iteration.

    When each subscript of the write is driven by at most one loop variable (and each
    variable drives at most one subscript), the candidates come from ``me``'s owned
    indices per dimension, so the work grows with what ``me`` computes, not with the
    domain; otherwise every point of the domain is enumerated, a chunk at a time."""
    whole = stmt.nvars if whole is None else whole
    if whole == 0:
        most = math.inf
    if stmt.parts:
        base, gathered = 0, []
        for sub in stmt.rectangles():
            for pos, pts in owned_chunks(sub, wx, layout, me, most, whole):
                gathered.append((pos + base, pts))
                if whole:
                    yield gathered.pop()
            base += sub.size
        if gathered:
            yield (np.concatenate([g[0] for g in gathered]),
                   [np.concatenate([g[1][k] for g in gathered]) for k in range(stmt.nvars)])
        return
    counts = [c for _, _, c in stmt.box]
    ks = None if stmt.clips else _owned_steps(stmt.box, wx, layout.owned(me))
    if ks is None:                                # every point, positions counting the domain's
        axes, sizes, done = [np.arange(c, dtype=np.int64) for c in counts], counts, 0
    else:
        axes, sizes = ks, [len(k) for k in ks]
    for key in _runs(sizes, whole, most):
        idx = [g.reshape(-1) for g in np.meshgrid(*[a[s] for a, s in zip(axes, key)], indexing="ij")]
        pts = [start + step * k for (start, step, _), k in zip(stmt.box, idx)]
        n = len(idx[0]) if idx else 1
        if stmt.clips:
            inside = np.flatnonzero(points_mask(pts, stmt.clips))
            pos, pts, done = done + np.arange(len(inside), dtype=np.int64), [p[inside] for p in pts], done + len(inside)
            n = len(inside)
        else:
            pos = np.ravel_multi_index(idx, counts).astype(np.int64) if idx else np.zeros(1, np.int64)
        owners = np.broadcast_to(np.asarray(layout.owners(global_indices(wx, pts))), (n,))
        keep = np.flatnonzero(owners == me)       # (from owned indices: a check, they are exactly these)
        if len(keep):
            yield pos[keep], [p[keep] for p in pts]


def _runs(sizes, whole: int, most):
    """Index keys (a slice per axis) cutting ``sizes`` into C-order runs of at most ``most``
    points, the axes from ``whole`` on kept whole (a run holds one point at least of the
    others)."""
    if math.prod(sizes) == 0:
        return
    inner = math.prod(sizes[whole:])
    every = (slice(None),) * len(sizes)
    if most == math.inf:
        yield every
        return
    for key in boxes(sizes[:whole], max(int(most) // inner, 1)):
        yield tuple(key) + every[len(key):]


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


def _resolve(stmt: Statement, layouts, pts, n: int, me: int) -> list:
    """Per access, the owner and the local offset of its element at each of ``n`` iterations
    of locale ``me`` (which owns every element written)."""
    per = []
    for k, x in enumerate(stmt.accesses):
        g = global_indices(x, pts)
        L = layouts[x.slot]
        owners = np.broadcast_to(np.asarray(me if k == stmt.write else L.owners(g)), (n,))
        per.append((owners, np.broadcast_to(L.local_flat(g, owners), (n,))))
    return per


def _gather(x, ow, off, me: int, index) -> Gather:
    """Access ``x``'s :class:`Gather` for a chunk whose elements are at ``off`` on ``ow``;
    ``index``: (peer, slot) -> (message index, its sorted offsets)."""
    loc = np.flatnonzero(ow == me)
    remote = []
    far = ow != me
    for src in np.unique(ow[far]) if far.any() else ():
        i, offsets = index[(int(src), x.slot)]
        pos = np.flatnonzero(ow == src)
        remote.append((i, pos, np.searchsorted(offsets, off[pos])))
    return Gather(loc, off[loc], tuple(remote))


def plan_inspector(stmt: Statement, layouts, P: int, me: int):
    """A :class:`~pgas.plan.result.Plan` of kind ``"inspector"`` for ``stmt`` on locale
    ``me``: its iterations (those whose write it owns) and its indexed fetches, one per
    (locale, array) read, found a chunk of iterations at a time.  The readers of its
    memory are not worked out (that would take every locale's iterations), so the
    executor synchronises inspector statements globally."""
    wx = stmt.accesses[stmt.write]
    wanted: dict = {}
    count = held = 0
    limit = MERGE
    for pos, pts in owned_chunks(stmt, wx, layouts[wx.slot], me):
        count += len(pos)
        per = _resolve(stmt, layouts, pts, len(pos), me)
        for a, x in enumerate(stmt.accesses):
            ow, off = per[a]
            far = ow != me
            if a == stmt.write or not far.any():
                continue
            for src in np.unique(ow[far]):
                got = np.unique(off[ow == src])
                wanted.setdefault((int(src), x.slot), []).append(got)
                held += len(got)
        if held > limit:                              # the distinct offsets so far, per message
            wanted = {k: [np.unique(np.concatenate(v))] for k, v in wanted.items()}
            held = sum(len(v[0]) for v in wanted.values())
            limit = max(MERGE, 2 * held)
    keys = sorted(wanted)
    fetches = tuple(IndexedMessage(k[0], k[1], np.unique(np.concatenate(wanted[k]))) for k in keys)
    lp = InspectorLocale(stmt, tuple(layouts), me, fetches, count)
    return Plan(stmt, P, me, "inspector", stmt.write, (), (), fetches, (), inspector=lp)

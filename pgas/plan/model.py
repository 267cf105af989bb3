"""The statement form every front end produces: an iteration box and affine accesses.

A statement iterates over a box of loop variables ``i = (i_0, ..., i_{m-1})``,
one strided range each, and touches arrays through affine accesses
``X[M @ i + c]``: ``M`` is an integer matrix (array dims x loop vars), ``c`` an
offset vector.  A zero column of ``M`` is a broadcast (the access ignores that
loop variable); a negative entry walks the array backwards.  Exactly one
access is the write; if the write ignores a loop variable the statement is a
reduction over it with ``reduce`` (a ufunc name such as ``"add"``).

``A[1:, ::2] = B[:-1, 1::2]`` over ``A`` of shape (5, 6) is::

    box    = ((0, 1, 4), (0, 1, 3))           # (start, step, count) per loop var
    A[1:, ::2]     M = ((1, 0), (0, 2))  c = (1, 0)      (the write)
    B[:-1, 1::2]   M = ((1, 0), (0, 2))  c = (0, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from .clip import points_mask, structure


class PlanError(ValueError):
    """A statement that cannot be planned (an access out of bounds, a bad box, ...)."""


@dataclass(frozen=True)
class Access:
    """``slot``'s array indexed by ``M @ i + c`` (``M`` as a tuple of rows)."""

    slot: int
    M: tuple[tuple[int, ...], ...]
    c: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "M", tuple(tuple(int(a) for a in row) for row in self.M))
        object.__setattr__(self, "c", tuple(int(x) for x in self.c))
        if len(self.M) != len(self.c):
            raise PlanError(f"access matrix has {len(self.M)} rows but offset has {len(self.c)} entries")

    @property
    def ndim(self) -> int:
        return len(self.c)

    def var_of_row(self, d: int) -> int | None:
        """The loop variable array dim ``d`` depends on (None for a constant index);
        raises if it depends on more than one."""
        vs = [v for v, a in enumerate(self.M[d]) if a]
        if len(vs) > 1:
            raise PlanError(f"array dim {d} depends on several loop variables")
        return vs[0] if vs else None

    @property
    def separable(self) -> bool:
        """True if every array dim depends on at most one loop variable."""
        return all(sum(1 for a in row if a) <= 1 for row in self.M)

    def uses(self, v: int) -> bool:
        """True if the access depends on loop variable ``v``."""
        return any(row[v] for row in self.M)

    def text(self, name: str, var_names) -> str:
        """Human form, e.g. ``A[2*i + 1, j - 1]``."""
        parts = []
        for row, c in zip(self.M, self.c):
            terms = []
            for a, v in zip(row, var_names):
                if a:
                    terms.append((a, v if abs(a) == 1 else f"{abs(a)}*{v}"))
            s = ""
            for k, (a, t) in enumerate(terms):
                s += ("-" if a < 0 else "") + t if k == 0 else (" - " if a < 0 else " + ") + t
            if c or not s:
                s = str(c) if not s else s + (f" - {-c}" if c < 0 else f" + {c}")
            parts.append(s)
        return f"{name}[{', '.join(parts)}]"


@dataclass(frozen=True)
class Statement:
    """An iteration ``box`` (``(start, step, count)`` per loop var), its ``accesses``,
    the index of the written access, the reduction ufunc name (or None), and for a
    non-rectangular domain its disjoint rectangular ``parts`` (``box`` bounding them),
    or the affine ``clips`` ``(coefs, const)`` (``coefs @ i + const >= 0``) that cut
    it out of ``box`` (see :mod:`pgas.plan.clip`) with ``count`` its number of points
    (counted here from the box's points when not given)."""

    box: tuple[tuple[int, int, int], ...]
    accesses: tuple[Access, ...]
    write: int
    reduce: str | None = None
    parts: tuple = ()
    clips: tuple = ()
    count: int = -1

    def __post_init__(self) -> None:
        object.__setattr__(self, "box", tuple((int(a), int(b), int(n)) for a, b, n in self.box))
        object.__setattr__(self, "accesses", tuple(self.accesses))
        object.__setattr__(self, "parts", tuple(tuple((int(a), int(b), int(n)) for a, b, n in p)
                                                for p in self.parts))
        m = len(self.box)
        for start, step, count in self.box + tuple(r for p in self.parts for r in p):
            if step == 0 or count < 0:
                raise PlanError(f"bad iteration range start={start} step={step} count={count}")
        if any(len(p) != m for p in self.parts):
            raise PlanError(f"every part of the domain must have {m} ranges (one per loop variable)")
        if self.clips:
            self._check_clips(m)
        for x in self.accesses:
            if any(len(row) != m for row in x.M):
                raise PlanError(f"access matrix rows must have {m} entries (one per loop variable)")
        if not 0 <= self.write < len(self.accesses):
            raise PlanError(f"write index {self.write} out of range")
        w = self.accesses[self.write]
        if not w.separable and self.reduce is None:
            raise PlanError("a written A[i + j] (several loop variables in one subscript) may write one "
                            "element from several iterations: reduce into it (+=, *=, np.minimum(..., out=)) "
                            "or write with separable subscripts")
        if self.reduced_vars and self.reduce is None and self.size:    # (empty: A[None][0:0] = v writes nothing)
            raise PlanError("the write ignores loop variable(s) "
                            f"{list(self.reduced_vars)}: use an in-place operator (+=, *=, ...) to reduce over them")

    def _check_clips(self, m: int) -> None:
        clips = tuple((tuple(int(a) for a in c), int(e)) for c, e in self.clips)
        object.__setattr__(self, "clips", clips)
        if self.parts:
            raise PlanError("a domain has rectangular parts or clips, not both")
        try:
            structure(clips, m)
        except ValueError as e:
            raise PlanError(str(e)) from None
        if any(self.box[v][1] < 0 for c, _ in clips for v, a in enumerate(c) if a):
            raise PlanError("a clipped loop variable needs a positive step")
        if self.count < 0:
            axes = [s + st * np.arange(n, dtype=np.int64) for s, st, n in self.box]
            pts = [g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")]
            object.__setattr__(self, "count", int(points_mask(pts, clips).sum()))

    def __hash__(self) -> int:
        """The fields' hash, computed once (a cached statement is looked up by it on every run)."""
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.box, self.accesses, self.write, self.reduce, self.parts, self.clips, self.count))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}     # str hashes differ by process

    @property
    def nvars(self) -> int:
        return len(self.box)

    @property
    def size(self) -> int:
        """Number of iterations."""
        if self.clips:
            return self.count
        total = 0
        for box in self.boxes():
            n = 1
            for _, _, c in box:
                n *= c
            total += n
        return total

    def boxes(self) -> tuple:
        """The rectangular boxes whose union is the domain (``(box,)`` for a box)."""
        return self.parts if self.parts else (self.box,)

    def rectangles(self) -> tuple[Statement, ...]:
        """One box statement per part (``(self,)`` for a box)."""
        if not self.parts:
            return (self,)
        return tuple(Statement(b, self.accesses, self.write, self.reduce) for b in self.parts)

    @cached_property
    def reduced_vars(self) -> tuple[int, ...]:
        """Loop variables the write ignores (the statement reduces over them)."""
        w = self.accesses[self.write]
        return tuple(v for v in range(self.nvars) if not w.uses(v))

    @cached_property
    def separable(self) -> bool:
        return all(x.separable for x in self.accesses)

    def check_bounds(self, shapes) -> None:
        """Raise :class:`PlanError` if an access leaves its array (``shapes`` per slot)."""
        boxes = [b for b in self.boxes() if all(n for _, _, n in b)]
        if not boxes:
            return
        for k, x in enumerate(self.accesses):
            shape = shapes[x.slot]
            if len(shape) != x.ndim:
                raise PlanError(f"access {k} has {x.ndim} subscripts for an array of shape {shape}")
            for d, (row, c) in enumerate(zip(x.M, x.c)):
                if self.clips:                 # over the domain's points, not its bounding box
                    span = _clipped_span(row, self.box, self.clips)
                    if span is None:
                        return                 # no point at all
                    lo, hi = c + span[0], c + span[1]
                else:
                    lo, hi = c + min(_span(row, b)[0] for b in boxes), c + max(_span(row, b)[1] for b in boxes)
                if lo < 0 or hi >= shape[d]:
                    raise PlanError(f"access {k} reaches index {lo if lo < 0 else hi} in dim {d} "
                                    f"of an array of shape {tuple(shape)}")


def _span(row, box) -> tuple[int, int]:
    """Least and greatest ``row @ i`` over ``box``."""
    lo = hi = 0
    for a, (start, step, count) in zip(row, box):
        if a:
            first, last = a * start, a * (start + step * (count - 1))
            lo += min(first, last)
            hi += max(first, last)
    return lo, hi


@lru_cache(maxsize=1024)
def _clipped_span(row, box, clips) -> tuple[int, int] | None:
    """Least and greatest ``row @ i`` over the points of a clipped domain (None if it has
    none): per point of its outer variables (integer work per outer point, never per
    element), each inner variable ranges over its box lattice cut to the interval its
    clips give, and a free variable over its box range."""
    inner, outer = structure(clips, len(box))
    axes = [box[v][0] + box[v][1] * np.arange(box[v][2], dtype=np.int64) for v in outer]
    pts = [g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")] if axes else []
    n = len(pts[0]) if pts else 1
    lo, hi, ok = np.zeros(n, np.int64), np.zeros(n, np.int64), np.ones(n, bool)
    for v, (a, (start, step, count)) in enumerate(zip(row, box)):
        if v in outer:
            if a:
                val = a * pts[outer.index(v)]
                lo, hi = lo + val, hi + val
            continue
        kmin, kmax = np.zeros(n, np.int64), np.full(n, count - 1, np.int64)
        for (coefs, const), w in zip(clips, inner):
            if w != v:
                continue
            bound = const + sum(coefs[o] * pts[j] for j, o in enumerate(outer) if coefs[o])
            if coefs[v] > 0:                       # x_v >= -bound (step > 0 for clipped variables)
                kmin = np.maximum(kmin, -((start + bound) // step))
            else:                                  # x_v <= bound
                kmax = np.minimum(kmax, (bound - start) // step)
        ok &= kmin <= kmax
        if a:
            first, last = a * (start + step * kmin), a * (start + step * kmax)
            lo, hi = lo + np.minimum(first, last), hi + np.maximum(first, last)
    if not ok.any():
        return None
    return int(lo[ok].min()), int(hi[ok].max())

"""Pieces of a box clipped by affine constraints: non-rectangular domains without rows.

A clipped domain (:attr:`~pgas.plan.model.Statement.clips`) is its bounding box
cut by constraints ``coefs @ x + const >= 0``.  Each constraint bounds one
*inner* variable (its last variable with a non-zero coefficient, which is
``+1`` for a lower bound and ``-1`` for an upper one) by an affine function of
*outer* variables that no constraint bounds: ``j - i - 1 >= 0`` and
``n - 1 - j >= 0`` for ``j in range(i + 1, n)``.  The planner cuts the box
into its lattices as for a rectangle, so the number of pieces grows with the
distribution's blocks, never with the extents, and then clips each piece:

- :func:`holds` says exactly whether a piece holds a point of the domain: for
  every point of the outer variables' lattices (vectorised, ``O(n / p)`` integer
  work per piece for a triangle) each inner variable's interval must meet its
  lattice.  Empty pieces are dropped, on the executing locale as in the
  readers' and writers' peer lists, so both sides agree on who talks to whom.
- :func:`clip_piece` also shrinks the piece to the hull, in lattice
  coordinates, of its domain points (so an access that depends on one
  variable of a triangle fetches exactly the rows or columns the triangle
  uses), and keeps, in the task's coordinates ``(t_0, u_0, t_1, u_1, ...)``,
  the constraints that cut through it: the executor computes the task on the
  piece's strided views and writes only where :func:`mask` holds.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .lattice import Lattice

#: Outer points of one piece enumerated at once, at most.
MAX_OUTER = 1 << 24

#: Bands a clipped piece is cut into along an outer variable when an access reads
#: through both variables of a bound that cuts it (``Y[j, i]`` over ``j > i``): the
#: hulls of a triangle's bands waste about ``1 / BANDS`` of its footprint.
BANDS = 8


def structure(clips, nvars: int):
    """``(inner, outer)``: per constraint its inner variable, and the sorted outer
    variables; raises ValueError if the constraints do not have that form."""
    try:
        return _structure(clips, nvars)
    except TypeError:                          # unhashable clips (lists)
        return _structure.__wrapped__(clips, nvars)


@lru_cache(maxsize=256)
def _structure(clips, nvars: int):
    inner = []
    for coefs, _ in clips:
        if len(coefs) != nvars:
            raise ValueError(f"a clip needs {nvars} coefficients (one per loop variable), got {len(coefs)}")
        nz = [v for v, c in enumerate(coefs) if c]
        if not nz or coefs[nz[-1]] not in (1, -1):
            raise ValueError("each clip bounds its last variable, with coefficient +1 or -1")
        inner.append(nz[-1])
    outer = sorted({v for coefs, _ in clips for v, c in enumerate(coefs) if c} - set(inner))
    if any(coefs[w] for (coefs, _), v in zip(clips, inner) for w in set(inner) if w != v):
        raise ValueError("a variable bounded by a clip cannot bound another one")
    return tuple(inner), tuple(outer)


#: Bounds standing for "none" (an inner variable no clip bounds from that side).
_NO_LO, _NO_HI = -(1 << 61), 1 << 61


def _clamp(x: np.ndarray, hi: int) -> np.ndarray:
    """``x`` clipped to ``[0, hi]`` (``np.clip`` costs ten times as much on small arrays)."""
    return np.minimum(np.maximum(x, 0), hi)


def _count_le(lat: Lattice, X: np.ndarray) -> np.ndarray:
    """Number of points of ``lat`` that are ``<= X`` (elementwise)."""
    y = X - lat.first
    if lat.ntiles == 1 or lat.dt <= 0:
        return _clamp(y // lat.du + 1, lat.length)
    t = y // lat.dt
    within = _clamp((y - t * lat.dt) // lat.du + 1, lat.length)
    return np.where(t < 0, 0, np.where(t >= lat.ntiles, lat.ntiles * lat.length, t * lat.length + within))


def _feasible(piece, clips, inner, outer):
    """``(ok, idx, lo, hi)``: per outer point (C order over the outer lattices'
    point indices ``idx``) whether it has domain points, and per inner variable
    the index of its first and last lattice point in range there."""
    sizes = [piece[v].ntiles * piece[v].length for v in outer]
    total = math.prod(sizes)
    if total > MAX_OUTER:
        raise ValueError(f"a clipped piece has {total} outer points (more than {MAX_OUTER})")
    if len(sizes) == 1:                            # the usual case (a triangle), without meshgrid
        idx = [np.arange(total, dtype=np.int64)]
    else:
        idx = list(np.indices(sizes, dtype=np.int64).reshape(len(sizes), total))
    vals = {}
    for v, k in zip(outer, idx):
        lat = piece[v]
        vals[v] = lat.first + lat.du * (k % lat.length) + lat.dt * (k // lat.length)
    ok = np.ones(total, dtype=bool)
    lo, hi = {}, {}
    for v in sorted(set(inner)):
        L, H = _NO_LO, _NO_HI                      # Python ints until a bound depends on a point
        for (coefs, const), w in zip(clips, inner):
            if w != v:
                continue
            rest = const
            for u in outer:
                if coefs[u]:
                    rest = rest + coefs[u] * vals[u]
            if coefs[v] > 0:
                L = max(L, -rest) if isinstance(rest, int) and isinstance(L, int) else np.maximum(L, -rest)
            else:
                H = min(H, rest) if isinstance(rest, int) and isinstance(H, int) else np.minimum(H, rest)
        L = np.full(total, L, dtype=np.int64) if isinstance(L, int) else L
        H = np.full(total, H, dtype=np.int64) if isinstance(H, int) else H
        lat = piece[v]
        a = _count_le(lat, L - 1)                       # index of the first point >= L
        b = _count_le(lat, H) - 1                       # index of the last point <= H
        ok &= b >= a
        lo[v], hi[v] = a, b
    return ok, idx, lo, hi


def holds(piece, clips) -> bool:
    """True if ``piece`` (lattices per loop variable) holds a point of the domain."""
    if not clips:
        return True
    inner, outer = structure(clips, len(piece))
    return bool(_feasible(piece, clips, inner, outer)[0].any())


def _hull(lat: Lattice, first_idx: np.ndarray, last_idx: np.ndarray) -> Lattice:
    """The smallest sub-lattice (a box in (tile, position) coordinates) of ``lat``
    holding its points from index ``first_idx`` to ``last_idx`` (per point)."""
    n = lat.length
    if n == 1 or lat.ntiles == 1:                  # one of the two coordinates is fixed: no divisions
        lo, hi = int(first_idx.min()), int(last_idx.max())
        if n == 1:
            return Lattice(lat.first + lat.dt * lo, lat.du, 1, lat.dt, hi - lo + 1)
        return Lattice(lat.first + lat.du * lo, lat.du, hi - lo + 1, lat.dt, 1)
    t1, u1, t2, u2 = first_idx // n, first_idx % n, last_idx // n, last_idx % n
    t_lo, t_hi = int(t1.min()), int(t2.max())
    if (t1 == t2).all():
        u_lo, u_hi = int(u1.min()), int(u2.max())
    else:
        u_lo, u_hi = 0, n - 1
    return Lattice(lat.first + lat.dt * t_lo + lat.du * u_lo, lat.du, u_hi - u_lo + 1, lat.dt, t_hi - t_lo + 1)


def clip_piece(piece, clips):
    """``(piece, task_clips)``: ``piece`` shrunk to the hull of its domain points and
    the constraints that cut through it, as ``(coefs, const)`` over the task's
    dims ``(t_0, u_0, t_1, u_1, ...)``; None if the piece holds no domain point."""
    if not clips:
        return piece, ()
    inner, outer = structure(clips, len(piece))
    ok, idx, lo, hi = _feasible(piece, clips, inner, outer)
    if not ok.any():
        return None
    new = list(piece)
    for v, k in zip(outer, idx):
        k = k[ok]
        new[v] = _hull(piece[v], k, k)
    for v in lo:
        new[v] = _hull(piece[v], lo[v][ok], hi[v][ok])
    out = []
    for coefs, const in clips:
        c = const + sum(a * new[v].first for v, a in enumerate(coefs))
        dims = []
        for v, a in enumerate(coefs):
            dims += [a * new[v].dt, a * new[v].du]
        shape = [n for lat in new for n in (lat.ntiles, lat.length)]
        least = c + sum(min(0, d * (s - 1)) for d, s in zip(dims, shape))
        if least < 0:
            out.append((tuple(dims), c))
    return tuple(new), tuple(out)


def mask(shape, clips, key=()) -> np.ndarray:
    """Where a task of ``shape`` is inside its ``clips`` (broadcastable to ``shape``); with
    ``key`` (slices of leading axes), of that box of the task only (broadcastable to it)."""
    keep = np.ones((1,) * len(shape), dtype=bool)
    for dims, const in clips:
        acc = np.full((1,) * len(shape), const, dtype=np.int64)
        for d, (a, n) in enumerate(zip(dims, shape)):
            if a and n > 1:
                idx = np.arange(n, dtype=np.int64)
                idx = idx[key[d]] if d < len(key) else idx
                sh = [1] * len(shape)
                sh[d] = len(idx)
                acc = acc + a * idx.reshape(sh)
        keep = keep & (acc >= 0)
    return keep


def points_mask(pts, clips) -> np.ndarray:
    """Which of the points ``pts`` (one array of values per loop variable) satisfy ``clips``."""
    n = len(pts[0]) if pts else 0
    keep = np.ones(n, dtype=bool)
    for coefs, const in clips:
        acc = np.full(n, const, dtype=np.int64)
        for a, vals in zip(coefs, pts):
            if a:
                acc = acc + a * vals
        keep &= acc >= 0
    return keep


def coupled(clips, accesses, skip: int) -> tuple:
    """Outer variables to cut into bands: those of a bound that some access other than
    ``skip`` reads through together with the bound's inner variable."""
    out = set()
    for coefs, _ in clips:
        vs = [v for v, a in enumerate(coefs) if a]
        inner = vs[-1]
        for k, x in enumerate(accesses):
            if k != skip and x.uses(inner):
                out |= {v for v in vs[:-1] if x.uses(v)}
    return tuple(sorted(out))


def banded(piece, clips, outer_vars, bands: int = BANDS) -> list:
    """:func:`clip_piece` of ``piece`` cut into up to ``bands`` bands along each of
    ``outer_vars`` (pieces without domain points dropped); ``[]`` if it has none."""
    first = clip_piece(piece, clips)
    if first is None:
        return []
    if not first[1] or not outer_vars:
        return [first]
    parts = [first[0]]
    for v in outer_vars:
        cut = []
        for pc in parts:
            lat = pc[v]
            if lat.ntiles > 1:
                edges = sorted({lat.ntiles * b // bands for b in range(bands + 1)})
                subs = [Lattice(lat.first + lat.dt * a, lat.du, lat.length, lat.dt, b - a)
                        for a, b in zip(edges, edges[1:])]
            else:
                edges = sorted({lat.length * b // bands for b in range(bands + 1)})
                subs = [Lattice(lat.first + lat.du * a, lat.du, b - a, lat.dt, 1) for a, b in zip(edges, edges[1:])]
            cut += [pc[:v] + (s,) + pc[v + 1:] for s in subs]
        parts = cut
    return [g for g in (clip_piece(pc, clips) for pc in parts) if g is not None]

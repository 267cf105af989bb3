"""Piece decomposition: modulo unrolling without unrolling, generalised.

Loop variable ``i = start + step*k`` (``0 <= k < count``) drives array dims
``g = a*i + c`` of block size ``b`` over ``p`` locales.  The owner
``(g // b) % p`` is periodic in ``k`` with period ``T = b*p / gcd(a*step, b*p)``;
the common period of all dims that depend on the variable is their lcm.
Inside one period the block index ``g // b`` changes at a few *cuts*; between
two cuts every dim stays in one block.  A *segment* ``[k0, k0 + len)`` of the
period, repeated every ``T``, is therefore a lattice

    k = k0 + u + T*t        0 <= u < len,  0 <= t < ntiles

on which each dim has one owner and the affine local index
``l = l0 + a*step*u + (a*step*T / p)*t``.  Cyclic data with unit stride gives
the residue classes (``len = 1``), Block-Cyclic strips of ``lcm(b, stride)``,
Block intervals between block edges (``ntiles = 1``).  The remainder
``count % T`` is one more cut, so every segment has a whole number of tiles.
Pieces of several loop variables are products of their segments.  The work
is proportional to the number of cuts, never to the extents.

The per-dimension arithmetic (:func:`pgas.layout.segments.var_segments`) lives
in :mod:`pgas.layout`, where the one-sided slice transfers use it too.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..layout.segments import c_strides, var_segments
from .model import Statement


@dataclass(frozen=True)
class Lattice:
    """One loop variable's part of a piece: ``i = first + du*u + dt*t``."""

    first: int
    du: int
    length: int
    dt: int
    ntiles: int

    def values(self) -> range | list:
        """The loop variable's values on this lattice (in (t, u) order)."""
        return [self.first + self.dt * t + self.du * u for t in range(self.ntiles) for u in range(self.length)]


def lattices(stmt: Statement, layouts) -> tuple[tuple[Lattice, ...], ...]:
    """Per loop variable, its lattices (one per segment)."""
    out = []
    for v, (start, step, count) in enumerate(stmt.box):
        terms = []
        for x in stmt.accesses:
            maps = layouts[x.slot].maps
            for d, row in enumerate(x.M):
                if row[v]:
                    terms.append((row[v], x.c[d], maps[d]))
        T, segs = var_segments(start, step, count, terms)
        out.append(tuple(Lattice(start + step * k0, step, n, step * T, nt) for k0, n, nt in segs))
    return tuple(out)


def access_on_piece(x, piece: tuple[Lattice, ...], layout) -> tuple[int, int, tuple[int, ...]]:
    """``(owner, offset, strides)`` of access ``x`` on a piece: the owning locale and
    the LMAD in its dense local storage over the lattice dims ``(t_0, u_0, t_1, u_1, ...)``."""
    coords, l0, lt, lu = [], [], [], []
    for d, (row, c) in enumerate(zip(x.M, x.c)):
        m = layout.maps[d]
        g = c
        st = [0] * len(piece)
        su = [0] * len(piece)
        for v, a in enumerate(row):
            if a:
                lat = piece[v]
                g += a * lat.first
                su[v] = a * lat.du
                st[v] = a * lat.dt // m.p
        coords.append(int(m.owner(g)))
        l0.append(int(m.local_index(g)))
        lt.append(st)
        lu.append(su)
    owner = int(layout.locale_of(coords))
    S = c_strides(layout.local_shape(owner))
    offset = sum(s * l for s, l in zip(S, l0))
    strides = []
    for v in range(len(piece)):
        strides.append(sum(S[d] * lt[d][v] for d in range(x.ndim)))
        strides.append(sum(S[d] * lu[d][v] for d in range(x.ndim)))
    return owner, offset, tuple(strides)

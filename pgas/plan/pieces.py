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

>>> from pgas.dist import DimMap
>>> var_segments(0, 1, 10, [(1, 0, DimMap(10, 3, 1))])   # Cyclic over 3: residues
(3, ((0, 1, 4), (1, 1, 3), (2, 1, 3)))
>>> var_segments(0, 1, 10, [(1, 1, DimMap(12, 3, 4))])   # Block over 3, shifted by 1
(12, ((0, 3, 1), (3, 4, 1), (7, 3, 1)))
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .model import Statement


def var_segments(start: int, step: int, count: int, terms) -> tuple[int, tuple]:
    """Period ``T`` and segments ``(k0, len, ntiles)`` of one loop variable.

    ``terms`` lists ``(a, c, dimmap)`` for every array dim ``g = a*i + c`` that
    depends on the variable (``a != 0``).
    """
    if count == 0:
        return 1, ()
    T = 1
    for a, _, m in terms:
        T = math.lcm(T, m.period // math.gcd(abs(a * step), m.period))
    Q, R = divmod(count, T)
    K = min(T, count)
    cuts = {0, K}
    if Q and R:
        cuts.add(R)
    for a, c, m in terms:
        A, g0 = a * step, a * start + c
        if abs(A) >= m.b:
            cuts.update(range(1, K))
            break
        g1 = g0 + A * (K - 1)
        if A > 0:
            cuts.update(-((g0 - e) // A) for e in range((g0 // m.b + 1) * m.b, g1 + 1, m.b))
        else:
            cuts.update((g0 - e) // -A + 1 for e in range((g1 // m.b + 1) * m.b, g0 + 1, m.b))
    cuts = sorted(cuts)
    segs = tuple((k0, k1 - k0, Q + (1 if k1 <= R or not Q else 0)) for k0, k1 in zip(cuts, cuts[1:]))
    return T, tuple(s for s in segs if s[2])


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


def c_strides(shape) -> tuple[int, ...]:
    """C-order element strides of a dense array of ``shape``."""
    s, out = 1, []
    for n in reversed(shape):
        out.append(s)
        s *= n
    return tuple(reversed(out))


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

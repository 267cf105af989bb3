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

The per-dimension arithmetic (:func:`pgas.layout.segments.var_lattices`) lives
in :mod:`pgas.layout`.  Terms whose owner does not repeat inside the range
(Block dims) are not folded into the common period: they cut the range into
intervals over which the periodic terms are tiled, so mixing Block with
Cyclic data gives a few pieces, not one per index.  A locale finds its own
pieces directly (the owning access fixed to its coordinates), without the
pieces of any other locale.
"""

from __future__ import annotations

from functools import lru_cache

from ..layout.segments import c_strides, var_lattices
from .lattice import Lattice
from .model import Statement


def lattices(stmt: Statement, layouts, only=None, fix=None, box=None) -> tuple[tuple[Lattice, ...], ...]:
    """Per loop variable, its lattices, on which every access (of ``only``, default all)
    has one owner.  ``fix = (k, coords)`` keeps only the iterations where access ``k``
    lies on the locale at grid ``coords``: a locale's own pieces (``k`` the owning
    access) or the pieces that read its memory (``k`` a read), found without looking
    at any other locale's part.  Accesses with a constant index off ``coords`` in a
    dimension give no pieces at all (an empty lattice list for variable 0).  ``box``
    replaces the statement's box (one part of a non-rectangular domain)."""
    box = stmt.box if box is None else box
    return _on_box(_terms(stmt, layouts, only, fix), box)


def part_lattices(stmt: Statement, layouts, boxes, only=None, fix=None):
    """:func:`lattices` of each of ``boxes`` (the parts of a domain), the accesses'
    terms worked out once for all of them."""
    try:
        terms = _terms_cached(stmt, layouts, only, fix)
    except TypeError:                         # unhashable arguments (lists): not memoised
        terms = _terms(stmt, layouts, only, fix)
    return [_on_box(terms, b) for b in boxes]


def _on_box(terms, box) -> tuple[tuple[Lattice, ...], ...]:
    if terms is None:
        return tuple(() for _ in box)
    if terms == "off":
        return ((),) + tuple(() for _ in box[1:])
    return tuple(_var_lats(start, step, count, tv, fixed) for (start, step, count), (tv, fixed) in zip(box, terms))


@lru_cache(maxsize=8192)
def _var_lats(start: int, step: int, count: int, terms: tuple, fixed: tuple) -> tuple[Lattice, ...]:
    """One loop variable's lattices (:func:`~pgas.layout.segments.var_lattices`), memoised:
    a first plan asks for the same variable's lattices for its own pieces and for
    each peer search, and statements of one kernel share most of them."""
    return tuple(Lattice(start + step * k0, step, n, step * T, nt)
                 for k0, n, T, nt in var_lattices(start, step, count, terms, fixed))


@lru_cache(maxsize=2048)
def _terms_cached(stmt: Statement, layouts: tuple, only, fix):
    return _terms(stmt, layouts, only, fix)


def _terms(stmt: Statement, layouts, only, fix):
    """Per loop variable ``(terms, fixed)`` for :func:`~pgas.layout.segments.var_lattices`;
    ``"off"`` if the fixed access has a constant index off ``coords``, None if the
    fixed access can never lie on ``coords`` (``A[i, i]`` off the grid's diagonal)."""
    keep = range(len(stmt.accesses)) if only is None else only
    if fix is not None:
        x = stmt.accesses[fix[0]]
        maps = layouts[x.slot].maps
        if any(not any(row) and maps[d].owner(c) != fix[1][d] for d, (row, c) in enumerate(zip(x.M, x.c))):
            return "off"
    out = []
    for v in range(stmt.nvars):
        terms, fixed, seen = [], {}, {}
        for k in keep:
            x = stmt.accesses[k]
            maps = layouts[x.slot].maps
            for d, row in enumerate(x.M):
                if row[v]:
                    term = (row[v], x.c[d], maps[d])
                    if term not in seen:
                        seen[term] = len(terms)
                        terms.append(term)
                    if fix is not None and k == fix[0]:
                        if fixed.setdefault(seen[term], fix[1][d]) != fix[1][d]:
                            fixed = None             # A[i, i] on a locale off the grid's diagonal
                            break
            if fixed is None:
                break
        if fixed is None:
            return None
        out.append((tuple(terms), tuple(fixed.items())))
    return tuple(out)


def access_on_piece(x, piece: tuple[Lattice, ...], layout) -> tuple[int, int, tuple[int, ...]]:
    """``(owner, offset, strides)`` of access ``x`` on a piece: the owning locale and
    the LMAD in its dense local storage over the lattice dims ``(t_0, u_0, t_1, u_1, ...)``."""
    coords, l0, terms = [], [], []               # terms: (dim, var, per tile, per step)
    maps = layout.maps
    for d, (row, c) in enumerate(zip(x.M, x.c)):
        m = maps[d]
        b, p = m.b, m.p
        period = b * p
        g = c
        for v, a in enumerate(row):
            if a:
                lat = piece[v]
                g += a * lat.first
                dg = a * lat.dt            # per tile: whole periods (periodic term) or inside one block
                terms.append((d, v, dg // p if dg % period == 0 else dg, a * lat.du))
        coords.append(int((g // b) % p))           # m.owner(g)
        l0.append(int((g // period) * b + g % b))   # m.local_index(g)
    owner = int(layout.locale_of(coords))
    S = layout.storage_strides(owner) if layout.ghosts else c_strides(layout.local_shape(owner))
    offset = layout.storage_base(owner) + sum(s * l for s, l in zip(S, l0))
    strides = [0] * (2 * len(piece))
    for d, v, t, u in terms:
        strides[2 * v] += S[d] * t
        strides[2 * v + 1] += S[d] * u
    return owner, offset, tuple(strides)

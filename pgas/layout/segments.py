"""Where a strided range of indices changes block: the per-dimension core of
modulo unrolling without unrolling, shared by the statement planner and the
one-sided slice transfers.

Index ``g = a*(start + step*k) + c`` (``0 <= k < count``) of a dimension with
block size ``b`` over ``p`` locales has owner ``(g // b) % p``, periodic in
``k`` with period ``T = b*p / gcd(a*step, b*p)``.  Inside one period the
block index changes at a few *cuts*; a *segment* ``[k0, k0 + len)`` between
two cuts, repeated every ``T`` for ``ntiles`` tiles, is a lattice on which
the dimension has one owner and an affine local index: ``a*step`` per step
inside the segment, ``a*step*T / p`` per tile.  The work is proportional to
the number of cuts in one period, never to the extent.

>>> from pgas.layout import DimMap
>>> var_segments(0, 1, 10, [(1, 0, DimMap(10, 3, 1))])   # Cyclic over 3: residues
(3, ((0, 1, 4), (1, 1, 3), (2, 1, 3)))
>>> var_segments(0, 1, 10, [(1, 1, DimMap(12, 3, 4))])   # Block over 3, shifted by 1
(12, ((0, 3, 1), (3, 4, 1), (7, 3, 1)))
"""

from __future__ import annotations

import math


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


def c_strides(shape) -> tuple[int, ...]:
    """C-order element strides of a dense array of ``shape``."""
    s, out = 1, []
    for n in reversed(shape):
        out.append(s)
        s *= n
    return tuple(reversed(out))


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _block_k(A: int, g0: int, e0: int, e1: int) -> tuple[int, int]:
    """The ``k`` with ``e0 <= g0 + A*k < e1`` (``A != 0``), as a half-open range."""
    if A > 0:
        return _ceil_div(e0 - g0, A), _ceil_div(e1 - g0, A)
    return (g0 - e1) // -A + 1, (g0 - e0) // -A + 1


def _runs(A: int, g0: int, m, q: int, lo: int, hi: int) -> list[tuple[int, int]]:
    """The ``k`` in ``[lo, hi)`` where ``g0 + A*k`` lies on grid coordinate ``q``, as runs."""
    if hi <= lo:
        return []
    ga, gb = g0 + A * lo, g0 + A * (hi - 1)
    gmin, gmax = min(ga, gb), max(ga, gb)
    j = gmin // m.b
    j += (q - j) % m.p
    out = []
    while j * m.b <= gmax:
        k0, k1 = _block_k(A, g0, j * m.b, (j + 1) * m.b)
        k0, k1 = max(k0, lo), min(k1, hi)
        if k0 < k1:
            out.append((k0, k1))
        j += m.p
    return sorted(out)


def _cuts(A: int, g0: int, m, lo: int, hi: int) -> list[int]:
    """The ``k`` in ``(lo, hi)`` where ``g0 + A*k`` enters a new block."""
    if abs(A) >= m.b:
        return list(range(lo + 1, hi))
    ga, gb = g0 + A * lo, g0 + A * (hi - 1)
    if A > 0:
        return [_ceil_div(e - g0, A) for e in range((ga // m.b + 1) * m.b, gb + 1, m.b)]
    return [(g0 - e) // -A + 1 for e in range((gb // m.b + 1) * m.b, ga + 1, m.b)]


def _refine(ivs, A, g0, m, q):
    """Intervals ``ivs`` cut at the term's block changes (``q`` None) or kept where it is on ``q``."""
    out = []
    for lo, hi in ivs:
        if q is None:
            cuts = [lo] + sorted(_cuts(A, g0, m, lo, hi)) + [hi]
            out.extend((a, b) for a, b in zip(cuts, cuts[1:]) if a < b)
        else:
            out.extend(_runs(A, g0, m, q, lo, hi))
    return out


def var_lattices(start: int, step: int, count: int, terms, fixed=()) -> tuple:
    """Lattices ``(k0, len, T, ntiles)`` (``k = k0 + u + T*t``) covering the ``k`` in
    ``[0, count)`` on which every term has one owner, restricted to the ``k`` where
    each term of ``fixed`` (``(term index, grid coordinate)`` pairs) lies on that
    coordinate.

    ``terms`` lists ``(a, c, dimmap)`` for the array dims ``g = a*i + c`` that depend
    on the variable ``i = start + step*k``.  A term whose owner repeats inside the
    range (period ``T_i < count``) is *periodic*; the others (Block, or any term on a
    short range) only cut the range into a few intervals.  The periodic terms are
    cut once, inside one common period ``T``, and tiled over the intervals, so the
    work depends on the blocks crossed, never on the extent, and a fixed term is
    only ever looked at where it lies on its coordinate: a locale plans its own part.

    >>> from pgas.layout import DimMap
    >>> var_lattices(0, 1, 10, [(1, 0, DimMap(10, 3, 1))], fixed=((0, 1),))   # my residue class
    ((1, 1, 3, 3),)
    >>> var_lattices(0, 1, 12, [(1, 0, DimMap(12, 3, 4)), (1, 0, DimMap(12, 2, 1))], ((0, 2),))
    ((8, 1, 2, 2), (9, 1, 2, 2))
    """
    if count <= 0:
        return ()
    if count == 1:                                   # one point (a row of a triangle): no cuts
        for i, q in fixed:
            a, c, m = terms[i]
            if m.owner(a * start + c) != q:
                return ()
        return ((0, 1, 1, 1),)
    fix = dict(fixed)
    info = []
    for a, c, m in terms:
        A = a * step
        info.append((A, a * start + c, m, m.period // math.gcd(abs(A), m.period)))
    periodic = [i for i, t in enumerate(info) if t[3] < count]
    ivs = [(0, count)]
    for want in (True, False):                       # fixed terms first: they shrink the range most
        for i, (A, g0, m, Ti) in enumerate(info):
            if i not in periodic and (i in fix) == want:
                ivs = _refine(ivs, A, g0, m, fix.get(i))
    if not ivs:
        return ()
    T = 1 if periodic else count
    for i in periodic:
        T = math.lcm(T, info[i][3])
    segs = [(0, min(T, count))]
    for want in (True, False):
        for i in periodic:
            if (i in fix) == want:
                A, g0, m, _ = info[i]
                segs = _refine(segs, A, g0, m, fix.get(i))
    out = []
    for x, y in ivs:
        for s0, s1 in segs:
            t_first, t_last = (x - s1) // T + 1, _ceil_div(y - s0, T) - 1
            if t_first > t_last:
                continue
            f_lo, f_hi = max(_ceil_div(x - s0, T), t_first), min((y - s1) // T, t_last)
            if f_lo <= f_hi:                         # the whole tiles: one lattice
                out.append((s0 + T * f_lo, s1 - s0, T, f_hi - f_lo + 1))
            for t in sorted({t_first, t_last}):      # clipped tiles can only be at the ends
                if not f_lo <= t <= f_hi:
                    a, b = max(s0 + T * t, x), min(s1 + T * t, y)
                    if a < b:
                        out.append((a, b - a, T, 1))
    return tuple(sorted(out))

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

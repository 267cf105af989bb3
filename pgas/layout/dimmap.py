"""One dimension of a distribution: the block-cyclic map.

A dimension of extent ``n`` is dealt over ``p`` locales in blocks of ``b``::

    owner(g) = (g // b) % p
    local(g) = (g // (b * p)) * b + g % b

``Block`` is ``b = ceil(n / p)`` (one block per locale), ``Cyclic`` is
``b = 1`` and ``BlockCyclic(b)`` is any other ``b``.  For n = 10, p = 3, b = 2::

    g      0 1 | 2 3 | 4 5 | 6 7 | 8 9
    owner  0 0 | 1 1 | 2 2 | 0 0 | 1 1
    local  0 1 | 0 1 | 0 1 | 2 3 | 2 3

A locale's owned indices are stored densely, its blocks concatenated in
increasing order, and are described (like Chapel's ``myStarts``) by the
strided range of its block starts plus the block length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class DimMap:
    """The block-cyclic map of one dimension: extent ``n``, ``p`` locales, block ``b``.

    >>> m = DimMap(10, 3, 2)
    >>> [m.owner(g) for g in range(10)]
    [0, 0, 1, 1, 2, 2, 0, 0, 1, 1]
    >>> [m.local_size(q) for q in range(3)]
    [4, 4, 2]
    >>> m.owned_ranges(0)
    [range(0, 2), range(6, 8)]
    >>> m.global_index(1, 3)
    9
    """

    n: int
    p: int
    b: int

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError(f"extent must be >= 0, got {self.n}")
        if self.p < 1:
            raise ValueError(f"locale count must be >= 1, got {self.p}")
        if self.b < 1:
            raise ValueError(f"block size must be positive, got {self.b}")

    @property
    def period(self) -> int:
        """Length of one full round of blocks over all locales (``b * p``)."""
        return self.b * self.p

    def owner(self, g):
        """Locale coordinate (along this dimension) owning global index ``g``; vectorised."""
        return (g // self.b) % self.p

    def local_index(self, g):
        """Position of ``g`` in its owner's dense local storage; vectorised."""
        return (g // self.period) * self.b + g % self.b

    def global_index(self, q: int, l):
        """Global index of local element ``l`` on locale ``q``; vectorised."""
        return (l // self.b) * self.period + q * self.b + l % self.b

    def local_size(self, q: int) -> int:
        """Number of indices locale ``q`` owns."""
        full, rem = divmod(self.n, self.period)
        return full * self.b + min(max(rem - q * self.b, 0), self.b)

    def block_starts(self, q: int) -> range:
        """Global starts of the blocks locale ``q`` owns, as a strided range."""
        return range(q * self.b, self.n, self.period)

    def owned_ranges(self, q: int) -> list[range]:
        """Locale ``q``'s owned indices as a few disjoint strided ranges (one per
        block when blocks are few, else one per offset within a block)."""
        starts = self.block_starts(q)
        if len(starts) <= self.b:
            return [range(s, min(s + self.b, self.n)) for s in starts]
        return [r for r in (range(q * self.b + k, self.n, self.period) for k in range(self.b)) if len(r)]

    def owned(self, q: int) -> np.ndarray:
        """Locale ``q``'s owned global indices in local storage order."""
        return self.global_index(q, np.arange(self.local_size(q)))

    def block_edges(self, lo: int, hi: int) -> list[int]:
        """Block boundaries strictly inside ``(lo, hi)``: where the owner may change."""
        first = (lo // self.b + 1) * self.b
        return list(range(first, hi, self.b))

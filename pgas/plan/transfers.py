"""Remote footprints as strided regions (LMADs) and their merging into messages.

The footprint of an access over a piece is an LMAD ``offset + sum(stride_k * x_k)``
in its owner's local storage, over the lattice dims.  :func:`normalise` drops
broadcast (stride 0) and unit dims and turns negative strides positive; the
result is a *region* ``(offset, counts, strides)`` as the comm layer's
``get_regions`` / ``put_regions`` take it.  All regions one locale needs from
another locale's array go in ONE message; regions that overlap or touch along
one dim (the ``A[i-1]`` / ``A[i+1]`` of a stencil) are first coalesced into
one, so shared elements move once.

>>> b = MessageBuilder(write=False)
>>> u1 = b.add(10, (3,), (4,))     # x[10 + 4k], read through A[i + 1]
>>> u2 = b.add(6, (3,), (4,))      # one tile earlier, through A[i - 1]
>>> regions, uses = b.build()
>>> regions
((6, (4,), (4,)),)
>>> uses[u1], uses[u2]
((1, (1,)), (0, (1,)))
"""

from __future__ import annotations

import numpy as np

from ..layout.segments import c_strides


def normalise(offset: int, counts, strides):
    """``(region, dims, flips)``: the region, for each kept region dim the lattice dim
    it came from, and which of them were reversed."""
    keep = [k for k, (n, s) in enumerate(zip(counts, strides)) if n > 1 and s != 0]
    keep.sort(key=lambda k: -abs(strides[k]))
    flips = []
    for k in keep:
        if strides[k] < 0:
            offset += strides[k] * (counts[k] - 1)
        flips.append(strides[k] < 0)
    region = (offset, tuple(counts[k] for k in keep), tuple(abs(strides[k]) for k in keep))
    return region, tuple(keep), tuple(flips)


def region_size(region) -> int:
    n = 1
    for c in region[1]:
        n *= c
    return n


def _merge(r1, r2, write: bool):
    """The union of two regions if it is one region (exactly, for writes), with the
    shifts of each within it; else None."""
    (o1, c1, s1), (o2, c2, s2) = r1, r2
    if s1 != s2 or len(c1) != len(c2):
        return None
    if o2 < o1:
        got = _merge(r2, r1, write)
        return None if got is None else (got[0], got[2], got[1])
    delta = o2 - o1
    if delta == 0 and c1 == c2 and not write:
        return r1, (0,) * len(c1), (0,) * len(c1)
    for d, s in enumerate(s1):
        if delta % s or any(c1[e] != c2[e] for e in range(len(c1)) if e != d):
            continue
        k = delta // s
        if (k == c1[d]) if write else (0 <= k <= c1[d]):
            counts = tuple(max(c1[d], k + c2[d]) if e == d else c1[e] for e in range(len(c1)))
            shift = tuple(k if e == d else 0 for e in range(len(c1)))
            return (o1, counts, s1), (0,) * len(c1), shift
    return None


class MessageBuilder:
    """Collects the regions of one (locale, other locale, array) message and
    coalesces them; each added footprint becomes a *use* of one merged region."""

    def __init__(self, write: bool) -> None:
        self.write = write
        self.regions: list = []       # [region, [(use id, shift vector)]]
        self.nuses = 0

    def add(self, offset: int, counts, strides) -> int:
        """Add a normalised region (as parts); returns its use id."""
        uid = self.nuses
        self.nuses += 1
        new = [(offset, tuple(counts), tuple(strides)), [(uid, (0,) * len(counts))]]
        changed = True
        while changed:
            changed = False
            for k, old in enumerate(self.regions):
                got = _merge(old[0], new[0], self.write)
                if got is not None:
                    region, sh_old, sh_new = got
                    uses = [(u, tuple(a + b for a, b in zip(s, sh_old))) for u, s in old[1]]
                    uses += [(u, tuple(a + b for a, b in zip(s, sh_new))) for u, s in new[1]]
                    new = [region, uses]
                    del self.regions[k]
                    changed = True
                    break
        self.regions.append(new)
        return uid

    def build(self):
        """``(regions, uses)``: the message's regions in buffer order, and per use id
        ``(start of its data in the message buffer, C strides of its region in the buffer)``."""
        regions, uses, pos = [], [None] * self.nuses, 0
        for region, members in self.regions:
            cs = c_strides(region[1])
            for u, shift in members:
                uses[u] = (pos + sum(a * b for a, b in zip(shift, cs)), cs)
            regions.append(region)
            pos += region_size(region)
        return tuple(regions), tuple(uses)


def disjoint(regions) -> bool:
    """True if no element lies in two of ``regions`` (each region alone never
    repeats one).  Regions whose offset ranges do not meet are disjoint without
    looking further; others are compared element by element."""
    spans = sorted((o, o + sum(s * (n - 1) for n, s in zip(c, st)), k) for k, (o, c, st) in enumerate(regions))
    meet = set()
    end, last = -1, None
    for lo, hi, k in spans:
        if lo <= end:
            meet.update((k, last))
        if hi > end:
            end, last = hi, k
    if not meet:
        return True
    offs = np.concatenate([expand(*regions[k]) for k in sorted(meet)])
    return len(np.unique(offs)) == len(offs)


def buffer_view(start: int, cstrides, dims, flips, counts, ndims: int):
    """``(offset, strides)`` over all ``ndims`` lattice dims of a use in its message
    buffer: kept dims map to region dims (reversed where flipped), others stride 0."""
    strides = [0] * ndims
    offset = start
    for cs, k, f in zip(cstrides, dims, flips):
        strides[k] = -cs if f else cs
        if f:
            offset += cs * (counts[k] - 1)
    return offset, tuple(strides)


def expand(offset: int, counts, strides) -> np.ndarray:
    """Every element offset of an LMAD, in lattice (C) order, repeats included."""
    idx = np.full((), offset, dtype=np.int64)
    for n, s in zip(counts, strides):
        idx = idx[..., None] + s * np.arange(n, dtype=np.int64)
    return idx.reshape(-1)

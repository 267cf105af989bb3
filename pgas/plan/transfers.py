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
from . import lmad


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
    combines them (:mod:`pgas.plan.lmad`: contiguous or overlapping ones along a
    level, interleaved ones into a new level); each added footprint becomes a
    *use* of one combined region, at a shift along the region's levels, its own
    levels being ``dmap`` of the region's."""

    def __init__(self, write: bool) -> None:
        self.write = write
        self.regions: list = []       # [region, [(use id, shift vector, dmap)]]
        self.nuses = 0

    def add(self, offset: int, counts, strides) -> int:
        """Add a normalised region (as parts); returns its use id."""
        uid = self.nuses
        self.nuses += 1
        n = len(counts)
        new = [(offset, tuple(counts), tuple(strides)), [(uid, (0,) * n, tuple(range(n)))]]
        changed = True
        while changed:
            changed = False
            for k, old in enumerate(self.regions):
                got = self._combine(old, new)
                if got is not None:
                    new = got
                    del self.regions[k]
                    changed = True
                    break
        self.regions.append(new)
        return uid

    def _combine(self, a, b):
        """One entry for entries ``a`` and ``b`` if their regions combine, else None."""
        (ra, ma), (rb, mb) = a, b
        if len(ra[1]) == len(rb[1]) + 1:
            rb, mb = _pad(ra, rb, mb)
        elif len(rb[1]) == len(ra[1]) + 1:
            ra, ma = _pad(rb, ra, ma)
        if ra is None or rb is None:
            return None
        got = _merge(ra, rb, self.write)
        if got is not None:
            region, sa, sb = got
            return [region, _shifted(ma, sa) + _shifted(mb, sb)]
        lo, hi = ((ra, ma), (rb, mb)) if ra[0] <= rb[0] else ((rb, mb), (ra, ma))
        got = lmad.interleave(lo[0], hi[0])
        if got is None:
            return None
        region, _, _ = got
        return [region, [(u, s + (0,), d) for u, s, d in lo[1]] + [(u, s + (1,), d) for u, s, d in hi[1]]]

    def build(self):
        """``(regions, uses)``: the message's regions in buffer order (coalesced and
        stacked, :func:`pgas.plan.lmad.stack`: the same element sequence), and per use
        id ``(start of its data in the message buffer, C strides of its levels in it)``."""
        regions, uses, pos = [], [None] * self.nuses, 0
        for region, members in self.regions:
            cs = c_strides(region[1])
            for u, shift, dmap in members:
                uses[u] = (pos + sum(a * b for a, b in zip(shift, cs)), tuple(cs[d] for d in dmap))
            regions.append(region)
            pos += region_size(region)
        return lmad.stack(regions), tuple(uses)


def _pad(big, small, members):
    """``small`` with a count-1 level inserted where ``big`` has a level it lacks (and its
    members' shifts and level maps adjusted), or ``(None, None)``."""
    o, c, s = small
    for e in range(len(big[1])):
        if big[2][:e] + big[2][e + 1:] == s and big[1][:e] + big[1][e + 1:] == c:
            region = (o, c[:e] + (1,) + c[e:], s[:e] + (big[2][e],) + s[e:])
            return region, [(u, sh[:e] + (0,) + sh[e:], tuple(d + (d >= e) for d in dm)) for u, sh, dm in members]
    return None, None


def _shifted(members, shift):
    return [(u, tuple(a + b for a, b in zip(s, shift)), d) for u, s, d in members]


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

"""Linear memory access descriptors (LMADs): the algebra of a transfer's regions.

A *region* ``(offset, counts, strides)`` is the LMAD ``offset + sum_k strides[k] * x_k``
(``0 <= x_k < counts[k]``) of Paek, Hoeflinger and Padua, listed in C order of
``x``: this order is the order of the elements in a message buffer.  A level's
*span* is ``stride * (count - 1)``, the distance its index travels.  The
operations here never change the element sequence a list of regions describes
(so a message buffer laid out for the original regions stays valid), except
:func:`interleave`, which builds a new region and says where each part lies in it:

- :func:`coalesce` fuses adjacent levels whose outer stride is the inner level's
  extent (a ``(4, 16) / (16, 1)`` box, stride/count, is one run of 64) and drops
  single-count levels;
- :func:`stack` fuses consecutive regions of one shape whose offsets step evenly
  (``A[i][j]``, ``A[i + 1][j]`` of a stencil, or the tiles of a Block-Cyclic
  piece) into one region with one more level, and joins touching runs;
- :func:`interleave` combines two regions of one shape whose offsets differ by
  less than their smallest stride (``a[100 i + 1]`` and ``a[100 i + 2]``) into one
  region with a new innermost level;
- :func:`runs` lists the maximal contiguous runs, and :func:`bounding` the
  smallest contiguous interval holding every element.

>>> coalesce((0, (4, 16), (16, 1)))
(0, (64,), (1,))
>>> stack([(0, (8,), (1,)), (10, (8,), (1,)), (20, (8,), (1,))])
((0, (3, 8), (10, 1)),)
>>> interleave((1, (5,), (100,)), (2, (5,), (100,)))
((1, (5, 2), (100, 1)), 1, 1)
>>> runs([(0, (2, 3), (10, 1)), (13, (2,), (1,))])
(array([ 0, 10]), array([3, 5]))
>>> text((0, (99, 98), (100, 1)))
'+0 (100/9800, 1/97)'
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


def size(region) -> int:
    """Number of elements (repeats included) of a region."""
    n = 1
    for c in region[1]:
        n *= c
    return n


def expand(offset: int, counts, strides) -> np.ndarray:
    """Every element offset of an LMAD, in C order, repeats included."""
    idx = np.full((), offset, dtype=np.int64)
    for n, s in zip(counts, strides):
        idx = idx[..., None] + s * np.arange(n, dtype=np.int64)
    return idx.reshape(-1)


def coalesce(region):
    """The same element sequence with adjacent fusable levels fused and count-1
    levels dropped: level ``k`` joins level ``k + 1`` when ``stride[k] ==
    stride[k + 1] * count[k + 1]``."""
    off, counts, strides = region
    cs, ss = [], []
    for c, s in zip(counts, strides):
        if c == 1:
            continue
        cs.append(int(c))
        ss.append(int(s))
    k = len(cs) - 2
    while k >= 0:
        if ss[k] == ss[k + 1] * cs[k + 1]:
            cs[k + 1] *= cs[k]
            del cs[k], ss[k]
        k -= 1
    return (int(off), tuple(cs), tuple(ss))


def contiguous(region) -> bool:
    """True if a (coalesced) region is one run of consecutive elements."""
    _, c, s = region
    return not c or (len(c) == 1 and s[0] == 1)


def stack(regions) -> tuple:
    """Coalesced regions describing the same element sequence as ``regions``:
    consecutive regions of one shape whose offsets step by a constant become one
    region with a new outer level, and touching contiguous runs one run."""
    out: list = []
    group: list = []                    # [first region, step, number] of the open stack

    def close():
        if group:
            (o, c, s), step, n = group
            out.append(coalesce((o, (n,) + c, (step,) + s)) if n > 1 else (o, c, s))
            group.clear()

    for r in regions:
        r = coalesce(r)
        if group:
            (o, c, s), step, n = group
            if r[1:] == (c, s):
                d = r[0] - (o + (n - 1) * step) if n > 1 else r[0] - o
                if n == 1 and d != 0:
                    group[1], group[2] = d, 2
                    continue
                if n > 1 and d == step:
                    group[2] = n + 1
                    continue
            close()
        group[:] = [r, 0, 1]
    close()
    return _join(out)


def _join(regions) -> tuple:
    out: list = []
    for r in regions:
        if out and contiguous(out[-1]) and contiguous(r) and out[-1][0] + size(out[-1]) == r[0]:
            prev = out.pop()
            r = (prev[0], (size(prev) + size(r),), (1,))
        out.append(r)
    return tuple(out)


def interleave(r1, r2):
    """``(region, level, index)``: one region holding two regions of one shape whose
    offsets differ by ``0 < delta < min(stride)``, with the new level (stride
    ``delta``, count 2) innermost; ``r1`` is index 0 along it and ``r2`` index 1
    (``r2``'s offset must be the larger).  None if they do not interleave so."""
    (o1, c1, s1), (o2, c2, s2) = r1, r2
    delta = o2 - o1
    if c1 != c2 or s1 != s2 or delta <= 0 or (s1 and delta >= min(s1)):
        return None
    return (o1, c1 + (2,), s1 + (delta,)), len(c1), 1


def runs(regions) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, lengths)`` of the maximal contiguous runs of ``regions``, in
    buffer order (touching runs, also across regions, are one run)."""
    return _runs(tuple((int(o), tuple(c), tuple(s)) for o, c, s in regions))


@lru_cache(maxsize=512)
def _runs(regions):
    starts, lens = [], []
    for r in regions:
        o, c, s = coalesce(r)
        if c and s[-1] == 1:
            starts.append(expand(o, c[:-1], s[:-1]))
            lens.append(np.full(len(starts[-1]), c[-1], dtype=np.int64))
        else:
            starts.append(expand(o, c, s))
            lens.append(np.ones(len(starts[-1]), dtype=np.int64))
    if not starts:
        z = np.zeros(0, dtype=np.int64)
        return z, z
    st, ln = np.concatenate(starts), np.concatenate(lens)
    if len(st) > 1:
        new = np.ones(len(st), dtype=bool)
        new[1:] = st[1:] != st[:-1] + ln[:-1]
        first = np.flatnonzero(new)
        ln = np.add.reduceat(ln, first)
        st = st[first]
    st.flags.writeable = False
    ln.flags.writeable = False
    return st, ln


def bounding(regions) -> tuple[int, int]:
    """``(lo, hi)``: the smallest interval ``[lo, hi)`` of offsets holding every element."""
    lo, hi = None, None
    for o, c, s in regions:
        a = o + sum(min(0, st * (n - 1)) for n, st in zip(c, s))
        b = o + sum(max(0, st * (n - 1)) for n, st in zip(c, s)) + 1
        lo = a if lo is None else min(lo, a)
        hi = b if hi is None else max(hi, b)
    return (0, 0) if lo is None else (lo, hi)


def text(region) -> str:
    """The LMAD in stride/span form: ``+offset (stride/span, ...)``, outer level first."""
    o, c, s = region
    levels = ", ".join(f"{st}/{st * (n - 1)}" for n, st in zip(c, s))
    return f"+{o} ({levels or 'one element'})"

"""Counting passes for bucketing by owner: O(n), no sort.

- :func:`counting_order`: the stable permutation that groups positions by a small
  integer (the owner), and the count per value: one counting pass and one placement
  pass, as ISx's bucketize does;
- :func:`group_keys`: ISx's bucketize itself (keys grouped by ``key // width``);
- :func:`inspect`: the two above together, as ``update`` / ``gather`` need them (one
  compiled pass);
- :func:`bucket_1d`: the (owner, local offset) of 1-D indices and their values grouped
  by owner, repeats kept (``update`` of integers: one compiled pass);
- :func:`first_occurrences`: each position's entry among the distinct keys (entries
  numbered in order of first occurrence), and each entry's first and last position:
  one pass over a hash table.

They are compiled with numba when it is installed (the ``fast`` extra; kept on
disk by numba's cache), else done with NumPy: a stable ``argsort`` of the owners
as an 8- or 16-bit array (NumPy sorts those by radix, in O(n)) and ``np.unique``
(a sort) for the repeats.  ``pg.config(fuse=False)`` selects the NumPy versions
too, and so does ``"auto"`` until a process has put ``pgas.exec.fuse.FUSE_MIN``
elements through the irregular paths (:func:`hot`).
Both give the same results.
"""

from __future__ import annotations

import numpy as np

from ..exec import fuse, fusecode, settings

_SRC = '''
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def counting_order(dest, nb):
    counts = np.zeros(nb, np.int64)
    for i in range(dest.size):
        counts[dest[i]] += 1
    pos = np.zeros(nb, np.int64)
    for d in range(1, nb):
        pos[d] = pos[d - 1] + counts[d - 1]
    order = np.empty(dest.size, np.int64)
    for i in range(dest.size):
        d = dest[i]
        order[pos[d]] = i
        pos[d] += 1
    return order, counts


@njit(cache=True, nogil=True)
def group_keys(keys, width, nb):
    counts = np.zeros(nb, np.int64)
    for i in range(keys.size):
        counts[keys[i] // width] += 1
    pos = np.zeros(nb, np.int64)
    for d in range(1, nb):
        pos[d] = pos[d - 1] + counts[d - 1]
    out = np.empty_like(keys)
    for i in range(keys.size):
        d = keys[i] // width
        out[pos[d]] = keys[i]
        pos[d] += 1
    return out, counts


@njit(cache=True, nogil=True)
def first_occurrences(key, bits):
    mask = (1 << bits) - 1
    table = np.full(mask + 1, -1, np.int64)
    entry = np.empty(mask + 1, np.int64)
    slot = np.empty(key.size, np.int64)
    first = np.empty(key.size, np.int64)
    last = np.empty(key.size, np.int64)
    m = 0
    for i in range(key.size):
        k = key[i]
        h = ((k * -7046029254386353131) >> (64 - bits)) & mask      # Fibonacci hashing, wrapping
        while table[h] != -1 and table[h] != k:
            h = (h + 1) & mask
        if table[h] == -1:
            table[h] = k
            entry[h] = m
            first[m] = i
            m += 1
        e = entry[h]
        slot[i] = e
        last[e] = i
    return slot, first[:m], last[:m]


@njit(cache=True, nogil=True)
def inspect(owners, local, width, nb, bits):
    slot0, first0, last0 = first_occurrences(owners * width + local, bits)
    m = first0.size
    counts = np.zeros(nb, np.int64)
    for e in range(m):
        counts[owners[first0[e]]] += 1
    pos = np.zeros(nb, np.int64)
    for d in range(1, nb):
        pos[d] = pos[d - 1] + counts[d - 1]
    rank = np.empty(m, np.int64)
    first = np.empty(m, np.int64)
    last = np.empty(m, np.int64)
    offsets = np.empty(m, np.int64)
    for e in range(m):
        d = owners[first0[e]]
        r = pos[d]
        pos[d] += 1
        rank[e] = r
        first[r] = first0[e]
        last[r] = last0[e]
        offsets[r] = local[first0[e]]
    n = owners.size
    slot = np.empty(n, np.int64)
    nrep = 0
    for i in range(n):
        slot[i] = rank[slot0[i]]
        if first[slot[i]] != i:
            nrep += 1
    repeats = np.empty(nrep, np.int64)
    j = 0
    for i in range(n):
        if first[slot[i]] != i:
            repeats[j] = i
            j += 1
    return offsets, counts, slot, first, last, repeats


@njit(cache=True, nogil=True, inline="always")
def _udivmod(x, d, inv):
    # (x // d, x % d) of unsigned x < 2**52 and d >= 1: the quotient estimated in floating
    # point (off by at most one there) and corrected, no division instruction
    q = np.uint64(np.float64(x) * inv)
    if q * d > x:
        q -= np.uint64(1)
    elif x - q * d >= d:
        q += np.uint64(1)
    return q, x - q * d


@njit(cache=True, nogil=True)
def bucket_1d(g, vals, n, b, p):
    # locate_1d and a stable counting placement by owner in two passes
    m = g.size
    owners = np.empty(m, np.int64)
    local = np.empty(m, np.int64)
    counts = np.zeros(p, np.int64)
    ub = np.uint64(b)
    up = np.uint64(p)
    ib = 1.0 / b
    ip = 1.0 / p
    one_block = b * p >= n                 # Block: each locale one block
    for i in range(m):
        x = g[i]
        if x < 0:
            x += n
        if x < 0 or x >= n:
            return local, vals, counts, i
        q, rem = _udivmod(np.uint64(x), ub, ib)
        if one_block:
            o = np.int64(q)
            local[i] = np.int64(rem)
        else:
            c, r = _udivmod(q, up, ip)
            o = np.int64(r)
            local[i] = np.int64(c * ub + rem)
        owners[i] = o
        counts[o] += 1
    pos = np.zeros(p, np.int64)
    for d in range(1, p):
        pos[d] = pos[d - 1] + counts[d - 1]
    offs = np.empty(m, np.int64)
    out = np.empty_like(vals)
    for i in range(m):
        d = owners[i]
        offs[pos[d]] = local[i]
        out[pos[d]] = vals[i]
        pos[d] += 1
    return offs, out, counts, -1


@njit(cache=True, nogil=True)
def locate_1d(g, n, b, p):
    owners = np.empty(g.size, np.int64)
    local = np.empty(g.size, np.int64)
    for i in range(g.size):
        x = g[i]
        if x < 0:
            x += n
        if x < 0 or x >= n:
            return owners, local, i
        owners[i] = (x // b) % p
        local[i] = (x // (b * p)) * b + x % b
    return owners, local, -1
'''

_compiled = None
_seen = 0              # elements through the irregular paths in this process ("auto" mode)


def hot(n: int, count: bool = True) -> bool:
    """Whether the irregular paths should use compiled code for ``n`` elements: with
    ``pg.config(fuse=True)``, or under ``"auto"`` once this process has put
    ``FUSE_MIN`` elements through them (counting this call's), so a short script
    never starts numba and a loop of small batches (RandomAccess's) soon does.
    Whether numba is installed is not checked here.  ``count=False`` asks without
    counting ``n`` (a pass the same elements go through next counts them)."""
    global _seen
    mode = settings.get("fuse")
    if not mode or n == 0:
        return False
    _seen += n if count else 0
    return mode is True or _seen >= fuse.FUSE_MIN


def _numba(n: int, count: bool = True):
    """The compiled functions for ``n`` elements, or None: without numba, with
    ``pg.config(fuse=False)``, or under ``"auto"`` before :func:`hot` (a short
    script need not compile them)."""
    global _compiled
    if not hot(n, count):
        return None
    if _compiled is None:
        _compiled = fusecode.load_module(_SRC, "counting") if fuse.load_numba() is not None else False
    return _compiled or None


def counting_order(dest: np.ndarray, nb: int) -> tuple[np.ndarray, np.ndarray]:
    """``(order, counts)``: the stable permutation grouping positions by ``dest`` (ints in
    ``[0, nb)``) and the count of each value.

    >>> o, c = counting_order(np.array([2, 0, 2, 1]), 3)
    >>> o.tolist(), c.tolist()
    ([1, 3, 0, 2], [1, 1, 2])
    """
    dest = np.asarray(dest)
    nb_ = _numba(dest.size)
    if nb_ is not None:
        return nb_.counting_order(dest, nb)
    small = np.uint8 if nb <= 256 else np.uint16 if nb <= 65536 else np.int64
    return np.argsort(dest.astype(small, copy=False), kind="stable"), np.bincount(dest, minlength=nb)


def group_keys(keys: np.ndarray, width: int, nb: int) -> tuple[np.ndarray, np.ndarray]:
    """Non-negative ``keys`` grouped (stably) by ``key // width`` in ``[0, nb)``, and the
    count per group.

    >>> g, c = group_keys(np.array([9, 0, 5, 3, 8, 1]), 3, 4)
    >>> g.tolist(), c.tolist()
    ([0, 1, 5, 3, 8, 9], [2, 2, 1, 1])
    """
    nb_ = _numba(keys.size)
    if nb_ is not None:
        return nb_.group_keys(keys, keys.dtype.type(width), nb)
    order, counts = counting_order(keys // width, nb)
    return keys[order], counts


def first_occurrences(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(slot, first, last)`` for non-negative int64 ``key``: ``slot[i]`` the entry of
    position ``i`` among the distinct keys, ``first[e]`` / ``last[e]`` the first and last
    position of entry ``e``.  Entries are numbered by first occurrence (compiled) or by
    key (NumPy); callers must not depend on which.

    >>> s, f, l = first_occurrences(np.array([7, 3, 7, 7], dtype=np.int64))
    >>> sorted(zip(f.tolist(), l.tolist())), bool(s[0] == s[2] == s[3] != s[1])
    ([(0, 3), (1, 1)], True)
    """
    nb_ = _numba(key.size)
    if nb_ is not None:
        return nb_.first_occurrences(key, max(4, int(2 * key.size).bit_length()))
    uniq, first, slot = np.unique(key, return_index=True, return_inverse=True)
    last = key.size - 1 - np.unique(key[::-1], return_index=True)[1]
    return slot.reshape(-1), first, last


def inspect(owners: np.ndarray, local: np.ndarray, width: int, nb: int):
    """``(offsets, counts, slot, first, last, repeats)`` of positions with owner ``owners[i]``
    (in ``[0, nb)``) and local offset ``local[i]`` (in ``[0, width)``), both int64: the
    distinct (owner, offset) targets grouped by owner (``offsets``, ``counts[r]`` of them
    for locale ``r``), ``slot[i]`` the target of position ``i``, ``first`` / ``last`` each
    target's first and last position, ``repeats`` the positions that are not a first, in
    order.  One compiled pass when numba is used; else :func:`first_occurrences` and
    :func:`counting_order` with NumPy.  Within an owner the targets' order may differ
    between the two (callers must not depend on it).

    >>> o, c, s, f, l, r = inspect(np.array([1, 0, 1]), np.array([5, 2, 5]), 8, 2)
    >>> o.tolist(), c.tolist(), r.tolist(), bool(s[0] == s[2] != s[1])
    ([2, 5], [1, 1], [2], True)
    """
    if owners.size >= INCREASING_MIN:
        got = _increasing(owners, local, width, nb)
        if got is not None:
            return got
    nb_ = _numba(owners.size)
    if nb_ is not None:
        return nb_.inspect(owners, local, width, nb, max(4, int(2 * owners.size).bit_length()))
    slot, first, last = first_occurrences(owners * width + local)
    order, counts = counting_order(owners[first], nb)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    slot = rank[slot]
    first, last = first[order], last[order]
    repeats = np.flatnonzero(first[slot] != np.arange(len(slot)))
    return local[first], counts, slot, first, last, repeats


#: Positions from which :func:`inspect` first checks whether the targets increase (a few
#: vectorised passes, against a hash pass of about 1 µs per position at 2^19 of them).
INCREASING_MIN = 1 << 12


def _increasing(owners, local, width: int, nb: int):
    """:func:`inspect`'s result where the (owner, offset) targets strictly increase (every
    target distinct, already grouped by owner and in order: a reshape's or a sorted
    read's), else None."""
    key = owners * width + local
    if not (key[1:] > key[:-1]).all():
        return None
    pos = np.arange(owners.size, dtype=np.int64)
    return (np.array(local, dtype=np.int64), np.bincount(owners, minlength=nb).astype(np.int64), pos,
            pos.copy(), pos.copy(), np.empty(0, np.int64))


def locate_1d(g: np.ndarray, n: int, b: int, p: int):
    """``(owners, local)`` of int64 global indices ``g`` (negative ones counting from the
    end) of a 1-D block-cyclic dimension of ``n`` elements, blocks of ``b``, ``p`` locales
    (:class:`pgas.layout.dimmap.DimMap`'s ``owner`` and ``local_index``) in one compiled
    pass; None when compiled code is not used (see :func:`hot`) or an index is out of
    range (the caller's general path then raises its error).

    >>> r = locate_1d(np.array([0, 5, -1], dtype=np.int64), 6, 3, 2)
    >>> r is None or (r[0].tolist(), r[1].tolist()) == ([0, 1, 1], [0, 2, 2])
    True
    """
    nb_ = _numba(g.size, count=False)
    if nb_ is None:
        return None
    owners, local, bad = nb_.locate_1d(g, n, b, p)
    return None if bad >= 0 else (owners, local)


def bucket_1d(g: np.ndarray, vals: np.ndarray, n: int, b: int, p: int):
    """``(offsets, values, counts)``: the (local offset, value) pairs of int64 global indices
    ``g`` (negative ones counting from the end) of a 1-D block-cyclic dimension of ``n``
    elements, blocks of ``b``, over ``p`` locales, grouped by owner (stably: within an
    owner in position order, repeats kept), ``counts[r]`` of them for locale ``r``; one
    compiled pass.  None when compiled code is not used (see :func:`hot`), ``n`` is
    ``2**52`` or more, or an index is out of range (the caller's general path then
    raises its error).

    >>> r = bucket_1d(np.array([5, 0, -1], dtype=np.int64), np.array([1, 2, 3]), 6, 3, 2)
    >>> r is None or [x.tolist() for x in r] == [[0, 2, 2], [2, 1, 3], [1, 2]]
    True
    """
    nb_ = _numba(g.size) if n < 1 << 52 else None
    if nb_ is None:
        return None
    offs, out, counts, bad = nb_.bucket_1d(g, vals, n, b, p)
    return None if bad >= 0 else (offs, out, counts)

"""Order statistics of distributed values by selection: no data moves but a few samples.

:func:`select` finds the values at given positions (ranks) of the sorted
union of every locale's values, without sorting or moving them.  Each target
rank lies in an *interval* of values, at first all of them; every round:

1. each locale draws random samples of its values in each open interval,
   about :data:`SAMPLES` over all locales per interval, each weighted by how
   many values it stands for; one allgather gives every locale all samples;
2. every locale picks the same pivots: for each target, the samples at the
   weighted sample quantiles a few standard errors below and above its rank
   (overlapping windows of neighbouring targets merge);
3. each locale counts its values below and equal to each pivot (one compiled
   pass classifying each value, when numba is on hand as for the irregular
   operations' counting passes; else two passes of comparisons per pivot, or
   binary searches once it holds its values sorted);
   one allreduce of the counts places each target in one class: equal to a
   pivot (its value is found) or strictly between two (a smaller interval:
   every locale keeps only its values there).

A pivot is a value of the interval, so each round removes at least one
value from every open interval, and in practice all but a few per cent.  Once
at most :data:`GATHER` values remain in all open intervals together, one
allgather brings them to every locale, which sorts them and reads the answers.
Every locale ends with every answer; the messages are the samples, the counts
and the final candidates, O(P) values a round, never the data.
"""

from __future__ import annotations

import numpy as np

from ... import comm
from ...exec import fuse, fusecode
from .. import counting

#: Samples drawn per interval and round over all locales.
SAMPLES = 4096
#: Values left in open intervals (over all locales) below which they are gathered.
GATHER = 1 << 15
#: Standard errors of a sample quantile's rank on each side of a target's window.
WIDTH = 4.0
#: More pivots than this in an interval: a locale sorts its values there once and
#: counts by binary search instead of comparisons (NumPy's passes, or the compiled pass:
#: at 18 pivots, 9 quantiles, a compiled pass took twice the sort's time).
COMPARE = 8
#: Rounds after which what is left is gathered whatever its size.
ROUNDS = 40


_SRC = '''
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def classify(x, piv, likely):
    k = piv.size
    counts = np.zeros(2 * k + 1, np.int64)
    inner = np.empty(x.size, x.dtype)
    cls = np.empty(x.size, np.int16)
    m = 0
    for i in range(x.size):
        v = x[i]
        c = 0
        for j in range(k):            # branch-free: a few pivots, values in any order
            c += (piv[j] < v) + (piv[j] <= v)
        counts[c] += 1
        if likely[c]:
            inner[m] = v
            cls[m] = c
            m += 1
    return counts, inner[:m].copy(), cls[:m].copy()
'''

_compiled = None


def _classify(x: np.ndarray, piv: np.ndarray, likely: np.ndarray):
    """The compiled classification of ``x`` by the pivots (a value's class: ``2 j`` strictly
    between pivots ``j - 1`` and ``j``, ``2 j + 1`` equal to pivot ``j``): each class's count,
    and the values in the ``likely`` classes (inside the targets' windows, where the targets
    almost always are) with their classes, in one pass; or None where it does not apply (no numba, ``pg.config(fuse=False)``, few values
    under ``"auto"``, values numba does not order as NumPy: bools, complex)."""
    global _compiled
    if x.dtype.kind not in "iuf" or len(piv) > COMPARE or not counting.hot(len(x)):
        return None
    if _compiled is None:
        _compiled = fusecode.load_module(_SRC, "select") if fuse.load_numba() is not None else False
    return _compiled.classify(x, piv.astype(x.dtype), likely) if _compiled else None


class _Interval:
    """Values strictly between two pivots: this locale's (``x``, sorted or not), how many
    there are on all locales (``count``) and below them (``base``), and the targets in it;
    ``inner``: its values in the round's likely classes and their classes, when a compiled
    pass made them."""

    def __init__(self, x, base, count, targets, ordered=False):
        self.x, self.base, self.count, self.targets, self.ordered = x, base, count, targets, ordered
        self.inner = None


def _records(dtype):
    return np.dtype([("i", np.int64), ("v", dtype), ("w", np.float64)])


def _gathered(rec: np.ndarray) -> np.ndarray:
    got = comm.allgatherv(rec.view(np.uint8))
    return np.concatenate(got).view(rec.dtype)


def _samples(open_: list[_Interval], rng, dtype) -> np.ndarray:
    """Every locale's samples of every open interval (record ``i``: the interval's number)."""
    mine = []
    for k, iv in enumerate(open_):
        m = len(iv.x)
        if m:
            s = max(1, min(m, -(-SAMPLES * m // iv.count)))
            rec = np.empty(s, _records(dtype))
            rec["i"], rec["v"], rec["w"] = k, iv.x[rng.integers(0, m, s)], m / s
            mine.append(rec)
    return _gathered(np.concatenate(mine) if mine else np.empty(0, _records(dtype)))


def _pivots(iv: _Interval, rank: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct pivots of interval ``iv`` for its targets' ranks ``rank`` (within
    it, increasing) from its samples ``s`` (records), and which classes lie inside a window."""
    s = s[np.argsort(s["v"], kind="stable")]
    cw = np.cumsum(s["w"])
    total, n = cw[-1], len(s)
    f = (rank + 0.5) / iv.count
    e = WIDTH * np.sqrt(np.maximum(f * (1 - f), 1.0 / n) / n) + 1.0 / n
    lo = np.minimum(np.searchsorted(cw, (f - e) * total, "left"), n - 1)
    hi = np.minimum(np.searchsorted(cw, (f + e) * total, "left"), n - 1)
    keep = np.ones(len(lo), bool)
    keep[1:] = lo[1:] > hi[:-1]                     # windows that overlap the previous one merge
    starts = np.flatnonzero(keep)
    ends = np.append(starts[1:] - 1, len(lo) - 1)
    below, above = s["v"][lo[starts]], s["v"][hi[ends]]
    piv = np.unique(np.concatenate([below, above]))
    likely = np.zeros(2 * len(piv) + 1, np.bool_)
    for a, b in zip(np.searchsorted(piv, below).tolist(), np.searchsorted(piv, above).tolist()):
        likely[2 * a + 2:2 * b + 1:2] = True
    return piv, likely


def _count(iv: _Interval, piv: np.ndarray, likely: np.ndarray) -> np.ndarray:
    """This locale's values of ``iv`` below and equal to each pivot: ``[<p0, <=p0, <p1, ...]``."""
    got = None if iv.ordered else _classify(iv.x, piv, likely)
    if got is not None:
        iv.inner = got[1:] + (likely,)
        return np.cumsum(got[0])[:-1]
    if len(piv) > COMPARE and not iv.ordered:
        iv.x, iv.ordered = np.sort(iv.x), True
    if iv.ordered:
        return np.stack([np.searchsorted(iv.x, piv, "left"), np.searchsorted(iv.x, piv, "right")], 1).reshape(-1)
    return np.array([np.count_nonzero(c) for p in piv for c in (iv.x < p, iv.x <= p)], np.int64)


def _keep(iv: _Interval, j: int, piv: np.ndarray) -> np.ndarray:
    """This locale's values of ``iv`` in class ``j`` (even: strictly between pivots ``j // 2 - 1``
    and ``j // 2``, unbounded past the ends)."""
    x = iv.x
    if iv.inner is not None and iv.inner[2][j]:
        if len(iv.inner) == 3:                    # grouped by class once: one slice per class kept
            values, cls, likely = iv.inner
            order = np.argsort(cls, kind="stable")
            iv.inner = (values[order], np.searchsorted(cls[order], np.arange(len(likely) + 1)), likely, 0)
        values, edges = iv.inner[:2]
        return values[edges[j]:edges[j + 1]]
    lo = None if j == 0 else piv[j // 2 - 1]
    hi = None if j // 2 == len(piv) else piv[j // 2]
    if iv.ordered:
        a = 0 if lo is None else np.searchsorted(x, lo, "right")
        b = len(x) if hi is None else np.searchsorted(x, hi, "left")
        return x[a:b]
    if lo is None:
        return x[x < hi]
    if hi is None:
        return x[x > lo]
    return x[(x > lo) & (x < hi)]


def select(x: np.ndarray, n: int, ranks: np.ndarray) -> np.ndarray:
    """Collective: the values at positions ``ranks`` (increasing, distinct, in ``[0, n)``) of the
    sorted union of every locale's 1-D ``x`` (``n`` values in all, no NaN), on every locale."""
    ranks = np.asarray(ranks, np.int64)
    out = np.empty(len(ranks), x.dtype)
    open_ = [_Interval(x, 0, n, np.arange(len(ranks)))] if len(ranks) else []
    rng = np.random.default_rng([comm.here(), 0x5e1ec7])
    rounds = 0
    while open_ and sum(iv.count for iv in open_) > GATHER and rounds < ROUNDS:
        rounds += 1
        s = _samples(open_, rng, x.dtype)
        by = [s[s["i"] == k] for k in range(len(open_))]
        pivots = [_pivots(iv, ranks[iv.targets] - iv.base, by[k]) for k, iv in enumerate(open_)]
        counts = comm.allreduce(np.concatenate([_count(iv, *p) for iv, p in zip(open_, pivots)]), "sum", data=True)
        nxt, at = [], 0
        for iv, (piv, _) in zip(open_, pivots):
            c = counts[at:at + 2 * len(piv)]
            at += 2 * len(piv)
            edges = np.concatenate([[0], c, [iv.count]])   # class j holds positions edges[j]..edges[j+1]-1
            cls = np.searchsorted(edges, ranks[iv.targets] - iv.base, "right") - 1
            for j in np.unique(cls):
                t = iv.targets[cls == j]
                if j % 2:                                  # equal to pivot j // 2
                    out[t] = piv[j // 2]
                    continue
                nxt.append(_Interval(_keep(iv, j, piv), iv.base + int(edges[j]), int(edges[j + 1] - edges[j]),
                                     t, iv.ordered))
        open_ = nxt
    if open_:
        _finish(open_, ranks, out)
    return out


def _finish(open_: list[_Interval], ranks: np.ndarray, out: np.ndarray) -> None:
    """Gather what is left of the open intervals to every locale and read the answers."""
    rec = np.empty(sum(len(iv.x) for iv in open_), _records(out.dtype))
    at = 0
    for k, iv in enumerate(open_):
        rec["i"][at:at + len(iv.x)], rec["v"][at:at + len(iv.x)] = k, iv.x
        at += len(iv.x)
    got = _gathered(rec)
    for k, iv in enumerate(open_):
        v = np.sort(got["v"][got["i"] == k])
        out[iv.targets] = v[ranks[iv.targets] - iv.base]

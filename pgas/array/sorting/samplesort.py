"""The distributed sort behind ``pg.sort``, ``pg.argsort``, ``A.sort()`` and ``pg.unique``.

A sample sort (regular sampling, as PSRS) on distinct keys ``(value, tie-breaker)``,
so buckets stay balanced even when every value is equal.  Two forms share its steps:

- :func:`sample_sort` (``pg.argsort``): the keys are ``(value, global index)``, and
  each value travels with its index; the order is NumPy's stable order
  (``np.argsort(kind="stable")``: NaN last, ties by position).
- :func:`sort_values` (``pg.sort``, ``A.sort()``, ``pg.unique``): values only.  Equal
  values are interchangeable, so no stable sort is needed: the tie-breaker is the
  position in the locale's own sorted run (after its locale number), which no message
  carries.  The local sorts are NumPy's ``np.sort`` (its SIMD quicksort for 4- and
  8-byte types, its radix sort for 1- and 2-byte integers).  Floating values that
  compare equal but differ in bits would not keep NumPy's stable order that way
  (``np.sort``'s SIMD sort turns every NaN into the one quiet NaN, and may swap the
  signs of zeros that meet): each locale reports which zero signs and NaN bit
  patterns it holds along with its samples; when the array holds zeros of both signs,
  or NaNs of more than one bit pattern, every locale alike sorts by
  :func:`sample_sort` instead, and when its NaNs share one pattern, that pattern is
  written back over the sorted NaNs.  Complex values always go by :func:`sample_sort`.

The steps:

1. Each locale sorts its elements (for :func:`sample_sort` an ``np.argsort`` whose
   ties are then put in index order: only the elements with equal neighbours are
   sorted again).
2. Each takes ``P`` regular samples, weighted by its element count; one
   allgather (of bytes, no pickling) gives every locale all ``P * P`` samples (``P**2`` keys of one
   value plus 16 bytes each, on every locale: fine up to a few hundred
   locales; beyond that a sampled splitter selection would be needed).
3. Every locale picks the same ``P - 1`` splitters at the weighted quantiles
   ``k n / P`` and cuts its sorted run at them (binary search).
4. One all-to-all exchange sends each bucket to its locale, which merges what
   it received (one NumPy sort of the concatenated runs: its stable sort, which finds
   the runs, where few runs arrived); a reduction of the bucket sizes, overlapped with
   it, tells every locale every run's length.
5. One more all-to-all exchange moves the sorted run into the result's layout
   (Block by default); the run lengths tell each locale what it receives, so
   this one needs no all-to-all of counts.  Where each locale of the result holds one
   contiguous range (Block), the values go alone and arrive in place; otherwise each
   goes with its position in its owner's storage.

The bookkeeping over locales (cuts, counts, the parts' bounds) is vectorised:
no Python loop runs over the locales.  Under ``pg.trace`` each step is a span named
``sort: ...`` with the processor time the locale ran in it.

Memory: with regular sampling a bucket holds at most about ``2 n / P``
elements whatever the values (the keys are distinct, so duplicates cannot
pile up), so no locale holds more than a small constant times its share
(its input, its bucket and the exchange buffers), for any input including
sorted, reverse-sorted and all-equal ones; a badly unbalanced *input*
distribution (a BlockCyclic block larger than n / P) is what it is.
"""

from __future__ import annotations

import time

import numpy as np

from ... import comm
from ...comm import trace
from ..core import DistArray
from ..creation.layouts import owned_flat
from ..operands import distributed, source

#: At most this many received runs are merged by NumPy's stable sort of their
#: concatenation (which finds the runs and merges them), more by its quicksort.
MERGE_RUNS = 4
#: A locale's position-based tie-breaker: its locale number times this, plus the
#: position in its sorted run (:func:`sort_values`).
_SPAN = 1 << 40


def exchange(parts: list[np.ndarray]) -> list[np.ndarray]:
    """All-to-all of arrays of any one dtype (structured included), moved as bytes."""
    dt = parts[0].dtype
    got = comm.alltoallv([np.ascontiguousarray(p).view(np.uint8) for p in parts], np.uint8)
    return [g.view(dt) for g in got]


def exchange_runs(rec: np.ndarray, cuts: np.ndarray, rcounts: np.ndarray | None = None,
                  out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`exchange` of the records ``rec[cuts[r]:cuts[r + 1]]`` to each locale ``r``, with no
    copy into parts; returns what arrived, in
    locale order, and the records from each locale (``rcounts`` when the caller knows them).
    ``out``: a contiguous 1-D array of ``rec``'s dtype holding exactly what arrives (with
    ``rcounts``), received into straight."""
    size = rec.dtype.itemsize
    got, rc = comm.alltoallv_buffer(np.ascontiguousarray(rec).view(np.uint8), np.diff(cuts) * size,
                                    None if rcounts is None else np.asarray(rcounts, dtype=np.int64) * size,
                                    None if out is None else out.view(np.uint8))
    return got.view(rec.dtype), rc // size


def clock() -> tuple[float, float] | bool:
    """Under ``pg.trace``: the start of a phase, ``(wall, processor time)``; else False."""
    return trace.on and (trace.now(), time.thread_time())


def phase(name: str, t0: tuple[float, float]) -> tuple[float, float]:
    """Record the sort's phase ``name`` from ``t0`` (:func:`clock`) to now as a span with the
    processor time this locale ran in it (``cpu_us``); returns the next phase's start."""
    c = time.thread_time()
    trace.add("kernel", "sort: " + name, t0[0], {"cpu_us": round((c - t0[1]) * 1e6, 1)})
    return trace.now(), c


# -- local sorts ---------------------------------------------------------------------
def _radix(dtype: np.dtype) -> bool:
    """True where NumPy's stable sort is a radix sort (booleans, 1- and 2-byte integers),
    faster than its quicksort."""
    return dtype.kind in "biu" and dtype.itemsize <= 2


def _ties_fixable(dtype: np.dtype) -> bool:
    """True where an ``np.argsort`` with its ties put in order beats the stable one:
    integers and floats (NaNs all last, one run) that NumPy's stable sort does not radix-sort."""
    return dtype.kind == "f" or (dtype.kind in "iu" and not _radix(dtype))


def _ties_in_order(v: np.ndarray, order: np.ndarray, g: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``order`` (an ``np.argsort`` of ``v``, equal values in any order) with each run of
    equal values (all NaNs one run) put in increasing ``g[order]`` (``g`` None: in
    increasing ``order``, so by position), and ``v[order]``.  Only the elements with an
    equal neighbour are sorted again."""
    sv = v[order]
    tie = sv[1:] == sv[:-1]
    if v.dtype.kind == "f" and len(sv) and np.isnan(sv[-1]):
        tie[np.searchsorted(sv, sv[-1]):] = True             # NaN != NaN; NumPy puts them all last
    if not tie.any():
        return order, sv
    inrun = np.zeros(len(sv), dtype=bool)
    inrun[:-1] = tie
    inrun[1:] |= tie
    pos = np.flatnonzero(inrun)
    first = np.ones(len(pos), dtype=bool)
    first[1:] = ~tie[pos[1:] - 1]
    run = np.cumsum(first) - 1
    key = order[pos] if g is None else g[order[pos]]
    span = int(key.max()) + 1
    o = np.argsort(run * span + key) if len(pos) * span < 2**62 else np.lexsort((key, run))
    moved = pos[o]
    order[pos], sv[pos] = order[moved], sv[moved]
    return order, sv


def _stable_order(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.argsort(v, kind="stable")`` and ``v`` in that order."""
    if _ties_fixable(v.dtype):
        return _ties_in_order(v, np.argsort(v), None)
    order = np.argsort(v, kind="stable")
    return order, v[order]


def _key_order(v: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The permutation sorting records by (value, global index), NumPy's order for values."""
    if _ties_fixable(v.dtype):
        return _ties_in_order(v, np.argsort(v), g)[0]
    by_g = np.argsort(g, kind="stable")
    return by_g[np.argsort(v[by_g], kind="stable")]


# -- splitters -----------------------------------------------------------------------
def _keys_at(g, pos: np.ndarray) -> np.ndarray:
    """The tie-breakers of the sorted run's records at ``pos``: ``g`` an array of them, or
    an int ``base`` (the tie-breaker is ``base`` plus the position)."""
    return g[pos] if isinstance(g, np.ndarray) else g + pos


def _cuts(v: np.ndarray, g, sv: np.ndarray, sg: np.ndarray) -> np.ndarray:
    """How many of the (value, tie-breaker)-sorted records come before each key ``(sv[k], sg[k])``
    (the keys sorted): binary searches on the values, and on the tie-breakers (``g``, as
    for :func:`_keys_at`) only among the records whose value equals a key's."""
    lo = np.searchsorted(v, sv, "left")
    hi = np.searchsorted(v, sv, "right")
    for k in np.flatnonzero(hi > lo).tolist():      # ties with a key: tie-breakers increase among them
        a, b, key = int(lo[k]), int(hi[k]), int(sg[k])
        lo[k] += int(np.searchsorted(g[a:b], key, "left")) if isinstance(g, np.ndarray) else min(max(key - g - a, 0), b - a)
    return lo


#: Bit classes of a floating run, sent ahead of its samples: a bit set per zero sign
#: held (1: +0, 2: -0), how many NaN bit patterns (0, 1, or 2 for more) and the first.
_CLASSES = 3


def _classes(v: np.ndarray) -> np.ndarray:
    """This locale's :data:`_CLASSES` of ``v`` (all 0 unless floating)."""
    out = np.zeros(_CLASSES, dtype=np.uint64)
    if v.dtype.kind != "f":
        return out
    zero = v == 0
    if zero.any():
        neg = np.signbit(v[zero])
        out[0] = (0 if neg.all() else 1) | (2 if neg.any() else 0)
    nan = np.isnan(v)
    if nan.any():
        pats = np.unique(v[nan].view(f"u{v.dtype.itemsize}"))
        out[1], out[2] = min(len(pats), 2), pats[0]
    return out


def _split(v: np.ndarray, g, n: int, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Collective: where this locale's sorted run ``v`` (tie-breakers ``g``, as for
    :func:`_keys_at`) is cut for each locale's bucket (``P + 1`` bounds), and every locale's
    ``classes`` (:func:`_classes`), gathered with the samples."""
    P, m = comm.num_locales(), len(v)
    pos = ((np.arange(P) + 0.5) * m / P).astype(np.int64) if m else np.zeros(0, np.int64)
    samples = np.empty(len(pos), dtype=[("v", v.dtype), ("g", np.int64), ("w", np.float64)])
    samples["v"], samples["g"], samples["w"] = v[pos], _keys_at(g, pos), m / P
    head = _CLASSES * 8
    got = comm.allgatherv(np.concatenate([classes.view(np.uint8), samples.view(np.uint8)]))
    heads = np.stack([b[:head].view(np.uint64) for b in got])
    s = np.concatenate([b[head:] for b in got]).view(samples.dtype)
    o = _key_order(s["v"], s["g"])
    sv, sg, cw = s["v"][o], s["g"][o], np.cumsum(s["w"][o])
    picks = np.searchsorted(cw, np.arange(1, P) * n / P, "left")
    inside = picks < len(sv)
    cuts = np.full(P + 1, m, dtype=np.int64)
    cuts[0] = 0
    cuts[1:P][inside] = _cuts(v, g, sv[picks[inside]], sg[picks[inside]])
    return np.maximum.accumulate(cuts), heads


def _merge_kind(dtype: np.dtype, runs: int) -> str:
    """The ``np.sort`` kind to merge ``runs`` sorted runs of ``dtype`` by."""
    return "stable" if _radix(dtype) or runs <= MERGE_RUNS else "quicksort"


# -- the two sorts -------------------------------------------------------------------
def sample_sort(v: np.ndarray, g: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Collective: sort the global records (value ``v``, global index ``g``) of ``n`` in all.

    Each locale passes its records (``g`` distinct over all locales, increasing
    on each); returns its run of the globally sorted records ``(values, indices)``,
    the global position of its first record, and every locale's run length."""
    t = clock()
    order, v = _stable_order(v)                        # g increases, so ties go by index
    g = g[order]
    P = comm.num_locales()
    if t:
        t = phase("local sort", t)
    if P == 1:
        return v, g, 0, np.array([len(v)])
    cuts, _ = _split(v, g, n, np.zeros(_CLASSES, dtype=np.uint64))
    sizes = comm.iallreduce(np.diff(cuts), "sum", data=True)       # every bucket's size, overlapped with the exchange
    rec = np.empty(len(v), dtype=[("v", v.dtype), ("g", np.int64)])
    rec["v"], rec["g"] = v, g
    if t:
        t = phase("splitters", t)
    got, rcounts = exchange_runs(rec, cuts)
    if t:
        t = phase("exchange", t)
    starts = (np.cumsum(rcounts) - rcounts)[rcounts > 0]
    gv, gg = got["v"], got["g"]
    if len(starts) < 2 or np.all(np.maximum.reduceat(gg, starts)[:-1] < np.minimum.reduceat(gg, starts)[1:]):
        o = np.argsort(gv, kind="stable")              # sources in index order (Block): one merge
    else:
        o = _key_order(gv, gg)
    counts = sizes.wait()
    out = gv[o], gg[o], int(counts[:comm.here()].sum()), counts
    if t:
        phase("merge", t)
    return out


def sort_values(v: np.ndarray, n: int, index) -> tuple[np.ndarray, int, np.ndarray]:
    """Collective: this locale's run of the ``n`` values sorted (NumPy's stable order, bit
    for bit), the global position of its first value, and every locale's run length.

    ``v``: this locale's values; ``index()`` their global indices (increasing), called only
    where the values go by :func:`sample_sort` (see the module docstring)."""
    if v.dtype.kind == "c":
        s, _, off, counts = sample_sort(v, index(), n)
        return s, off, counts
    t = clock()
    classes = _classes(v)
    s = np.sort(v, kind="stable" if _radix(v.dtype) else "quicksort")
    P, me = comm.num_locales(), comm.here()
    if t:
        t = phase("local sort", t)
    if P == 1:
        heads = classes[None]
    else:
        cuts, heads = _split(s, me * _SPAN, n, classes)
    if np.bitwise_or.reduce(heads[:, 0]) == 3 or heads[:, 1].max() > 1 or len(set(heads[heads[:, 1] == 1, 2])) > 1:
        s, _, off, counts = sample_sort(v, index(), n)     # the order of bits among equal values matters
        return s, off, counts
    if P == 1:
        got, off, counts = s, 0, np.array([len(s)])
    else:
        sizes = comm.iallreduce(np.diff(cuts), "sum", data=True)
        if t:
            t = phase("splitters", t)
        got, rcounts = exchange_runs(s, cuts)
        if t:
            t = phase("exchange", t)
        got.sort(kind=_merge_kind(got.dtype, int(np.count_nonzero(rcounts))))
        counts = sizes.wait()
        off = int(counts[:me].sum())
    nans = heads[heads[:, 1] == 1, 2]
    if len(nans) and len(got) and np.isnan(got[-1]):        # the NaNs' one bit pattern, which np.sort may not keep
        got[np.searchsorted(got, got[-1]):].view(f"u{got.dtype.itemsize}")[...] = nans[0]
    if t:
        phase("merge", t)
    return got, off, counts


# -- the result ----------------------------------------------------------------------
def _ranges(layout) -> np.ndarray | None:
    """For a 1-D layout over every locale in which each holds one contiguous range, in
    locale order (Block): the ranges' ``P + 1`` bounds; else None."""
    P = comm.num_locales()
    if layout.ndim != 1 or tuple(layout.grid) != (P,):
        return None
    m = layout.maps[0]
    if m.b * m.p < m.n:
        return None
    return np.minimum(np.arange(P + 1, dtype=np.int64) * m.b, m.n)


def place(values: np.ndarray, offset: int, layout, out: DistArray, runs: np.ndarray | None = None) -> None:
    """Collective: store this locale's run ``values`` of global (flat) positions
    ``offset, offset + 1, ...`` of a 1-D array into ``out`` (of ``layout``).  ``runs``, every
    locale's run length in locale order (the runs tile the array), saves an all-to-all of counts:
    each locale then knows what it receives from each."""
    t = clock()
    P, me = comm.num_locales(), comm.here()
    bounds = _ranges(layout) if runs is not None else None
    if bounds is not None:                              # contiguous ranges: the values alone, in order
        starts = np.concatenate([[0], np.cumsum(runs)])
        rcounts = np.diff(np.clip(starts, bounds[me], bounds[me + 1]))
        dest = out._flat_local
        if dest.dtype == values.dtype and not np.may_share_memory(dest, values):   # straight into the result
            exchange_runs(values, np.clip(bounds - offset, 0, len(values)), rcounts, dest)
        else:
            dest[...] = exchange_runs(values, np.clip(bounds - offset, 0, len(values)), rcounts)[0]
        if t:
            phase("place", t)
        return
    pos = np.arange(offset, offset + len(values), dtype=np.int64)
    owners = layout.owners((pos,))
    flat = layout.local_flat((pos,), owners)
    order = np.argsort(owners, kind="stable") if np.any(owners[1:] < owners[:-1]) else np.arange(len(owners))
    edges = np.searchsorted(owners[order], np.arange(P + 1))
    rec = np.empty(len(values), dtype=[("o", np.int64), ("v", values.dtype)])
    rec["o"], rec["v"] = flat[order], values[order]
    rcounts = None
    if runs is not None:
        mine = owned_flat(layout, me)           # my global flat positions, increasing
        rcounts = np.diff(np.searchsorted(mine, np.concatenate([[0], np.cumsum(runs)])))
    got, _ = exchange_runs(rec, edges, rcounts)
    out._flat_local[got["o"]] = got["v"]
    if t:
        phase("place", t)


def check_array(A, what: str) -> None:
    """Raise TypeError unless ``A`` is a DistArray (``what``: the pg function called)."""
    if not isinstance(A, DistArray):
        raise TypeError(f"pg.{what} takes a DistArray, got {type(A).__name__} (use np.{what} for NumPy arrays)")


def as_array(A, what: str) -> DistArray:
    """``A`` as a DistArray, a view or lazy expression materialised (collective); else
    :func:`check_array`'s TypeError."""
    A = source(A) if distributed(A) else A
    check_array(A, what)
    return A


def sorted_run(A):
    """Collective: this locale's run of ``A``'s elements sorted by (value, global flat index);
    see :func:`sample_sort`."""
    return sample_sort(A._flat_local, owned_flat(A.layout, comm.here()), A.size)


def sorted_values(A):
    """Collective: this locale's run of ``A``'s values sorted, its global position and
    every locale's run length; see :func:`sort_values`."""
    return sort_values(A._flat_local, A.size, lambda: owned_flat(A.layout, comm.here()))

"""The distributed stable sort behind ``pg.sort``, ``pg.argsort``, ``A.sort()`` and ``pg.unique``.

A sample sort (regular sampling, as PSRS) on keys ``(value, global index)``,
so equal values are distinct keys: the order is NumPy's stable order
(``np.argsort(kind="stable")``: NaN last, ties by position) and buckets stay
balanced even when every value is equal.

1. Each locale sorts its elements stably (NumPy).
2. Each takes ``P`` regular samples, weighted by its element count; one
   allgather (of bytes, no pickling) gives every locale all ``P * P`` samples (``P**2`` keys of one
   value plus 16 bytes each, on every locale: fine up to a few hundred
   locales; beyond that a sampled splitter selection would be needed).
3. Every locale picks the same ``P - 1`` splitters at the weighted quantiles
   ``k n / P`` and cuts its sorted run at them (binary search).
4. One all-to-all exchange sends each bucket to its locale, which merges what
   it received (NumPy sorts of the concatenated runs); a reduction of the
   bucket sizes, overlapped with it, tells every locale every run's length.
5. One more all-to-all exchange moves the sorted run into the result's layout
   (Block by default); the run lengths tell each locale what it receives, so
   this one needs no all-to-all of counts.

The bookkeeping over locales (cuts, counts, the parts' bounds) is vectorised:
no Python loop runs over the locales.

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


def exchange(parts: list[np.ndarray]) -> list[np.ndarray]:
    """All-to-all of arrays of any one dtype (structured included), moved as bytes."""
    dt = parts[0].dtype
    got = comm.alltoallv([np.ascontiguousarray(p).view(np.uint8) for p in parts], np.uint8)
    return [g.view(dt) for g in got]


def exchange_runs(rec: np.ndarray, cuts: np.ndarray, rcounts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`exchange` of the records ``rec[cuts[r]:cuts[r + 1]]`` to each locale ``r``, with no
    copy into parts; returns what arrived, in
    locale order, and the records from each locale (``rcounts`` when the caller knows them)."""
    size = rec.dtype.itemsize
    got, rc = comm.alltoallv_buffer(np.ascontiguousarray(rec).view(np.uint8), np.diff(cuts) * size,
                                    None if rcounts is None else np.asarray(rcounts, dtype=np.int64) * size)
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


def _key_order(v: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The permutation sorting records by (value, global index), NumPy's order for values."""
    by_g = np.argsort(g, kind="stable")
    return by_g[np.argsort(v[by_g], kind="stable")]


def _cuts(v: np.ndarray, g: np.ndarray, sv: np.ndarray, sg: np.ndarray) -> np.ndarray:
    """How many of the (value, index)-sorted records come before each key ``(sv[k], sg[k])``
    (the keys sorted): binary searches on the values, and on the indices only among the
    records whose value equals a key's."""
    lo = np.searchsorted(v, sv, "left")
    hi = np.searchsorted(v, sv, "right")
    for k in np.flatnonzero(hi > lo).tolist():      # ties with a key: indices increase among them
        lo[k] += int(np.searchsorted(g[lo[k]:hi[k]], sg[k], "left"))
    return lo


def sample_sort(v: np.ndarray, g: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Collective: sort the global records (value ``v``, global index ``g``) of ``n`` in all.

    Each locale passes its records (``g`` distinct over all locales, increasing
    on each); returns its run of the globally sorted records ``(values, indices)``,
    the global position of its first record, and every locale's run length."""
    t = clock()
    order = np.argsort(v, kind="stable")                 # g increases, so ties stay by index
    v, g = v[order], g[order]
    P = comm.num_locales()
    if t:
        t = phase("local sort", t)
    if P == 1:
        return v, g, 0, np.array([len(v)])
    m = len(v)
    rec = np.empty(m, dtype=[("v", v.dtype), ("g", np.int64)])
    rec["v"], rec["g"] = v, g
    pos = ((np.arange(P) + 0.5) * m / P).astype(np.int64) if m else np.zeros(0, np.int64)
    samples = np.empty(len(pos), dtype=[("v", v.dtype), ("g", np.int64), ("w", np.float64)])
    samples["v"], samples["g"], samples["w"] = v[pos], g[pos], m / P
    got = comm.allgatherv(samples.view(np.uint8), count=False)      # P samples of each locale, as bytes
    s = np.concatenate(got).view(samples.dtype)
    o = _key_order(s["v"], s["g"])
    sv, sg, cw = s["v"][o], s["g"][o], np.cumsum(s["w"][o])
    picks = np.searchsorted(cw, np.arange(1, P) * n / P, "left")
    inside = picks < len(sv)
    cuts = np.full(P + 1, m, dtype=np.int64)
    cuts[0] = 0
    cuts[1:P][inside] = _cuts(v, g, sv[picks[inside]], sg[picks[inside]])
    cuts = np.maximum.accumulate(cuts)
    sizes = comm.iallreduce(np.diff(cuts), "sum")       # every bucket's size, overlapped with the exchange
    if t:
        t = phase("splitters", t)
    got, rcounts = exchange_runs(rec, cuts)
    if t:
        t = phase("exchange", t)
    starts = (np.cumsum(rcounts) - rcounts)[rcounts > 0]
    gg = got["g"]
    if len(starts) < 2 or np.all(np.maximum.reduceat(gg, starts)[:-1] < np.minimum.reduceat(gg, starts)[1:]):
        o = np.argsort(got["v"], kind="stable")          # sources in index order (Block): one merge
    else:
        o = _key_order(got["v"], gg)
    counts = sizes.wait()
    out = got["v"][o], gg[o], int(counts[:comm.here()].sum()), counts
    if t:
        phase("merge", t)
    return out


def place(values: np.ndarray, offset: int, layout, out: DistArray, runs: np.ndarray | None = None) -> None:
    """Collective: store this locale's run ``values`` of global (flat) positions
    ``offset, offset + 1, ...`` of a 1-D array into ``out`` (of ``layout``).  ``runs``, every
    locale's run length in locale order (the runs tile the array), saves an all-to-all of counts:
    each locale then knows what it receives from each."""
    t = clock()
    P = comm.num_locales()
    pos = np.arange(offset, offset + len(values), dtype=np.int64)
    owners = layout.owners((pos,))
    flat = layout.local_flat((pos,), owners)
    order = np.argsort(owners, kind="stable") if np.any(owners[1:] < owners[:-1]) else np.arange(len(owners))
    edges = np.searchsorted(owners[order], np.arange(P + 1))
    rec = np.empty(len(values), dtype=[("o", np.int64), ("v", values.dtype)])
    rec["o"], rec["v"] = flat[order], values[order]
    rcounts = None
    if runs is not None:
        mine = owned_flat(layout, comm.here())           # my global flat positions, increasing
        rcounts = np.diff(np.searchsorted(mine, np.concatenate([[0], np.cumsum(runs)])))
    got, _ = exchange_runs(rec, edges, rcounts)
    out._flat_local[got["o"]] = got["v"]
    if t:
        phase("place", t)


def check_array(A, what: str) -> None:
    """Raise TypeError unless ``A`` is a DistArray (``what``: the pg function called)."""
    if not isinstance(A, DistArray):
        raise TypeError(f"pg.{what} takes a DistArray, got {type(A).__name__} (use np.{what} for NumPy arrays)")


def sorted_run(A):
    """Collective: this locale's run of ``A``'s elements sorted by (value, global flat index);
    see :func:`sample_sort`."""
    return sample_sort(A._flat_local, owned_flat(A.layout, comm.here()), A.size)

"""The distributed stable sort behind ``pg.sort``, ``pg.argsort``, ``A.sort()`` and ``pg.unique``.

A sample sort (regular sampling, as PSRS) on keys ``(value, global index)``,
so equal values are distinct keys: the order is NumPy's stable order
(``np.argsort(kind="stable")``: NaN last, ties by position) and buckets stay
balanced even when every value is equal.

1. Each locale sorts its elements stably (NumPy).
2. Each takes ``P`` regular samples, weighted by its element count; one
   allgather gives every locale all ``P * P`` samples (``P**2`` keys of one
   value plus 16 bytes each, on every locale: fine up to a few hundred
   locales; beyond that a sampled splitter selection would be needed).
3. Every locale picks the same ``P - 1`` splitters at the weighted quantiles
   ``k n / P`` and cuts its sorted run at them (binary search).
4. One all-to-all exchange sends each bucket to its locale, which merges what
   it received (NumPy sorts of the concatenated runs).
5. One more all-to-all exchange moves the sorted run into the result's layout
   (Block by default).

Memory: with regular sampling a bucket holds at most about ``2 n / P``
elements whatever the values (the keys are distinct, so duplicates cannot
pile up), so no locale holds more than a small constant times its share
(its input, its bucket and the exchange buffers), for any input including
sorted, reverse-sorted and all-equal ones; a badly unbalanced *input*
distribution (a BlockCyclic block larger than n / P) is what it is.
"""

from __future__ import annotations

import numpy as np

from ... import comm
from ..core import DistArray
from ..creation.layouts import owned_flat


def exchange(parts: list[np.ndarray]) -> list[np.ndarray]:
    """All-to-all of arrays of any one dtype (structured included), moved as bytes."""
    dt = parts[0].dtype
    got = comm.alltoallv([np.ascontiguousarray(p).view(np.uint8) for p in parts], np.uint8)
    return [g.view(dt) for g in got]


def _key_order(v: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The permutation sorting records by (value, global index), NumPy's order for values."""
    by_g = np.argsort(g, kind="stable")
    return by_g[np.argsort(v[by_g], kind="stable")]


def _cut(v: np.ndarray, g: np.ndarray, sv, sg) -> int:
    """How many of the (value, index)-sorted records come before the key ``(sv, sg)``."""
    lo = int(np.searchsorted(v, sv, "left"))
    hi = int(np.searchsorted(v, sv, "right"))
    return lo + int(np.searchsorted(g[lo:hi], sg, "left"))


def sample_sort(v: np.ndarray, g: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, int, list[int]]:
    """Collective: sort the global records (value ``v``, global index ``g``) of ``n`` in all.

    Each locale passes its records (``g`` distinct over all locales, increasing
    on each); returns its run of the globally sorted records ``(values, indices)``,
    the global position of its first record, and every locale's run length."""
    order = np.argsort(v, kind="stable")                 # g increases, so ties stay by index
    v, g = v[order], g[order]
    P = comm.num_locales()
    if P == 1:
        return v, g, 0, [len(v)]
    m = len(v)
    pos = ((np.arange(P) + 0.5) * m / P).astype(np.int64) if m else np.zeros(0, np.int64)
    samples = comm.allgather((v[pos], g[pos], m / P))
    sv = np.concatenate([s[0] for s in samples])
    sg = np.concatenate([s[1] for s in samples])
    w = np.concatenate([np.full(len(s[0]), s[2]) for s in samples])
    o = _key_order(sv, sg)
    sv, sg, cw = sv[o], sg[o], np.cumsum(w[o])
    picks = np.searchsorted(cw, np.arange(1, P) * n / P, "left")
    cuts = [0]
    for k in picks:
        cuts.append(_cut(v, g, sv[k], sg[k]) if k < len(sv) else m)
    cuts.append(m)
    cuts = np.maximum.accumulate(np.array(cuts))
    rec = np.empty(m, dtype=[("v", v.dtype), ("g", np.int64)])
    rec["v"], rec["g"] = v, g
    parts = [x for x in exchange([rec[cuts[r]:cuts[r + 1]] for r in range(P)]) if len(x)]
    got = np.concatenate(parts) if parts else rec[:0]
    if all(a["g"].max() < b["g"].min() for a, b in zip(parts, parts[1:])):
        o = np.argsort(got["v"], kind="stable")          # sources in index order (Block): one merge
    else:
        o = _key_order(got["v"], got["g"])
    counts = [int(c) for c in comm.allgather(len(got))]
    return got["v"][o], got["g"][o], sum(counts[:comm.here()]), counts


def place(values: np.ndarray, offset: int, layout, out: DistArray) -> None:
    """Collective: store this locale's run ``values`` of global (flat) positions
    ``offset, offset + 1, ...`` of a 1-D array into ``out`` (of ``layout``)."""
    P = comm.num_locales()
    pos = np.arange(offset, offset + len(values), dtype=np.int64)
    owners = layout.owners((pos,))
    flat = layout.local_flat((pos,), owners)
    order = np.argsort(owners, kind="stable") if np.any(owners[1:] < owners[:-1]) else np.arange(len(owners))
    edges = np.searchsorted(owners[order], np.arange(P + 1))
    rec = np.empty(len(values), dtype=[("o", np.int64), ("v", values.dtype)])
    rec["o"], rec["v"] = flat[order], values[order]
    for part in exchange([rec[edges[r]:edges[r + 1]] for r in range(P)]):
        out._flat_local[part["o"]] = part["v"]


def check_array(A, what: str) -> None:
    """Raise TypeError unless ``A`` is a DistArray (``what``: the pg function called)."""
    if not isinstance(A, DistArray):
        raise TypeError(f"pg.{what} takes a DistArray, got {type(A).__name__} (use np.{what} for NumPy arrays)")


def sorted_run(A):
    """Collective: this locale's run of ``A``'s elements sorted by (value, global flat index);
    see :func:`sample_sort`."""
    return sample_sort(A._flat_local, owned_flat(A.layout, comm.here()), A.size)

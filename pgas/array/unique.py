"""Operations on sorted distributed data: :func:`unique` and :func:`searchsorted`."""

from __future__ import annotations

import numpy as np

from .. import comm
from ..layout import Block, Distribution
from .construct import _layout
from .core import DistArray
from .sort import _check, _exchange, _sorted_run, place


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise equality with every NaN equal to every NaN (``np.unique``'s default)."""
    eq = a == b
    if a.dtype.kind in "fc":
        eq |= np.isnan(a) & np.isnan(b)
    return eq


def unique(A, return_counts: bool = False, dist: Distribution | None = None):
    """Collective: the sorted distinct values of ``A`` (flattened), as ``np.unique``.

    Parameters
    ----------
    A : DistArray
    return_counts : bool, optional
        Also return how many times each distinct value occurs (int64).
    dist : Distribution, optional
        The results' distribution (Block by default).

    Returns
    -------
    values : DistArray
    counts : DistArray of int64, only with ``return_counts``

    Notes
    -----
    One distributed sort (see :mod:`pgas.array.sort`), then two small
    allgathers (each locale's last value and first run start) and one exchange
    per result.  All NaNs count as one value, as NumPy's ``equal_nan=True``.
    """
    _check(A, "unique")
    v, _, off, _ = _sorted_run(A)
    me, P = comm.here(), comm.num_locales()
    lasts = comm.allgather(v[-1:])
    prev = next((lasts[r] for r in range(me - 1, -1, -1) if len(lasts[r])), None)
    first = np.ones(len(v), dtype=bool)
    if len(v):
        first[1:] = ~_same(v[1:], v[:-1])
        if prev is not None:
            first[0] = not _same(v[:1], prev)[0]
    starts = off + np.flatnonzero(first).astype(np.int64)
    info = comm.allgather((len(starts), int(starts[0]) if len(starts) else None))
    total = sum(k for k, _ in info)
    uoff = sum(k for k, _ in info[:me])
    layout = _layout(total, Block() if dist is None else dist)
    values = DistArray._create(layout, A.dtype)
    place(v[first], uoff, layout, values)
    comm.barrier([values._win])
    if not return_counts:
        return values
    after = next((s for k, s in info[me + 1:] if k), A.size)
    counts = DistArray._create(layout, np.int64)
    place(np.diff(np.append(starts, after)).astype(np.int64), uoff, layout, counts)
    comm.barrier([counts._win])
    return values, counts


def _runs(a: DistArray) -> tuple[np.ndarray, int]:
    """This locale's contiguous run of the 1-D array ``a`` and its global start,
    copying ``a`` to Block first if its locales do not hold contiguous runs."""
    m = a.layout.maps[0]
    if m.b * m.p < m.n:
        from .construct import empty

        b = empty(a.shape, a.dtype, Block())
        b[...] = a
        a = b
    owned = a.layout.owned(comm.here())[0]
    return a.local, int(owned[0]) if len(owned) else 0


def searchsorted(a, v, side: str = "left"):
    """Collective: where to insert ``v`` into the sorted 1-D ``a`` to keep it sorted,
    as ``np.searchsorted`` (NaN-aware, NumPy's order).

    Parameters
    ----------
    a : DistArray
        1-D, sorted ascending (not checked, as in NumPy), any distribution.
    v : DistArray, array_like or scalar
        The values to insert.
    side : {'left', 'right'}, optional

    Returns
    -------
    DistArray of int64 with ``v``'s shape and distribution if ``v`` is a
    DistArray; else a NumPy int64 array (or scalar) of ``v``'s shape, the same on
    every locale.

    Notes
    -----
    One allgather of each locale's first value; each query goes to the one
    locale whose run holds its answer and comes back (one exchange each way),
    or, for replicated ``v``, every locale answers its share and one allreduce
    combines them.
    """
    _check(a, "searchsorted")
    if a.ndim != 1:
        raise ValueError(f"searchsorted needs a 1-D sorted array, got {a.label}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    dist_v = isinstance(v, DistArray)
    q = v._flat_local if dist_v else np.asarray(v)
    if q.dtype.kind not in "biufc":
        raise TypeError(f"searchsorted: values of dtype {q.dtype} cannot be compared with {a.dtype}")
    run, start = _runs(a)
    firsts = comm.allgather(run[:1])
    holders = [r for r, f in enumerate(firsts) if len(f)]
    bounds = np.concatenate([firsts[r] for r in holders]) if holders else np.zeros(0, a.dtype)
    me, P = comm.here(), comm.num_locales()
    flat = q.reshape(-1)
    k = np.searchsorted(bounds, flat, side)
    target = np.where(k > 0, np.asarray(holders, dtype=np.int64)[np.maximum(k - 1, 0)] if holders else -1, -1)
    if not dist_v:
        mine = target == me
        ans = np.zeros(len(flat), dtype=np.int64)
        ans[mine] = start + np.searchsorted(run, flat[mine], side)
        ans = comm.allreduce(ans, "sum") if len(ans) else ans
        return ans.reshape(q.shape) if q.ndim else ans[0]
    order = np.argsort(target, kind="stable")
    edges = np.searchsorted(target[order], np.arange(-1, P + 1))
    asked = _exchange([flat[order[edges[r + 1]:edges[r + 2]]] for r in range(P)])
    told = _exchange([(start + np.searchsorted(run, x, side)).astype(np.int64) for x in asked])
    ans = np.zeros(len(flat), dtype=np.int64)
    ans[order[edges[1]:]] = np.concatenate(told) if told else []
    out = DistArray._create(v.layout, np.int64)
    out._flat_local[:] = ans
    comm.barrier([out._win])
    return out


def _np_unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, **kw):
    if return_index or return_inverse or axis is not None or kw:
        raise NotImplementedError("np.unique of a DistArray supports return_counts only (no index, inverse, axis)")
    return unique(ar, return_counts=return_counts)


NUMPY_FUNCTIONS = {np.unique: _np_unique, np.searchsorted: searchsorted}

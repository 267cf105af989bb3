"""Searching sorted distributed data: :func:`searchsorted` (``np.searchsorted``)."""

from __future__ import annotations

import numpy as np

from ... import comm
from ...layout import Block
from ..core import DistArray
from ..creation.constructors import empty
from .samplesort import check_array, exchange
from .. import collective


def _runs(a: DistArray) -> tuple[np.ndarray, int]:
    """This locale's contiguous run of the 1-D array ``a`` and its global start,
    copying ``a`` to Block first if its locales do not hold contiguous runs."""
    m = a.layout.maps[0]
    if m.b * m.p < m.n:
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
    collective.checked("np.searchsorted(...)", args=(collective.plain(a), collective.plain(v), side))
    check_array(a, "searchsorted")
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
    asked = exchange([flat[order[edges[r + 1]:edges[r + 2]]] for r in range(P)])
    told = exchange([(start + np.searchsorted(run, x, side)).astype(np.int64) for x in asked])
    ans = np.zeros(len(flat), dtype=np.int64)
    ans[order[edges[1]:]] = np.concatenate(told) if told else []
    out = DistArray._create(v.layout, np.int64)
    out._flat_local[:] = ans
    comm.barrier([out._win])
    return out


NUMPY_FUNCTIONS = {np.searchsorted: searchsorted}

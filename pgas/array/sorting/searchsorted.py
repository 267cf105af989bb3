"""Searching sorted distributed data: :func:`searchsorted` (``np.searchsorted``)."""

from __future__ import annotations

import numpy as np

from ... import comm
from ...comm import check
from ...layout import Block
from ..core import DistArray
from ..creation.constructors import empty
from .samplesort import check_array
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


def _query(a, v, side: str) -> np.ndarray:
    """This locale's values to insert; raises for bad arguments (replicated: alike on every
    locale once the call is agreed)."""
    check_array(a, "searchsorted")
    if a.ndim != 1:
        raise ValueError(f"searchsorted needs a 1-D sorted array, got {a.label}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    q = v._flat_local if isinstance(v, DistArray) else np.asarray(v)
    if q.dtype.kind not in "biufc":
        raise TypeError(f"searchsorted: values of dtype {q.dtype} cannot be compared with {a.dtype}")
    return q


def _firsts(a, v, side: str, op: str, args):
    """Collective: agree on the call (``op``, ``args``), raise its errors alike, and find
    every locale's first element of ``a``: ``(values to insert, this locale's run, its
    global start, the first elements of the locales holding a run, those locales)``.

    In the folding mode of collective checking (up to :data:`pgas.comm.check.MAX_SLOTS`
    locales), where ``a`` already lies in one run per locale, the agreement carries the
    first elements (:func:`pgas.comm.check.gather_partials`): one reduction in all.
    Otherwise the call is agreed (when checking is on) and the first elements allgathered."""
    try:
        q, err = _query(a, v, side), None
    except (ValueError, TypeError, NotImplementedError) as e:
        q, err = None, e
    m = a.layout.maps[0] if err is None else None
    if check.folding and check.SLOTS and err is None and m.b * m.p >= m.n and a.dtype.itemsize <= 16:
        run, start = _runs(a)
        bounds = check.gather_partials(op, (collective.ident(a),), args, run[0] if len(run) else None, a.dtype)
        holders = [r for r in range(comm.num_locales()) if a.layout.local_shape(r)[0]]
        return q, run, start, bounds, holders
    if check.enabled:
        check.collective(op, (collective.ident(a),), args, error=err)
    elif check.folding:
        check.agree_history(op, (collective.ident(a),), args, check.call_site(), error=err)
    elif err is not None:
        raise err                             # (replicated arguments: raised alike)
    run, start = _runs(a)
    firsts = comm.allgather(run[:1])
    holders = [r for r, f in enumerate(firsts) if len(f)]
    bounds = np.concatenate([firsts[r] for r in holders]) if holders else np.zeros(0, a.dtype)
    return q, run, start, bounds, holders


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
    Each locale's first value is gathered (in the agreement of the call, in the
    folding mode of collective checking); each query goes to the one locale whose
    run holds its answer and comes back (one exchange each way, :func:`pgas.comm.exchange`:
    no collective up to ``DENSE_MAX`` locales), or, for replicated ``v``, every
    locale answers its share and one allreduce combines them.
    """
    q, run, start, bounds, holders = _firsts(a, v, side, "np.searchsorted(...)",
                                             (collective.plain(a), collective.plain(v), side))
    dist_v = isinstance(v, DistArray)
    me, P = comm.here(), comm.num_locales()
    flat = q.reshape(-1)
    k = np.searchsorted(bounds, flat, side)
    target = np.where(k > 0, np.asarray(holders, dtype=np.int64)[np.maximum(k - 1, 0)] if holders else -1, -1)
    if not dist_v:
        mine = target == me
        ans = np.zeros(len(flat), dtype=np.int64)
        ans[mine] = start + np.searchsorted(run, flat[mine], side)
        ans = comm.allreduce(ans, "sum", data=True) if len(ans) else ans
        return ans.reshape(q.shape) if q.ndim else ans[0]
    order = np.argsort(target, kind="stable")
    edges = np.searchsorted(target[order], np.arange(-1, P + 1))
    asked = comm.exchange([flat[order[edges[r + 1]:edges[r + 2]]] for r in range(P)], flat.dtype)
    told = comm.exchange([(start + np.searchsorted(run, x, side)).astype(np.int64) for x in asked], np.int64)
    ans = np.zeros(len(flat), dtype=np.int64)
    ans[order[edges[1]:]] = np.concatenate(told) if told else []
    out = DistArray._create(v.layout, np.int64)
    out._flat_local[:] = ans
    comm.barrier([out._win])
    return out


NUMPY_FUNCTIONS = {np.searchsorted: searchsorted}

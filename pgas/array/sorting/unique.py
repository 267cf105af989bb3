"""The distinct values of a distributed array: :func:`unique` (``np.unique``)."""

from __future__ import annotations

import numpy as np

from ... import comm
from ...layout import Block, Distribution
from ..core import DistArray
from ..creation.layouts import new_layout
from .samplesort import as_array, place, sorted_values
from .. import collective


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
    A : DistArray, view or expression (materialised first)
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
    One distributed sort (see :mod:`pgas.array.sorting.samplesort`), then two small
    allgathers (each locale's last value and first run start) and one exchange
    per result.  All NaNs count as one value, as NumPy's ``equal_nan=True``.
    """
    collective.checked("np.unique({0})", A, args=(return_counts, repr(dist)))
    A = as_array(A, "unique")
    v, off, _ = sorted_values(A)
    me = comm.here()
    lasts = comm.allgather(v[-1:])
    prev = next((lasts[r] for r in range(me - 1, -1, -1) if len(lasts[r])), None)
    first = np.ones(len(v), dtype=bool)
    if len(v):
        first[1:] = ~_same(v[1:], v[:-1])
        if prev is not None:
            first[0] = not _same(v[:1], prev)[0]
    starts = off + np.flatnonzero(first).astype(np.int64)
    info = comm.allgather((len(starts), int(starts[0]) if len(starts) else None))
    runs = np.array([k for k, _ in info], dtype=np.int64)
    total = int(runs.sum())
    uoff = int(runs[:me].sum())
    layout = new_layout(total, Block() if dist is None else dist)
    values = DistArray._create(layout, A.dtype)
    place(v[first], uoff, layout, values, runs)
    comm.barrier([values._win])
    if not return_counts:
        return values
    after = next((s for k, s in info[me + 1:] if k), A.size)
    counts = DistArray._create(layout, np.int64)
    place(np.diff(np.append(starts, after)).astype(np.int64), uoff, layout, counts, runs)
    comm.barrier([counts._win])
    return values, counts


def _np_unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, **kw):
    if return_index or return_inverse or axis is not None or kw:
        raise NotImplementedError("np.unique of a DistArray supports return_counts only (no index, inverse, axis)")
    return unique(ar, return_counts=return_counts)


NUMPY_FUNCTIONS = {np.unique: _np_unique}

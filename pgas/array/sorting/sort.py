"""Sorting distributed arrays: :func:`sort`, :func:`argsort` and ``A.sort()``.

A 1-D array, or an n-D one with ``axis=None`` (flattened), is sorted by the
distributed sample sort of :mod:`pgas.array.sorting.samplesort`: NumPy's stable
order, NaN last.

An n-D array sorts along an axis that is not split over locales (``axis=-1``
with the default grids of Block over a 1-column grid, say) locally, with no
messages; along a split axis it raises ``ValueError`` naming the grid to use.
``axis=None`` sorts the flattened array (distributed).
"""

from __future__ import annotations

import numpy as np

from ... import comm
from ...layout import Block, Distribution
from .. import engine
from ..core import DistArray
from ..creation.layouts import new_layout
from .samplesort import check_array, place, sorted_run
from .. import collective


def _axis(A, axis, what: str):
    """None for a distributed flat sort, else the normalised local axis."""
    if axis is None or A.ndim == 1:
        if axis is not None and not -1 <= axis <= 0:
            raise np.exceptions.AxisError(f"{what}: axis {axis} is out of bounds for {A.label}")
        return None
    if not -A.ndim <= axis < A.ndim:
        raise np.exceptions.AxisError(f"{what}: axis {axis} is out of bounds for {A.label}")
    axis %= A.ndim
    if A.layout.grid[axis] != 1:
        grid = list(A.layout.grid)
        want = tuple(g * grid[axis] if d == (axis - 1) % A.ndim else (1 if d == axis else g)
                     for d, g in enumerate(grid))
        raise ValueError(f"{what} along axis {axis} of {A.label}: that axis is split over {grid[axis]} locales "
                         f"(grid {A.layout.grid}); only axes held whole by one locale sort along rows. "
                         f"Copy it to a distribution with grid {want} first, or sort with axis=None (flattened)")
    return axis


def _kind(kind, order) -> None:
    if kind not in (None, "stable", "mergesort", "quicksort", "heapsort"):
        raise ValueError(f"sort kind must be one of 'quicksort', 'mergesort', 'heapsort', 'stable', got {kind!r}")
    if order is not None:
        raise ValueError("sort order= applies to structured arrays, which pgas does not hold")


def sort(A, axis=-1, kind=None, order=None, dist: Distribution | None = None) -> DistArray:
    """Collective: a sorted copy of ``A``, as ``np.sort`` (NaN last).

    Parameters
    ----------
    A : DistArray
        Any supported dtype and distribution.
    axis : int or None, optional
        For 1-D arrays ``-1``, ``0`` and None all sort the whole array
        (distributed sample sort).  For n-D arrays an axis held whole by each
        locale is sorted locally; None sorts the flattened array.
    kind, order : optional
        Accepted for NumPy compatibility; the sort is always stable.
    dist : Distribution, optional
        The result's distribution for a distributed sort (Block by default);
        a local (row) sort keeps ``A``'s distribution.

    Returns
    -------
    DistArray
    """
    collective.checked("np.sort({0})", A, args=(collective.plain(axis), kind, repr(dist)))
    check_array(A, "sort")
    _kind(kind, order)
    ax = _axis(A, axis, "sort")
    if ax is not None:
        out = DistArray._create(A.layout, A.dtype)
        out.local[...] = np.sort(A.local, axis=ax, kind="stable")
        comm.barrier([out._win])
        return out
    v, _, off, _ = sorted_run(A)
    return _result(v, off, A.size, A.dtype, dist)


def argsort(A, axis=-1, kind=None, order=None, dist: Distribution | None = None) -> DistArray:
    """Collective: the int64 indices that sort ``A`` stably, as ``np.argsort(kind="stable")``.

    Parameters
    ----------
    A : DistArray
    axis : int or None, optional
        As for :func:`sort`; with None (or a 1-D ``A``) the indices are global
        flat (C-order) indices.
    kind, order : optional
        Accepted for NumPy compatibility; the result is always the stable order.
    dist : Distribution, optional
        The result's distribution for a distributed sort (Block by default).

    Returns
    -------
    DistArray of int64
    """
    collective.checked("np.argsort({0})", A, args=(collective.plain(axis), kind, repr(dist)))
    check_array(A, "argsort")
    _kind(kind, order)
    ax = _axis(A, axis, "argsort")
    if ax is not None:
        out = DistArray._create(A.layout, np.int64)
        out.local[...] = np.argsort(A.local, axis=ax, kind="stable")
        comm.barrier([out._win])
        return out
    _, g, off, _ = sorted_run(A)
    return _result(g, off, A.size, np.int64, dist)


def _result(run, offset, n, dtype, dist) -> DistArray:
    layout = new_layout(n, Block() if dist is None else dist)
    out = DistArray._create(layout, dtype)
    place(run, offset, layout, out)
    comm.barrier([out._win])
    return out


def sort_inplace(A, axis=-1, kind=None, order=None) -> None:
    """Collective: ``A.sort()``, sorting ``A`` in place (see :func:`sort`)."""
    check_array(A, "sort")
    _kind(kind, order)
    ax = _axis(A, axis, "sort")
    if ax is None and A.ndim > 1:
        raise np.exceptions.AxisError("A.sort(axis=None) is not defined for an n-D array (NumPy neither)")
    engine.before_write(A, None)
    if ax is not None:
        A.local.sort(axis=ax, kind="stable")
    else:
        v, _, off, _ = sorted_run(A)
        place(v, off, A.layout, A)
    comm.barrier([A._win])


NUMPY_FUNCTIONS = {np.sort: sort, np.argsort: argsort}

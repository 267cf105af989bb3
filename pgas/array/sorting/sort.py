"""Sorting distributed arrays: :func:`sort`, :func:`argsort` and ``A.sort()``.

A 1-D array, or an n-D one with ``axis=None`` (flattened), is sorted by the
distributed sample sort of :mod:`pgas.array.sorting.samplesort`: NumPy's stable
order, NaN last.

An n-D array sorts along an axis that is not split over locales (``axis=-1``
with a grid of one column, say) locally, with no messages.  Along a split axis
it is copied to the same distribution kind on a grid that holds that axis
whole (the axis's locales moved onto the axis before it, or after it for axis
0: ``(2, 2)`` becomes ``(4, 1)`` to sort along axis 1), sorted there locally,
and copied back into the input's layout: two statements, each at most one
message per locale pair.  ``axis=None`` sorts the flattened array (distributed).
"""

from __future__ import annotations

import dataclasses
import operator

import numpy as np

from ... import comm
from ...layout import Block, Distribution
from .. import engine
from ..core import DistArray
from ..creation.conversion import redistribute
from ..creation.layouts import new_layout
from .samplesort import as_array, check_array, place, sorted_run, sorted_values
from .. import collective


def _axis(A, axis, what: str):
    """None for a distributed flat sort, else the normalised axis to sort along."""
    if axis is None or A.ndim == 1:
        if axis is not None and not -1 <= axis <= 0:
            raise np.exceptions.AxisError(f"{what}: axis {axis} is out of bounds for {A.label}")
        return None
    axis = operator.index(axis)
    if not -A.ndim <= axis < A.ndim:
        raise np.exceptions.AxisError(f"{what}: axis {axis} is out of bounds for {A.label}")
    return axis % A.ndim


def _along(A, axis: int, sort_rows, dtype) -> DistArray:
    """Collective: ``sort_rows(local part, axis)`` of ``A`` along ``axis`` in ``A``'s layout;
    a split axis is first gathered whole on each locale (see the module docstring)."""
    src = A
    if A.layout.grid[axis] != 1:
        grid = A.layout.grid
        into = (axis - 1) % A.ndim
        whole = tuple(g * grid[axis] if d == into else (1 if d == axis else g) for d, g in enumerate(grid))
        src = redistribute(A, dataclasses.replace(A.layout.dist, grid=whole))
    part = DistArray._create(src.layout, dtype)
    part.local[...] = sort_rows(src.local, axis)
    comm.barrier([part._win])
    if src is A:
        return part
    out = DistArray._create(A.layout, dtype)
    out[...] = part
    return out


def _kind(kind, order) -> None:
    if kind not in (None, "stable", "mergesort", "quicksort", "heapsort"):
        raise ValueError(f"sort kind must be one of 'quicksort', 'mergesort', 'heapsort', 'stable', got {kind!r}")
    if order is not None:
        raise ValueError("sort order= applies to structured arrays, which pgas does not hold")


def sort(A, axis=-1, kind=None, order=None, dist: Distribution | None = None) -> DistArray:
    """Collective: a sorted copy of ``A``, as ``np.sort`` (NaN last).

    Parameters
    ----------
    A : DistArray, view or expression (materialised first)
        Any supported dtype and distribution.
    axis : int or None, optional
        For 1-D arrays ``-1``, ``0`` and None all sort the whole array
        (distributed sample sort).  For n-D arrays any axis (an axis split
        over locales is gathered whole on each first); None sorts the
        flattened array.
    kind, order : optional
        Accepted for NumPy compatibility; the sort is always stable.
    dist : Distribution, optional
        The result's distribution for a flattened sort (Block by default);
        a sort along an axis keeps ``A``'s distribution.

    Returns
    -------
    DistArray
    """
    collective.checked("np.sort({0})", A, args=(collective.plain(axis), kind, repr(dist)))
    A = as_array(A, "sort")
    _kind(kind, order)
    ax = _axis(A, axis, "sort")
    if ax is not None:
        return _along(A, ax, lambda x, k: np.sort(x, axis=k, kind="stable"), A.dtype)
    v, off, runs = sorted_values(A)
    return _result(v, off, runs, A.size, A.dtype, dist)


def argsort(A, axis=-1, kind=None, order=None, dist: Distribution | None = None) -> DistArray:
    """Collective: the int64 indices that sort ``A`` stably, as ``np.argsort(kind="stable")``.

    Parameters
    ----------
    A : DistArray, view or expression (materialised first)
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
    A = as_array(A, "argsort")
    _kind(kind, order)
    ax = _axis(A, axis, "argsort")
    if ax is not None:
        return _along(A, ax, lambda x, k: np.argsort(x, axis=k, kind="stable"), np.int64)
    _, g, off, runs = sorted_run(A)
    return _result(g, off, runs, A.size, np.int64, dist)


def _result(run, offset, runs, n, dtype, dist) -> DistArray:
    layout = new_layout(n, Block() if dist is None else dist)
    out = DistArray._create(layout, dtype)
    place(run, offset, layout, out, runs)
    comm.barrier([out._win])
    return out


def sort_inplace(A, axis=-1, kind=None, order=None) -> None:
    """Collective: ``A.sort()``, sorting ``A`` in place (see :func:`sort`)."""
    collective.checked("{0}.sort()", A, args=(collective.plain(axis), kind))
    check_array(A, "sort")
    _kind(kind, order)
    ax = _axis(A, axis, "sort")
    if ax is None and A.ndim > 1:
        raise TypeError("A.sort(axis=None) is not defined for an n-D array (NumPy neither)")
    if ax is not None and A.layout.grid[ax] != 1:
        A[...] = _along(A, ax, lambda x, k: np.sort(x, axis=k, kind="stable"), A.dtype)
        return
    engine.before_write(A, None)
    if ax is not None:
        A.local.sort(axis=ax, kind="stable")
    else:
        v, off, runs = sorted_values(A)
        place(v, off, A.layout, A, runs)
    comm.barrier([A._win])


NUMPY_FUNCTIONS = {np.sort: sort, np.argsort: argsort}

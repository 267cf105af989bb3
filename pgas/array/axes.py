"""Axis arguments and the distribution of results over other axes (pure; no MPI).

:func:`normalize_axes` reads NumPy's ``axis=`` argument (None, an int or a tuple)
with NumPy's errors; :func:`result_dist` is the distribution a reduction, reshape,
join or gather gives a result of another number of dimensions.
"""

from __future__ import annotations

import dataclasses

import numpy as np


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def normalize_axes(axis, ndim: int, single: bool = False) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple of ints, negative counting from the end) as a
    sorted tuple of distinct non-negative axes; NumPy's errors for bad ones.

    >>> normalize_axes(-1, 3), normalize_axes((2, 0), 3), normalize_axes(None, 2)
    ((2,), (0, 2), (0, 1))
    """
    if axis is None:
        return tuple(range(ndim))
    if single and not _is_int(axis):
        raise TypeError(f"axis must be None or an integer, got {axis!r}")
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for ax in axes:
        if not _is_int(ax):
            raise TypeError(f"axis must be None, an integer or a tuple of integers, got {axis!r}")
        if not -ndim <= ax < ndim:
            # NumPy's message, as the error's one argument: raised alike, it can name the locale
            raise np.exceptions.AxisError(f"axis {int(ax)} is out of bounds for array of dimension {ndim}")
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in 'axis': {axis!r}")
    return tuple(sorted(out))


def result_dist(layout, ndim: int):
    """The distribution of a result of ``ndim`` dims made from an array of ``layout``:
    the same kind, the default grid."""
    d = layout.dist
    block = d.block
    if block is not None and len(block) not in (1, ndim):
        block = (block[0],)
    return dataclasses.replace(d, block=block, grid=None)

"""The ``*_like`` constructors: ``empty_like``, ``full_like``, ``zeros_like`` and ``ones_like``.

On a distributed operand each is collective and gives a new array of the operand's
shape, dtype and distribution (a ghosted array's ghost widths too), each locale
filling only the elements it owns; on anything else it is NumPy's function.
"""

from __future__ import annotations

import numpy as np

from ..axes import result_dist
from ..core import DistArray
from ..operands import distributed
from .constructors import empty, full


def _dist_of(a, dist):
    """``dist`` if given, else ``a``'s own distribution (a view's base kind, default grid)."""
    if dist is not None:
        return dist
    if isinstance(a, DistArray):
        return a.dist
    base = getattr(a, "base", None)
    if base is None and hasattr(a, "eval"):
        base = a.eval()
    return result_dist(base.layout, a.ndim)


def _ghosts_of(a, shape, dist):
    """``a``'s ghost widths when the new array has its shape and distribution (so
    ``empty_like(A)`` of a ghosted ``A`` is ghosted alike: a valid ``out=`` for shifts)."""
    if isinstance(a, DistArray) and a.layout.ghosts and shape is None and dist is None:
        return a.layout.ghosts
    return None


def empty_like(a, dtype=None, shape=None, *, dist=None, name=None):
    """Collective: an uninitialised array of ``a``'s shape, dtype and distribution."""
    if not distributed(a):
        return np.empty_like(a, dtype=dtype, shape=shape)
    return empty(a.shape if shape is None else shape, a.dtype if dtype is None else dtype, _dist_of(a, dist), name,
                 ghosts=_ghosts_of(a, shape, dist))


def full_like(a, fill_value, dtype=None, shape=None, *, dist=None, name=None):
    """Collective: an array of ``a``'s shape, dtype and distribution filled with ``fill_value``."""
    if not distributed(a):
        return np.full_like(a, fill_value, dtype=dtype, shape=shape)
    return full(a.shape if shape is None else shape, fill_value, a.dtype if dtype is None else dtype,
                _dist_of(a, dist), name, ghosts=_ghosts_of(a, shape, dist))


def zeros_like(a, dtype=None, shape=None, *, dist=None, name=None):
    """Collective: zeros of ``a``'s shape, dtype and distribution."""
    if not distributed(a):
        return np.zeros_like(a, dtype=dtype, shape=shape)
    return full_like(a, 0, dtype, shape, dist=dist, name=name)


def ones_like(a, dtype=None, shape=None, *, dist=None, name=None):
    """Collective: ones of ``a``'s shape, dtype and distribution."""
    if not distributed(a):
        return np.ones_like(a, dtype=dtype, shape=shape)
    return full_like(a, 1, dtype, shape, dist=dist, name=name)


NUMPY_FUNCTIONS = {np.empty_like: empty_like, np.full_like: full_like, np.zeros_like: zeros_like,
                   np.ones_like: ones_like}

"""Collective constructors of distributed arrays."""

from __future__ import annotations

import numpy as np

from .. import comm
from ..comm import check
from ..layout import Block, Distribution
from .collective import checked
from .core import DistArray
from .index import check_dtype


def _layout(shape, dist: Distribution | None):
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    dist = Block() if dist is None else dist
    if not isinstance(dist, Distribution):
        raise TypeError(f"dist must be pg.Block(), pg.Cyclic() or pg.BlockCyclic(b), got {dist!r}")
    return dist.bind(shape, comm.num_locales())


def _check(fn: str, shape, dtype, dist, name, value=None) -> None:
    """Collective call checking (when on) for a constructor."""
    if not check.enabled:
        return
    shown = f"pg.{fn}({shape!r}{'' if value is None else ', ' + repr(value)}, dtype={np.dtype(dtype)})"
    checked(shown, args=(repr(dist), name))


def empty(shape, dtype=float, dist: Distribution | None = None, name: str | None = None) -> DistArray:
    """Collective: a distributed array of ``shape`` with uninitialised elements."""
    _check("empty", shape, dtype, dist, name)
    return _empty(shape, dtype, dist, name)


def _empty(shape, dtype, dist, name) -> DistArray:
    return DistArray._create(_layout(shape, dist), check_dtype(dtype), name)


def full(shape, value, dtype=None, dist: Distribution | None = None, name: str | None = None) -> DistArray:
    """Collective: a distributed array of ``shape`` filled with ``value``.  Like every
    initialising constructor it ends with a barrier, so one-sided access may follow at once."""
    dtype = np.asarray(value).dtype if dtype is None else dtype
    _check("full", shape, dtype, dist, name, value)
    return _full(shape, value, dtype, dist, name)


def _full(shape, value, dtype, dist, name) -> DistArray:
    a = _empty(shape, dtype, dist, name)
    a.local[...] = value
    comm.barrier([a._win])
    return a


def zeros(shape, dtype=float, dist: Distribution | None = None, name: str | None = None) -> DistArray:
    """Collective: a distributed array of zeros."""
    _check("zeros", shape, dtype, dist, name)
    return _full(shape, 0, dtype, dist, name)


def ones(shape, dtype=float, dist: Distribution | None = None, name: str | None = None) -> DistArray:
    """Collective: a distributed array of ones."""
    _check("ones", shape, dtype, dist, name)
    return _full(shape, 1, dtype, dist, name)


def arange(n, dtype=int, dist: Distribution | None = None, name: str | None = None) -> DistArray:
    """Collective: the 1-D distributed array ``0, 1, ..., n - 1``."""
    _check("arange", n, dtype, dist, name)
    a = _empty(int(n), dtype, dist, name)
    a.local[...] = a.layout.owned(comm.here())[0]
    comm.barrier([a._win])
    return a


def from_numpy(array, dist: Distribution | None = None, name: str | None = None) -> DistArray:
    """Collective: distribute a global NumPy array that every locale holds (the same on each)."""
    array = np.asarray(array)
    checked("pg.from_numpy(...)", args=(repr(dist), name))
    seen = comm.allgather((array.shape, array.dtype.str))      # agree first, then check alike
    if any(s != seen[0] for s in seen):
        raise ValueError(f"from_numpy: locales passed different arrays (shape, dtype): {seen}")
    if array.ndim == 0:
        raise ValueError("from_numpy needs an array of at least one dimension, got a scalar")
    check_dtype(array.dtype)
    a = _empty(array.shape, array.dtype, dist, name)
    a.local[...] = array[np.ix_(*a.layout.owned(comm.here()))]
    comm.barrier([a._win])
    return a

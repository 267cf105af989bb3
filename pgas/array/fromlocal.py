"""Constructors that build a distributed array where its elements live, with no
global copy anywhere: :func:`from_local` (each locale hands in its own block) and
:func:`fromfunction` (each locale evaluates a function on its own indices)."""

from __future__ import annotations

import numpy as np

from .. import comm
from ..layout import Distribution
from .construct import _layout
from .core import DistArray
from .index import check_dtype


def owned_flat(layout, locale: int) -> np.ndarray:
    """The C-order global flat index of each element ``locale`` owns, in its local
    storage order (an increasing int64 array, since owned indices increase per dimension)."""
    owned = layout.owned(locale)
    flat = np.zeros((1,) * layout.ndim, dtype=np.int64)
    stride = 1
    for d in range(layout.ndim - 1, -1, -1):
        shape = [1] * layout.ndim
        shape[d] = len(owned[d])
        flat = flat + owned[d].astype(np.int64).reshape(shape) * stride
        stride *= layout.shape[d]
    return np.broadcast_to(flat, layout.local_shape(locale)).reshape(-1)


def from_local(block, shape, dist: Distribution | None = None, dtype=None, name: str | None = None) -> DistArray:
    """Collective: a distributed array built from the block each locale owns.

    Parameters
    ----------
    block : array_like
        This locale's elements in its local storage order: exactly what ``A.local``
        of the result holds, of shape ``dist.bind(shape, P).local_shape(here)``.
    shape : int or tuple of int
        The global shape (the same on every locale).
    dist : Distribution, optional
        Block (the default), Cyclic or BlockCyclic.
    dtype : dtype, optional
        The element type; by default the blocks' common dtype (blocks with no elements
        do not count, so an empty ``np.empty(0)`` on one locale is fine).
    name : str, optional
        How errors name the array.

    Returns
    -------
    DistArray

    Raises
    ------
    ValueError
        On every locale alike if any locale's block has the wrong shape, or the
        non-empty blocks have different dtypes (and ``dtype`` is not given).

    Notes
    -----
    No locale holds more than its own block; one small allgather checks the blocks.
    """
    block = np.asarray(block)
    layout = _layout(shape, dist)
    seen = comm.allgather((block.shape, block.dtype.str, block.size))
    bad = [(r, s) for r, (s, _, _) in enumerate(seen) if tuple(s) != layout.local_shape(r)]
    if bad:
        r, s = bad[0]
        raise ValueError(f"from_local: locale {r} passed a block of shape {tuple(s)}, but it owns "
                         f"{layout.local_shape(r)} of the {layout.shape} array ({layout.dist}, grid {layout.grid})")
    if dtype is None:
        kinds = sorted({d for _, d, n in seen if n}) or [seen[0][1]]
        if len(kinds) > 1:
            raise ValueError(f"from_local: locales passed blocks of different dtypes {kinds}; pass dtype=")
        dtype = kinds[0]
    a = DistArray._create(layout, check_dtype(dtype), name)
    a.local[...] = block
    comm.barrier([a._win])
    return a


def fromfunction(function, shape, dist: Distribution | None = None, dtype=float, name: str | None = None,
                 **kwargs) -> DistArray:
    """Collective: ``A[i, j, ...] = function(i, j, ...)``, evaluated where each element lives.

    Parameters
    ----------
    function : callable
        Called once per locale with one int64 index array per dimension: this
        locale's owned global indices, shaped as ``np.ix_`` would (open grids that
        broadcast to the local block).  It returns an array that broadcasts to the
        local block, or a scalar.
    shape : int or tuple of int
        The global shape.
    dist : Distribution, optional
        Block (the default), Cyclic or BlockCyclic.
    dtype : dtype, optional
        The element type of the result (default float); values are converted as
        NumPy assignment converts them.
    name : str, optional
        How errors name the array.
    **kwargs
        Passed on to ``function``.

    Returns
    -------
    DistArray

    Notes
    -----
    Unlike ``np.fromfunction`` (whose ``dtype`` is that of full coordinate grids),
    the coordinates are open int64 grids and ``dtype`` is the result's type, so
    ``pg.fromfunction(f, s, dtype=d).to_numpy()`` equals
    ``np.fromfunction(f, s, dtype=int).astype(d)`` for any ``f`` that broadcasts.
    An exception raised by ``function`` on any locale is raised on every locale.
    """
    layout = _layout(shape, dist)
    dtype = check_dtype(dtype)
    a = DistArray._create(layout, dtype, name)
    err = None
    try:
        idx = np.ix_(*[o.astype(np.int64) for o in layout.owned(comm.here())])
        a.local[...] = np.broadcast_to(np.asarray(function(*idx, **kwargs)), a.local.shape)
    except Exception as e:                       # noqa: BLE001 - re-raised on every locale by agree
        err = e
    comm.agree(err)
    comm.barrier([a._win])
    return a

"""Constructors that build a distributed array where its elements live, with no
global copy anywhere: :func:`from_local` (each locale hands in its own block) and
:func:`fromfunction` (each locale evaluates a function on its own indices)."""

from __future__ import annotations

import zlib

import numpy as np

from ... import comm
from ...layout import Distribution
from ...layout.boxes import BOX, box_shape
from ..core import DistArray
from ..index import check_dtype
from .layouts import fill, new_layout, owned_box

#: Blocks of more elements than this are computed box by box (:func:`fromfunction`).
LARGE = 2 * BOX


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
    No locale holds more than its own block.  Each locale checks its own block's shape
    against the layout, and one small allreduce (plus, when ``dtype`` is not given, one
    broadcast of the dtype) checks the rest: nothing grows with the locale count.
    """
    block = np.asarray(block)
    layout = new_layout(shape, dist)
    me = comm.here()
    err = None
    if block.shape != layout.local_shape(me):
        err = ValueError(f"from_local: locale {me} passed a block of shape {block.shape}, but it owns "
                         f"{layout.local_shape(me)} of the {layout.shape} array ({layout.dist}, grid {layout.grid})")
    comm.agree(err)
    if dtype is None:
        dtype = _agreed_dtype(block)
    a = DistArray._create(layout, check_dtype(dtype), name)
    a.local[...] = block
    comm.barrier([a._win])
    return a


_NONE = np.iinfo(np.int64).max


def _agreed_dtype(block: np.ndarray) -> np.dtype:
    """Collective: the dtype of the non-empty blocks (locale 0's when all are empty);
    a ValueError on every locale alike when the non-empty blocks' dtypes differ."""
    code = zlib.crc32(block.dtype.str.encode())
    mine = [code, -code, comm.here()] if block.size else [_NONE, _NONE, comm.num_locales()]
    low, neg_high, first = comm.allreduce(np.array(mine, dtype=np.int64), "min")   # neg_high: -max
    if low != _NONE and low != -neg_high:
        kinds = sorted({d for d, n in comm.allgather((block.dtype.str, block.size)) if n})
        raise ValueError(f"from_local: locales passed blocks of different dtypes {kinds}; pass dtype=")
    return np.dtype(comm.bcast(block.dtype.str, int(first) if low != _NONE else 0))


def fromfunction(function, shape, dist: Distribution | None = None, dtype=float, name: str | None = None,
                 **kwargs) -> DistArray:
    """Collective: ``A[i, j, ...] = function(i, j, ...)``, evaluated where each element lives.

    Parameters
    ----------
    function : callable
        Called with one int64 index array per dimension: this locale's owned
        global indices, shaped as ``np.ix_`` would (open grids that broadcast to
        the local block).  It returns an array that broadcasts to them, or a
        scalar.  A locale whose block has more than 512 Ki elements calls it once
        per box of its block (256 Ki elements, see :mod:`pgas.layout.boxes`), with
        that box's indices, so no temporary is larger than a box; otherwise once.
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
    layout = new_layout(shape, dist)
    dtype = check_dtype(dtype)
    a = DistArray._create(layout, dtype, name)
    err = None
    me = comm.here()

    def values(key):
        box = layout.owned(me) if key is None else owned_box(layout, me, key)
        return np.broadcast_to(np.asarray(function(*np.ix_(*[o.astype(np.int64) for o in box]), **kwargs)),
                               a.local.shape if key is None else box_shape(a.local.shape, key))

    try:
        if a.local.size > LARGE:                 # a large block: one box at a time
            fill(a.local, values)
        else:
            a.local[...] = values(None)
    except Exception as e:                       # noqa: BLE001 - re-raised on every locale by agree
        err = e
    comm.agree(err)
    comm.barrier([a._win])
    return a

"""NumPy's advanced indexing on distributed arrays: ``A[idx]``, ``A[mask]``,
``A[:, [0, 2]]``, and assignment through them, built on the aggregated
``gather`` / ``scatter`` (at most one message per locale pair each way; a
distributed mask also flattens itself and scans its per-locale counts first).

Keys
- **Replicated NumPy keys** (lists, integer or boolean NumPy arrays, mixed with
  slices, integers, ``None`` and ``...``, the same on every locale, as every
  NumPy operand of a statement is): NumPy's own rules give the result's shape and
  which element each result position reads, so every case NumPy accepts means the
  same here, errors included (an index out of range raises IndexError on every
  locale alike).  Each locale works out only the positions of the result it owns.
- **A boolean DistArray** (or lazy expression, ``A[A > 0]``) of ``A``'s shape: the
  selected elements in C order as a new 1-D array.
- **An integer DistArray** indexing a 1-D array: a result distributed like the key.

``A[key]`` is a new array (a copy, as in NumPy), distributed like ``A`` (the same
kind on the default grid) unless the key is a DistArray.  ``A[key] = value``
writes through the same positions; with a repeated index the last value in the
key's C order is stored, as NumPy does.  ``A[key] += v`` is ``A[key] = A[key] + v``:
repeats are not accumulated (use ``A.update`` for that, as NumPy's ``np.add.at``).
"""

from __future__ import annotations

import numpy as np

from .. import comm
from .axes import result_dist
from .operands import as_view
from . import collective, irregular


def scalar_key(key):
    """``key`` with 0-d integer NumPy arrays as Python ints (NumPy takes ``A[np.array(3)]``
    as ``A[3]``); any other key unchanged."""
    if type(key) is np.ndarray:
        return int(key) if key.ndim == 0 and key.dtype.kind in "iu" else key
    if type(key) is tuple and any(type(k) is np.ndarray for k in key):
        return tuple(int(k) if type(k) is np.ndarray and k.ndim == 0 and k.dtype.kind in "iu" else k for k in key)
    return key


def is_advanced(key) -> bool:
    """True for a key NumPy treats as advanced indexing: a list or range, a bool, a NumPy
    array of at least one dimension (or of bools), or a distributed array or expression."""
    from . import engine

    for k in key if isinstance(key, tuple) else (key,):
        if isinstance(k, (list, range, bool, np.bool_)) or engine.is_array(k) or hasattr(k, "eval"):
            return True
        if isinstance(k, np.ndarray) and (k.ndim or k.dtype == bool):
            return True
    return False


def base_indices(view, vidx) -> tuple[np.ndarray, ...]:
    """The base array's indices (one flat int64 array per base dimension) of the
    elements of ``view`` at the view indices ``vidx`` (one array per view dimension)."""
    return tuple(np.asarray(sum(row[k] * vidx[k] for k in range(len(row))) + ci, dtype=np.int64).reshape(-1)
                 for row, ci in zip(view.M, view.c))


def _distributed_key(key):
    """The DistArray of a key that is one (a view or an expression is materialised), else None."""
    from . import engine

    if isinstance(key, tuple):
        if any(engine.is_array(k) or hasattr(k, "eval") for k in key):
            raise NotImplementedError("indexing with a tuple holding distributed arrays is not supported: "
                                      "index with one distributed boolean mask of the array's shape, one "
                                      "distributed integer array (1-D arrays), or NumPy index arrays")
        return None
    if engine.is_array(key):
        return key
    if hasattr(key, "eval"):
        return key.eval()
    return None


def _selection(view, key) -> list[np.ndarray]:
    """Per view dimension, the index of the element each position of ``view[key]`` reads:
    ``key`` applied by NumPy to index grids that take no memory (broadcast aranges), so
    NumPy's rules and errors hold, the same on every locale."""
    grids = (np.broadcast_to(np.arange(n).reshape((-1,) + (1,) * (view.ndim - d - 1)), view.shape)
             for d, n in enumerate(view.shape))
    return [g[key] for g in grids]


def _selected(view, key):
    """``(_selection(view, key), its shape)``; IndexError for a single element."""
    sel = _selection(view, key)
    shape = sel[0].shape if sel else ()
    if not shape:
        raise IndexError("an advanced index giving a single element: index with integers instead")
    return sel, shape


def _positions(view, sel, shape):
    """Per base dimension, the base index read by each result position this locale owns,
    and a new empty result of ``view[key]``'s shape (distributed like the view's base), from
    the key's selection ``sel`` of that ``shape`` (:func:`_selected`)."""
    from .creation.constructors import empty

    R = empty(shape, view.dtype, result_dist(view.base.layout, len(shape)))
    owned = R.layout.owned(comm.here())
    if R.local.size:
        flat = np.ravel_multi_index(tuple(g.reshape(-1) for g in np.meshgrid(*owned, indexing="ij")), shape)
        vidx = [s.reshape(-1)[flat] for s in sel]
    else:
        vidx = [np.empty(0, np.int64) for _ in sel]
    bidx = base_indices(view, vidx)
    return bidx, R


def _mask_flat(view, M):
    """This locale's selected elements of ``view`` under the distributed mask ``M``: their
    base indices, their positions in the result, and the result's length."""
    from ..layout import Block
    from .creation.constructors import zeros

    if tuple(M.shape) != tuple(view.shape):
        raise IndexError(f"boolean index did not match indexed array: the mask's shape is {tuple(M.shape)}, "
                         f"the array's {tuple(view.shape)}")
    F = M.ravel()
    if F.layout.dist.kind != "block":
        F = F.redistribute(Block())
    (own,) = F.layout.owned(comm.here())
    mine = own[np.flatnonzero(F.local)] if F.local.size else np.empty(0, np.int64)
    counts = zeros(comm.num_locales(), np.int64, Block())    # one count per locale: their scan
    counts.local[...] = mine.size
    ends = np.cumsum(counts)
    end = int(ends.local[0]) if ends.local.size else 0
    total = comm.allreduce(mine.size)
    vidx = np.unravel_index(mine, view.shape) if view.ndim else ()
    bidx = base_indices(view, vidx)
    return bidx, np.arange(end - mine.size, end, dtype=np.int64), total


def getitem(src, key):
    """Collective: ``src[key]`` for an advanced ``key`` (see the module doc).  With a NumPy
    key the call is only folded (in the folding mode of collective checking): the result's
    allocation agrees on it, after which the gather's exchange carries any error."""
    from ..layout import Block
    from .creation.constructors import empty

    v = as_view(src)
    op, args = "{0}[<index>]", (collective.plain(key),)
    if _numpy_key(key):
        collective.folded(op, v.base, args=args)
        selected, err = irregular.attempt(lambda: _selected(v, key))
        if err is not None:
            collective.raise_folded(err)
        bidx, R = _positions(v, *selected)
        R.local[...] = irregular.gather(v.base, bidx).reshape(R.local.shape)
        comm.barrier([R._win])
        return R
    collective.checked(op, v.base, args=args)
    D = _distributed_key(key)
    if D.dtype == bool:
        bidx, pos, total = _mask_flat(v, D)
        R = empty((total,), v.dtype, Block())
        _scatter(R, pos, irregular.gather(v.base, bidx))
        return R
    if v.ndim != 1 or not np.issubdtype(D.dtype, np.integer):
        raise NotImplementedError("a distributed integer index is supported for 1-D arrays only "
                                  f"(got a {v.ndim}-D array and a {D.dtype} index); use NumPy index arrays")
    R = empty(D.shape, v.dtype, D.layout.dist)
    R.local[...] = irregular.gather(v.base, _base1(v, D.local.reshape(-1))).reshape(R.local.shape)
    comm.barrier([R._win])
    return R


def _base1(v, idx):
    """Base indices of a 1-D view's indices ``idx`` (negative ones count from the end;
    out-of-range ones are left out of range so ``gather``/``scatter`` raise everywhere)."""
    idx = np.asarray(idx, dtype=np.int64)
    idx = np.where(idx < 0, idx + v.shape[0], idx)
    bad = (idx < 0) | (idx >= v.shape[0])
    if comm.allreduce(int(bad.any()), "max"):
        raise IndexError(f"index out of bounds for axis 0 with size {v.shape[0]}")
    return base_indices(v, (idx,))


def _values(value, n, dtype, take):
    """The values this locale writes: a scalar broadcast to ``n``, or ``take`` applied to
    the (replicated, broadcast) NumPy value."""
    value = np.asarray(value, dtype=dtype)   # the whole replicated value, as NumPy converts it: an error
    if value.ndim == 0:                      # ([1, 2**70] into int64) is raised on every locale alike
        return np.full(n, value, dtype=dtype)
    return np.asarray(take(value), dtype=dtype).reshape(-1)


def _fit(a, shape):
    """``a`` broadcast to ``shape`` after dropping extra leading unit dimensions, as NumPy
    does with an assigned value (``x[[0, 2]] = np.array([[1, 2]])``)."""
    extra = a.ndim - len(shape)
    if extra > 0 and all(d == 1 for d in a.shape[:extra]):
        a = a.reshape(a.shape[extra:])
    return np.broadcast_to(a, shape)


def _numpy_key(key) -> bool:
    """True if ``key`` holds no distributed array or lazy expression (NumPy keys, slices, ints)."""
    from . import engine

    return not any(engine.is_array(k) or hasattr(k, "eval") for k in (key if isinstance(key, tuple) else (key,)))


def _scatter(base, indices, values, error=None) -> None:
    """``base.scatter(indices, values)`` within a checked call (``error``: this locale's, raised
    alike on every locale by the scatter's exchange)."""
    from . import engine

    engine.before_write(base, None)
    irregular.scatter(base, indices, values, error)


def _numpy_writes(v, key, value):
    """The base indices and values this locale writes for ``v[key] = value`` with a NumPy
    ``key``: an even share of the positions in C order (later locales write later ones)."""
    sel = _selection(v, key)
    shape = sel[0].shape
    size = int(np.prod(shape))
    P, me = comm.num_locales(), comm.here()
    lo, hi = size * me // P, size * (me + 1) // P
    vidx = [s.reshape(-1)[lo:hi] for s in sel]
    vals = _values(value, hi - lo, v.dtype, lambda a: _fit(a, shape).reshape(-1)[lo:hi])
    return base_indices(v, vidx), vals


def setitem(src, key, value) -> None:
    """Collective: ``src[key] = value`` for an advanced ``key`` (see the module doc).  With a
    NumPy key the call is only folded (in the folding mode of collective checking): the
    scatter's exchange agrees on it, and on any locale's error in working out its writes,
    so it costs no agreement of its own."""
    from ..layout import Block
    from . import engine

    v = as_view(src)
    op, args = "{0}[<index>] = ...", (collective.plain(key), collective.plain(value))
    numpy_key = _numpy_key(key)
    if numpy_key:
        collective.folded(op, v.base, args=args)
    else:
        collective.checked(op, v.base, args=args)
    if engine.is_array(value) or hasattr(value, "eval"):
        value = value.to_numpy() if engine.is_array(value) else value.eval().to_numpy()
    if numpy_key:
        writes, err = irregular.attempt(lambda: _numpy_writes(v, key, value))
        _scatter(v.base, *(writes if err is None else (None, None)), err)
        return
    D = _distributed_key(key)
    if D.dtype == bool:
        bidx, pos, total = _mask_flat(v, D)
        if np.ndim(value) > 1:
            raise TypeError("NumPy boolean array indexing assignment requires a 0 or 1-dimensional input, "
                            f"input has {np.ndim(value)} dimensions")
        if np.ndim(value) and np.size(value) not in (1, total):
            raise ValueError(f"NumPy boolean array indexing assignment cannot assign {np.size(value)} input values "
                             f"to the {total} output values where the mask is true")
        vals = _values(value, pos.size, v.dtype, lambda a: np.broadcast_to(a.reshape(-1), (total,))[pos])
        _scatter(v.base, bidx, vals)
        return
    if v.ndim != 1 or not np.issubdtype(D.dtype, np.integer):
        raise NotImplementedError("a distributed integer index is supported for 1-D arrays only "
                                  f"(got a {v.ndim}-D array and a {D.dtype} index); use NumPy index arrays")
    F = D.ravel()
    if F.layout.dist.kind != "block":
        F = F.redistribute(Block())
    (own,) = F.layout.owned(comm.here())
    idx = F.local.reshape(-1)
    vals = _values(value, idx.size, v.dtype, lambda a: _fit(a, D.shape).reshape(-1)[own])
    _scatter(v.base, _base1(v, idx), vals)

"""Collective constructors of distributed arrays."""

from __future__ import annotations

import zlib

import numpy as np

from ... import comm
from ...comm import check
from ...layout import Distribution
from ..collective import checked, folded
from ..core import DistArray
from ..index import check_dtype, convert
from .layouts import fill as fill_boxes, new_layout, owned_box


def _check(fn: str, shape, dtype, dist, name, value=None) -> None:
    """Collective call checking (when on) for a constructor."""
    if not (check.enabled or check.folding):
        return
    shown = f"pg.{fn}({shape!r}{'' if value is None else ', ' + repr(value)}, dtype={np.dtype(dtype)})"
    (folded if check.folding else checked)(shown, args=(repr(dist), name))    # folded: agreed as it allocates


def empty(shape, dtype=float, dist: Distribution | None = None, name: str | None = None, *,
          ghosts=None) -> DistArray:
    """Collective: a distributed array of ``shape`` with uninitialised elements.  Every
    constructor takes ``ghosts=(g0, g1, ...)`` (Block only): each locale's block is
    stored padded by ``g_d`` ghost cells on both sides of dimension ``d`` (see
    ``A.update_ghosts`` and ``A.local_with_ghosts``)."""
    _check("empty", shape, dtype, dist, name)
    return _empty(shape, dtype, dist, name, ghosts)


def _empty(shape, dtype, dist, name, ghosts=None) -> DistArray:
    return DistArray._create(new_layout(shape, dist, ghosts), check_dtype(dtype), name)


def full(shape, value, dtype=None, dist: Distribution | None = None, name: str | None = None, *,
         ghosts=None) -> DistArray:
    """Collective: a distributed array of ``shape`` filled with ``value``.  Like every
    initialising constructor it ends with a barrier, so one-sided access may follow at once."""
    dtype = check_dtype(np.asarray(value).dtype if dtype is None else dtype)
    _check("full", shape, dtype, dist, name, value)
    return _full(shape, value, dtype, dist, name, ghosts)


def _full(shape, value, dtype, dist, name, ghosts=None) -> DistArray:
    layout = new_layout(shape, dist, ghosts)
    fill = convert(value, dtype, "full")                 # replicated: checked alike everywhere
    scalar = fill.ndim == 0
    try:
        wide = np.broadcast_to(fill, layout.shape)
    except ValueError:
        raise ValueError(f"full: cannot broadcast a fill value of shape {fill.shape} to shape {layout.shape}") from None
    a = DistArray._create(layout, check_dtype(dtype), name)
    if layout.ghosts:
        a.local_with_ghosts[...] = 0                     # ghost cells start defined
    if scalar:
        a.local[...] = fill                              # in place: no temporary
    else:                                              # a broadcast array: box by box
        me = comm.here()
        fill_boxes(a.local, lambda key: wide[np.ix_(*owned_box(layout, me, key))])
    comm.barrier([a._win])
    return a


def zeros(shape, dtype=float, dist: Distribution | None = None, name: str | None = None, *,
          ghosts=None) -> DistArray:
    """Collective: a distributed array of zeros."""
    _check("zeros", shape, dtype, dist, name)
    return _full(shape, 0, dtype, dist, name, ghosts)


def ones(shape, dtype=float, dist: Distribution | None = None, name: str | None = None, *,
          ghosts=None) -> DistArray:
    """Collective: a distributed array of ones."""
    _check("ones", shape, dtype, dist, name)
    return _full(shape, 1, dtype, dist, name, ghosts)


def arange(start, stop=None, step=None, dtype=None, *, dist: Distribution | None = None,
           name: str | None = None, ghosts=None) -> DistArray:
    """Collective: NumPy's ``arange`` as a 1-D distributed array: ``arange(n)``, ``arange(start,
    stop[, step])``; values ``start + i * step`` (the dtype of the arguments unless ``dtype``).
    ``ghosts=g`` pads each locale's block with ``g`` ghost cells (zero until
    ``update_ghosts``), as for the other constructors."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    args = [int(x) if isinstance(x, np.integer) else x for x in (start, stop, step)]   # as NumPy 2:
    start, stop, step = args                        # integer scalars count as Python ints (no int8 wrap)
    if any(np.ndim(x) for x in args):
        raise TypeError("arange: start, stop and step must be scalars")
    dt = np.result_type(*args) if dtype is None else np.dtype(dtype)
    if all(isinstance(x, (int, np.integer)) for x in args):
        n = len(range(int(start), int(stop), int(step)))
    else:
        n = max(int(np.ceil((stop - start) / step)), 0)
    _check("arange", (start, stop, step), dt, dist, name)
    a = _empty(n, dt, dist, name, ghosts)
    if a.layout.ghosts:
        a.local_with_ghosts[...] = 0                  # ghost cells start defined
    me = comm.here()
    first = np.asarray(start).astype(dt)               # as NumPy: value i is first + i * delta, with
    delta = np.asarray(start + step).astype(dt) - first  # delta taken after casting to the dtype
    fill_boxes(a.local, lambda key: first + owned_box(a.layout, me, key)[0].astype(dt) * delta)
    comm.barrier([a._win])
    return a


def from_numpy(array, dist: Distribution | None = None, name: str | None = None, *, ghosts=None) -> DistArray:
    """Collective: distribute a global NumPy array that every locale holds (the same on each)."""
    array = np.asarray(array)
    checked("pg.from_numpy(...)", args=(repr(dist), name))
    digest = zlib.crc32(np.ascontiguousarray(array).view(np.uint8).reshape(-1)) if array.ndim else 0
    # one allreduce of a fingerprint (min and max) checks that every locale passed the same
    # array; only when they differ does an allgather find out how (to say so, alike everywhere)
    key = ((zlib.crc32(repr((array.shape, array.dtype.str)).encode()) & 0x7FFFFFFF) << 32) | digest
    low, neg_high = comm.allreduce(np.array([key, -key], dtype=np.int64), "min")
    seen = [(array.shape, array.dtype.str, digest)]
    if low != -neg_high:
        seen = comm.allgather(seen[0])
    if any(s[:2] != seen[0][:2] for s in seen):
        raise ValueError(f"from_numpy: locales passed different arrays (shape, dtype): {[s[:2] for s in seen]}")
    if any(s[2] != seen[0][2] for s in seen):
        differ = [r for r, s in enumerate(seen) if s[2] != seen[0][2]]
        raise ValueError(f"from_numpy: locales passed different data (locales {differ} differ from locale 0; "
                         "e.g. an unseeded random array): every locale must pass the same global array "
                         "(seed the generator alike, or compute it on one locale and use comm.bcast)")
    if array.ndim == 0:
        raise ValueError("from_numpy needs an array of at least one dimension, got a scalar")
    check_dtype(array.dtype)
    a = _empty(array.shape, array.dtype, dist, name, ghosts)
    if a.layout.ghosts:
        a.local_with_ghosts[...] = 0
    me = comm.here()
    fill_boxes(a.local, lambda key: array[np.ix_(*owned_box(a.layout, me, key))])
    comm.barrier([a._win])
    return a


def eye(N, M=None, k=0, dtype=float, *, dist=None, name=None):
    """Collective: an ``N x M`` array with ones on diagonal ``k``, zeros elsewhere (filled box
    by box: no temporary larger than a box)."""
    M = N if M is None else M
    a = empty((N, M), dtype, dist, name)
    me = comm.here()

    def values(key):
        rows, cols = owned_box(a.layout, me, key)
        return (cols[None, :] - rows[:, None]) == k

    fill_boxes(a.local, values)
    comm.barrier([a._win])
    return a


def identity(n, dtype=float, *, dist=None, name=None):
    """Collective: the ``n x n`` identity."""
    return eye(n, dtype=dtype, dist=dist, name=name)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, dist=None, name=None):
    """Collective: NumPy's ``linspace`` of scalar ``start`` and ``stop`` as a 1-D array (each
    locale computes its own elements with NumPy's formula, box by box)."""
    if np.ndim(start) or np.ndim(stop):
        raise NotImplementedError("linspace: only scalar start and stop (array ones would need a 2-D result)")
    if axis != 0:
        raise NotImplementedError("linspace: axis must be 0 for scalar start and stop")
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    dt = np.result_type(start, stop, float(num))
    a = empty(num, dt if dtype is None else dtype, dist, name)
    delta = np.asarray(stop, dt) - np.asarray(start, dt)
    step = delta / div if div > 0 else np.nan
    floor = dtype is not None and np.issubdtype(np.dtype(dtype), np.integer)
    me = comm.here()

    def values(key):
        owned = owned_box(a.layout, me, key)[0]
        i = owned.astype(dt)
        with np.errstate(invalid="ignore", divide="ignore"):
            if div > 0 and np.all(step != 0):
                y = i * step + start
            elif div > 0:
                y = i / div * delta + start
            else:
                y = i * delta + start
        if endpoint and num > 1:
            y[owned == num - 1] = stop
        return (np.floor(y) if floor else y).astype(a.dtype, copy=False)

    fill_boxes(a.local, values)
    comm.barrier([a._win])
    return (a, step) if retstep else a

"""The standard's functions that pgas computes distributed by composing its own distributed operations.

No function here moves data itself: each is built from statements (which broadcast and take
strided slices), views (``transpose``, ``flip``, ``expand_dims``, integer indices), ``reshape`` (a
distributed copy), the sample sort (``np.sort``, ``np.argsort``), advanced indexing with
distributed keys (``x[I]`` for a 1-D ``x`` and an integer DistArray ``I``, ``x[M]`` for a boolean
DistArray ``M`` of ``x``'s shape), scans (``np.cumsum``), ``np.searchsorted``,
``np.concatenate``/``np.diff``, the axis reductions and 2-D ``matmul``.

- ``broadcast_to``, ``broadcast_arrays``: a new array filled by one statement from the operand
  (statements broadcast as NumPy does).
- ``repeat`` (an integer count ``r``), ``tile``: ``r`` statements per axis, each writing the
  operand into every ``r``-th position of the result's axis (``repeat``) or into one block of it
  (``tile``).  ``repeat`` with an array of counts: the source index of every result position is a
  ``searchsorted`` of the counts' scan, then ``take``.
- ``take``: the flat index of every result element, written by one statement (an ``arange`` per
  axis and the indices, broadcast), read from the flattened operand by a distributed gather.
- ``squeeze``: a view (integer indices); ``unstack``: each slice copied to a new array.
- ``nonzero``: the flat positions (``arange`` or the flat-index array) selected by the
  distributed mask ``x != 0``, then each coordinate by integer division.
- ``sort``, ``argsort``: pgas's stable sort (the sample sort, or a sort along an axis), flipped for
  ``descending``; ``searchsorted``: pgas's (after ``take`` by ``sorter``).
- ``unique_*``: the flattened operand sorted (with its argsort where indices are needed), the
  first element of every run of equal values marked by a statement comparing neighbours (each NaN
  is its own value, as the standard says), values and first positions selected by that mask,
  counts as the differences of the positions, the inverse as the runs' scan read through the
  inverse permutation (a second argsort).
- ``vecdot``: ``sum(conj(x1) * x2, axis)``; ``tensordot``: ``transpose`` and ``reshape`` to a 2-D
  ``matmul`` (floating-point operands).

Each function returns None where it does not apply (no distributed operand, a result of 0 or more
than 4 dimensions, an index array that is not a 1-D integer DistArray, ...); the namespace then
gathers (:func:`.arrays.gathered`).  Errors are raised on every locale alike.
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ..core import DistArray
from ..creation.constructors import arange, empty, from_numpy, zeros
from .arrays import MAX_NDIM, dist, is_dist, to_numpy
from .reductions import sum as _sum


class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def _fits(shape) -> bool:
    return 1 <= len(shape) <= MAX_NDIM


def _flat(x):
    return x if x.ndim == 1 else np.reshape(x, (-1,))


def broadcast_to(x, /, shape):
    """``x`` (distributed, or a 0-d NumPy array) broadcast to ``shape`` as a new distributed array."""
    shape = tuple(operator.index(n) for n in shape)
    if not (is_dist(x) or isinstance(x, np.ndarray) and x.ndim == 0) or not _fits(shape):
        return None
    if len(x.shape) > len(shape) or np.broadcast_shapes(tuple(x.shape), shape) != shape:
        raise ValueError(f"broadcast_to: an array of shape {tuple(x.shape)} cannot be broadcast to {shape}")
    if is_dist(x) and tuple(x.shape) == shape:
        return dist(x)
    out = empty(shape, x.dtype)
    if math.prod(shape):
        out[...] = dist(x) if is_dist(x) else x[()]
    return out


def broadcast_arrays(*arrays):
    """The arrays (distributed, or 0-d NumPy arrays) broadcast to their common shape."""
    if not any(is_dist(a) for a in arrays) or not all(is_dist(a) or isinstance(a, np.ndarray) and a.ndim == 0
                                                      for a in arrays):
        return None
    shape = np.broadcast_shapes(*[tuple(a.shape) for a in arrays])
    if not _fits(shape):
        return None
    return [broadcast_to(a, shape) for a in arrays]


def _spread(y, axis: int, r: int, inner: bool):
    """``y`` with each element (``inner``, NumPy's ``repeat``) or the whole axis (``tile``)
    repeated ``r`` times along ``axis``: ``r`` statements, each writing ``y`` into every ``r``-th
    position (``inner``) or into one block of the result's axis."""
    shape = tuple(y.shape)
    n = shape[axis]
    out = empty(shape[:axis] + (n * r,) + shape[axis + 1:], y.dtype)
    before = (slice(None),) * axis
    for j in range(r):
        out[before + (slice(j, None, r) if inner else slice(j * n, (j + 1) * n),)] = y
    return out


def _placed(v, d: int, nd: int):
    """The 1-D ``v`` as an operand of ``nd`` dimensions varying along axis ``d`` (statements
    broadcast it along the others)."""
    return v if d == nd - 1 else np.reshape(v, (-1,) + (1,) * (nd - 1 - d))


def _flat_index(shape, of=None, axis=None, idx=None):
    """A new int64 array of ``shape`` holding, for each element, the C-order flat index into an
    array of shape ``of`` (``shape`` by default) of the element with the same indices, but the index
    ``idx[i]`` along ``axis``: one statement summing an ``arange`` per axis, broadcast."""
    of = tuple(shape if of is None else of)
    nd = len(shape)
    out = empty(shape, np.int64)
    if math.prod(shape):
        terms = [_placed(idx if d == axis else arange(shape[d], dtype=np.int64), d, nd) * math.prod(of[d + 1:])
                 for d in range(nd)]
        out[...] = sum(terms[1:], terms[0])
    return out


def _take(x, idx, axis: int):
    """``x`` indexed along ``axis`` by the 1-D int64 DistArray ``idx`` (in range, non-negative)."""
    if x.ndim == 1:
        return x[idx]
    shape = tuple(x.shape)
    out_shape = shape[:axis] + (idx.shape[0],) + shape[axis + 1:]
    if not math.prod(out_shape):
        return empty(out_shape, x.dtype)
    return _flat(x)[_flat_index(out_shape, shape, axis, idx)]


def _indices(indices, n: int, what: str):
    """The 1-D integer DistArray ``indices`` as non-negative int64 indices into an axis of ``n``;
    IndexError on every locale if one is out of range."""
    indices = dist(indices)
    bad = (indices >= n) if indices.dtype.kind == "u" else (indices >= n) | (indices < -n)
    if indices.size and np.any(bad):
        raise IndexError(f"{what}: an index is out of bounds for an axis of size {n}")
    if indices.dtype.kind == "u":
        return indices.astype(np.int64)
    out = empty(indices.shape, np.int64)
    if indices.size:
        out[...] = np.where(indices < 0, indices + n, indices)
    return out


def take(x, indices, /, *, axis=None):
    """``x`` indexed along ``axis`` by the 1-D integer DistArray ``indices``."""
    if not (is_dist(x) and is_dist(indices)) or indices.ndim != 1 or indices.dtype.kind not in "iu":
        return None
    x = dist(x)
    if axis is None:
        if x.ndim != 1:
            raise ValueError("take needs axis= for arrays of more than one dimension")
        axis = 0
    axis = normalize_axis_index(operator.index(axis), x.ndim)
    return _take(x, _indices(indices, x.shape[axis], "take"), axis)


def repeat(x, repeats, /, *, axis=None):
    """Each element of ``x`` repeated along ``axis`` (the flattened ``x`` for None)."""
    if not is_dist(x) or not (is_dist(repeats) or isinstance(repeats, (int, np.integer))):
        return None
    x = dist(x)
    if axis is None:
        x, axis = _flat(x), 0
    axis = normalize_axis_index(operator.index(axis), x.ndim)
    shape, n = tuple(x.shape), x.shape[axis]
    if not is_dist(repeats):
        r = operator.index(repeats)
        if r < 0:
            raise ValueError(f"repeat: repeats may not be negative, got {r}")
        out_shape = shape[:axis] + (n * r,) + shape[axis + 1:]
        return _spread(x, axis, r, inner=True) if math.prod(out_shape) else empty(out_shape, x.dtype)
    repeats = dist(repeats)
    if repeats.ndim != 1 or repeats.dtype.kind not in "iu" or repeats.shape[0] not in (1, n):
        raise ValueError(f"repeat: repeats must be an integer or a 1-D integer array of length 1 or {n}, "
                         f"got one of shape {tuple(repeats.shape)} and dtype {repeats.dtype}")
    if repeats.shape[0] != n:
        repeats = broadcast_to(repeats, (n,))
    if n and np.any(repeats < 0):
        raise ValueError("repeat: repeats may not be negative")
    total = int(np.sum(repeats, dtype=np.int64)) if n else 0
    out_shape = shape[:axis] + (total,) + shape[axis + 1:]
    if not math.prod(out_shape):
        return empty(out_shape, x.dtype)
    ends = np.cumsum(repeats, dtype=np.int64)
    return _take(x, np.searchsorted(ends, arange(total, dtype=np.int64), side="right"), axis)


def tile(x, repetitions, /):
    """``x`` repeated ``repetitions[k]`` times along each axis ``k``."""
    if not is_dist(x):
        return None
    reps = tuple(operator.index(r) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions may not be negative, got {reps}")
    nd = max(len(reps), x.ndim)
    if nd > MAX_NDIM:
        return None
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + tuple(x.shape)
    out_shape = tuple(r * n for r, n in zip(reps, shape))
    if not math.prod(out_shape):
        return empty(out_shape, x.dtype)
    y = dist(x)
    for _ in range(nd - x.ndim):
        y = np.expand_dims(y, 0)                        # a view
    for axis, r in enumerate(reps):
        if r != 1:
            y = _spread(y, axis, r, inner=False)
    return y


def squeeze(x, /, axis):
    """``x`` without the axes ``axis`` (each of length 1): a view."""
    if not is_dist(x):
        return None
    axes = normalize_axis_tuple(axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has length {x.shape[a]}, not 1")
    shape = tuple(n for d, n in enumerate(x.shape) if d not in axes)
    if not shape:
        return np.asarray(to_numpy(x)).reshape(())       # one element, read on every locale
    if shape == tuple(x.shape):
        return dist(x)
    if not x.size:
        return empty(shape, x.dtype)
    return dist(x)[tuple(0 if d in axes else slice(None) for d in range(x.ndim))]     # a view


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, each copied to a new distributed array."""
    if not is_dist(x) or x.ndim < 2:
        return None
    axis = normalize_axis_index(operator.index(axis), x.ndim)
    x = dist(x)
    rest = tuple(n for d, n in enumerate(x.shape) if d != axis)
    if not x.size:
        return tuple(empty(rest, x.dtype) for _ in range(x.shape[axis]))
    return tuple(np.copy(x[(slice(None),) * axis + (i,)]) for i in range(x.shape[axis]))


def nonzero(x, /):
    """The coordinates of the nonzero elements of ``x`` in C order, one int64 array per axis."""
    if not is_dist(x):
        return None
    x = dist(x)
    if not x.size:
        return tuple(empty((0,), np.int64) for _ in x.shape)
    pos = (arange(x.size, dtype=np.int64) if x.ndim == 1 else _flat_index(tuple(x.shape)))[x != 0]
    coords, stride = [], x.size
    for d, n in enumerate(x.shape):
        stride //= n
        c = pos // stride if stride > 1 else pos
        coords.append(dist(c % n if d else c))
    return tuple(coords)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """pgas's stable sort of ``x`` along ``axis``, flipped for ``descending``."""
    if not is_dist(x) or not x.size:
        return None
    res = np.sort(_materialised(x), axis=axis)
    return np.flip(res, axis=axis) if descending else res


def _materialised(x):
    """``x`` (a DistArray, view or expression) as a DistArray."""
    x = dist(x)
    return x if isinstance(x, DistArray) else np.copy(x)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """pgas's stable argsort of ``x`` along ``axis``; for ``descending``, of ``x`` flipped, flipped back
    (equal elements keep their order)."""
    if not is_dist(x) or not x.size:
        return None
    x = _materialised(x)
    if not descending:
        return np.argsort(x, axis=axis)
    n = x.shape[normalize_axis_index(operator.index(axis), x.ndim)]
    idx = np.argsort(np.copy(np.flip(x, axis=axis)), axis=axis)
    out = empty(idx.shape, np.int64)
    out[...] = (n - 1) - np.flip(idx, axis=axis)
    return out


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """pgas's ``searchsorted`` of ``x2`` into the sorted 1-D ``x1`` (``x1`` taken by ``sorter`` first)."""
    if not (is_dist(x1) and (is_dist(x2) or isinstance(x2, np.ndarray) and x2.ndim == 0)) or x1.ndim != 1:
        return None
    if sorter is not None and not is_dist(sorter):
        return None
    x1 = _materialised(x1)
    if sorter is not None:
        x1 = take(x1, sorter)
    if not x1.size:
        return zeros(x2.shape, np.int64) if is_dist(x2) else np.zeros((), np.int64)
    res = np.searchsorted(x1, dist(x2) if is_dist(x2) else x2[()], side=side)
    return res if is_dist(res) else np.asarray(res, dtype=np.int64)


def _runs(x, perm: bool):
    """The flattened ``x`` sorted (with its permutation if ``perm``) and the mask of the first element
    of each run of equal values (NaNs unequal)."""
    x = _materialised(x)
    p = np.argsort(x, axis=None) if perm else None
    s = x[p] if perm and x.ndim == 1 else np.sort(x, axis=None)
    first = empty(s.shape, bool)
    first[0] = True
    if s.size > 1:
        first[1:] = s[1:] != s[:-1]
    return s, p, first


def _counts(first):
    starts = arange(first.size, dtype=np.int64)[first]
    return starts, np.diff(np.concatenate([starts, from_numpy(np.array([first.size], np.int64))]))


def unique_values(x, /):
    """The distinct values of ``x``, sorted (each NaN distinct)."""
    if not is_dist(x) or not x.size:
        return None
    s, _, first = _runs(x, False)
    return s[first]


def unique_counts(x, /):
    """The distinct values of ``x`` and how often each occurs."""
    if not is_dist(x) or not x.size:
        return None
    s, _, first = _runs(x, False)
    return UniqueCountsResult(s[first], _counts(first)[1])


def _inverse(x, p, first):
    group = np.cumsum(first, dtype=np.int64) - 1
    inv = dist(group)[np.argsort(p)]
    return inv if x.ndim == 1 else np.reshape(inv, tuple(x.shape))


def unique_inverse(x, /):
    """The distinct values of ``x`` and, for each element of ``x``, the index of its value."""
    if not is_dist(x) or not x.size:
        return None
    s, p, first = _runs(x, True)
    return UniqueInverseResult(s[first], _inverse(x, p, first))


def unique_all(x, /):
    """The distinct values of ``x``, the first index of each, the inverse and the counts."""
    if not is_dist(x) or not x.size:
        return None
    s, p, first = _runs(x, True)
    return UniqueAllResult(s[first], p[first], _inverse(x, p, first), _counts(first)[1])


def vecdot(x1, x2, /, *, axis=-1, dtype=None):
    """``sum(conj(x1) * x2, axis=axis)`` in ``dtype`` (the operands' promoted type)."""
    if not (is_dist(x1) and is_dist(x2)) or dtype.kind == "b":
        return None
    axis = operator.index(axis)
    if axis >= 0 and x1.ndim != x2.ndim:
        return None                     # NumPy counts a non-negative axis in each operand (not the standard's)
    shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    if not _fits(shape) or not -min(x1.ndim, x2.ndim) <= axis < len(shape):
        return None
    ax = normalize_axis_index(axis, len(shape)) - len(shape)
    if x1.shape[ax] != x2.shape[ax]:
        raise ValueError(f"vecdot: the axis {axis} has length {x1.shape[ax]} in x1 and {x2.shape[ax]} in x2")
    if not math.prod(shape):
        return None
    a, b = (dist(broadcast_to(v, shape)) for v in (x1, x2))
    a, b = (v if v.dtype == dtype else v.astype(dtype) for v in (a, b))
    return _sum(np.conj(a) * b if dtype.kind == "c" else a * b, axis=ax, dtype=dtype)


def _contracted(axes, n1: int, n2: int):
    if isinstance(axes, (int, np.integer)):
        k = operator.index(axes)
        if not 0 <= k <= min(n1, n2):
            raise ValueError(f"tensordot: axes={k} must be between 0 and {min(n1, n2)}")
        return tuple(range(n1 - k, n1)), tuple(range(k))
    a1, a2 = axes
    a1, a2 = tuple(a1), tuple(a2)
    if len(a1) != len(a2):
        raise ValueError(f"tensordot: axes {a1} and {a2} differ in length")
    return normalize_axis_tuple(a1, n1), normalize_axis_tuple(a2, n2)


def tensordot(x1, x2, /, *, axes=2, dtype=None):
    """The contraction as a 2-D ``matmul`` of the operands transposed and reshaped (floating point)."""
    if not (is_dist(x1) and is_dist(x2)) or dtype.kind not in "fc":
        return None
    a1, a2 = _contracted(axes, x1.ndim, x2.ndim)
    for d1, d2 in zip(a1, a2):
        if x1.shape[d1] != x2.shape[d2]:
            raise ValueError(f"tensordot: shape mismatch for the contracted axes {d1} of x1 and {d2} of x2 "
                             f"({x1.shape[d1]} and {x2.shape[d2]})")
    free1 = tuple(d for d in range(x1.ndim) if d not in a1)
    free2 = tuple(d for d in range(x2.ndim) if d not in a2)
    out_shape = tuple(x1.shape[d] for d in free1) + tuple(x2.shape[d] for d in free2)
    k = math.prod(x1.shape[d] for d in a1)
    if len(out_shape) > MAX_NDIM or not k or not math.prod(out_shape):
        return None
    f1, f2 = math.prod(out_shape[:len(free1)]), math.prod(out_shape[len(free1):])
    a = np.reshape(np.transpose(dist(x1), free1 + a1), (f1, k))
    b = np.reshape(np.transpose(dist(x2), a2 + free2), (k, f2))
    a, b = (v if v.dtype == dtype else v.astype(dtype) for v in (a, b))
    if not out_shape:
        return _sum(np.reshape(a, (k,)) * np.reshape(b, (k,)), dtype=dtype)
    return np.reshape(np.matmul(a, b), out_shape)


FUNCTIONS = {f.__name__: f for f in (broadcast_to, broadcast_arrays, repeat, tile, squeeze, unstack, take, nonzero,
                                     sort, argsort, searchsorted, unique_values, unique_counts, unique_inverse,
                                     unique_all, vecdot, tensordot)}

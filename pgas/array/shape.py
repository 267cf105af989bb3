"""Shape changes: transposes, flips and squeezes as views; reshape and joins as new arrays.

A :class:`~pgas.array.view.View` names base element ``M @ v + c``, so
``transpose`` / ``swapaxes`` / ``moveaxis`` permute the columns of ``M``,
``flip`` negates one (a negative stride), ``squeeze`` drops columns of extent
1 and ``expand_dims`` adds zero ones: no data moves until the view is used
(``B[...] = A.T + 1`` is one statement).  ``reshape`` / ``ravel`` /
``flatten`` make a new array (distributed like the input, default grid): each
locale gathers the elements it will own in one aggregated ``gather`` (one
message per locale pair each way).  ``concatenate`` and friends run one
statement per input into slices of a new array.
"""

from __future__ import annotations

import math

import numpy as np

from .. import comm
from .axes import normalize_axes, result_dist
from .fancy import base_indices
from .operands import as_view, distributed


def _make(v, cols, shape, dc=None):
    """A view of ``v.base`` whose columns are ``v``'s columns ``cols`` (None: a zero column)."""
    from .view import View

    M = tuple(tuple(0 if k is None else row[k] for k in cols) for row in v.M)
    c = v.c if dc is None else tuple(ci + d for ci, d in zip(v.c, dc))
    return View(v.base, shape, M, c)


def transpose(a, axes=None):
    """The view with axes permuted (reversed by default), as ``np.transpose``; no copy."""
    v = as_view(a)
    n = v.ndim
    if axes is None:
        perm = tuple(range(n))[::-1]
    else:
        axes = tuple(axes[0]) if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else tuple(axes)
        if len(axes) != n:
            raise ValueError("axes don't match array")
        perm = tuple(normalize_axes((ax,), n)[0] for ax in axes)
        if sorted(perm) != list(range(n)):
            raise ValueError("repeated axis in transpose")
    return _make(v, perm, tuple(v.shape[k] for k in perm))


def swapaxes(a, axis1, axis2):
    """The view with ``axis1`` and ``axis2`` interchanged; no copy."""
    v = as_view(a)
    i, j = (normalize_axes(x, v.ndim, single=True)[0] for x in (axis1, axis2))
    perm = list(range(v.ndim))
    perm[i], perm[j] = j, i
    return transpose(v, perm)


def moveaxis(a, source, destination):
    """The view with axes ``source`` moved to ``destination`` (others keep their order); no copy."""
    v = as_view(a)
    src = source if isinstance(source, (tuple, list)) else (source,)
    dst = destination if isinstance(destination, (tuple, list)) else (destination,)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    src = [normalize_axes(x, v.ndim, single=True)[0] for x in src]
    dst = [normalize_axes(x, v.ndim, single=True)[0] for x in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("repeated axis in `source` or `destination` argument")
    order = [k for k in range(v.ndim) if k not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(v, order)


def flip(a, axis=None):
    """The view reversed along ``axis`` (all axes by default): a negative stride; no copy."""
    v = as_view(a)
    axes = normalize_axes(axis, v.ndim)
    from .view import View

    M = [list(r) for r in v.M]
    c = list(v.c)
    for k in axes:
        for d, row in enumerate(M):
            c[d] += row[k] * max(v.shape[k] - 1, 0)
            row[k] = -row[k]
    return View(v.base, v.shape, M, c)


def squeeze(a, axis=None):
    """The view without axes of extent 1 (those in ``axis``, or all); no copy.  Squeezing
    every axis reads the one element collectively and returns it as a scalar."""
    v = as_view(a)
    if axis is None:
        drop = [k for k, n in enumerate(v.shape) if n == 1]
    else:
        drop = list(normalize_axes(axis, v.ndim))
        if any(v.shape[k] != 1 for k in drop):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    keep = [k for k in range(v.ndim) if k not in drop]
    if not keep:
        return v.base[v.c]
    return _make(v, keep, tuple(v.shape[k] for k in keep))


def expand_dims(a, axis):
    """The view with new axes of extent 1 at positions ``axis``; no copy."""
    v = as_view(a)
    if axis is None:       # normalize_axes reads None as "every axis"; NumPy refuses it here
        raise TypeError("'NoneType' object cannot be interpreted as an integer (expand_dims needs an axis)")
    n = v.ndim + (len(axis) if isinstance(axis, (tuple, list)) else 1)
    new = normalize_axes(axis, n)
    cols, shape, it = [], [], iter(range(v.ndim))
    for k in range(n):
        if k in new:
            cols.append(None)
            shape.append(1)
        else:
            j = next(it)
            cols.append(j)
            shape.append(v.shape[j])
    return _make(v, cols, tuple(shape))


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """NumPy's ``sliding_window_view`` as a view: element ``[..., i, ..., k]`` is
    ``x[..., i + k, ...]`` (a window axis is a second column equal to its axis's); no copy.
    Reading it is one statement (``np.mean(w, axis=-1)``); it cannot be written
    (``writeable=True`` raises, as its elements overlap)."""
    v = as_view(x)
    if writeable:
        raise ValueError("sliding_window_view(writeable=True) is not supported on pgas arrays: "
                         "its windows overlap, so a write would have no single meaning")
    window = tuple(window_shape) if np.iterable(window_shape) else (window_shape,)
    if any(not isinstance(w, (int, np.integer)) or isinstance(w, (bool, np.bool_)) for w in window):
        raise TypeError(f"window_shape must hold integers, got {window_shape!r}")
    if any(w < 0 for w in window):
        raise ValueError("`window_shape` cannot contain negative values")
    if axis is None:
        if len(window) != v.ndim:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all dimensions of `x`; "
                             f"got {len(window)} window_shape elements and `x.ndim` is {v.ndim}.")
        axes = tuple(range(v.ndim))
    else:
        given = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        axes = tuple(normalize_axes(a, v.ndim, single=True)[0] for a in given)   # in order, repeats kept
        if len(window) != len(axes):
            raise ValueError(f"Must provide matching length window_shape and axis; got {len(window)} "
                             f"window_shape elements and {len(axes)} axes elements.")
    shape = list(v.shape)
    for ax, w in zip(axes, window):
        if shape[ax] < w:
            raise ValueError("window shape cannot be larger than input array shape")
        shape[ax] -= w - 1
    return _make(v, list(range(v.ndim)) + list(axes), tuple(shape) + window)


def _new_shape(shape, size: int) -> tuple[int, ...]:
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)
    if any(not isinstance(s, (int, np.integer)) or isinstance(s, (bool, np.bool_)) for s in shape):
        raise TypeError(f"reshape: shape {shape} must be integers")
    shape = tuple(int(s) for s in shape)
    unknown = [k for k, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(s < -1 for s in shape):
        raise ValueError(f"negative dimensions not allowed in {shape}")
    known = math.prod(s for s in shape if s != -1)
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
        shape = shape[:unknown[0]] + (size // known,) + shape[unknown[0] + 1:]
    if math.prod(shape) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    if not shape:
        raise ValueError("reshape: a DistArray has at least one dimension (read a single element with A[i, j])")
    return shape


def reshape(a, *shape, order="C", dist=None):
    """Collective: a new array of ``shape`` (one entry may be -1) holding ``a``'s elements in C
    order, distributed like ``a`` (same kind, default grid) unless ``dist`` is given."""
    from .creation.constructors import empty

    if order != "C":
        raise NotImplementedError(f"reshape: only order='C' is supported, got order={order!r}")
    v = as_view(a)
    new = _new_shape(shape, v.size)
    R = empty(new, v.dtype, result_dist(v.base.layout, len(new)) if dist is None else dist)
    owned = R.layout.owned(comm.here())
    grids = np.meshgrid(*owned, indexing="ij") if owned else []
    flat = np.ravel_multi_index(tuple(g.reshape(-1) for g in grids), new) if R.local.size else np.empty(0, np.int64)
    vidx = np.unravel_index(flat, v.shape) if v.shape else ()
    bidx = base_indices(v, vidx)
    if not R.local.size:
        bidx = tuple(np.empty(0, np.int64) for _ in v.M)
    R.local[...] = v.base.gather(bidx).reshape(R.local.shape)
    comm.barrier([R._win])
    return R


def ravel(a, order="C"):
    """Collective: the elements of ``a`` in C order as a new 1-D array (always a copy)."""
    return reshape(a, -1, order=order)


flatten = ravel


def _result_dtype(arrays):
    return np.result_type(*[x.dtype for x in arrays])


def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind", dist=None):
    """Collective: a new array (or ``out``) joining ``arrays`` along an existing ``axis``: one
    statement per input into a slice of the result."""
    from .creation.constructors import empty

    views = [as_view(x) if distributed(x) else np.asarray(x) for x in arrays]
    if not views:
        raise ValueError("need at least one array to concatenate")
    first = next((v for v in views if not isinstance(v, np.ndarray)), None)
    if first is None:
        return np.concatenate(views, axis, out=out, dtype=dtype, casting=casting)
    nd = views[0].ndim
    if any(v.ndim != nd for v in views):
        raise ValueError("all the input arrays must have same number of dimensions")
    if axis is None:
        views = [v.reshape(-1) if isinstance(v, np.ndarray) else as_view(ravel(v)) for v in views]
        nd, axis = 1, 0
    ax = normalize_axes(axis, nd, single=True)[0]
    for v in views:
        if any(v.shape[d] != views[0].shape[d] for d in range(nd) if d != ax):
            raise ValueError(f"all the input array dimensions except for the concatenation axis must match exactly, "
                             f"got shapes {[w.shape for w in views]}")
    shape = list(views[0].shape)
    shape[ax] = sum(v.shape[ax] for v in views)
    dt = _result_dtype(views) if dtype is None else np.dtype(dtype)
    if any(not np.can_cast(v.dtype, dt if out is None else out.dtype, casting) for v in views):
        raise TypeError(f"concatenate: cannot cast {[str(v.dtype) for v in views]} to "
                        f"{dt if out is None else out.dtype} with casting rule {casting!r}")
    if out is not None:
        if getattr(out, "shape", None) != tuple(shape) or not hasattr(out, "layout"):
            raise ValueError(f"concatenate: out= must be a DistArray of shape {tuple(shape)}")
        R = out
    else:
        R = empty(tuple(shape), dt, result_dist(first.base.layout, nd) if dist is None else dist)
    pos = 0
    for v in views:
        n = v.shape[ax]
        if n:
            R[(slice(None),) * ax + (slice(pos, pos + n),)] = v
        pos += n
    return R


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind", dist=None):
    """Collective: a new array joining same-shape ``arrays`` along a new ``axis``."""
    views = [as_view(x) if distributed(x) else np.asarray(x) for x in arrays]
    if not views:
        raise ValueError("need at least one array to stack")
    if any(v.shape != views[0].shape for v in views):
        raise ValueError("all input arrays must have the same shape")
    if axis is None:
        raise TypeError("'NoneType' object cannot be interpreted as an integer (stack needs an axis)")
    ax = normalize_axes(axis, views[0].ndim + 1, single=True)[0]
    return concatenate([np.expand_dims(v, ax) if isinstance(v, np.ndarray) else expand_dims(v, ax) for v in views],
                       ax, out, dtype, casting, dist)


def hstack(arrays, *, dtype=None, casting="same_kind", dist=None):
    """Collective: ``concatenate`` along axis 1 (axis 0 for 1-D inputs)."""
    views = [as_view(x) if distributed(x) else np.asarray(x) for x in arrays]
    return concatenate(views, 0 if views and views[0].ndim == 1 else 1, dtype=dtype, casting=casting, dist=dist)


def vstack(arrays, *, dtype=None, casting="same_kind", dist=None):
    """Collective: ``concatenate`` along axis 0, 1-D inputs taken as rows."""
    views = [as_view(x) if distributed(x) else np.asarray(x) for x in arrays]
    rows = [(v[None] if isinstance(v, np.ndarray) else expand_dims(v, 0)) if v.ndim == 1 else v for v in views]
    return concatenate(rows, 0, dtype=dtype, casting=casting, dist=dist)


NUMPY_FUNCTIONS = {np.lib.stride_tricks.sliding_window_view: sliding_window_view, np.transpose: transpose, np.swapaxes: swapaxes, np.moveaxis: moveaxis, np.flip: flip,
                   np.squeeze: squeeze, np.expand_dims: expand_dims, np.reshape: reshape, np.ravel: ravel,
                   np.concatenate: concatenate, np.stack: stack, np.hstack: hstack, np.vstack: vstack}

"""More constructors and copies: ``linspace``, ``eye``, ``identity``, the ``*_like`` family,
``asarray`` / ``array``, ``copyto`` and ``redistribute``.  All are collective.

Each locale fills only the elements it owns (no messages) except
``redistribute`` and ``asarray``/``array`` of a distributed array into another
distribution, which run one statement (one aggregated message per locale pair).
"""

from __future__ import annotations

import numpy as np

from .. import comm
from .axisreduce import like
from .construct import empty, from_numpy, full


def _dist_of(a, dist):
    """``dist`` if given, else ``a``'s own distribution (a view's base kind, default grid)."""
    if dist is not None:
        return dist
    from .core import DistArray

    if isinstance(a, DistArray):
        return a.dist
    base = getattr(a, "base", None)
    if base is None and hasattr(a, "eval"):
        base = a.eval()
    return like(base.layout, a.ndim)


def _distributed(a) -> bool:
    from .core import DistArray
    from .expr import Lazy

    return isinstance(a, (DistArray, Lazy))


def _ghosts_of(a, shape, dist):
    """``a``'s ghost widths when the new array has its shape and distribution (so
    ``empty_like(A)`` of a ghosted ``A`` is ghosted alike: a valid ``out=`` for shifts)."""
    from .core import DistArray

    if isinstance(a, DistArray) and a.layout.ghosts and shape is None and dist is None:
        return a.layout.ghosts
    return None


def empty_like(a, dtype=None, shape=None, *, dist=None, name=None):
    """Collective: an uninitialised array of ``a``'s shape, dtype and distribution."""
    if not _distributed(a):
        return np.empty_like(a, dtype=dtype, shape=shape)
    return empty(a.shape if shape is None else shape, a.dtype if dtype is None else dtype, _dist_of(a, dist), name,
                 ghosts=_ghosts_of(a, shape, dist))


def full_like(a, fill_value, dtype=None, shape=None, *, dist=None, name=None):
    """Collective: an array of ``a``'s shape, dtype and distribution filled with ``fill_value``."""
    if not _distributed(a):
        return np.full_like(a, fill_value, dtype=dtype, shape=shape)
    return full(a.shape if shape is None else shape, fill_value, a.dtype if dtype is None else dtype,
                _dist_of(a, dist), name, ghosts=_ghosts_of(a, shape, dist))


def zeros_like(a, dtype=None, shape=None, *, dist=None, name=None):
    """Collective: zeros of ``a``'s shape, dtype and distribution."""
    if not _distributed(a):
        return np.zeros_like(a, dtype=dtype, shape=shape)
    return full_like(a, 0, dtype, shape, dist=dist, name=name)


def ones_like(a, dtype=None, shape=None, *, dist=None, name=None):
    """Collective: ones of ``a``'s shape, dtype and distribution."""
    if not _distributed(a):
        return np.ones_like(a, dtype=dtype, shape=shape)
    return full_like(a, 1, dtype, shape, dist=dist, name=name)


def eye(N, M=None, k=0, dtype=float, *, dist=None, name=None):
    """Collective: an ``N x M`` array with ones on diagonal ``k``, zeros elsewhere."""
    M = N if M is None else M
    a = empty((N, M), dtype, dist, name)
    rows, cols = a.layout.owned(comm.here())
    a.local[...] = (cols[None, :] - rows[:, None]) == k
    comm.barrier([a._win])
    return a


def identity(n, dtype=float, *, dist=None, name=None):
    """Collective: the ``n x n`` identity."""
    return eye(n, dtype=dtype, dist=dist, name=name)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, dist=None, name=None):
    """Collective: NumPy's ``linspace`` of scalar ``start`` and ``stop`` as a 1-D array (each
    locale computes its own elements with NumPy's formula)."""
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
    i = a.layout.owned(comm.here())[0].astype(dt)
    delta = np.asarray(stop, dt) - np.asarray(start, dt)
    step = delta / div if div > 0 else np.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        if div > 0 and np.all(step != 0):
            y = i * step + start
        elif div > 0:
            y = i / div * delta + start
        else:
            y = i * delta + start
    if endpoint and num > 1:
        y[a.layout.owned(comm.here())[0] == num - 1] = stop
    if dtype is not None and np.issubdtype(np.dtype(dtype), np.integer):
        y = np.floor(y)
    a.local[...] = y.astype(a.dtype, copy=False)
    comm.barrier([a._win])
    return (a, step) if retstep else a


def redistribute(a, dist, *, name=None):
    """Collective: a copy of ``a`` with distribution ``dist``: one statement, so at most one
    aggregated message per locale pair."""
    from .core import DistArray
    from .shape import as_view

    src = a if isinstance(a, DistArray) else as_view(a)
    out = empty(src.shape, src.dtype, dist, name)
    if isinstance(src, DistArray) and src.layout.key == out.layout.key:
        out.local[...] = src.local
        comm.barrier([out._win])
    else:
        out[...] = src
    return out


def asarray(a, dtype=None, *, dist=None, name=None):
    """Collective: ``a`` as a DistArray.  A DistArray is returned as it is when ``dtype`` and
    ``dist`` (if given) agree with it, else copied (converted, redistributed); a view or an
    expression is materialised; anything else is taken as a NumPy array that every locale
    holds alike and distributed with ``dist`` (see :func:`pgas.from_numpy`)."""
    from .core import DistArray

    if isinstance(a, DistArray):
        same_dist = dist is None or dist.bind(a.shape, comm.num_locales()).key == a.layout.key
        if same_dist and (dtype is None or np.dtype(dtype) == a.dtype):
            return a
        b = a if same_dist else redistribute(a, dist, name=name)
        return b if dtype is None or np.dtype(dtype) == b.dtype else b.astype(dtype)
    if _distributed(a):
        b = a.eval() if dtype is None else a.astype(dtype)
        return b if dist is None else asarray(b, dist=dist, name=name)
    return from_numpy(np.asarray(a, dtype=dtype), dist=dist, name=name)


def array(a, dtype=None, *, copy=True, dist=None, name=None):
    """Collective: like :func:`asarray`, but a DistArray is copied unless ``copy=False``."""
    from .core import DistArray

    b = asarray(a, dtype, dist=dist, name=name)
    if copy and b is a and isinstance(a, DistArray):
        return a.copy()
    return b


def copyto(dst, src, casting="same_kind", where=True):
    """Collective: ``dst[...] = src`` (a statement), refusing casts NumPy's ``casting`` rule refuses;
    ``where`` (a mask) keeps ``dst``'s elements where it is false."""
    from .expr import where as _where
    from .view import View

    if not _distributed(dst):
        if _distributed(src):
            raise TypeError("copyto: cannot copy a distributed array into a NumPy array: use .to_numpy()")
        return np.copyto(dst, src, casting=casting, where=where)
    sdt = src.dtype if hasattr(src, "dtype") else np.asarray(src).dtype
    weak = isinstance(src, (int, float, complex)) and not isinstance(src, bool)
    if not weak and not np.can_cast(sdt, dst.dtype, casting):
        raise TypeError(f"Cannot cast array data from {sdt} to {dst.dtype} according to the rule {casting!r}")
    if weak and casting != "unsafe" and not np.can_cast(np.result_type(dst.dtype, src), dst.dtype, casting):
        raise TypeError(f"Cannot cast scalar {src!r} to {dst.dtype} according to the rule {casting!r}")
    if isinstance(src, (int, float, complex, np.generic)):
        fill = np.empty((), dst.dtype)             # a scalar converted as NumPy's copyto converts it
        np.copyto(fill, src, casting=casting)      # (np.float64(nan) unsafe into int8 is 0; 300 raises)
        src = fill[()]
    target = dst if isinstance(dst, View) else View.whole(dst)
    value = src if where is True else _where(where, src, target)
    target[...] = value


NUMPY_FUNCTIONS = {np.empty_like: empty_like, np.full_like: full_like, np.zeros_like: zeros_like,
                   np.ones_like: ones_like, np.copyto: copyto}

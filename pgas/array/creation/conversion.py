"""Arrays from other arrays: ``asarray`` / ``array``, ``copyto`` and ``redistribute``.  All are
collective.

``redistribute`` and ``asarray``/``array`` of a distributed array into another
distribution run one statement (one aggregated message per locale pair);
``copyto`` is one statement.
"""

from __future__ import annotations

import numpy as np

from ... import comm
from ..core import DistArray
from ..expr import where as _where
from ..operands import as_view, distributed
from ..view import View
from .constructors import empty, from_numpy


def redistribute(a, dist, *, name=None):
    """Collective: a copy of ``a`` with distribution ``dist``: one statement, so at most one
    aggregated message per locale pair."""
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
    if isinstance(a, DistArray):
        same_dist = dist is None or dist.bind(a.shape, comm.num_locales()).key == a.layout.key
        if same_dist and (dtype is None or np.dtype(dtype) == a.dtype):
            return a
        b = a if same_dist else redistribute(a, dist, name=name)
        return b if dtype is None or np.dtype(dtype) == b.dtype else b.astype(dtype)
    if distributed(a):
        b = a.eval() if dtype is None else a.astype(dtype)
        return b if dist is None else asarray(b, dist=dist, name=name)
    return from_numpy(np.asarray(a, dtype=dtype), dist=dist, name=name)


def array(a, dtype=None, *, copy=True, dist=None, name=None):
    """Collective: like :func:`asarray`, but a DistArray is copied unless ``copy=False``."""
    b = asarray(a, dtype, dist=dist, name=name)
    if copy and b is a and isinstance(a, DistArray):
        return a.copy()
    return b


def copyto(dst, src, casting="same_kind", where=True):
    """Collective: ``dst[...] = src`` (a statement), refusing casts NumPy's ``casting`` rule refuses;
    ``where`` (a mask) keeps ``dst``'s elements where it is false."""
    if not distributed(dst):
        if distributed(src):
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


NUMPY_FUNCTIONS = {np.copyto: copyto}

"""NumPy's NaN-ignoring reductions on distributed arrays.

Each is NumPy's own recipe written with pgas's element-wise expressions and
reductions, so shapes, dtypes and special values follow NumPy:

- ``np.nansum`` / ``np.nanprod``: NaNs replaced by 0 / 1, then ``sum`` / ``prod``
  (integer and boolean arrays have no NaN: plain ``sum`` / ``prod``);
- ``np.nanmin`` / ``np.nanmax``: the reduction of the non-NaN elements; a slice of
  NaNs only gives NaN with NumPy's ``RuntimeWarning: All-NaN slice encountered``;
- ``np.nanmean``: the sum of the non-NaN elements over their count (NaN and
  ``RuntimeWarning: Mean of empty slice`` where there are none);
- ``np.nancumsum`` / ``np.nancumprod``: NaNs replaced by 0 / 1, then ``cumsum`` / ``cumprod``;
- ``np.nanargmin`` / ``np.nanargmax``: the index among the non-NaN elements (ValueError
  ``All-NaN slice encountered`` as NumPy);
- ``np.nanvar`` / ``np.nanstd``: ``var`` / ``std`` over the non-NaN elements (a ``where=``
  mask), NaN with NumPy's ``RuntimeWarning: Degrees of freedom <= 0 for slice.`` where
  at most ``ddof`` elements are left.

All are collective on distributed input; anything else is NumPy's own function.
"""

from __future__ import annotations


import numpy as np

from ...comm.userwarn import warn
from ..operands import distributed
from . import functions

_NoValue = np._NoValue


def _floats(a) -> bool:
    return np.result_type(a).kind in "fc"


def _replaced(a, value):
    """``a`` with its NaNs replaced by ``value`` (lazy), or ``a`` if it cannot hold NaN."""
    from ..expr import where
    return where(np.isnan(a), value, a) if _floats(a) else a


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """Collective on distributed ``a``: NumPy's ``nansum`` (NaNs count as zero)."""
    if not distributed(a):
        return np.nansum(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)
    return functions.sum(_replaced(a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """Collective on distributed ``a``: NumPy's ``nanprod`` (NaNs count as one)."""
    if not distributed(a):
        return np.nanprod(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)
    return functions.prod(_replaced(a, 1), axis, dtype, out, keepdims, initial, where)


def _extreme(name: str, a, axis, out, keepdims, initial, where):
    from ..expr import where as choose
    fn = getattr(functions, name)
    if out is not None or where is not True or initial is not _NoValue:
        raise TypeError(f"np.nan{name} is not supported on pgas arrays with out=, where= or initial=: "
                        f"use np.{name}(pg.where(np.isnan(A), ..., A), ...)")
    if not _floats(a):
        return fn(a, axis, None, keepdims)
    fill = np.inf if name == "min" else -np.inf
    m = fn(choose(np.isnan(a), fill, a), axis, None, keepdims)
    empty = functions.all(np.isnan(a), axis, None, keepdims)
    if not distributed(empty):                 # every axis reduced: NumPy values, alike everywhere
        if np.any(empty):
            warn("All-NaN slice encountered", RuntimeWarning)
            if np.ndim(m) == 0:
                return m.dtype.type(np.nan)
            return np.where(empty, np.nan, m).astype(m.dtype, copy=False)     # keepdims: NumPy's shape
        return m
    if functions.any(empty):
        warn("All-NaN slice encountered", RuntimeWarning)
        return choose(empty, np.nan, m).eval()
    return m


def nanmin(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """Collective on distributed ``a``: NumPy's ``nanmin``."""
    if not distributed(a):
        return np.nanmin(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)
    return _extreme("min", a, axis, out, keepdims, initial, where)


def nanmax(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """Collective on distributed ``a``: NumPy's ``nanmax``."""
    if not distributed(a):
        return np.nanmax(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)
    return _extreme("max", a, axis, out, keepdims, initial, where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Collective on distributed ``a``: NumPy's ``nanmean``."""
    if not distributed(a):
        return np.nanmean(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    if not _floats(a):
        return functions.mean(a, axis, dtype, out, keepdims, where=where)
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")     # NumPy's error
    if out is not None or where is not True:
        raise TypeError("np.nanmean is not supported on pgas arrays with out= or where=: "
                        "use A.sum(where=~np.isnan(A)) / the count")
    count = functions.sum(~np.isnan(a), axis, np.intp, None, keepdims)
    total = functions.sum(_replaced(a, 0), axis, dtype, None, keepdims)
    if (count == 0) if axis is None else functions.any(count == 0):
        warn("Mean of empty slice", RuntimeWarning)
    with np.errstate(invalid="ignore", divide="ignore"):     # divided in the promoted type, then cast, as
        return (total / count).astype(total.dtype, copy=False)   # NumPy (float32 by a count > 2**24)


def _nanspread(name: str, a, axis, dtype, out, ddof, keepdims, where):
    fn = getattr(functions, name)
    if not _floats(a):
        return fn(a, axis, dtype, out, ddof, keepdims, where=where)
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")     # NumPy's error
    if out is not None or where is not True:
        raise TypeError(f"np.nan{name} is not supported on pgas arrays with out= or where=: "
                        f"use np.{name}(A, where=~np.isnan(A) & mask)")
    return fn(a, axis, dtype, None, ddof, keepdims, where=~np.isnan(a))


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_NoValue,
           correction=_NoValue):
    """Collective on distributed ``a``: NumPy's ``nanvar`` with ``ddof``."""
    if not distributed(a):
        return np.nanvar(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where)
    if mean is not _NoValue or correction is not _NoValue:
        raise TypeError("np.nanvar's mean= and correction= are not supported on pgas arrays: use ddof=")
    return _nanspread("var", a, axis, dtype, out, ddof, keepdims, where)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_NoValue,
           correction=_NoValue):
    """Collective on distributed ``a``: NumPy's ``nanstd`` with ``ddof``."""
    if not distributed(a):
        return np.nanstd(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where)
    if mean is not _NoValue or correction is not _NoValue:
        raise TypeError("np.nanstd's mean= and correction= are not supported on pgas arrays: use ddof=")
    return _nanspread("std", a, axis, dtype, out, ddof, keepdims, where)


def _nanarg(name: str, a, axis, out, keepdims):
    from ..expr import where as choose
    fn = getattr(functions, name)
    if out is not None:
        raise TypeError(f"np.nan{name} is not supported on pgas arrays with out=")
    if not _floats(a):
        return fn(a, axis, None, keepdims=keepdims)
    if functions.any(functions.all(np.isnan(a), axis, None, keepdims)):
        raise ValueError("All-NaN slice encountered")                       # NumPy's error
    fill = np.inf if name == "argmin" else -np.inf
    return fn(choose(np.isnan(a), fill, a).eval(), axis, None, keepdims=keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """Collective on distributed ``a``: NumPy's ``nanargmin`` (ValueError on an all-NaN slice)."""
    if not distributed(a):
        return np.nanargmin(a, axis=axis, out=out, keepdims=keepdims)
    return _nanarg("argmin", a, axis, out, keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """Collective on distributed ``a``: NumPy's ``nanargmax`` (ValueError on an all-NaN slice)."""
    if not distributed(a):
        return np.nanargmax(a, axis=axis, out=out, keepdims=keepdims)
    return _nanarg("argmax", a, axis, out, keepdims)


def _nanscan(name: str, fill, a, axis, dtype, out):
    """``np.nan<name>`` of ``a``: NumPy's for local ``a``, else the scan of ``a`` with NaNs as ``fill``."""
    if not distributed(a):
        return getattr(np, "nan" + name)(a, axis=axis, dtype=dtype, out=out)
    r = _replaced(a, fill)
    return getattr(functions, name)(r.eval() if r is not a else a, axis, dtype, out)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Collective on distributed ``a``: NumPy's ``nancumsum`` (NaNs count as zero)."""
    return _nanscan("cumsum", 0, a, axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Collective on distributed ``a``: NumPy's ``nancumprod`` (NaNs count as one)."""
    return _nanscan("cumprod", 1, a, axis, dtype, out)


NUMPY_FUNCTIONS = {np.nancumsum: nancumsum, np.nancumprod: nancumprod, np.nanargmin: nanargmin, np.nanargmax: nanargmax, np.nansum: nansum, np.nanprod: nanprod, np.nanmin: nanmin, np.nanmax: nanmax,
                   np.nanmean: nanmean, np.nanvar: nanvar, np.nanstd: nanstd}

"""NumPy's NaN-ignoring reductions, ``np.isclose`` and ``np.round(A, decimals)`` on distributed arrays.

Each is NumPy's own recipe written with pgas's element-wise expressions and
reductions, so shapes, dtypes and special values follow NumPy:

- ``np.nansum`` / ``np.nanprod``: NaNs replaced by 0 / 1, then ``sum`` / ``prod``
  (integer and boolean arrays have no NaN: plain ``sum`` / ``prod``);
- ``np.nanmin`` / ``np.nanmax``: the reduction of the non-NaN elements; a slice of
  NaNs only gives NaN with NumPy's ``RuntimeWarning: All-NaN slice encountered``;
- ``np.nanmean``: the sum of the non-NaN elements over their count (NaN and
  ``RuntimeWarning: Mean of empty slice`` where there are none);
- ``np.isclose`` (computed at once): ``|a - b| <= atol + rtol |b|`` where ``b`` is finite, or ``a == b``
  (and both NaN with ``equal_nan``), ``b`` taken as floating point first (a Python
  scalar stays weak, as in NumPy: a float32 array is compared with ``0.1`` in float32);
- ``np.round`` / ``np.around`` with any ``decimals`` for floating arrays (scale by
  ``10**decimals``, ``rint``, scale back, as NumPy does); integers a copy for
  ``decimals >= 0``, else rounded in float64 and cast back, as NumPy does; complex
  arrays with ``decimals=0`` only (else TypeError).

All are collective on distributed input (the element-wise ones are lazy);
anything else is NumPy's own function.
"""

from __future__ import annotations

import warnings

import numpy as np

_NoValue = np._NoValue


def _distributed(a) -> bool:
    from .reduce import _distributed as d
    return d(a)


def _floats(a) -> bool:
    return np.result_type(a).kind in "fc"


def _replaced(a, value):
    """``a`` with its NaNs replaced by ``value`` (lazy), or ``a`` if it cannot hold NaN."""
    from .expr import where
    return where(np.isnan(a), value, a) if _floats(a) else a


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """Collective on distributed ``a``: NumPy's ``nansum`` (NaNs count as zero)."""
    if not _distributed(a):
        return np.nansum(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)
    from .reduce import sum as total
    return total(_replaced(a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """Collective on distributed ``a``: NumPy's ``nanprod`` (NaNs count as one)."""
    if not _distributed(a):
        return np.nanprod(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)
    from .reduce import prod
    return prod(_replaced(a, 1), axis, dtype, out, keepdims, initial, where)


def _extreme(name: str, a, axis, out, keepdims, initial, where):
    from . import reduce
    from .expr import where as choose
    fn = getattr(reduce, name)
    if out is not None or where is not True or initial is not _NoValue:
        raise TypeError(f"np.nan{name} is not supported on pgas arrays with out=, where= or initial=: "
                        f"use np.{name}(pg.where(np.isnan(A), ..., A), ...)")
    if not _floats(a):
        return fn(a, axis, None, keepdims)
    fill = np.inf if name == "min" else -np.inf
    m = fn(choose(np.isnan(a), fill, a), axis, None, keepdims)
    empty = reduce.all(np.isnan(a), axis, None, keepdims)
    if not _distributed(empty):                 # every axis reduced: NumPy values, alike everywhere (rev1)
        if np.any(empty):
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
            if np.ndim(m) == 0:
                return m.dtype.type(np.nan)
            return np.where(empty, np.nan, m).astype(m.dtype, copy=False)     # keepdims: NumPy's shape
        return m
    if reduce.any(empty):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
        return choose(empty, np.nan, m).eval()
    return m


def nanmin(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """Collective on distributed ``a``: NumPy's ``nanmin``."""
    if not _distributed(a):
        return np.nanmin(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)
    return _extreme("min", a, axis, out, keepdims, initial, where)


def nanmax(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """Collective on distributed ``a``: NumPy's ``nanmax``."""
    if not _distributed(a):
        return np.nanmax(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)
    return _extreme("max", a, axis, out, keepdims, initial, where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Collective on distributed ``a``: NumPy's ``nanmean``."""
    if not _distributed(a):
        return np.nanmean(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    from . import reduce
    if not _floats(a):
        return reduce.mean(a, axis, dtype, out, keepdims, where=where)
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")     # NumPy's error (rev22)
    if out is not None or where is not True:
        raise TypeError("np.nanmean is not supported on pgas arrays with out= or where=: "
                        "use A.sum(where=~np.isnan(A)) / the count")
    count = reduce.sum(~np.isnan(a), axis, np.intp, None, keepdims)
    total = reduce.sum(_replaced(a, 0), axis, dtype, None, keepdims)
    if (count == 0) if axis is None else reduce.any(count == 0):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    with np.errstate(invalid="ignore", divide="ignore"):     # divided in the promoted type, then cast, as
        return (total / count).astype(total.dtype, copy=False)   # NumPy (float32 by a count > 2**24: rev22)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Collective: NumPy's ``isclose`` of distributed arrays and NumPy values, a boolean
    DistArray (computed at once, with NumPy's warnings about ``inf - inf`` silenced as
    NumPy silences them)."""
    x, y = (v if isinstance(v, (int, float, complex)) or _distributed(v) else np.asanyarray(v) for v in (a, b))
    if isinstance(y, (int, float, complex)):     # Python scalars stay weak, as in NumPy: isclose(float32
        y = float(y) if isinstance(y, int) else y    # array, 0.1) compares in float32 (rev22)
    else:
        dt = np.result_type(y, 1.0)
        if _distributed(y):
            y = y.astype(dt) if y.dtype != dt else y
        else:
            y = np.asanyarray(y, dtype=dt)
    if not (np.all(np.isfinite(atol)) and np.all(np.isfinite(rtol))):       # NumPy's check (rev22)
        msg, how = f"One of rtol or atol is not valid, atol: {atol}, rtol: {rtol}", np.geterr()["invalid"]
        if how == "raise":
            raise FloatingPointError(msg)
        if how == "warn":
            warnings.warn(msg, RuntimeWarning, stacklevel=2)
    with np.errstate(invalid="ignore"):
        r = (np.less_equal(abs(x - y), atol + rtol * abs(y)) & np.isfinite(y)) | (x == y)
        if equal_nan:
            r = r | (np.isnan(x) & np.isnan(y))
        return r.eval() if hasattr(r, "eval") else r


def _power_of_ten(n: int) -> float:
    """``10.0 ** n`` as NumPy's ``round`` computes it (its C ``power_of_ten``: exact below
    1e9, else 1e9 times 10, ``n - 9`` times, each product rounded: from ``n = 27`` on
    that differs from other ways of computing it, rev1)."""
    if n < 9:
        return float(10 ** n)
    r = 1e9
    for _ in range(n - 9):
        r *= 10.0
        if r == np.inf:                        # stays inf: no need to go on (n up to 2**31, rev1)
            break
    return r


def round_(a, decimals=0, out=None):
    """Element-wise (lazy): NumPy's ``round`` (``around``) with any ``decimals``."""
    import operator

    from .npapi import _plain, copy, unsupported
    _plain({"out": out}, "round")
    decimals = operator.index(decimals)                # a float is a TypeError, as in NumPy (rev1)
    if not -2**31 <= decimals < 2**31:
        raise OverflowError(f"decimals {decimals} does not fit a C int (NumPy's limit)")
    kind = np.result_type(a).kind
    if kind == "b":
        raise unsupported("round", "NumPy rounds booleans to float16, which pgas arrays do not have; "
                                   "use A.astype(np.float32)")
    if kind in "iu" and decimals >= 0:
        return copy(a)
    if kind in "fc" and decimals == 0:
        return np.rint(a)
    if kind == "c":
        raise unsupported("round", "complex arrays round with decimals=0 only (NumPy rounds their real and "
                                   "imaginary parts apart); round A.real and A.imag")
    f = _power_of_ten(abs(decimals))
    r = np.rint(a * f) / f if decimals > 0 else np.rint(a / f) * f
    return r.astype(np.result_type(a)) if kind in "iu" else r


NUMPY_FUNCTIONS = {np.nansum: nansum, np.nanprod: nanprod, np.nanmin: nanmin, np.nanmax: nanmax,
                   np.nanmean: nanmean, np.isclose: isclose, np.round: round_, np.around: round_}

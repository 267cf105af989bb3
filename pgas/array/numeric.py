"""``np.diff``, ``np.trace``, ``np.diag`` (of a 2-D array), ``np.nan_to_num``, ``np.isclose`` and
``np.round`` on distributed arrays.

Each is NumPy's own definition written with pgas statements, so shapes,
dtypes and values are NumPy's:

- ``np.diff(A, n, axis)``: ``A[1:] - A[:-1]`` along ``axis``, ``n`` times
  (``!=`` for booleans, as NumPy); ``prepend`` / ``append`` are concatenated
  first; ``n=0`` returns the input itself, as NumPy;
- ``np.trace(A, offset)`` and ``np.diag(A, k)`` of a 2-D array: the diagonal
  gathered by advanced indexing (``A[i, i + k]``), then summed for the trace;
- ``np.nan_to_num(A, nan, posinf, neginf)``: NaN and infinities replaced
  element-wise (floating arrays; other kinds are copied, or returned themselves
  with ``copy=False``), the replacements converted as NumPy's ``np.copyto``;
- ``np.isclose`` (computed at once): ``|a - b| <= atol + rtol |b|`` where ``b`` is finite, or ``a == b``
  (and both NaN with ``equal_nan``), ``b`` taken as floating point first (a Python
  scalar stays weak, as in NumPy: a float32 array is compared with ``0.1`` in float32);
- ``np.round`` / ``np.around`` with any ``decimals`` for floating arrays (scale by
  ``10**decimals``, ``rint``, scale back, as NumPy does); integers a copy for
  ``decimals >= 0``, else rounded in float64 and cast back, as NumPy does; complex
  arrays with ``decimals=0`` only (else TypeError).

All are collective (``np.round`` is lazy); anything else is NumPy's own function.
"""

from __future__ import annotations


import numpy as np

from ..comm.userwarn import warn
from .npapi import copy, reject_keywords, unsupported
from .operands import distributed


def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """Collective: NumPy's ``diff`` (a new DistArray)."""
    if not distributed(a):
        kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not np._NoValue}
        return np.diff(a, n, axis, **kw)
    import operator

    from .shape import concatenate
    n = operator.index(n)                      # floats are TypeErrors, as in NumPy
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:                                 # NumPy returns its input before prepend/append,
        from .view import View  # itself: an array or a view, writes reach it
        return a if hasattr(a, "_storage") or isinstance(a, View) else a.eval()
    nd = a.ndim
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(axis, nd)
    axis %= nd
    parts = []
    for extra in (prepend, append):
        if extra is np._NoValue:
            parts.append(None)
            continue
        shape = list(a.shape)
        shape[axis] = 1
        e = extra if distributed(extra) else np.broadcast_to(np.asarray(extra), shape if np.ndim(extra) == 0
                                                              else np.shape(extra))
        parts.append(e)
    if parts[0] is not None or parts[1] is not None:
        from .creation.conversion import asarray
        seq = [p for p in (parts[0], a, parts[1]) if p is not None]
        a = concatenate([p if distributed(p) else asarray(np.ascontiguousarray(p)) for p in seq], axis=axis)
    hi = tuple(slice(1, None) if d == axis else slice(None) for d in range(nd))
    lo = tuple(slice(None, -1) if d == axis else slice(None) for d in range(nd))
    out = a.eval() if hasattr(a, "eval") and not hasattr(a, "_storage") else a
    for _ in range(n):
        out = (np.not_equal(out[hi], out[lo]) if out.dtype == np.bool_ else out[hi] - out[lo]).eval()
    return out


def _diagonal(a, k: int, name: str):
    if a.ndim != 2:
        raise unsupported(name, f"pgas takes the diagonal of 2-D arrays only (this one is {a.ndim}-D)")
    import operator
    k = operator.index(k)                       # floats are TypeErrors, as in NumPy
    rows, cols = a.shape
    i0, j0 = (0, k) if k >= 0 else (-k, 0)
    m = max(0, min(rows - i0, cols - j0))
    idx = np.arange(m, dtype=np.intp)
    return a[idx + i0, idx + j0]


def diag(v, k=0):
    """Collective: NumPy's ``diag`` of a 2-D distributed array (its ``k``-th diagonal, 1-D)."""
    if not distributed(v):
        return np.diag(v, k)
    return _diagonal(v, k, "diag")


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Collective: NumPy's ``trace`` of a 2-D distributed array (a scalar on every locale)."""
    if not distributed(a):
        return np.trace(a, offset, axis1, axis2, dtype, out)
    import operator
    if a.ndim < 2:                             # NumPy's errors first
        raise ValueError("diag requires an array of at least two dimensions")
    axis1 = np.lib.array_utils.normalize_axis_index(operator.index(axis1), a.ndim, "axis1")
    axis2 = np.lib.array_utils.normalize_axis_index(operator.index(axis2), a.ndim, "axis2")
    if axis1 == axis2:
        raise ValueError("axis1 and axis2 cannot be the same")
    if out is not None or a.ndim != 2:
        raise unsupported("trace", "pgas traces 2-D arrays over axes (0, 1) without out=")
    d = _diagonal(a, offset if axis1 % 2 == 0 else -offset, "trace")
    if d.size == 0:
        return np.trace(np.zeros((0, 0), dtype=a.dtype), dtype=dtype)
    return d.sum(dtype=dtype)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Collective: NumPy's ``nan_to_num`` (a new DistArray; ``copy=False`` writes ``x`` in place)."""
    if not distributed(x):
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    from .expr import where
    dt = np.result_type(x)
    if dt.kind == "c":
        raise unsupported("nan_to_num", "complex arrays: apply it to A.real and A.imag")
    from .view import View
    if dt.kind != "f":                         # x itself with copy=False, a view too
        return x if not copy and (hasattr(x, "_storage") or isinstance(x, View)) else x.copy()
    info = np.finfo(dt)
    nan, big, small = (_converted(v, dt) for v in (nan, info.max if posinf is None else posinf,
                                                   info.min if neginf is None else neginf))
    inf = np.isinf(x)
    fix = where(np.isnan(x), nan, where(inf & (x > 0), big, where(inf, small, x)))
    if not copy and (hasattr(x, "_storage") or isinstance(x, View)):   # an array or a view: in place
        x[...] = fix
        return x
    return fix.eval()


def _converted(value, dt):
    """``value`` as NumPy's ``nan_to_num`` stores it in a ``dt`` array (``np.copyto``, casting
    ``same_kind``: None, strings and complex numbers into floats raise TypeError)."""
    probe = np.empty((), dt)
    np.copyto(probe, value)
    return probe[()]


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Collective: NumPy's ``isclose`` of distributed arrays and NumPy values, a boolean
    DistArray (computed at once, with NumPy's warnings about ``inf - inf`` silenced as
    NumPy silences them)."""
    x, y = (v if isinstance(v, (int, float, complex)) or distributed(v) else np.asanyarray(v) for v in (a, b))
    if isinstance(y, (int, float, complex)):     # Python scalars stay weak, as in NumPy: isclose(float32
        y = float(y) if isinstance(y, int) else y    # array, 0.1) compares in float32
    else:
        dt = np.result_type(y, 1.0)
        if distributed(y):
            y = y.astype(dt) if y.dtype != dt else y
        else:
            y = np.asanyarray(y, dtype=dt)
    if not (np.all(np.isfinite(atol)) and np.all(np.isfinite(rtol))):       # NumPy's check
        msg, how = f"One of rtol or atol is not valid, atol: {atol}, rtol: {rtol}", np.geterr()["invalid"]
        if how == "raise":
            raise FloatingPointError(msg)
        if how == "warn":
            warn(msg, RuntimeWarning)
    with np.errstate(invalid="ignore"):
        r = (np.less_equal(abs(x - y), atol + rtol * abs(y)) & np.isfinite(y)) | (x == y)
        if equal_nan:
            r = r | (np.isnan(x) & np.isnan(y))
        return r.eval() if hasattr(r, "eval") else r


def _power_of_ten(n: int) -> float:
    """``10.0 ** n`` as NumPy's ``round`` computes it (its C ``power_of_ten``: exact below
    1e9, else 1e9 times 10, ``n - 9`` times, each product rounded: from ``n = 27`` on
    that differs from other ways of computing it)."""
    if n < 9:
        return float(10 ** n)
    r = 1e9
    for _ in range(n - 9):
        r *= 10.0
        if r == np.inf:                        # stays inf: no need to go on (n up to 2**31)
            break
    return r


def round_(a, decimals=0, out=None):
    """Element-wise (lazy): NumPy's ``round`` (``around``) with any ``decimals``."""
    import operator

    reject_keywords({"out": out}, "round")
    decimals = operator.index(decimals)                # a float is a TypeError, as in NumPy
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


NUMPY_FUNCTIONS = {np.diff: diff, np.trace: trace, np.diag: diag, np.nan_to_num: nan_to_num, np.isclose: isclose,
                   np.round: round_, np.around: round_}

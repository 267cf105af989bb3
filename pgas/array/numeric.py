"""``np.diff``, ``np.trace``, ``np.diag`` (of a 2-D array) and ``np.nan_to_num`` on distributed arrays.

Each is NumPy's own definition written with pgas statements, so shapes,
dtypes and values are NumPy's:

- ``np.diff(A, n, axis)``: ``A[1:] - A[:-1]`` along ``axis``, ``n`` times
  (``!=`` for booleans, as NumPy); ``prepend`` / ``append`` are concatenated
  first; ``n=0`` returns the input itself, as NumPy;
- ``np.trace(A, offset)`` and ``np.diag(A, k)`` of a 2-D array: the diagonal
  gathered by advanced indexing (``A[i, i + k]``), then summed for the trace;
- ``np.nan_to_num(A, nan, posinf, neginf)``: NaN and infinities replaced
  element-wise (floating arrays; other kinds are copied, or returned themselves
  with ``copy=False``), the replacements converted as NumPy's ``np.copyto``.

All are collective; anything else is NumPy's own function.
"""

from __future__ import annotations

import numpy as np

from .reduce import _distributed


def _unsupported(name, advice):
    from .npapi import unsupported
    return unsupported(name, advice)


def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """Collective: NumPy's ``diff`` (a new DistArray)."""
    if not _distributed(a):
        kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not np._NoValue}
        return np.diff(a, n, axis, **kw)
    import operator

    from .shape import concatenate
    n = operator.index(n)                      # floats are TypeErrors, as in NumPy (rev1)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:                                 # NumPy returns its input before prepend/append (rev1),
        from .view import View                 # itself: an array or a view, writes reach it (rev22)
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
        e = extra if _distributed(extra) else np.broadcast_to(np.asarray(extra), shape if np.ndim(extra) == 0
                                                              else np.shape(extra))
        parts.append(e)
    if parts[0] is not None or parts[1] is not None:
        from .creation import asarray
        seq = [p for p in (parts[0], a, parts[1]) if p is not None]
        a = concatenate([p if _distributed(p) else asarray(np.ascontiguousarray(p)) for p in seq], axis=axis)
    hi = tuple(slice(1, None) if d == axis else slice(None) for d in range(nd))
    lo = tuple(slice(None, -1) if d == axis else slice(None) for d in range(nd))
    out = a.eval() if hasattr(a, "eval") and not hasattr(a, "_storage") else a
    for _ in range(n):
        out = (np.not_equal(out[hi], out[lo]) if out.dtype == np.bool_ else out[hi] - out[lo]).eval()
    return out


def _diagonal(a, k: int, name: str):
    if a.ndim != 2:
        raise _unsupported(name, f"pgas takes the diagonal of 2-D arrays only (this one is {a.ndim}-D)")
    import operator
    k = operator.index(k)                       # floats are TypeErrors, as in NumPy (rev1)
    rows, cols = a.shape
    i0, j0 = (0, k) if k >= 0 else (-k, 0)
    m = max(0, min(rows - i0, cols - j0))
    idx = np.arange(m, dtype=np.intp)
    return a[idx + i0, idx + j0]


def diag(v, k=0):
    """Collective: NumPy's ``diag`` of a 2-D distributed array (its ``k``-th diagonal, 1-D)."""
    if not _distributed(v):
        return np.diag(v, k)
    return _diagonal(v, k, "diag")


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Collective: NumPy's ``trace`` of a 2-D distributed array (a scalar on every locale)."""
    if not _distributed(a):
        return np.trace(a, offset, axis1, axis2, dtype, out)
    import operator
    if a.ndim < 2:                             # NumPy's errors first (rev22)
        raise ValueError("diag requires an array of at least two dimensions")
    axis1 = np.lib.array_utils.normalize_axis_index(operator.index(axis1), a.ndim, "axis1")
    axis2 = np.lib.array_utils.normalize_axis_index(operator.index(axis2), a.ndim, "axis2")
    if axis1 == axis2:
        raise ValueError("axis1 and axis2 cannot be the same")
    if out is not None or a.ndim != 2:
        raise _unsupported("trace", "pgas traces 2-D arrays over axes (0, 1) without out=")
    d = _diagonal(a, offset if axis1 % 2 == 0 else -offset, "trace")
    if d.size == 0:
        return np.trace(np.zeros((0, 0), dtype=a.dtype), dtype=dtype)
    return d.sum(dtype=dtype)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Collective: NumPy's ``nan_to_num`` (a new DistArray; ``copy=False`` writes ``x`` in place)."""
    if not _distributed(x):
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    from .expr import where
    dt = np.result_type(x)
    if dt.kind == "c":
        raise _unsupported("nan_to_num", "complex arrays: apply it to A.real and A.imag")
    from .view import View
    if dt.kind != "f":                         # x itself with copy=False, a view too (rev22)
        return x if not copy and (hasattr(x, "_storage") or isinstance(x, View)) else x.copy()
    info = np.finfo(dt)
    nan, big, small = (_converted(v, dt) for v in (nan, info.max if posinf is None else posinf,
                                                   info.min if neginf is None else neginf))
    inf = np.isinf(x)
    fix = where(np.isnan(x), nan, where(inf & (x > 0), big, where(inf, small, x)))
    if not copy and (hasattr(x, "_storage") or isinstance(x, View)):   # an array or a view: in place (rev1)
        x[...] = fix
        return x
    return fix.eval()


def _converted(value, dt):
    """``value`` as NumPy's ``nan_to_num`` stores it in a ``dt`` array (``np.copyto``, casting
    ``same_kind``: None, strings and complex numbers into floats raise TypeError, rev22)."""
    probe = np.empty((), dt)
    np.copyto(probe, value)
    return probe[()]


NUMPY_FUNCTIONS = {np.diff: diff, np.trace: trace, np.diag: diag, np.nan_to_num: nan_to_num}

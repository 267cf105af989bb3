"""Reductions and scans as functions (``pg.sum(A, axis=0)``).

Each function takes NumPy's arguments; on a DistArray, View or expression it
calls the method of the same name (see :mod:`pgas.array.reductions.axisreduce` and
:mod:`pgas.array.reductions.scan`), on anything else it is NumPy's function.
"""

from __future__ import annotations

import numpy as np

from ..operands import distributed

_NoValue = np._NoValue


def _kw(**kw):
    return {k: v for k, v in kw.items() if v is not _NoValue}


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):  # noqa: A001
    """Collective on distributed ``a``: NumPy's ``sum`` (a DistArray over the kept axes, or a scalar)."""
    if not distributed(a):
        return np.sum(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **_kw(initial=initial), where=where)
    return a.sum(axis, dtype, out, keepdims, initial, where)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """Collective on distributed ``a``: NumPy's ``prod``."""
    if not distributed(a):
        return np.prod(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **_kw(initial=initial), where=where)
    return a.prod(axis, dtype, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):  # noqa: A001
    """Collective on distributed ``a``: NumPy's ``min`` (``amin``)."""
    if not distributed(a):
        return np.min(a, axis=axis, out=out, keepdims=keepdims, **_kw(initial=initial), where=where)
    return a.min(axis, out, keepdims, initial, where)


def max(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):  # noqa: A001
    """Collective on distributed ``a``: NumPy's ``max`` (``amax``)."""
    if not distributed(a):
        return np.max(a, axis=axis, out=out, keepdims=keepdims, **_kw(initial=initial), where=where)
    return a.max(axis, out, keepdims, initial, where)


def any(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    """Collective on distributed ``a``: NumPy's ``any``."""
    if not distributed(a):
        return np.any(a, axis=axis, out=out, keepdims=keepdims, where=where)
    return a.any(axis, out, keepdims, where=where)


def all(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    """Collective on distributed ``a``: NumPy's ``all``."""
    if not distributed(a):
        return np.all(a, axis=axis, out=out, keepdims=keepdims, where=where)
    return a.all(axis, out, keepdims, where=where)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Collective on distributed ``a``: NumPy's ``mean``."""
    if not distributed(a):
        return np.mean(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    return a.mean(axis, dtype, out, keepdims, where=where)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True):
    """Collective on distributed ``a``: NumPy's ``var`` with ``ddof``."""
    if not distributed(a):
        return np.var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where)
    return a.var(axis, dtype, out, ddof, keepdims, where=where)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True):
    """Collective on distributed ``a``: NumPy's ``std`` with ``ddof``."""
    if not distributed(a):
        return np.std(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where)
    return a.std(axis, dtype, out, ddof, keepdims, where=where)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """Collective on distributed ``a``: NumPy's ``argmin`` (global indices)."""
    if not distributed(a):
        return np.argmin(a, axis=axis, out=out, keepdims=keepdims)
    return a.argmin(axis, out, keepdims=keepdims)


def argmax(a, axis=None, out=None, *, keepdims=False):
    """Collective on distributed ``a``: NumPy's ``argmax`` (global indices)."""
    if not distributed(a):
        return np.argmax(a, axis=axis, out=out, keepdims=keepdims)
    return a.argmax(axis, out, keepdims=keepdims)


def count_nonzero(a, axis=None, *, keepdims=False):
    """Collective on distributed ``a``: NumPy's ``count_nonzero``."""
    if not distributed(a):
        return np.count_nonzero(a, axis=axis, keepdims=keepdims)
    from .axisreduce import reduce

    return reduce(a, "count_nonzero", axis, None, None, keepdims)


def cumsum(a, axis=None, dtype=None, out=None):
    """Collective on distributed ``a``: NumPy's ``cumsum``."""
    if not distributed(a):
        return np.cumsum(a, axis=axis, dtype=dtype, out=out)
    return a.cumsum(axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Collective on distributed ``a``: NumPy's ``cumprod``."""
    if not distributed(a):
        return np.cumprod(a, axis=axis, dtype=dtype, out=out)
    return a.cumprod(axis, dtype, out)


amin, amax = min, max

NUMPY_FUNCTIONS = {np.sum: sum, np.prod: prod, np.min: min, np.max: max, np.amin: min, np.amax: max,
                   np.any: any, np.all: all, np.mean: mean, np.var: var, np.std: std,
                   np.argmin: argmin, np.argmax: argmax, np.count_nonzero: count_nonzero,
                   np.cumsum: cumsum, np.cumprod: cumprod}

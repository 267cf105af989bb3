"""Statistical and utility functions of the array API standard (reductions).

Over all elements of a distributed array (``axis=None``, no ``keepdims``) they run as pgas's
distributed reductions (each locale reduces its part, then a reduction tree), and the result is a
0-d array on every locale.  Over some axes, or with ``keepdims``, they run as pgas's axis
reductions (each locale reduces its part, partial results combined by the owners of the result),
a DistArray.  Only ``cumulative_sum`` gathers (with a :class:`pgas.GatherWarning`).
"""

from __future__ import annotations

import inspect

import numpy as np

from ...comm.userwarn import GatherWarning, warn
from .arrays import dist, is_dist, to_numpy, wrap


def _whole(x, axis, keepdims) -> bool:
    if not is_dist(x) or keepdims or x.size == 0:
        return False
    if axis is None:
        return True
    axes = axis if isinstance(axis, tuple) else (axis,)
    return sorted(a % x.ndim for a in axes) == list(range(x.ndim))


def _by_axes(x) -> bool:
    """Whether a reduction of ``x`` over some axes runs distributed (a non-empty distributed array)."""
    return is_dist(x) and x.size > 0


def _reduction(name: str, keywords: tuple, method):
    npfunc = getattr(np, name)

    def impl(x, /, *, axis=None, keepdims=False, **kw):
        bad = set(kw) - set(keywords)
        if bad:
            raise TypeError(f"{name}() got unexpected keyword(s) {', '.join(sorted(bad))}")
        if _whole(x, axis, keepdims):
            probe = npfunc(np.zeros(1, x.dtype), **kw).dtype
            return np.asarray(method(dist(x), **kw), dtype=probe)
        if _by_axes(x):
            return wrap(npfunc(dist(x), axis=axis, keepdims=keepdims, **kw))
        return wrap(npfunc(to_numpy(x), axis=axis, keepdims=keepdims, **kw))
    impl.__name__ = impl.__qualname__ = name
    P = inspect.Parameter
    impl.__signature__ = inspect.Signature(
        [P("x", P.POSITIONAL_ONLY), P("axis", P.KEYWORD_ONLY, default=None)]
        + [P(k, P.KEYWORD_ONLY, default=None) for k in keywords] + [P("keepdims", P.KEYWORD_ONLY, default=False)])
    impl.__doc__ = (f"Collective: ``{name}`` of ``x`` (as NumPy's ``np.{name}``), a 0-d array on every locale "
                    "over all elements; over some axes or with keepdims a DistArray (pgas's distributed axis "
                    "reduction).")
    return impl


sum = _reduction("sum", ("dtype",), lambda x, dtype=None: x.sum(dtype=dtype))
prod = _reduction("prod", ("dtype",), lambda x, dtype=None: x.prod(dtype=dtype))
max = _reduction("max", (), lambda x: x.max())
min = _reduction("min", (), lambda x: x.min())
mean = _reduction("mean", (), lambda x: x.mean())
all = _reduction("all", (), lambda x: np.all(x))
any = _reduction("any", (), lambda x: np.any(x))


def _spread(name: str):
    npfunc = getattr(np, name)

    def impl(x, /, *, axis=None, correction=0.0, keepdims=False):
        if _whole(x, axis, keepdims):
            return np.asarray(getattr(dist(x), name)(ddof=correction), dtype=x.dtype)
        if _by_axes(x):
            return wrap(npfunc(dist(x), axis=axis, ddof=correction, keepdims=keepdims))
        return wrap(npfunc(to_numpy(x), axis=axis, correction=correction, keepdims=keepdims))
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = (f"Collective: ``{name}`` of ``x`` with ``correction`` (NumPy's ``ddof``); distributed over "
                    "all elements and over some axes (pgas's distributed axis reduction).")
    return impl


std = _spread("std")
var = _spread("var")


def _arg(name: str):
    npfunc = getattr(np, name)

    def impl(x, /, *, axis=None, keepdims=False):
        if _whole(x, axis, keepdims) and axis is None:
            return np.asarray(getattr(dist(x), name)(), dtype=np.int64)
        if _by_axes(x) and axis is not None:
            res = npfunc(dist(x), axis=axis, keepdims=keepdims)
            if is_dist(res):
                return res if res.dtype == np.int64 else res.astype(np.int64)
            return np.asarray(res, dtype=np.int64)
        return wrap(np.asarray(npfunc(to_numpy(x), axis=axis, keepdims=keepdims), dtype=np.int64))
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = (f"Collective: ``{name}`` (the first index of the extreme value), distributed over all "
                    "elements of a distributed array and over an axis (pgas's distributed axis reduction).")
    return impl


argmax = _arg("argmax")
argmin = _arg("argmin")


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Collective: the cumulative sum along ``axis`` (needed when ``x`` has more than one dimension).

    Distributed (pgas's scan) without ``include_initial``; with it, ``x`` is gathered to every locale
    (a :class:`pgas.GatherWarning`), NumPy's ``cumulative_sum`` computes it there and the result is
    distributed again."""
    if _by_axes(x) and not include_initial and (axis is not None or x.ndim == 1):
        return wrap(np.cumsum(dist(x), axis=0 if axis is None else axis, dtype=dtype))
    if is_dist(x):
        warn("pgas.array_api.cumulative_sum(include_initial=True) gathers its operand to every locale",
             GatherWarning)
    return wrap(np.cumulative_sum(to_numpy(x), axis=axis, dtype=dtype, include_initial=include_initial))


FUNCTIONS = {"cumulative_sum": cumulative_sum, "sum": sum, "prod": prod, "max": max, "min": min, "mean": mean, "all": all, "any": any,
             "std": std, "var": var, "argmax": argmax, "argmin": argmin}

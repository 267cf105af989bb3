"""``np.median``, ``np.quantile``, ``np.percentile`` and their NaN-ignoring forms on distributed arrays.

Every result is NumPy's, bit for bit:

- over all elements (``axis=None``, or every axis): the values at the positions
  NumPy reads (one or two per quantile, :mod:`pgas.array.quantiles.ranks`) are found
  by the distributed selection of :mod:`pgas.array.quantiles.select` (samples and
  counts move, the data does not), then NumPy's interpolation gives the result, a
  NumPy value alike on every locale (an array of ``q``'s shape for an array ``q``);
- along some axes: where those axes are not split over locales each locale
  computes NumPy's function on its own rows (no messages); a split axis is first
  made whole on each locale by one redistribution (its locales moved onto a kept
  axis).  The result is a DistArray of ``q``'s dimensions then the kept ones
  (NumPy's shape), ``q``'s dimensions not split, the kept ones as the rows were.

NaNs: a NaN makes its slice's result NaN; the ``nan*`` forms ignore NaNs, and
an all-NaN slice gives NaN with NumPy's ``RuntimeWarning`` on every locale.  An
empty array, or one with only NaNs for the ``nan*`` forms, has NumPy's answer
whatever its values, so NumPy computes it on a stand-in (with its errors and
warnings, alike on every locale).  Arguments are checked the same way, by NumPy
on a one-element stand-in of the input's dtype (``method``, ``q`` in range, axes,
complex input), so bad input raises NumPy's error on every locale alike.
``weights=`` is not distributed (NumPy allows it with ``method="inverted_cdf"``
only): a TypeError says so.  ``overwrite_input`` is accepted and the input kept.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ... import comm
from ...comm.userwarn import warn
from ...exec import fperr
from ...layout import Distribution
from .. import collective
from ..axes import normalize_axes
from ..operands import distributed, source
from . import ranks
from .select import select

_NoValue = np._NoValue


def _numpy(x):
    """``x`` as a NumPy value (a distributed ``q`` is gathered: it is small)."""
    return source(x).to_numpy() if distributed(x) else x


def _alike(call, *args, **kw):
    """``call(*args, **kw)`` by NumPy, the same on every locale: its warnings re-raised naming
    the user's line."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = call(*args, **kw)
    for w in seen:
        warn(str(w.message), w.category)
    return res


def _stand_in(fn, A, fill, kw):
    """NumPy's ``fn`` of a one-element array of ``A``'s dtype holding ``fill`` (``kw`` its
    keywords): NumPy's checks of the arguments, and the result's type."""
    a = np.full((1,) * A.ndim, fill, A.dtype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(a, **kw)


def _whole(A, axes) -> "object":
    """``A``, or a copy whose locale grid does not split ``axes`` (their locales moved onto the
    kept axis of largest extent): one redistribution."""
    grid = list(A.layout.grid)
    moved = math.prod(grid[d] for d in axes)
    if moved == 1:
        return A
    from ..creation.conversion import redistribute
    kept = [d for d in range(A.ndim) if d not in axes]
    into = max(kept, key=lambda d: A.shape[d])
    for d in axes:
        grid[d] = 1
    grid[into] *= moved
    return redistribute(A, Distribution(A.layout.dist.kind, A.layout.dist.block, tuple(grid)))


def _rows(fn, A, axes, qdims: int, keepdims: bool, dtype, kw):
    """Collective: NumPy's ``fn`` along ``axes`` of each locale's rows, as a DistArray of
    ``qdims`` leading dimensions (not split) and the kept (or kept-as-one) ones."""
    from ..core import DistArray
    src = _whole(A, axes)
    lay = src.layout
    dims = range(A.ndim) if keepdims else [d for d in range(A.ndim) if d not in axes]
    shape = (np.shape(kw["q"]) if qdims else ()) + tuple(1 if d in axes else A.shape[d] for d in dims)
    grid = (1,) * qdims + tuple(lay.grid[d] for d in dims)
    block = (1,) * qdims + tuple(lay.blocks[d] for d in dims) if lay.dist.kind == "block-cyclic" else None
    local = None
    seen: list = []
    if src.local.size:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            local = fn(src.local, axis=axes if len(axes) > 1 else axes[0], keepdims=keepdims, **kw)
        local = np.asarray(local)
    out = DistArray._create(Distribution(lay.dist.kind, block, grid).bind(shape, comm.num_locales()), dtype)
    if local is not None:
        out.local[...] = local
    comm.barrier([out._win])
    mine = {(str(w.message), w.category) for w in seen}
    if comm.allreduce(np.int32(bool(mine)), "max"):          # NumPy's warnings of any locale's rows, on all
        for msg, category in sorted(set().union(*comm.allgather(mine)), key=lambda m: m[0]):
            warn(msg, category)
    return out


@fperr.agreeing
def _reduce(name: str, a, q, axis, out, method, keepdims, weights, nan: bool, percent: bool):
    """Collective: ``np.<name>`` of distributed ``a`` (``q`` None for the medians)."""
    fn = getattr(np, name)
    A = source(a)
    q = _numpy(q)
    collective.checked(f"np.{name}({{0}})", A, args=(collective.plain(q), collective.plain(axis), str(method),
                                                     keepdims is True))
    median = q is None
    kw = {} if median else {"q": q, "method": method}
    keep = keepdims is True
    if weights is not None:
        if method != "inverted_cdf":
            raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")   # NumPy's
        raise TypeError(f"np.{name} with weights= is not supported on pgas arrays: use A.to_numpy()")
    if A.size == 0:                           # NumPy's answer (or error) whatever the values
        res = _alike(fn, np.empty(A.shape, A.dtype), axis=axis, keepdims=keep, **kw)
        return _into(_distributed(res, len(normalize_axes(axis, A.ndim)) < A.ndim), out)
    probe = _stand_in(fn, A, 0, dict(kw, axis=axis, keepdims=keep))          # NumPy's errors, alike
    axes = normalize_axes(axis, A.ndim)
    if len(axes) < A.ndim:
        qdims = 0 if median else np.ndim(q)
        return _into(_rows(fn, A, axes, qdims, keep, np.asarray(probe).dtype, kw), out)
    res = _flat(fn, A, q, method, nan, percent, kw)
    if keep:
        res = res[(Ellipsis,) + (None,) * A.ndim]
    return _into(res, out)


def _flat(fn, A, q, method, nan: bool, percent: bool, kw):
    """Collective: NumPy's ``fn`` over all elements of ``A``, a NumPy value on every locale."""
    x = A._flat_local
    with np.errstate(all="ignore"):           # no NaN if the sum is not NaN: one fast pass
        floats = A.dtype.kind in "fc" and bool(np.isnan(x.sum()))
    isnan = np.isnan(x) if floats else None
    nans = int(np.count_nonzero(isnan)) if floats else 0
    if nan and nans:
        x = x[~isnan]
    got = comm.allreduce(np.array([len(x), nans], np.int64), "sum")
    n, nans = int(got[0]), int(got[1])
    if (nan and n == 0) or (not nan and nans):         # NumPy's answer whatever the values
        return _alike(fn, np.full((1,) * A.ndim, np.nan, A.dtype), **kw)
    if q is None:
        need = ranks.median_ranks(n)
        return ranks.median(select(x, n, need))
    weak_q = type(q) in (int, float)
    qq = np.true_divide(q, 100, out=...) if percent else np.asanyarray(q)
    need = ranks.needed(n, qq, method)
    return ranks.quantile(n, qq, method, need, select(x, n, need), weak_q)


def _distributed(res, rows: bool):
    """NumPy's result ``res`` (alike on every locale) as the reduction's result: a DistArray
    when kept axes remain."""
    if rows:
        from ..creation.conversion import from_numpy
        return from_numpy(np.asarray(res))
    return res


def _into(res, out):
    """``res``, or ``out`` (a DistArray or NumPy array) holding it (a NumPy ``out`` gets a
    distributed ``res`` gathered: it has the reduced shape)."""
    if out is None:
        return res
    if isinstance(out, np.ndarray) and distributed(res):
        res = source(res).to_numpy()
    out[...] = res
    return out


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Collective on distributed ``a``: NumPy's ``median`` (see the module docstring)."""
    if not distributed(a):
        return np.median(a, axis=axis, out=out, overwrite_input=overwrite_input, keepdims=keepdims)
    return _reduce("median", a, None, axis, out, None, keepdims, None, False, False)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=_NoValue):
    """Collective on distributed ``a``: NumPy's ``nanmedian``."""
    if not distributed(a):
        return np.nanmedian(a, axis=axis, out=out, overwrite_input=overwrite_input, keepdims=keepdims)
    return _reduce("nanmedian", a, None, axis, out, None, keepdims, None, True, False)


def _quantiles(name: str, nan: bool, percent: bool):
    npfn = getattr(np, name)

    def impl(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None):
        if not distributed(a):
            return npfn(a, _numpy(q), axis=axis, out=out, overwrite_input=overwrite_input, method=method,
                        keepdims=keepdims, weights=_numpy(weights))
        return _reduce(name, a, q, axis, out, method, keepdims, weights, nan, percent)
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = f"Collective on distributed ``a``: NumPy's ``{name}`` (see the module docstring)."
    return impl


quantile = _quantiles("quantile", False, False)
nanquantile = _quantiles("nanquantile", True, False)
percentile = _quantiles("percentile", False, True)
nanpercentile = _quantiles("nanpercentile", True, True)

NUMPY_FUNCTIONS = {np.median: median, np.nanmedian: nanmedian, np.quantile: quantile, np.nanquantile: nanquantile,
                   np.percentile: percentile, np.nanpercentile: nanpercentile}

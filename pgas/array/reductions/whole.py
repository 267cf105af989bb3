"""Whole-array reductions: a local NumPy reduction per locale, then one combining reduction
over locales (an MPI reduction tree, in locale order; with collective checking folded, the
partial results ride in the checking's own agreement, combined in locale order by NumPy).  The fast path of ``A.sum()``,
``A.min()``, ... with no axis, keyword or mask (:func:`pgas.array.reductions.axisreduce.reduce`).
"""

from __future__ import annotations

import numpy as np

from ... import comm
from ...exec import fperr
from ...comm import check
from ..collective import checked, ident
from . import threaded


@fperr.agreeing
def reduce_all(a, fn, op: str, axis, dtype, out, what: str | None = None):
    """Reduce all elements of ``a`` with NumPy ``fn`` locally, then combine over locales with ``op``
    (``what``: the method the user called, for collective checking; default ``op``)."""
    shown, args = f"{{0}}.{what or op}()", (str(dtype),)
    folds = check.folding and check.SLOTS
    if not folds:
        checked(shown, a, args=args)
    if axis is not None or out is not None:
        raise NotImplementedError(f"{op} over {a.label}: only whole-array reductions (axis=None, out=None)")
    kw = {} if dtype is None else {"dtype": dtype}
    if op in ("sum", "prod"):
        part = np.asarray(threaded.local(fn, op, a.local, kw))
        if folds and part.ndim == 0 and part.dtype.itemsize <= 16:     # the reduction is the agreement
            parts = check.gather_partials(shown, (ident(a),), args, part, part.dtype)
            with np.errstate(all="ignore"):                           # reported below, as NumPy would
                res = (np.add if op == "sum" else np.multiply).reduce(parts, dtype=part.dtype)
        else:
            if folds:
                checked(shown, a, args=args)
            res = comm.allreduce(part, op)
        if res.dtype.kind in "fc" and not np.all(np.isfinite(res)):      # the same on every locale
            _combined_overflow(part, res.dtype)
        return res
    if a.size == 0:
        if folds:
            checked(shown, a, args=args)
        raise ValueError(f"zero-size {a.label} has no {op}")
    if folds and a.dtype.itemsize <= 16:
        parts = check.gather_partials(shown, (ident(a),), args, threaded.local(fn, op, a.local, {}) if a.local.size else None, a.dtype)
        return fn(parts)
    if folds:
        checked(shown, a, args=args)
    part = np.array([threaded.local(fn, op, a.local, {})] if a.local.size else [], dtype=a.dtype)

    def combine(x, y):                   # min/max are associative; locale order is kept
        return x if not y.size else y if not x.size else np.array([fn(np.concatenate([x, y]))], dtype=x.dtype)
    return fn(comm.allreduce_with(part, combine))


def _combined_overflow(part: np.ndarray, dtype) -> None:
    """Collective, when a whole-array sum or product is not finite: if every locale's
    partial result was, adding or multiplying them overflowed, which NumPy reports
    (``np.errstate(over=...)``): report it alike on every locale, by NumPy itself (an
    overflowing reduction of this dtype).  The MPI reduction itself reports nothing."""
    if comm.allreduce(np.int32(not np.all(np.isfinite(part))), "max"):
        return                                   # a locale's own part: reported where it overflowed
    big = np.finfo(dtype).max
    np.add.reduce(np.array([big, big], dtype=dtype))

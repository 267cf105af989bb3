"""Whole-array reductions: a local NumPy reduction, then one collective."""

from __future__ import annotations

import numpy as np

from .. import comm
from .collective import checked


def reduce_all(a, fn, op: str, axis, dtype, out, what: str | None = None):
    """Reduce all elements of ``a`` with NumPy ``fn`` locally, then combine over locales with ``op``
    (``what``: the method the user called, for collective checking; default ``op``)."""
    checked(f"{{0}}.{what or op}()", a, args=(str(dtype),))
    if axis is not None or out is not None:
        raise NotImplementedError(f"{op} over {a.label}: only whole-array reductions (axis=None, out=None)")
    kw = {} if dtype is None else {"dtype": dtype}
    if op in ("sum", "prod"):
        part = fn(a.local, **kw)
        return comm.allreduce(np.asarray(part), op)
    if a.size == 0:
        raise ValueError(f"zero-size {a.label} has no {op}")
    part = np.array([fn(a.local)] if a.local.size else [], dtype=a.dtype)
    return fn(np.concatenate(comm.allgatherv(part, count=False)))


def _reducer(name: str):
    def fn(a):
        return getattr(a, name)()

    fn.__name__ = name
    fn.__doc__ = f"Collective: ``A.{name}()`` of a distributed array, on every locale."
    return fn


sum = _reducer("sum")  # noqa: A001 - the public name mirrors NumPy
prod = _reducer("prod")
min = _reducer("min")  # noqa: A001
max = _reducer("max")  # noqa: A001
mean = _reducer("mean")

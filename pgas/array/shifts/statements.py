"""Shifts as statements: each shift is one or two slice statements (:func:`statements`),
lowered and planned once per layout, dtype and shifts (:data:`TEMPLATES` cached calls, or a
``pg.pshift_setup`` plan), and run with all their inter-locale data in ONE exchange."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import statements as stmts
from ..collective import exchanging
from ..core import DistArray
from ..view import View, select
from .spec import Spec


def _key(ndim: int, axis: int, lo: int, hi: int) -> tuple:
    return (slice(None),) * axis + (slice(lo, hi),) + (slice(None),) * (ndim - axis - 1)


def statements(A: DistArray, R: DistArray, spec: Spec) -> list:
    """The slice statements ``(target view, value)`` computing ``R = shift(A)``."""
    n, d, ax = A.shape[spec.axis], A.ndim, spec.axis
    whole = select(R, (Ellipsis,), for_write=True)
    if spec.kind == "cshift":
        k = spec.shift % n if n else 0
        if k == 0:
            return [(whole, View.whole(A))]
        return [(select(R, _key(d, ax, 0, n - k), True), select(A, _key(d, ax, k, n))),
                (select(R, _key(d, ax, n - k, n), True), select(A, _key(d, ax, 0, k)))]
    s, b = spec.shift, spec.boundary
    if s == 0:
        return [(whole, View.whole(A))]
    if abs(s) >= n:
        return [(whole, _fit(b, n, ax))]
    if s > 0:
        return [(select(R, _key(d, ax, 0, n - s), True), select(A, _key(d, ax, s, n))),
                (select(R, _key(d, ax, n - s, n), True), _fit(b, s, ax))]
    m = -s
    return [(select(R, _key(d, ax, m, n), True), select(A, _key(d, ax, 0, n - m))),
            (select(R, _key(d, ax, 0, m), True), _fit(b, m, ax))]


def _fit(b, count: int, axis: int):
    """The boundary over ``count`` positions along ``axis`` (views and NumPy arrays have
    extent 1 there and broadcast, as in NumPy)."""
    return b


#: Lowered and planned shifts without a plan (``pg.cshift``, ``pg.eoshift``, ``pg.pshift``,
#: ``np.roll``), per (layout, dtype, shifts): a repeated call neither lowers nor plans.
#: The entries hold stand-ins (no storage), never the arrays.  Bounded; the same calls
#: happen on every locale, so every locale holds the same keys.
_templates: OrderedDict = OrderedDict()
TEMPLATES = 256


def _template_key(A: DistArray, specs: list):
    """The cache key of a shift call, or None if a boundary is distributed (then it is
    lowered every call).  Scalars and NumPy boundaries enter by their bytes (so -0.0 and
    0.0, or two NaNs, are told apart exactly)."""
    out = []
    for s in specs:
        b = s.boundary
        if isinstance(b, View):
            return None
        if s.kind == "eoshift":
            arr = np.asarray(b)
            b = (arr.shape, arr.dtype.str, arr.tobytes())
        out.append((s.kind, s.shift, s.axis, b))
    return (A.layout.key, A.dtype.str, tuple(out))


def run(A: DistArray, specs: list, outs: list, header: str) -> None:
    """Collective: every shift of ``specs`` from ``A`` into ``outs``, one exchange."""
    key = _template_key(A, specs)
    if key is None:
        pairs = [p for spec, R in zip(specs, outs) for p in statements(A, R, spec)]
        exchanging(header + "({0})", A, args=tuple(s.key() for s in specs))
        stmts.run_group(pairs, header)
        return
    exchanging(header + "({0})", A, args=tuple(s.key() for s in specs))
    hit = _templates.get(key)
    if hit is None:
        src = _Proto(A, 0)
        src.name, src.label = A.name, A.label
        dests, items = setup_plans(src, specs)
        hit = _templates[key] = (src, dests, items, stmts.compile_group(items, keep=False))
        if len(_templates) > TEMPLATES:
            _templates.popitem(last=False)[1][3].free()
    else:
        _templates.move_to_end(key)
    src, dests, items, fast = hit
    rebind = {id(src): A, **{id(d): R for d, R in zip(dests, outs)}}
    stmts.run_planned(items, rebind, header, fast)


class _Proto:
    """A stand-in destination (metadata only, no storage) for planning at setup."""

    def __init__(self, A, k: int) -> None:
        self.layout, self.dtype, self.name = A.layout, A.dtype, f"R{k}"
        self.shape, self.ndim, self.label = A.shape, A.ndim, f"destination {k}"


def setup_plans(A: DistArray, specs: list) -> tuple[list, list]:
    """The stand-in destinations and this locale's lowered, planned statements of
    ``specs`` (pure: no communication)."""
    protos = [_Proto(A, k) for k in range(len(specs))]
    pairs = [p for R, spec in zip(protos, specs) for p in statements(A, R, spec)]
    return protos, stmts.plan_group(pairs)

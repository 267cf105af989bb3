"""Shifts as statements: each shift is one or two slice statements (:func:`statements`),
lowered and planned once per layout, dtype and shifts (:data:`TEMPLATES` cached calls, or a
``pg.pshift_setup`` plan), and run with all their inter-locale data in ONE exchange."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ...exec import settings
from ...exec.group import fits, groupable
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
#: ``np.roll``), per (sources' layouts and dtypes, shifts): a repeated call neither lowers
#: nor plans.  The entries hold stand-ins (no storage), never the arrays.  Bounded; the
#: same calls happen on every locale, so every locale holds the same keys.
_templates: OrderedDict = OrderedDict()
TEMPLATES = 256


def _template_key(srcs: list, specs: list):
    """The cache key of a shift call (``specs``: one list per source), or None if a boundary
    is distributed (then it is lowered every call).  Scalars and NumPy boundaries enter by
    their bytes (so -0.0 and 0.0, or two NaNs, are told apart exactly)."""
    out = []
    for S, row in zip(srcs, specs):
        keys = []
        for s in row:
            b = s.boundary
            if isinstance(b, View):
                return None
            if s.kind == "eoshift":
                arr = np.asarray(b)
                b = (arr.shape, arr.dtype.str, arr.tobytes())
            keys.append((s.kind, s.shift, s.axis, b))
        out.append((S.layout.key, S.dtype.str, tuple(keys)))
    return tuple(out)


def checked(header: str, srcs: list, specs: list, outs: list) -> None:
    """The call check of a shift call (errors alike everywhere): its sources, shifts and
    which destinations are sources."""
    place = {id(S): k for k, S in enumerate(srcs)}
    inplace = tuple(place.get(id(R), -1) for row in outs for R in row)
    names = ", ".join(f"{{{k}}}" for k in range(len(srcs)))
    exchanging(f"{header}({names})", *srcs, args=(tuple(s.key() for row in specs for s in row), inplace))


def run(srcs: list, specs: list, outs: list, header: str) -> None:
    """Collective: every shift of ``specs[i]`` from ``srcs[i]`` into ``outs[i]``, one exchange."""
    checked(header, srcs, specs, outs)
    key = _template_key(srcs, specs)
    if key is None:
        srcs = _unaliased(srcs, outs, None)
        pairs = [p for S, row, out in zip(srcs, specs, outs) for spec, R in zip(row, out)
                 for p in statements(S, R, spec)]
        stmts.run_group(pairs, header)
        return
    hit = _templates.get(key)
    if hit is None:
        protos = []
        for k, S in enumerate(srcs):
            src = _Proto(S, k)
            src.name, src.label = S.name, S.label
            protos.append(src)
        dests, items = setup_plans(protos, specs)
        hit = _templates[key] = (protos, dests, items, stmts.compile_group(items, keep=False))
        if len(_templates) > TEMPLATES:
            _templates.popitem(last=False)[1][3].free()
    else:
        _templates.move_to_end(key)
    protos, dests, items, fast = hit
    run_bound(items, fast, protos, dests, srcs, outs, header)


def run_bound(items, fast, protos: list, dests: list, srcs: list, outs: list, header: str) -> None:
    """Run planned shifts ``items`` (planned with stand-ins ``protos`` and ``dests``) on
    ``srcs`` into ``outs``.  A destination that is a source is written in place where the
    group runs in one exchange (every value read before any is stored); otherwise (baseline
    mode, buffers over the limit) its source is copied first."""
    srcs = _unaliased(srcs, outs, items)
    rebind = {id(p): S for p, S in zip(protos, srcs)}
    rebind.update((id(d), R) for drow, row in zip(dests, outs) for d, R in zip(drow, row))
    stmts.run_planned(items, rebind, header, fast)


def _unaliased(srcs: list, outs: list, items) -> list:
    """``srcs``, each one that is also a destination replaced by a copy where the shifts
    will not run in one exchange (``items`` None: not known, so always)."""
    written = {id(R) for row in outs for R in row}
    if not any(id(S) in written for S in srcs):
        return srcs
    if items is not None and settings.get("aggregate") and all(groupable(p) for _, p in items) and fits(items):
        return srcs
    return [S.copy() if id(S) in written else S for S in srcs]


class _Proto:
    """A stand-in destination (metadata only, no storage) for planning at setup."""

    def __init__(self, A, k: int) -> None:
        self.layout, self.dtype, self.name = A.layout, A.dtype, f"R{k}"
        self.shape, self.ndim, self.label = A.shape, A.ndim, f"destination {k}"


def setup_plans(srcs: list, specs: list) -> tuple[list, list]:
    """The stand-in destinations (one list per source) and this locale's lowered, planned
    statements of ``specs`` (one list per source; pure: no communication)."""
    dests, pairs, n = [], [], 0
    for S, row in zip(srcs, specs):
        drow = []
        for spec in row:
            R = _Proto(S, n)
            n += 1
            drow.append(R)
            pairs.extend(statements(S, R, spec))
        dests.append(drow)
    return dests, stmts.plan_group(pairs)

"""The statement engine the array layer calls: assign, materialise, forall, explain."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..array import collective, engine
from ..array.construct import empty
from ..array.expr import Affine, Expr, Ref, TraceError, probe
from ..array.view import View
from ..layout import Distribution
from ..plan import PlanError, describe, plan, var_names
from . import settings
from .lower import lower_ref, lower_view
from .run import REDUCE_WITH, accumulable, run

_explaining: list = []


class Executor:
    """Plans and runs statements for :mod:`pgas.array.engine`."""

    def assign(self, target: View, value, casting: str) -> None:
        collective.statement(target, value, not _explaining)     # call check; errors on every locale
        if casting == "same_kind" and isinstance(value, Expr):
            value.func(*[probe(a) for a in value.args], out=np.empty(0, target.dtype), **value.kwargs)
        engine.before_write(target.base, value)
        execute(lower_view(target, value))

    def materialise(self, x, dtype=None):
        collective.materialise(x, not _explaining)
        shape = x.shape
        if not shape:
            raise ValueError("a 0-dimensional expression cannot be a DistArray: read elements with A[i, j]")
        first = next((leaf.base for leaf in _leaves(x) if isinstance(leaf, View)), None)
        out = empty(shape, x.dtype if dtype is None else dtype, _like(first, len(shape)))
        execute(lower_view(View.whole(out), x))
        return out


def _leaves(x):
    return x.leaves() if isinstance(x, Expr) else [x]


def _like(base, ndim: int) -> Distribution:
    """The distribution of a result of ``ndim`` dims made from ``base``: same kind,
    same grid when the dims agree, else the default grid."""
    d = base.layout.dist
    if base.ndim == ndim:
        return dataclasses.replace(d, grid=base.layout.grid)
    block = d.block
    if block is not None and len(block) not in (1, ndim):
        block = (block[0],)
    return dataclasses.replace(d, block=block, grid=None)


def execute(low) -> None:
    """Plan (cached) and run one lowered statement, or describe it under :func:`explain`."""
    if low.stmt.size == 0:
        return
    layouts = tuple(a.layout for a in low.arrays)
    if _explaining:
        P = _explaining[-1][0]
        if P is not None:
            layouts = tuple(_rebind(L, P) for L in layouts)
    owner = settings.get("owner")
    wdtype = low.arrays[low.stmt.accesses[low.stmt.write].slot].dtype
    if low.stmt.reduced_vars and not accumulable(low.stmt.reduce, wdtype):
        owner = "write"                       # no MPI accumulate op for this reduction and dtype
    try:
        p = plan(low.stmt, layouts, owner)
    except PlanError as e:
        raise IndexError(f"{describe_statement(low)}: {e}") from None
    if _explaining:
        _explaining[-1][1].append(describe(p, low.names))
        return
    run(low, p, settings.get("aggregate"))


def describe_statement(low) -> str:
    """``statement X0[i, j] = ... (X0 = <array label>, ...)`` for error messages."""
    s = low.stmt
    w = s.accesses[s.write]
    arrays = ", ".join(f"{n} = {a.label}" for n, a in zip(low.names, low.arrays))
    return f"statement {w.text(low.names[w.slot], var_names(s.nvars))} = ... ({arrays})"


def _rebind(L, P: int):
    d = L.dist
    if d.grid is not None and math.prod(d.grid) != P:
        d = dataclasses.replace(d, grid=None)
    return d.bind(L.shape, P)


def explain(fn, locales: int | None = None) -> str:
    """The plans the statements in ``fn()`` would make, as text, without running them.

    ``fn`` is called once; each statement it issues (slice assignment, in-place
    operator, ``pg.forall``) is planned and described instead of executed.
    With ``locales=N`` the arrays' distributions are re-bound to N locales (the
    planner is pure, so any N works in one process).  Collective when ``fn``
    makes collective calls (creating arrays, scalar reads).

    >>> print(pg.explain(lambda: A.__setitem__(slice(1, None), A[:-1]), locales=1024))  # doctest: +SKIP
    """
    _explaining.append((locales, []))
    try:
        fn()
    finally:
        _, texts = _explaining.pop()
    return "\n\n".join(texts) if texts else "(no statements)"


# -- forall ------------------------------------------------------------------
class _Tracer:
    def __init__(self) -> None:
        self.records: list = []

    def record(self, target: Ref, value, uf, other) -> None:
        self.records.append((target, value, uf, other))


def _domain(domain) -> tuple[range, ...]:
    items = domain if isinstance(domain, tuple) else (domain,)
    out = []
    for r in items:
        if isinstance(r, (int, np.integer)):
            r = range(int(r))
        if not isinstance(r, range):
            raise TypeError(f"pg.forall: the domain must be a range or a tuple of ranges, got {r!r}")
        out.append(r)
    return tuple(out)


def forall(domain, body) -> None:
    """Collective: run ``body(i, j, ...)`` over every point of ``domain`` (a ``range``
    or a tuple of ranges) as aggregated owner-computes statements.

    ``body`` is called ONCE with symbolic loop variables; each assignment it
    makes through affine subscripts (``A[2*i + 1, j - 1] = B[i, j] * 0.5``)
    becomes one statement over the whole domain, run in the order written
    (the right side read in full before its left side is written).  A write
    whose subscripts omit a loop variable reduces over it:
    ``D[i, j] += A[i, k] * B[k, j]`` over ``(i, j, k)`` is a matrix product.
    Python ``if`` on loop variables, non-affine subscripts (``A[i*j]``) and
    the like raise :class:`~pgas.array.expr.TraceError` naming what to write.
    """
    dom = _domain(domain)
    m = len(dom)
    tracer = _Tracer()
    engine.trace_push(tracer)
    try:
        body(*[Affine([int(v == w) for w in range(m)]) for v in range(m)])
    finally:
        engine.trace_pop()
    collective.forall(dom, body, tracer.records)
    for target, value, uf, other in tracer.records:
        _run_record(dom, target, value, uf, other)


def _run_record(dom, target: Ref, value, uf, other) -> None:
    m = len(dom)
    cols = [any(len(row) > v and row[v] for row in target.M) for v in range(m)]
    label = target.base.label
    if uf is not None:
        value.func(*[probe(a) for a in value.args], out=np.empty(0, target.dtype), **value.kwargs)
    separable = all(sum(1 for a in row if a) <= 1 for row in target.M)
    if all(cols) and (separable or uf is None or other is None or uf.__name__ not in REDUCE_WITH):
        engine.before_write(target.base, value)          # each iteration writes its own element
        execute(lower_ref(dom, target, value, None))
        return
    if uf is None or other is None or uf.__name__ not in REDUCE_WITH:
        missing = ", ".join("ijklmnpq"[v] if v < 8 else f"i{v}" for v in range(m) if not cols[v])
        raise TraceError(f"the write to {label} does not use loop variable(s) {missing}: to reduce over them "
                         "write A[...] += expr (or -=, *=, |=, &=, ^=, or np.minimum/np.maximum(A[...], expr, "
                         "out=A[...])); a plain = would overwrite the same element many times")
    engine.before_write(target.base, value)
    execute(lower_ref(dom, target, other, uf.__name__))


"""Python conditionals in a ``pg.forall`` body: every path traced, each statement run where
its branch is taken.

A Python ``if`` (``and``, ``or``, ``not``, ``elif``, a conditional expression) on a
traced condition (``i > 0``, ``i == j``, ``A[i, j] > 0``) asks the tracer which way to
go (:func:`pgas.array.engine.decide`).  :func:`trace` runs the body once per path
through its conditions: the first run takes every branch, each later run forces
the decisions of a path seen so far and then flips one.  Every assignment is
recorded with the decisions made before it; the same assignment (same source line,
same structure, same occurrence) recorded on several paths is one statement whose
condition is the union of those paths' decisions, simplified where a condition and
its negation both hold it (``if c: X / else: Y`` then ``Z`` runs ``Z`` everywhere),
and the statements run in an order that keeps every path's order.  (Where the paths
order the same assignments differently, nothing is shared: each path's assignments
run under its own decisions, path after path.)

Each statement's decisions are then split (:func:`split`): a comparison of affine
functions of the loop variables (``i > 0``, ``i + j < n``, ``i == j``) narrows the
domain (:func:`narrow`: the variable it bounds gets a range computed from the outer
ones), so its accesses are planned and aggregated as for any domain, and a guarded
``A[i - 1]`` is never read at ``i = 0``; any other condition (``A[i] > 0``,
``i != j``, ``i % 2 == 0``) is a mask, under which the statement writes
``where(mask, value, old)`` (or reduces ``where(mask, value, identity)``).
"""

from __future__ import annotations

import inspect
import math
import os
import sys

import numpy as np

from .expr import Affine, Expr, TraceError

#: Paths through a forall body's conditions traced at most (each is one run of the body).
MAX_PATHS = 256

#: Decisions on traced conditions one run of the body makes at most (a ``while`` has no bound).
MAX_DECISIONS = 64

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _site():
    """The source line of the user's code that made the current assignment."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        f = f.f_back
    return None if f is None else (f.f_code.co_filename, f.f_lineno, f.f_lasti)


class Tracer:
    """Records a forall body's assignments, one run per path (see the module docstring)."""

    def __init__(self) -> None:
        self.forced: tuple = ()
        self.decisions: list = []          # (condition, bool) made so far in this run
        self.runs: list = []               # per run: [(record, errstate, decisions, site)]
        self.current: list = []

    def decide(self, cond) -> bool:
        k = len(self.decisions)
        if k >= MAX_DECISIONS:
            raise TraceError(f"one path through the forall body makes more than {MAX_DECISIONS} decisions on traced "
                             "conditions: a Python `while` on a loop variable or an array element cannot be "
                             "traced (it has no bound); loop over a Python range, or write the condition as "
                             "pg.where(cond, x, y)")
        value = self.forced[k] if k < len(self.forced) else True
        self.decisions.append((cond, value))
        return value

    def record(self, target, value, uf, other) -> None:
        self.current.append(((target, value, uf, other), (np.geterr(), np.geterrcall()), tuple(self.decisions),
                             _site()))


def trace(body, m: int, push, pop) -> Tracer:
    """Run ``body`` once per path through its conditions with ``m`` symbolic loop variables."""
    tracer = Tracer()
    todo = [()]
    while todo:
        if len(tracer.runs) >= MAX_PATHS:
            raise TraceError(f"the forall body has more than {MAX_PATHS} paths through its conditions: split it "
                             "into several foralls, or write some conditions as pg.where(cond, x, y)")
        tracer.forced, tracer.decisions, tracer.current = todo.pop(), [], []
        push(tracer)
        try:
            body(*[Affine([int(v == w) for w in range(m)]) for v in range(m)])
        finally:
            pop()
        made = tuple(b for _, b in tracer.decisions)
        for k in range(len(made) - 1, len(tracer.forced) - 1, -1):
            todo.append(made[:k] + (False,))
        tracer.runs.append(tracer.current)
    return tracer


def statements(tracer: Tracer, key) -> list:
    """The body's statements in execution order: ``[(record, errstate, decisions), ...]``,
    a statement under several disjoint conditions appearing once per condition.
    ``key(record)`` is a hashable structure of a record, or None if it has none."""
    if len(tracer.runs) == 1:          # no condition: the records as made
        return [(rec, state, decisions) for rec, state, decisions, _ in tracer.runs[0]]
    units: dict = {}                   # identity -> {path bools: (record, errstate, decisions)}
    order: dict = {}                   # identity -> identities that must come after it
    first: dict = {}
    opaque = set()
    for run in tracer.runs:
        seen: dict = {}
        prev = None
        for rec, state, decisions, site in run:
            k = key(rec)
            base = (site, k if k is not None else ("opaque", id(rec)))
            occ = seen.get(base, 0)
            seen[base] = occ + 1
            ident = (base, occ)
            if k is None:
                opaque.add(ident)
            bools = tuple(b for _, b in decisions)
            units.setdefault(ident, {}).setdefault(bools, (rec, state, decisions))
            first.setdefault(ident, len(first))
            order.setdefault(ident, set())
            if prev is not None:
                order[prev].add(ident)
            prev = ident
    ordered = _topological(order, first)
    if ordered is None:
        return _unmerged(tracer)
    out = []
    for ident in ordered:
        paths = units[ident] if ident in opaque else _merge(units[ident])
        for bools in sorted(paths):
            out.append(paths[bools])
    return out


def _unmerged(tracer: Tracer) -> list:
    """Every path's assignments once each, path after path (each path in its own order): where
    the paths' orders of the same assignments disagree, no statement is shared between paths."""
    out, done = [], set()
    for run in tracer.runs:
        count: dict = {}
        for rec, state, decisions, _ in run:
            bools = tuple(b for _, b in decisions)
            k = count.get(bools, 0)
            count[bools] = k + 1
            if (bools, k) not in done:
                done.add((bools, k))
                out.append((rec, state, decisions))
    return out


def _merge(paths: dict) -> dict:
    """``paths`` with every pair ``p + (True,)``, ``p + (False,)`` replaced by ``p`` (the
    statement holds under both branches of the condition after ``p``)."""
    paths = dict(paths)
    changed = True
    while changed:
        changed = False
        for bools in sorted(paths, key=len, reverse=True):
            if not bools or bools not in paths:
                continue
            twin = bools[:-1] + (not bools[-1],)
            if twin in paths:
                rec, state, decisions = paths.pop(bools)
                paths.pop(twin)
                paths[bools[:-1]] = (rec, state, decisions[:-1])
                changed = True
    return paths


def _topological(after: dict, first: dict):
    """The identities in an order that keeps every run's order (ties: first seen first), or
    None if the runs' orders disagree."""
    indeg = {k: 0 for k in after}
    for k, nxt in after.items():
        for x in nxt:
            indeg[x] += 1
    ready = sorted((k for k, d in indeg.items() if not d), key=first.__getitem__)
    out = []
    while ready:
        k = ready.pop(0)
        out.append(k)
        for x in after[k]:
            indeg[x] -= 1
            if not indeg[x]:
                ready.append(x)
        ready.sort(key=first.__getitem__)
    return out if len(out) == len(after) else None


# -- conditions ----------------------------------------------------------------
_FLIP = {"less": "greater_equal", "less_equal": "greater", "greater": "less_equal", "greater_equal": "less",
         "equal": "not_equal", "not_equal": "equal"}


def _affine_comparison(cond):
    """``(name, difference)`` for ``cond`` a comparison of two affine functions of the loop
    variables (``difference`` the left minus the right side, an :class:`Affine`), else None."""
    if not isinstance(cond, Expr) or cond.kwargs or len(cond.args) != 2:
        return None
    name = getattr(cond.func, "__name__", "")
    if name not in _FLIP:
        return None
    a, b = cond.args
    if not any(isinstance(x, Affine) for x in (a, b)):
        return None
    for x in (a, b):
        if not (isinstance(x, Affine) or (isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)))):
            return None
    left = a if isinstance(a, Affine) else Affine((0,) * len(b.coefs), a)
    return name, left - b


def split(decisions, m: int):
    """``(alternatives, masks)`` of a statement's decisions: ``alternatives`` are disjoint sets
    of constraints ``(coefs, const)`` (``coefs @ x + const >= 0``) from the affine
    comparisons (``i != j`` is two: ``i > j`` or ``i < j``; none where one can never hold),
    ``masks`` the other conditions as traced boolean expressions."""
    alts, masks = [[]], []
    for cond, taken in decisions:
        got = _affine_comparison(cond)
        if got is None:
            masks.append(cond if taken else Expr(np.logical_not, [cond]))
            continue
        name, d = got
        if not taken:
            name = _FLIP[name]
        coefs = tuple(d.coefs) + (0,) * (m - len(d.coefs))
        neg = tuple(-a for a in coefs)
        choices = {"greater_equal": [[(coefs, d.const)]], "greater": [[(coefs, d.const - 1)]],
                   "less_equal": [[(neg, -d.const)]], "less": [[(neg, -d.const - 1)]],
                   "equal": [[(coefs, d.const), (neg, -d.const)]],
                   "not_equal": [[(coefs, d.const - 1)], [(neg, -d.const - 1)]]}[name]
        new = []
        for base in alts:
            for choice in choices:
                cons = list(base)
                for c in choice:
                    if any(c[0]):
                        cons.append(c)
                    elif c[1] < 0:              # a constant condition that never holds
                        break
                else:
                    new.append(cons)
        alts = new
    return alts, masks


def narrow(items: tuple, cons: list) -> tuple:
    """The domain ``items`` (as :func:`pgas.exec.domain.resolve` takes them) cut by the
    constraints ``cons``: each bounds its last variable with a non-zero coefficient, whose
    range becomes a callable of the variables before it (a plain range when it bounds it
    by a constant)."""
    by_var: dict = {}
    for coefs, const in cons:
        v = max(k for k, a in enumerate(coefs) if a)
        by_var.setdefault(v, []).append((coefs, const))
    out = list(items)
    for v, cs in by_var.items():
        item = items[v]
        outer = callable(item) or any(any(coefs[:v]) for coefs, _ in cs)
        if not outer:
            r = item if isinstance(item, range) else range(int(item))
            out[v] = _cut(r, v, cs, ())
        else:
            out[v] = _Bounded(item, v, cs)
    return tuple(out)


def _cut(r: range, v: int, cs, xs) -> range:
    """The elements ``x`` of range ``r`` with ``coefs[:v] @ xs + coefs[v] * x + const >= 0`` for each constraint."""
    lo, hi = -math.inf, math.inf
    for coefs, const in cs:
        rest = const + sum(a * x for a, x in zip(coefs[:v], xs))
        a = coefs[v]
        if a > 0:
            lo = max(lo, -((rest) // a))             # x >= ceil(-rest / a)
        else:
            hi = min(hi, rest // (-a))               # x <= floor(rest / -a)
    if r.step > 0:
        first = r.start if lo == -math.inf or lo <= r.start else r.start + -((r.start - lo) // r.step) * r.step
        stop = r.stop if hi == math.inf else min(r.stop, hi + 1)
        return range(first, max(first, stop), r.step)
    first = r.start if hi == math.inf or hi >= r.start else r.start + ((hi - r.start) // -r.step) * -r.step
    stop = r.stop if lo == -math.inf else max(r.stop, lo - 1)
    return range(first, min(first, stop), r.step)


class _Bounded:
    """A range callable of the first ``v`` loop variables: ``item``'s range cut by ``cs``."""

    def __init__(self, item, v: int, cs) -> None:
        self.item, self.v, self.cs = item, v, cs
        self.k = None
        if callable(item):
            ps = [p for p in inspect.signature(item).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
            self.k = len(ps)
        self.__signature__ = inspect.Signature([inspect.Parameter(f"x{u}", inspect.Parameter.POSITIONAL_ONLY)
                                                for u in range(v)])

    def __call__(self, *xs):
        if self.k is None:
            r = self.item if isinstance(self.item, range) else range(int(self.item))
        else:
            r = self.item(*xs[:self.k])
            r = r if isinstance(r, range) else range(int(r))
        return _cut(r, self.v, self.cs, xs)


# -- masks ---------------------------------------------------------------------
def mask_of(masks):
    """The conjunction of traced boolean conditions ``masks`` (None if there are none)."""
    out = None
    for c in masks:
        c = c if getattr(c, "dtype", None) == np.bool_ else Expr(np.not_equal, [c, 0])
        out = c if out is None else Expr(np.logical_and, [out, c])
    return out


def identity(reducer, dtype):
    """The value that leaves a reduction by ufunc ``reducer`` unchanged, in ``dtype``."""
    dtype = np.dtype(dtype)
    name = reducer.__name__
    if name in ("add", "bitwise_or", "bitwise_xor", "logical_or"):
        return dtype.type(0)
    if name in ("multiply", "logical_and"):
        return dtype.type(1)
    if name == "bitwise_and":
        return dtype.type(True) if dtype.kind == "b" else dtype.type(-1) if dtype.kind == "i" else ~dtype.type(0)
    big = name in ("minimum", "fmin")
    if dtype.kind == "f":
        return dtype.type(np.inf if big else -np.inf)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype.type(info.max if big else info.min)
    if dtype.kind == "b":
        return dtype.type(big)
    raise TraceError(f"a {name} reduction of {dtype} values under a condition has no identity to fill with")

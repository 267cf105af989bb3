"""The statement engine the array layer calls: assign, materialise, forall, explain."""

from __future__ import annotations

import dataclasses
import math
from collections import OrderedDict

import numpy as np

from .. import comm
from ..array import collective, engine, fperr
from ..comm import check
from ..array.construct import empty
from ..array.expr import Affine, Expr, Ref, TraceError, probe
from ..array.view import View
from ..plan import PlanError, candidates, choose, describe, plan_local, var_names
from . import ghostread, persistent, settings, strip, transfer
from .domain import resolve
from .group import fits, groupable, run_together
from .lower import Lowered, lower_ref, lower_view, structure
from .run import compute_tasks, run
from .shiftgroup import ShiftGroup
from .tasks import REDUCE_WITH
from .writeback import accumulable, write_results

_explaining: list = []


#: The result dtype of an expression (:func:`pgas.array.expr.probe`, which also raises
#: NumPy's errors), and whether it has an integer power whose exponent's data must be
#: checked (:func:`pgas.array.collective.power_data`), by its statement's structure
#: (:func:`pgas.exec.lower.structure`) and its arrays' dtypes, which determine both: a
#: repeated statement is probed once.
_probed: dict = {}
PROBE_CACHE = 1024


class Executor:
    """Plans and runs statements for :mod:`pgas.array.engine`."""

    def assign(self, target: View, value, casting: str) -> None:
        known = structure(target, value)
        again = rkey = None
        fill = False
        if known is not None and not _explaining and casting == "unsafe":
            rkey = known[0]
            fill = isinstance(value, np.generic)       # a scalar of the target's dtype (engine.assign):
            if fill:                                   # recorded by dtype, not value (fict[t] every step)
                rkey = (*rkey[:3], "fill", value.dtype)
            again = persistent.replayable(rkey, known[1])
            if (again is not None and again.fs is not None and not check.enabled and not fperr.numpy_only
                    and not fperr.raising()):
                before_write(target.base, value)      # a repeat on the same arrays, as it ran before
                persistent.rerun(again, known[1], compute_tasks, write_results, value if fill else None)
                return
        dkey = hit = None
        if known is not None and type(value) is Expr and value._dtype is None:
            dkey = (known[0], tuple([a.dtype for a in known[1]]))
            hit = _probed.get(dkey)                   # None: probed below
            if hit is not None:
                value._dtype = hit[0]
                dkey = None                           # known: nothing to remember
        # call check; errors on every locale (an integer power's exponent data only where the structure has one)
        powers = collective.statement(target, value, not _explaining, hit is None or hit[1])
        if dkey is not None:
            if len(_probed) >= PROBE_CACHE:
                del _probed[next(iter(_probed))]
            _probed[dkey] = (value._dtype, powers)
        if casting == "same_kind" and isinstance(value, Expr):
            value.func(*[probe(a) for a in value.args], out=np.empty(0, target.dtype), **value.kwargs)
        before_write(target.base, value)
        low = lower_view(target, value, known)
        persistent.ran[0] = None                       # set if it runs by two-sided transfers
        fperr.run(execute, low, not _explaining)   # np.errstate raise: every locale
        if again is None and rkey is not None and not powers and not check.enabled and (
                not fill or low.prog[0] == "const"):
            persistent.record(rkey, low, _policy(low) == "write")   # (a cost owner: chosen by agreement)

    def materialise(self, x, dtype=None):
        collective.materialise(x, not _explaining)
        shape = x.shape
        if not shape:
            raise ValueError("a 0-dimensional expression cannot be a DistArray: read elements with A[i, j]")
        first = next((leaf.base for leaf in _leaves(x) if isinstance(leaf, View)), None)
        out = empty(shape, x.dtype if dtype is None else dtype, first.layout.like(len(shape)))
        fperr.run(execute, lower_view(View.whole(out), x), not _explaining)
        return out


    def plan_group(self, pairs) -> list:
        """The statements ``pairs`` lowered, with this locale's plans (pure: nothing runs),
        for :meth:`run_planned`."""
        items = []
        for t, v in pairs:
            low = lower_view(t, v)
            if low.stmt.size:
                layouts = tuple(a.layout for a in low.arrays)
                items.append((low, plan_local(low.stmt, layouts, low.stmt.write, comm.here())))
        return items

    def compile_group(self, items, keep: bool = True):
        """:meth:`plan_group`'s items compiled for repeated :meth:`run_planned` calls
        (:class:`pgas.exec.shiftgroup.ShiftGroup`; free it with its ``free()``)."""
        return ShiftGroup(items, keep)

    def rerun(self, fast, arrays) -> bool:
        """Run compiled group ``fast`` again on ``arrays`` (in its ``keys`` order) if they are
        the arrays of its last run (:meth:`ShiftGroup.rerun_arrays`); False, with nothing
        done, where the call needs :meth:`run_planned`."""
        return not _explaining and bool(settings.get("aggregate")) and fast.rerun_arrays(arrays)

    def run_planned(self, items, rebind: dict, header: str = "", fast=None) -> None:
        """Run :meth:`plan_group`'s statements again with each array ``a`` replaced by
        ``rebind[id(a)]`` (arrays of the same layouts: the plans stay valid), with one
        exchange and no lowering or planning.  ``fast``: the items compiled for repeated
        runs (:class:`pgas.exec.shiftgroup.ShiftGroup`), used where it qualifies."""
        if (fast is not None and not _explaining and settings.get("aggregate") and not fperr.raising()
                and fast.rerun(rebind)):
            return                                    # the same arrays as the last run: its views
        lows = [(Lowered(low.stmt, [rebind.get(id(a), a) for a in low.arrays], low.prog, low.names), p)
                for low, p in items]
        if _explaining:
            head = f"{header}: {len(lows)} statements, their transfers in one exchange"
            if fast is not None and settings.get("aggregate") and _explaining[-1][0] in (None, comm.num_locales()):
                head += "\n" + fast.describe()             # this job's compiled group, on this locale
            _explaining[-1][1].append(head)
            for low, _ in lows:
                execute(low)
            return
        written = {}
        for low, _ in lows:
            w = low.arrays[low.stmt.accesses[low.stmt.write].slot]
            written[id(w)] = w
        for w in written.values():
            before_write(w, None)
        fperr.run(_run_planned, (lows, fast))        # np.errstate raise (an end-off boundary's cast): every locale

    def run_group(self, pairs, header: str = "") -> None:
        """Run statements ``[(target view, value), ...]`` whose targets are distinct and
        read by none of them, with one exchange (:func:`pgas.exec.group.run_together`);
        each runs on the owner of its write.  Under :func:`explain`, describes each."""
        for target, value in pairs:
            collective.statement(target, value, not _explaining)
        for target, value in pairs:
            before_write(target.base, value)
        lows = [lower_view(t, v) for t, v in pairs]
        if _explaining:
            _explaining[-1][1].append(f"{header}: {len(lows)} statements, their transfers in one exchange")
            for low in lows:
                execute(low)
            return
        lows = [low for low in lows if low.stmt.size]
        here = comm.here()
        items = [(low, plan_local(low.stmt, tuple(a.layout for a in low.arrays), low.stmt.write, here))
                 for low in lows]
        fperr.run(_run_planned, (items, None))       # np.errstate raise (an end-off boundary's cast): every locale


def _run_planned(arg) -> None:
    """Planned statements ``[(low, plan), ...]`` with one exchange where they fit, by
    compiled group ``fast`` where it qualifies (not while NumPy's errors are reported,
    :data:`pgas.array.fperr.numpy_only`: its kernels report none, rev24)."""
    lows, fast = arg
    aggregate = settings.get("aggregate")
    bounded = fits(lows)                          # else statement by statement, each within the limit
    if fast is not None and aggregate and bounded and not fperr.numpy_only and fast.run(lows):
        return
    if aggregate and all(groupable(p) for _, p in lows) and bounded:
        run_together(lows)
    else:
        for low, p in lows:
            run(low, p, aggregate)


def _leaves(x):
    return x.leaves() if isinstance(x, Expr) else [x]


def before_write(base, value) -> None:
    """Materialise the pending expressions that read ``base`` (not while explaining:
    explaining runs nothing)."""
    if not _explaining:
        engine.before_write(base, value)


def execute(low) -> None:
    """Plan this locale's part (cached) and run one lowered statement, or describe it
    under :func:`explain`."""
    if low.stmt.size == 0:
        return
    layouts = tuple(a.layout for a in low.arrays)
    if _explaining:
        P, texts, at, seen = _explaining[-1]
        if P is not None:
            layouts = tuple(_rebind(L, P) for L in layouts)
        texts.append(_describe(low, layouts, at))
        seen.append((low, layouts, _policy(low)))
        return
    try:
        own = _owner(low, layouts)
        p = plan_local(low.stmt, layouts, own, comm.here())
    except PlanError as e:
        raise IndexError(f"{describe_statement(low)}: {e}") from None
    run(low, p, settings.get("aggregate"))


def _policy(low) -> str:
    owner = settings.get("owner")
    wdtype = low.arrays[low.stmt.accesses[low.stmt.write].slot].dtype
    if low.stmt.reduced_vars and not accumulable(low.stmt.reduce, wdtype):
        owner = "write"                       # no MPI accumulate op for this reduction and dtype
    return owner


class _Choices(OrderedDict):
    """:data:`_choices`: emptying it also forgets :data:`_last`."""

    def clear(self) -> None:
        _last.clear()
        super().clear()


#: The owning access chosen by cost, per statement structure (bounded; every locale
#: runs the same statements, so the cache holds the same keys everywhere).
_choices: OrderedDict = _Choices()
CHOICE_CACHE = 1024


def _owner(low, layouts) -> int:
    """The owning access: the write, or with ``owner="cost"`` the candidate that moves
    least over all locales, agreed by one small reduction the first time the
    statement runs (each locale adds its own plan's cost, and a hash of its
    planning settings, so that locales whose settings differ all raise)."""
    policy = _policy(low)
    if policy == "write":
        return low.stmt.write                               # the only candidate
    fp = settings.fingerprint()
    last = _last.get(id(low.stmt))                          # this statement object's last choice, by identity
    if (last is not None and last[0] is low.stmt and last[2] == policy and last[3] == fp
            and len(last[1]) == len(layouts) and all(a is b for a, b in zip(last[1], layouts))):
        return last[4]
    key = (low.stmt, layouts, policy, fp)                   # "auto" ranks by time, "packed" by elements
    got = _choices.get(key)
    if got is not None:                                     # a repeated statement: chosen once
        _choices.move_to_end(key)
        _remember_last(low.stmt, layouts, policy, fp, got)
        return got
    cands = candidates(low.stmt, layouts, policy)
    if len(cands) == 1:
        got = cands[0]
        _choices[key] = got                                 # no reduction made: the same on every locale
        if len(_choices) > CHOICE_CACHE:
            _choices.popitem(last=False)
        return got
    me = comm.here()
    mine = np.array([_cost(plan_local(low.stmt, layouts, c, me)) for c in cands], dtype=np.int64)
    w, h, P = _weights(low), settings.fingerprint(), layouts[0].num_locales      # w: averaged over locales below
    got = comm.allreduce(np.concatenate([mine.astype(np.float64).ravel(), np.zeros(3) if w is None else w,
                                         [h, h * h]]), "sum")      # one reduction: counts exact as float64
    if int(got[-2]) ** 2 != P * int(got[-1]):      # the settings' hashes differ (the same verdict everywhere)
        raise RuntimeError(f"{describe_statement(low)}: pg.config settings that change plans {settings.PLANNING} "
                           "differ between locales; make the same pg.config calls on every locale")
    total, w = got[:-5].reshape(mine.shape).astype(np.int64), None if w is None else tuple(got[-5:-2] / P)
    best = cands[choose([(m, n, ok == P, wb) for m, n, ok, wb in total.tolist()], w)]
    _choices[key] = best
    if len(_choices) > CHOICE_CACHE:
        _choices.popitem(last=False)
    return best


#: :func:`_owner`'s last answer per statement object (a repeat skips hashing the
#: key): ``id(stmt)`` -> ``(stmt, layouts, policy, fingerprint, choice)``.  Only
#: choices already in :data:`_choices` are copied here, so no locale skips a
#: reduction another makes.
_last: dict = {}


def _remember_last(stmt, layouts, policy, fp, choice) -> None:
    if len(_last) >= CHOICE_CACHE:
        _last.clear()
    _last[id(stmt)] = (stmt, layouts, policy, fp, choice)


def _cost(p) -> tuple[int, int, int, int]:
    return p.moved, p.messages, int(p.valid), len(p.writebacks)


def _weights(low):
    """Under ``protocol="auto"`` (the models in charge): ``(seconds per element moved,
    seconds per message, seconds per write-back message beyond its transfer)`` from
    the calibrated model (replicated), for :func:`pgas.plan.choose` to rank owners
    by predicted time; None otherwise (the ``"cost"`` policy's fewest elements).  (h10)"""
    if settings.get("protocol") != "auto":
        return None
    from .. import calibrate
    m = calibrate.current()
    size = max(a.dtype.itemsize for a in low.arrays)
    return np.array([size * min(m.packed_gap, m.gap), m.latency + min(m.packed_fixed, m.issue), m.writeback])


#: Explaining more locales than this samples them for the totals.
EXPLAIN_EXACT = 64


def _describe(low, layouts, at: int) -> str:
    """One locale's plan (``at``), with totals over all locales: exact up to
    :data:`EXPLAIN_EXACT` locales, else estimated from a sample."""
    P = layouts[0].num_locales
    if not 0 <= at < P:
        raise ValueError(f"pg.explain: locale={at} is not one of the {P} locales")
    sample = list(range(P)) if P <= EXPLAIN_EXACT else sorted(
        {round(k * (P - 1) / 15) for k in range(16)} | {at})
    cands = candidates(low.stmt, layouts, _policy(low))
    plans = {c: [plan_local(low.stmt, layouts, c, r) for r in sample] for c in cands}
    scale = P / len(sample)
    costs = [(sum(p.moved for p in ps) * scale, sum(p.messages for p in ps) * scale, all(p.valid for p in ps),
              sum(len(p.writebacks) for p in ps) * scale) for ps in plans.values()]
    w = _weights(low)
    own = cands[choose(costs, None if w is None else tuple(w))]
    moved, msgs, _, _ = costs[cands.index(own)]
    how = "exact" if P <= EXPLAIN_EXACT else f"estimated from {len(sample)} of {P} locales"
    lines = f"all {P} locales: {round(msgs)} messages, {round(moved)} elements moved ({how})"
    if len(cands) > 1:
        txt = [x.text(low.names[x.slot], var_names(low.stmt.nvars)) for x in low.stmt.accesses]
        lines += "\n  candidates: " + "; ".join(f"{txt[c]}: {round(m)} elements / {round(n)} messages"
                                                for c, (m, n, _, _) in zip(cands, costs))
    mine = plan_local(low.stmt, layouts, own, at)
    notes, served = {}, 0
    if layouts == tuple(a.layout for a in low.arrays) and mine.kind == "pieces":   # h11: ghost reads
        notes, served = ghostread.explain(low, mine, at, at == comm.here())
        if served:
            lines += (f"\nghost cells: {served} of locale {at}'s {len(mine.fetches)} fetches served from ghost "
                      f"cells, so {mine.messages - served} messages")

    fast = (settings.get("aggregate") and mine.kind == "pieces" and mine.fetches + mine.writebacks
            and persistent.qualifies(low, mine, agree=False))
    said_strips = persistent.STRIPS if fast else strip.explain(low, mine)    # h10: the strip count and why
    if said_strips:
        lines += f"\n{said_strips}"

    def said(m, w):
        txt = transfer.describe(m, low.arrays[m.slot].dtype.itemsize, w, fast)
        k = None if w else next((k for k, f in enumerate(mine.fetches) if f is m), None)
        return txt if k not in notes else f"{txt}\n    {notes[k]}"

    return describe(mine, low.names, totals=lines, transfers=said)


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


def explain(fn, locales: int | None = None, locale: int = 0, plot: str | None = None) -> str:
    """The plans the statements in ``fn()`` would make, as text, without running them.

    ``fn`` is called once; each statement it issues (slice assignment, in-place
    operator, ``pg.forall``) is planned and described instead of executed: the
    plan of ``locale`` (its pieces, messages and peers), and the messages of all
    locales together (exact up to 64 locales, estimated from a sample of 16 beyond,
    as the text says).  With ``locales=N`` the arrays' distributions are re-bound
    to N locales (the planner is pure, so any N works in one process).  Explaining
    is local: it may be called on one locale only, unless ``fn`` itself makes
    collective calls (creating arrays, whole-array arithmetic such as ``A * 2``,
    which computes a new array at once, scalar reads).  With ``plot="f.png"``
    the elements each access moves for ``locale`` are drawn too, one row per
    statement (:func:`pgas.plot.draw_statements`; needs ``pip install 'pgas[plot]'``).

    >>> print(pg.explain(lambda: A.__setitem__(slice(1, None), A[:-1]), locales=1024))  # doctest: +SKIP
    """
    _explaining.append((locales, [], int(locale), []))
    try:
        fn()
    finally:
        _, texts, _, seen = _explaining.pop()
    if plot is not None and seen:
        from ..plot import draw_statements

        draw_statements(seen, int(locale), plot)
    return "\n\n".join(texts) if texts else "(no statements)"


# -- forall ------------------------------------------------------------------
class _Tracer:
    def __init__(self) -> None:
        self.records: list = []
        self.errstates: list = []     # NumPy's error handling where each record was made (rev24)

    def record(self, target: Ref, value, uf, other) -> None:
        self.records.append((target, value, uf, other))
        self.errstates.append((np.geterr(), np.geterrcall()))


def forall(domain, body) -> None:
    """Collective: run ``body(i, j, ...)`` over every point of ``domain`` (a ``range``,
    a tuple of ranges, or ranges whose bounds depend on outer loop variables) as
    aggregated owner-computes statements.

    ``body`` is called ONCE with symbolic loop variables; each assignment it
    makes through affine subscripts (``A[2*i + 1, j - 1] = B[i, j] * 0.5``)
    becomes one statement over the whole domain, run in the order written
    (the right side read in full before its left side is written).  A write
    whose subscripts omit a loop variable reduces over it:
    ``D[i, j] += A[i, k] * B[k, j]`` over ``(i, j, k)`` is a matrix product.
    Python ``if`` on loop variables, non-affine subscripts (``A[i*j]``) and
    the like raise ``pgas.array.expr.TraceError`` naming what to write.

    A loop variable may also be used as a value: ``A[i, j] = 10 * i + j`` or
    ``B[i] = 0.5 * i + A[i]`` use the index itself (an integer operand, combined
    with the others by NumPy's rules).  Only integer arithmetic keeps a variable
    symbolic; ``i / 2``, ``i % 2`` and comparisons raise ``TraceError``.

    An inner range may depend on outer variables: give a callable of the first
    ``k`` variables' values that returns the range, as in
    ``pg.forall((range(n), lambda i: range(i + 1, n)), body)`` (a triangle).
    It is evaluated once per point of those ``k`` variables.  Affine bounds run
    as the bounding box's pieces clipped by the bounds, others as rectangular
    parts planned together (see ``docs/domains.md``): one message per (peer,
    array) per statement either way.

    Parameters
    ----------
    domain : range, int, or tuple of range, int or callable
        The iteration space, one entry per loop variable, outermost first (an
        int ``n`` means ``range(n)``; a callable ``f(i, ...)`` of outer
        variables returns the range of an inner one).
    body : callable
        Called once with one symbolic variable per range; it assigns to
        distributed arrays through subscripts affine in the variables.

    Examples
    --------
    A five-point stencil over the interior, then a loop variable as a value:

    >>> def body(i, j):                                           # doctest: +SKIP
    ...     B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
    >>> pg.forall((range(1, n - 1), range(1, n - 1)), body)      # doctest: +SKIP
    >>> pg.forall(range(n), lambda i: C.__setitem__(i, 2 * i))    # doctest: +SKIP

    The upper triangle of ``C = A @ A.T`` (``syrk``), a triangle times a range:

    >>> def body(i, j, k):                                        # doctest: +SKIP
    ...     C[i, j] += A[i, k] * A[j, k]
    >>> pg.forall((range(n), lambda i: range(i, n), range(m)), body)  # doctest: +SKIP
    """
    if engine.tracing():
        raise TraceError("pg.forall inside a pg.forall body cannot be traced: write ONE forall over all the "
                         "loop variables, with inner ranges that depend on outer ones if needed: "
                         "pg.forall((range(n), lambda i: range(i + 1, n)), body)")
    dom = resolve(domain)
    m = dom.ndim
    tracer = _Tracer()
    engine.trace_push(tracer)
    try:
        body(*[Affine([int(v == w) for w in range(m)]) for v in range(m)])
    finally:
        engine.trace_pop()
    collective.forall(dom, body, tracer.records)
    now = (np.geterr(), np.geterrcall())
    for (target, value, uf, other), state in zip(tracer.records, tracer.errstates):
        if state == now:
            _run_record(dom, target, value, uf, other)
            continue
        with np.errstate(call=state[1], **state[0]):      # an np.errstate inside the body applies (rev24)
            _run_record(dom, target, value, uf, other)


def _run_record(dom, target: Ref, value, uf, other) -> None:
    m = dom.ndim
    cols = [any(len(row) > v and row[v] for row in target.M) for v in range(m)]
    label = target.base.label
    if uf is not None:
        value.func(*[probe(a) for a in value.args], out=np.empty(0, target.dtype), **value.kwargs)
    separable = all(sum(1 for a in row if a) <= 1 for row in target.M)
    if all(cols) and (separable or uf is None or other is None or uf.__name__ not in REDUCE_WITH):
        before_write(target.base, value)                 # each iteration writes its own element
        _run_forall_statement(lower_ref(dom, target, value, None), value)
        return
    if uf is None or other is None or uf.__name__ not in REDUCE_WITH:
        missing = ", ".join("ijklmnpq"[v] if v < 8 else f"i{v}" for v in range(m) if not cols[v])
        raise TraceError(f"the write to {label} does not use loop variable(s) {missing}: to reduce over them "
                         "write A[...] += expr (or -=, *=, |=, &=, ^=, or np.minimum/np.maximum(A[...], expr, "
                         "out=A[...])); a plain = would overwrite the same element many times")
    before_write(target.base, value)
    _run_forall_statement(lower_ref(dom, target, other, uf.__name__), other)


def _run_forall_statement(low, value) -> None:
    """Execute a forall record's lowered statement: under :func:`pgas.array.fperr.run`, and,
    if ``value`` has an integer power of a distributed exponent (whose data a slice
    statement checks first, :func:`pgas.array.collective.power_data`), with its negative
    exponents raised on every locale alike (:func:`pgas.array.fperr.deferring_powers`)."""
    if _has_power(value):
        fperr.run(lambda lw: fperr.deferring_powers(execute, lw, not _explaining), low, not _explaining)
    else:
        fperr.run(execute, low, not _explaining)


def _has_power(x) -> bool:
    stack = [x]
    while stack:
        e = stack.pop()
        if isinstance(e, Expr):
            if (e.func is np.power and len(e.args) == 2 and not engine.is_scalar(e.args[1])
                    and np.dtype(e.dtype).kind in "iu"):     # only an integer power raises on data
                return True
            stack.extend(e.args)
    return False


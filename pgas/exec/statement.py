"""Running lowered statements: plan this locale's part and run it, or describe it under ``pg.explain``.

The front end lowers views, refs and expressions
into :class:`pgas.exec.lowered.Lowered` statements and hands them here:
:func:`execute` runs one (choosing the owning access, :func:`owner_policy`),
:func:`run_group` and :func:`run_planned` several with one exchange.  While
:func:`explain` runs, nothing runs: each statement is described instead.
"""

from __future__ import annotations

import dataclasses
import math
from collections import OrderedDict

import numpy as np

from .. import comm
from ..comm import trace
from ..plan import planner
from ..plan import PlanError, candidates, choose, describe, plan_local, var_names
from . import fperr, ghostread, persistent, settings, strip, transfer
from .group import fits, groupable, run_together
from .run import compute_tasks, run
from .writeback import accumulable, write_results

#: Non-empty while :func:`explain` runs (its entries: ``(locales, texts, locale,
#: statements seen)``): statements are described, not run.  Never rebound, so a
#: module holding it sees it change.
explaining: list = []


def replay(again, arrays, value, prog=None) -> None:
    """Run statement ``again`` (:func:`pgas.exec.persistent.replayable`'s answer) again on
    ``arrays`` as it ran before (``value``: a fill's scalar, else None; ``prog``: its
    program with other constants, :func:`pgas.exec.persistent.rerun`)."""
    persistent.rerun(again, arrays, compute_tasks, write_results, value, prog)


def run_new(low, key=None, restore: bool = True) -> None:
    """Run lowered statement ``low`` under :func:`pgas.exec.fperr.run`; with ``key``
    record it for replay (:func:`pgas.exec.persistent.record`).  ``restore``: if it
    raises a floating-point error, its target is put back as it was (False: a ufunc's
    ``out=``, which NumPy writes before it raises)."""
    persistent.ran[0] = None                         # set if it runs by two-sided transfers
    fperr.run(execute, low, not explaining,   # np.errstate raise: every locale
              (lambda: written([low])) if restore else None)
    if key is not None:
        persistent.record(key, low, owner_policy(low) == "write")   # (a cost owner: chosen by agreement)


def run_group(lows, header: str = "") -> None:
    """Run lowered statements whose targets are distinct and read by none of them, with
    one exchange (:func:`pgas.exec.group.run_together`); each runs on the owner of its
    write.  Under :func:`explain`, describes each."""
    if explaining:
        explaining[-1][1].append(f"{header}: {len(lows)} statements, their transfers in one exchange")
        for low in lows:
            execute(low)
        return
    lows = [low for low in lows if low.stmt.size]
    here = comm.here()
    items = [(low, plan_local(low.stmt, tuple(a.layout for a in low.arrays), low.stmt.write, here))
             for low in lows]
    fperr.run(_run_planned, (items, None), True,  # np.errstate raise (an end-off boundary's cast): every locale
              lambda: written(lows))


def written(lows) -> list:
    """The store (:class:`pgas.exec.store.Store`) of the array each of lowered statements
    ``lows`` writes: what :func:`pgas.exec.fperr.run` puts back if they raise."""
    return [low.arrays[low.stmt.accesses[low.stmt.write].slot].store for low in lows]


def run_planned(lows, fast, header: str = "") -> None:
    """Run planned statements ``[(low, plan), ...]`` with one exchange, by compiled group
    ``fast`` (:class:`pgas.exec.shiftgroup.ShiftGroup`) where it qualifies.  Under
    :func:`explain`, describes each (and ``fast``)."""
    if explaining:
        head = f"{header}: {len(lows)} statements, their transfers in one exchange"
        if fast is not None and settings.fast_paths() and explaining[-1][0] in (None, comm.num_locales()):
            head += "\n" + fast.describe()             # this job's compiled group, on this locale
        explaining[-1][1].append(head)
        for low, _ in lows:
            execute(low)
        return
    fperr.run(_run_planned, (lows, fast), True,  # np.errstate raise (an end-off boundary's cast): every locale
              lambda: written([low for low, _ in lows]))


def _run_planned(arg) -> None:
    """Planned statements ``[(low, plan), ...]`` with one exchange where they fit, by
    compiled group ``fast`` where it qualifies (not while NumPy's errors are reported,
    :data:`pgas.exec.fperr.numpy_only`: its kernels report none)."""
    lows, fast = arg
    aggregate = settings.get("aggregate")
    bounded = fits(lows)                          # else statement by statement, each within the limit
    if fast is not None and settings.fast_paths() and bounded and not fperr.numpy_only and fast.run(lows):
        return
    if settings.fast_paths() and all(groupable(p) for _, p in lows) and bounded:
        run_together(lows)
    else:
        for low, p in lows:
            run(low, p, aggregate)


def execute(low) -> None:
    """Plan this locale's part (cached) and run one lowered statement, or describe it
    under :func:`explain`."""
    if low.stmt.size == 0:
        return
    layouts = tuple(a.layout for a in low.arrays)
    if explaining:
        P, texts, at, seen = explaining[-1]
        if P is not None:
            layouts = tuple(_rebind(L, P) for L in layouts)
        texts.append(_describe(low, layouts, at))
        seen.append((low, layouts, owner_policy(low)))
        return
    t0 = trace.on and trace.now()
    if t0:
        made = planner.plans_made()
    try:
        own = _owner(low, layouts)
        p = plan_local(low.stmt, layouts, own, comm.here())
    except PlanError as e:
        raise IndexError(f"{describe_statement(low)}: {e}") from None
    if t0:
        trace.add("plan", "plan (cache miss)" if planner.plans_made() != made else "plan (cache hit)", t0)
    run(low, p, settings.get("aggregate"))


def owner_policy(low) -> str:
    """The owner policy of ``low``: ``pg.config(owner=...)``, or ``"write"`` where its
    reduction has no MPI accumulate op for the written dtype."""
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
    policy = owner_policy(low)
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
    by predicted time; None otherwise (the ``"cost"`` policy's fewest elements)."""
    if settings.get("protocol") != "auto":
        return None
    from . import calibration as calibrate
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
    cands = candidates(low.stmt, layouts, owner_policy(low))
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
    if layouts == tuple(a.layout for a in low.arrays) and mine.kind == "pieces":   # fetches served from ghost cells
        notes, served = ghostread.explain(low, mine, at, at == comm.here())
        if served:
            lines += (f"\nghost cells: {served} of locale {at}'s {len(mine.fetches)} fetches served from ghost "
                      f"cells, so {mine.messages - served} messages")

    fast = (settings.fast_paths() and mine.kind == "pieces" and mine.fetches + mine.writebacks
            and persistent.qualifies(low, mine, agree=False, layouts=layouts))
    said_strips = persistent.STRIPS if fast else strip.explain(low, mine)    # the strip count and why
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
    statement (:func:`pgas.plan.draw.draw_statements`; needs ``pip install 'pgas[plot]'``).

    >>> print(pg.explain(lambda: A.__setitem__(slice(1, None), A[:-1]), locales=1024))  # doctest: +SKIP
    """
    described = getattr(fn, "describe", None)
    if callable(described) and getattr(fn, "is_compiled_step", False):
        return described()                     # a compiled step: its recorded program
    explaining.append((locales, [], int(locale), []))
    try:
        fn()
    finally:
        _, texts, _, seen = explaining.pop()
    if plot is not None and seen:
        from ..plan.draw import draw_statements

        draw_statements(seen, int(locale), plot)
    return "\n\n".join(texts) if texts else "(no statements)"

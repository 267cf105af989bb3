"""Statements of the front end: assignment, materialisation, groups of statements, ``pg.forall``.

Each checks the call (:mod:`pgas.array.collective`), materialises the pending
expressions the statement would overwrite (:func:`pgas.array.engine.before_write`),
lowers views, refs and expressions into the engine's form
(:mod:`pgas.array.lowering`) and hands the lowered statements to the engine
(:mod:`pgas.exec.statement`), which runs them, or describes them under ``pg.explain``.
"""

from __future__ import annotations

import numpy as np

from .. import comm
from ..comm import check, trace
from ..exec import fperr, persistent, settings
from ..exec import statement as engine_statement
from ..exec.domain import resolve
from ..exec.shiftgroup import ShiftGroup
from ..exec.lowered import Lowered
from ..exec.tasks import REDUCE_WITH
from ..exec.statement import execute, explaining
from ..plan import Access, PlanError, plan_local
from . import branches, collective, engine, indirect
from .creation import constructors
from .expr import Expr, IndirectRef, Ref, TraceError, probe
from .lowering import _key, _Uncachable, lower_ref, lower_view, structure
from .view import View

#: The result dtype of an expression (:func:`pgas.array.expr.probe`, which also raises
#: NumPy's errors), and whether it has an integer power whose exponent's data must be
#: checked (:func:`pgas.array.collective.power_data`), by its statement's structure
#: (:func:`pgas.array.lowering.structure`) and its arrays' dtypes, which determine both: a
#: repeated statement is probed once.
_probed: dict = {}
PROBE_CACHE = 1024


def assign(target: View, value, casting: str) -> None:
    """Run ``target = value`` (a view and an operand, :func:`pgas.array.engine.assign`)."""
    if trace.on and not trace.depth:
        return trace.statement("assign", assign, target, value, casting)
    known = structure(target, value)
    again = rkey = None
    fill = False
    if known is not None and not explaining and casting == "unsafe":
        rkey = known[0]
        fill = isinstance(value, np.generic)       # a scalar of the target's dtype (engine.assign):
        if fill:                                   # recorded by dtype, not value (fict[t] every step)
            rkey = (*rkey[:3], "fill", value.dtype)
        again = persistent.replayable(rkey, known[1])
        if (again is not None and again.fs is not None and not check.enabled and not fperr.numpy_only
                and not fperr.raising()):
            if check.folding:                     # (its signature kept with the recording)
                check.fold_repeat(again.tag or collective.statement_tag(rkey, known[1], again),
                                  value if fill else None)
            before_write(target.base, value)      # a repeat on the same arrays, as it ran before
            if trace.on:
                trace.stmt_args["path"] = "replayed: no lowering or planning"
            engine_statement.replay(again, known[1], value if fill else None)
            return
    t0 = trace.on and trace.now()
    dkey = hit = None
    if known is not None and type(value) is Expr and value._dtype is None:
        dkey = (known[0], tuple([a.dtype for a in known[1]]))
        hit = _probed.get(dkey)                   # None: probed below
        if hit is not None:
            value._dtype = hit[0]
            dkey = None                           # known: nothing to remember
    # call check; errors on every locale (an integer power's exponent data only where the structure has one)
    powers = collective.statement(target, value, not explaining, hit is None or hit[1],
                                  None if rkey is None else (rkey, known[1]), value if fill else None)
    if dkey is not None:
        if len(_probed) >= PROBE_CACHE:
            del _probed[next(iter(_probed))]
        _probed[dkey] = (value._dtype, powers)
    if casting == "same_kind" and isinstance(value, Expr):
        value.func(*[probe(a) for a in value.args], out=np.empty(0, target.dtype), **value.kwargs)
    before_write(target.base, value)
    low = lower_view(target, value, known)
    if t0:
        trace.add("plan", "check and lower" + (" (probed)" if dkey is not None else ""), t0)
    record = again is None and rkey is not None and not powers and not check.enabled and (
        not fill or low.prog[0] == "const")
    # a floating-point error puts the target back, as NumPy's T[:] = A / B leaves T (its right side is a
    # temporary); not a ufunc's out= (A += B) nor a plain copy's cast (T[:] = X), which NumPy writes first
    engine_statement.run_new(low, rkey if record else None, casting != "same_kind" and low.prog[0] == "call")


def materialise(x, dtype=None):
    """Collective: a new DistArray holding the value of view or expression ``x``."""
    if trace.on and not trace.depth:
        return trace.statement("materialise", materialise, x, dtype)
    collective.materialise(x, not explaining)
    shape = x.shape
    if not shape:
        raise ValueError("a 0-dimensional expression cannot be a DistArray: read elements with A[i, j]")
    first = next((leaf.base for leaf in _leaves(x) if isinstance(leaf, View)), None)
    out = constructors.empty(shape, x.dtype if dtype is None else dtype, first.layout.like(len(shape)))
    fperr.run(execute, lower_view(View.whole(out), x), not explaining)
    return out


def plan_group(pairs) -> list:
    """The statements ``pairs`` lowered, with this locale's plans (pure: nothing runs),
    for :func:`run_planned`."""
    items = []
    for t, v in pairs:
        low = lower_view(t, v)
        if low.stmt.size:
            layouts = tuple(a.layout for a in low.arrays)
            items.append((low, plan_local(low.stmt, layouts, low.stmt.write, comm.here())))
    return items


def compile_group(items, keep: bool = True):
    """:func:`plan_group`'s items compiled for repeated :func:`run_planned` calls
    (:class:`pgas.exec.shiftgroup.ShiftGroup`; free it with its ``free()``)."""
    return ShiftGroup(items, keep)


def rerun(fast, arrays) -> bool:
    """Run compiled group ``fast`` again on ``arrays`` (in its ``keys`` order) if they are
    the arrays of its last run (:meth:`ShiftGroup.rerun_arrays`); False, with nothing
    done, where the call needs :func:`run_planned`."""
    if trace.on and not trace.depth:
        return trace.statement("group", rerun, fast, arrays)
    return not explaining and settings.fast_paths() and fast.rerun_arrays(arrays, engine.before_write)


def run_planned(items, rebind: dict, header: str = "", fast=None) -> None:
    """Run :func:`plan_group`'s statements again with each array ``a`` replaced by
    ``rebind[id(a)]`` (arrays of the same layouts: the plans stay valid), with one
    exchange and no lowering or planning.  ``fast``: the items compiled for repeated
    runs (:class:`pgas.exec.shiftgroup.ShiftGroup`), used where it qualifies."""
    if trace.on and not trace.depth:
        return trace.statement("group", run_planned, items, rebind, header, fast)
    if (fast is not None and not explaining and settings.fast_paths() and not fperr.raising()
            and fast.rerun(rebind, engine.before_write)):
        return                                    # the same arrays as the last run: its views
    lows = [(Lowered(low.stmt, [rebind.get(id(a), a) for a in low.arrays], low.prog, low.names), p)
            for low, p in items]
    if not explaining:
        written = {}
        for low, _ in lows:
            w = low.arrays[low.stmt.accesses[low.stmt.write].slot]
            written[id(w)] = w
        for w in written.values():
            engine.before_write(w, None)
    engine_statement.run_planned(lows, fast, header)


def run_group(pairs, header: str = "") -> None:
    """Run statements ``[(target view, value), ...]`` whose targets are distinct and
    read by none of them, with one exchange (:func:`pgas.exec.statement.run_group`);
    each runs on the owner of its write.  Under ``pg.explain``, describes each."""
    if trace.on and not trace.depth:
        return trace.statement("group", run_group, pairs, header)
    for target, value in pairs:
        collective.statement(target, value, not explaining)
    for target, value in pairs:
        before_write(target.base, value)
    engine_statement.run_group([lower_view(t, v) for t, v in pairs], header)


def _leaves(x):
    return x.leaves() if isinstance(x, Expr) else [x]


def before_write(base, value) -> None:
    """Materialise the pending expressions that read ``base`` (not while explaining:
    explaining runs nothing)."""
    if not explaining:
        engine.before_write(base, value)


# -- forall ------------------------------------------------------------------
def forall(domain, body) -> None:
    """Collective: run ``body(i, j, ...)`` over every point of ``domain`` (a ``range``,
    a tuple of ranges, or ranges whose bounds depend on outer loop variables) as
    aggregated owner-computes statements.

    ``body`` is called with symbolic loop variables (once, or once per path
    through its conditions); each assignment it makes through affine subscripts
    (``A[2*i + 1, j - 1] = B[i, j] * 0.5``) becomes one statement over the whole
    domain, run in the order written (the right side read in full before its
    left side is written).  A write whose subscripts omit a loop variable
    reduces over it: ``D[i, j] += A[i, k] * B[k, j]`` over ``(i, j, k)`` is a
    matrix product.

    A Python ``if`` / ``elif`` / ``else`` (with ``and``, ``or``, ``not``) on loop
    variables and array elements (``if i > 0 and A[i, j] > 0:``) traces every
    branch: each statement runs where its branch is taken.  A comparison of
    affine functions of the loop variables narrows the statement's domain (so
    ``if i > 0: B[i] = A[i - 1]`` never reads ``A[-1]``); any other condition
    is a mask (``where(cond, value, old)``), under which the statement's
    affine subscripts must be in bounds on the whole domain.  Subscripts that
    are not affine (``A[i * i]``, ``A[i % 3]``, ``A[idx[i]]``) run through the
    inspector fallback (:mod:`pgas.array.indirect`): correct, not planned.
    ``docs/concepts.md`` (forall) says what still raises ``TraceError``.

    A loop variable may also be used as a value: ``A[i, j] = 10 * i + j`` or
    ``B[i] = 0.5 * i + A[i]`` use the index itself (an integer operand, combined
    with the others by NumPy's rules).

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
        Called with one symbolic variable per range; it assigns to distributed
        arrays through subscripts.

    Examples
    --------
    A five-point stencil over the interior, then a loop variable as a value:

    >>> def body(i, j):                                           # doctest: +SKIP
    ...     B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
    >>> pg.forall((range(1, n - 1), range(1, n - 1)), body)      # doctest: +SKIP
    >>> pg.forall(range(n), lambda i: C.__setitem__(i, 2 * i))    # doctest: +SKIP

    A branch on the loop variable and the data, and a histogram:

    >>> def body(i):                                              # doctest: +SKIP
    ...     if i > 0 and A[i] > 0:
    ...         B[i] = A[i - 1]
    ...     else:
    ...         B[i] = 0.0
    ...     H[keys[i]] += 1
    >>> pg.forall(range(n), body)                                 # doctest: +SKIP

    The upper triangle of ``C = A @ A.T`` (``syrk``), a triangle times a range:

    >>> def body(i, j, k):                                        # doctest: +SKIP
    ...     C[i, j] += A[i, k] * A[j, k]
    >>> pg.forall((range(n), lambda i: range(i, n), range(m)), body)  # doctest: +SKIP
    """
    if trace.on and not trace.depth:
        return trace.statement("forall", forall, domain, body)
    if engine.capturing:
        engine.capturing[-1].refuse("pg.forall")
    if engine.tracing():
        raise TraceError("pg.forall inside a pg.forall body cannot be traced: write ONE forall over all the "
                         "loop variables, with inner ranges that depend on outer ones if needed: "
                         "pg.forall((range(n), lambda i: range(i + 1, n)), body)")
    items = domain if isinstance(domain, tuple) else (domain,)
    dom = resolve(domain)
    m = dom.ndim
    tracer = branches.trace(body, m, engine.trace_push, engine.trace_pop)
    stmts = branches.statements(tracer, _record_key)
    collective.forall(dom, body, [rec for rec, _, _ in stmts])
    now = (np.geterr(), np.geterrcall())
    # a floating-point error, or an integer power's negative exponent, puts back every array the loop
    # writes (all its statements'), on every locale, as NumPy raises before writing
    restore = not explaining and any(fperr.raises_under(state[0]) or _has_power(rec[1])
                                     for rec, state, _ in stmts)
    with fperr.restoring((lambda: [rec[0].base.store for rec, _, _ in stmts]) if restore else None):
        _run_records(dom, stmts, items, now, _var_names(body, m))


def _run_records(dom, stmts, items, now, names) -> None:
    """Run a forall's traced statements ``stmts`` over ``dom`` in order, each under the
    error state its body set (``now``: the state outside)."""
    m = dom.ndim
    narrowed: dict = {}
    for (target, value, uf, other), state, decisions in stmts:
        alts, masks = branches.split(decisions, m) if decisions else ([[]], [])
        for cons in alts:                                 # disjoint parts of the domain
            d = dom
            if cons:
                key = tuple(cons)
                d = narrowed.get(key)
                if d is None:
                    d = narrowed[key] = resolve(branches.narrow(items, cons))
                if _empty(d):
                    continue
            if state == now:
                _run_record(d, target, value, uf, other, names, masks)
                continue
            with np.errstate(call=state[1], **state[0]):  # an np.errstate inside the body applies
                _run_record(d, target, value, uf, other, names, masks)


def _empty(dom) -> bool:
    """True if ``dom`` has no point."""
    if dom.parts:
        return not any(all(n for _, _, n in p) for p in dom.parts)
    return dom.count == 0 or any(not n for _, _, n in dom.box)


def _record_key(rec):
    """A hashable structure of a traced assignment (as :func:`pgas.array.lowering.structure`
    makes), or None where it has none (a replicated NumPy operand, a NaN)."""
    target, value, uf, other = rec
    bases: list = []
    try:
        key = (_key(target, bases), _key(value, bases), getattr(uf, "__name__", None),
               None if other is None else _key(other, bases))
        hash(key)
    except (_Uncachable, TypeError):
        return None
    return key, tuple(id(b) for b in bases)


def _var_names(body, m: int) -> list[str]:
    """The loop variables' names as the body spells them (its parameters), else i, j, k, ..."""
    import inspect
    try:
        params = [p.name for p in inspect.signature(body).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    default = ["ijklmnpq"[v] if v < 8 else f"i{v}" for v in range(m)]
    return params[:m] if len(params) >= m else default


def _check_write(target: Ref, names, m: int) -> None:
    """A plain ``=`` through a subscript of several loop variables in one dim (``F[4*i + j]``)
    may write one element from several iterations: raise, quoting the subscript written."""
    M = [tuple(row) + (0,) * (m - len(row)) for row in target.M]
    if all(sum(1 for a in row if a) <= 1 for row in M):
        return
    written = Access(0, M, target.c).text(target.base.name or "", names)
    raise PlanError(f"the write {written} to {target.base.label} has several loop variables in one subscript, "
                    "which pgas plans only as a reduction (one element may be written from several "
                    f"iterations): reduce into it with += (into zeros, if every iteration writes its own "
                    "element) or np.minimum/np.maximum(..., out=), or index each dim by one loop variable")


def _run_record(dom, target, value, uf, other, names, masks=()) -> None:
    """Run one traced assignment over ``dom`` where every condition of ``masks`` holds."""
    m = dom.ndim
    if uf is not None:
        value.func(*[probe(a) for a in value.args], out=np.empty(0, target.dtype), **value.kwargs)
    reducible = uf is not None and other is not None and uf.__name__ in REDUCE_WITH
    if isinstance(target, IndirectRef):
        reduce = reducible                               # repeats accumulate, as in a sequential loop
    else:
        cols = [any(len(row) > v and row[v] for row in target.M) for v in range(m)]
        separable = all(sum(1 for a in row if a) <= 1 for row in target.M)
        reduce = not (all(cols) and (separable or not reducible))
        if not reduce:
            _check_write(target, names, m)
        elif not reducible:
            missing = ", ".join("ijklmnpq"[v] if v < 8 else f"i{v}" for v in range(m) if not cols[v])
            raise TraceError(f"the write to {target.base.label} does not use loop variable(s) {missing}: to "
                             "reduce over them write A[...] += expr (or -=, *=, |=, &=, ^=, or "
                             "np.minimum/np.maximum(A[...], expr, out=A[...])); a plain = would overwrite the "
                             "same element many times")
    val = other if reduce else value
    if isinstance(target, IndirectRef) or indirect.has_indirect(val, *masks):
        indirect.check(target, uf, reduce)
        if explaining:
            indirect.explain(target, val, reduce, dom, masks)
            return
        before_write(target.base, val)
        indirect.run(dom, target, val, uf, reduce, masks)
        return
    mask = branches.mask_of(masks)
    if mask is not None:
        if reduce:
            val = Expr(np.where, [mask, val, branches.identity(REDUCE_WITH[uf.__name__], probe(val).dtype)])
        else:
            val = Expr(np.where, [mask, val, target])
    before_write(target.base, val)
    _run_forall_statement(lower_ref(dom, target, val, uf.__name__ if reduce else None), val)


def _run_forall_statement(low, value) -> None:
    """Execute a forall record's lowered statement: under :func:`pgas.exec.fperr.run`, and,
    if ``value`` has an integer power of a distributed exponent (whose data a slice
    statement checks first, :func:`pgas.array.collective.power_data`), with its negative
    exponents raised on every locale alike (:func:`pgas.exec.fperr.deferring_powers`)."""
    if _has_power(value):
        fperr.run(lambda lw: fperr.deferring_powers(execute, lw, not explaining), low, not explaining)
    else:
        fperr.run(execute, low, not explaining)


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

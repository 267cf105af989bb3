"""Plans as text: pieces, owning access, planned messages."""

from __future__ import annotations

from .result import Plan

_VARS = "ijklmnpq"


def var_names(n: int) -> list[str]:
    """Loop variable names ``i, j, k, ...``."""
    return [_VARS[v] if v < len(_VARS) else f"i{v}" for v in range(n)]


def describe(plan, names=None, max_pieces: int = 8, totals: str | None = None, transfers=None) -> str:
    """A few lines describing ``plan``: a :class:`~pgas.plan.result.GlobalPlan` (every
    locale) or one locale's :class:`~pgas.plan.result.Plan` (then ``totals`` may add a
    line about all locales); ``names`` are the arrays' names per slot.  ``transfers``,
    if given, is called as ``transfers(message, write)`` for a line under each message
    shown (``pg.explain`` shows its LMADs and protocol so).

    >>> from pgas.layout import Cyclic
    >>> from pgas.plan.model import Access, Statement
    >>> from pgas.plan.planner import plan
    >>> L = Cyclic().bind((8,), 4)
    >>> s = Statement(((0, 1, 7),), (Access(0, ((1,),), (1,)), Access(1, ((1,),), (0,))), write=0)
    >>> print(describe(plan(s, (L, L)), ["A", "B"]))     # doctest: +NORMALIZE_WHITESPACE
    statement: A[i + 1] = f(B[i])   over i in range(0, 7)   on 4 locales
    plan: 4 pieces, owning access A[i + 1] (the write)
      piece 0: i in 3 -> locale 0; remote: B[i]@3
      piece 1: i in 0+4t (t<2) -> locale 1; remote: B[i]@0
      piece 2: i in 1+4t (t<2) -> locale 2; remote: B[i]@1
      piece 3: i in 2+4t (t<2) -> locale 3; remote: B[i]@2
    messages: 4 (4 fetch, 0 write-back), 7 elements moved
      locale 0 <- locale 3: B (1 region, 1 elements)
      locale 1 <- locale 0: B (1 region, 2 elements)
      locale 2 <- locale 1: B (1 region, 2 elements)
      locale 3 <- locale 2: B (1 region, 2 elements)
    """
    s = plan.stmt
    vn = var_names(s.nvars)
    names = list(names) if names is not None else [f"X{k}" for k in range(1 + max(x.slot for x in s.accesses))]
    txt = [x.text(names[x.slot], vn) for x in s.accesses]
    reads = ", ".join(t for k, t in enumerate(txt) if k != s.write)
    op = f" {s.reduce}=" if s.reduce else " ="
    over = ", ".join(f"{v} in range({a}, {a + b * n}{'' if b == 1 else f', {b}'})" for v, (a, b, n) in zip(vn, s.box))
    if s.parts:
        over = (f"a domain of {s.size} iterations in {len(s.parts)} rectangular parts, "
                f"bounded by {over}")
    elif s.clips:
        cut = " and ".join(_clip_text(c, e, vn) for c, e in s.clips if not _box_implies(c, e, s.box))
        over = f"a domain of {s.size} iterations: {over}, clipped by {cut or 'nothing'}"
    lines = [f"statement: {txt[s.write]}{op} f({reads})   over {over or 'nothing'}   on {plan.nlocales} locales"]
    local = isinstance(plan, Plan)
    locs = (plan,) if local else plan.locales
    who = "the write" if plan.owning == s.write else "chosen by cost"
    if plan.accumulate:
        who += f"; partial results accumulated into {names[s.accesses[s.write].slot]} with {plan.accumulate}"
    head = f"locale {plan.locale}: " if local else ""
    if plan.kind == "inspector":
        lines.append(f"plan: {head}inspector (non-separable subscripts), owning access {txt[plan.owning]} (the write)")
    else:
        pieces = [(pc, lp) for lp in locs for pc in lp.pieces]
        lines.append(f"plan: {head}{len(pieces)} pieces, owning access {txt[plan.owning]} ({who})")
        if not local and len(plan.candidates) > 1:
            lines.append("  candidates: " + "; ".join(f"{txt[c]}: {m} elements / {n} messages"
                                                     for c, m, n in plan.candidates))
        for p, (lats, lp) in enumerate(pieces[:max_pieces]):
            e = lp.locale
            rng = ", ".join(_lattice_text(v, lat) for v, lat in zip(vn, lats))
            task = next(t for t in lp.tasks if lp.pieces[t.piece] is lats)
            rem = [f"{txt[a]}@{r.owner}" for a, r in enumerate(task.refs) if r.owner != e]
            rng += f", clipped by {len(task.clip)} bound(s)" if task.clip else ""
            lines.append(f"  piece {p}: {rng or 'one point'} -> locale {e}; "
                         + (f"remote: {', '.join(rem)}" if rem else "all local"))
        if len(pieces) > max_pieces:
            lines.append(f"  ... {len(pieces) - max_pieces} more pieces")
    nf = sum(len(lp.fetches) for lp in locs)
    nw = sum(len(lp.writebacks) for lp in locs)
    back = "accumulate" if plan.accumulate else "write-back"
    moved = sum(lp.moved for lp in locs)
    lines.append(f"messages{' of locale ' + str(plan.locale) if local else ''}: {nf + nw} ({nf} fetch, {nw} {back}), "
                 f"{moved} elements moved")
    shown = 0
    for lp in locs:
        for m, arrow in [(m, "<-") for m in lp.fetches] + [(m, "->") for m in lp.writebacks]:
            if shown < max_pieces:
                what = f"{len(m.regions)} region" if hasattr(m, "regions") else "indexed"
                verb = f"accumulate {plan.accumulate}, " if arrow == "->" and back == "accumulate" else ""
                lines.append(f"  locale {lp.locale} {arrow} locale {m.peer}: {names[m.slot]} ({verb}{what}, {m.size} elements)")
                if transfers is not None and hasattr(m, "regions"):
                    lines.append(f"    {transfers(m, arrow == '->')}")
            shown += 1
    if shown > max_pieces:
        lines.append(f"  ... {shown - max_pieces} more messages")
    if local:
        if plan.kind == "inspector":
            lines.append("synchronisation: global (an inspector statement does not work out its readers)")
        else:
            peers = sorted({m.peer for m in plan.fetches + plan.writebacks} | set(plan.readers) | set(plan.writers))
            lines.append(f"peers: {len(peers)} (read by {list(plan.readers)}, written by {list(plan.writers)}); "
                         "synchronises with these only")
        if totals:
            lines.append(totals)
    return "\n".join(lines)


def _lattice_text(v: str, lat) -> str:
    if lat.ntiles == 1:
        return f"{v} in {lat.first}" if lat.length == 1 else f"{v} in {lat.first}+{lat.du}u (u<{lat.length})"
    if lat.length == 1:
        return f"{v} in {lat.first}+{lat.dt}t (t<{lat.ntiles})"
    return f"{v} in {lat.first}+{lat.du}u+{lat.dt}t (u<{lat.length}, t<{lat.ntiles})"


def _clip_text(coefs, const, vn) -> str:
    """``j >= i + 1`` for the clip ``j - i - 1 >= 0`` (its last variable on the left)."""
    v = max(k for k, a in enumerate(coefs) if a)
    sign = coefs[v]
    terms = [(-sign * a, vn[k]) for k, a in enumerate(coefs) if a and k != v]
    rhs = ""
    for a, name in terms:
        t = name if abs(a) == 1 else f"{abs(a)}*{name}"
        rhs += ("-" if a < 0 else "") + t if not rhs else (" - " if a < 0 else " + ") + t
    c = -sign * const
    rhs = str(c) if not rhs else rhs + (f" + {c}" if c > 0 else f" - {-c}" if c < 0 else "")
    return f"{vn[v]} {'>=' if sign > 0 else '<='} {rhs}"


def _box_implies(coefs, const, box) -> bool:
    """True if every point of ``box`` satisfies the clip (it cuts nothing)."""
    least = const
    for a, (start, step, count) in zip(coefs, box):
        if a:
            least += min(a * start, a * (start + step * (count - 1)))
    return least >= 0

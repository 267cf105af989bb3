"""The planner: one statement and the arrays' layouts in, an immutable :class:`Plan` out.

1. :func:`~pgas.plan.pieces.lattices` cuts the box into pieces on which every
   access has one owner and an affine local index.
2. Owner-computes: each piece runs on the owner of the *owning access* --
   the write, or (``owner="cost"``) whichever access makes the fewest
   elements move (ties go to the write).
3. Every other access whose owner is not the executing locale is a remote
   footprint; footprints are merged into one message per (executing locale,
   owner, array) for reads, and one per (executing locale, owner) for the
   write-back of a remote write.
4. A reduction owned by a read (``x[i] += A[i, j] * y[j]`` run where
   ``A[i, j]`` lives) *accumulates*: each locale combines its pieces' partial
   results per target element into one buffer per owner of the written
   elements (pieces writing the same elements share buffer space), and sends
   it with one accumulate (the reduction's MPI op, :data:`ACCUMULATE_OPS`).
   MPI forbids overlapping target entries within one accumulate, so a
   candidate whose merged regions would overlap is not considered.

Plans are cached by structure (statement, layouts, policy), so a statement
repeated in a time-step loop is planned once.  Non-separable statements
(``A[i + j]``) go to :mod:`pgas.plan.inspector`.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from .inspector import plan_inspector
from .model import PlanError, Statement
from .pieces import access_on_piece, lattices
from .result import LocalePlan, Message, Plan, Ref, Task
from .transfers import MessageBuilder, buffer_view, disjoint, normalise, region_size

OWNER_POLICIES = ("write", "cost")

#: MPI accumulate op of each reduction (in-place ufunc name) that may run on a
#: read's owner; ``subtract`` accumulates the negated sum.
ACCUMULATE_OPS = {"add": "sum", "subtract": "sum", "multiply": "prod", "minimum": "min", "maximum": "max",
                  "bitwise_and": "band", "bitwise_or": "bor", "bitwise_xor": "bxor"}


def plan(stmt: Statement, layouts, owner: str = "write") -> Plan:
    """Plan ``stmt`` over ``layouts`` (one :class:`~pgas.layout.Layout` per array slot).

    >>> from pgas.layout import Cyclic
    >>> from pgas.plan.model import Access, Statement
    >>> L = Cyclic().bind((8,), 4)
    >>> s = Statement(((0, 1, 7),), (Access(0, ((1,),), (1,)), Access(1, ((1,),), (0,))), write=0)
    >>> p = plan(s, (L, L))          # A[1:] = B[:-1] on Cyclic over 4 locales
    >>> len(p.pieces), p.messages, p.moved
    (4, 4, 7)
    """
    if owner not in OWNER_POLICIES:
        raise PlanError(f"owner policy must be one of {OWNER_POLICIES}, got {owner!r}")
    layouts = tuple(layouts)
    return _plan(stmt, layouts, owner)


@lru_cache(maxsize=512)
def _plan(stmt: Statement, layouts: tuple, owner: str) -> Plan:
    P = {L.num_locales for L in layouts}
    if len(P) != 1:
        raise PlanError(f"arrays of one statement must live on the same locales, got counts {sorted(P)}")
    P = P.pop()
    stmt.check_bounds([L.shape for L in layouts])
    if not stmt.separable:
        return plan_inspector(stmt, layouts, P)
    lats = lattices(stmt, layouts)
    pieces = list(itertools.product(*lats))
    raw = [tuple(access_on_piece(x, pc, layouts[x.slot]) for x in stmt.accesses) for pc in pieces]
    cands = _candidates(stmt, layouts, owner)
    scored = []
    for c in cands:
        locs = _build(stmt, pieces, raw, c, P)
        if locs is None:
            continue
        msgs = sum(len(lp.fetches) + len(lp.writebacks) for lp in locs)
        moved = sum(m.size for lp in locs for m in lp.fetches + lp.writebacks)
        scored.append(((moved, msgs, c != stmt.write), c, locs))
    best = min(scored, key=lambda s: s[0])
    _, c, locs = best
    acc = ACCUMULATE_OPS[stmt.reduce] if c != stmt.write and stmt.reduced_vars else None
    return Plan(stmt, P, "pieces", c, tuple((pc, r[c][0]) for pc, r in zip(pieces, raw)), locs,
                tuple((cc, key[0], key[1]) for key, cc, _ in scored), acc)


def _candidates(stmt: Statement, layouts, owner: str) -> list[int]:
    """Accesses that may own the iterations: the write, and with the cost policy one
    representative of every distinct (layout, M, c) of the other accesses (for a
    reduction only if its op can accumulate)."""
    if owner == "write" or (stmt.reduced_vars and stmt.reduce not in ACCUMULATE_OPS):
        return [stmt.write]
    seen, out = set(), []
    for k in [stmt.write] + [k for k in range(len(stmt.accesses)) if k != stmt.write]:
        x = stmt.accesses[k]
        key = (layouts[x.slot].key, x.M, x.c)
        if key not in seen:
            seen.add(key)
            out.append(k)
    return out


def _build(stmt: Statement, pieces, raw, own: int, P: int) -> tuple[LocalePlan, ...] | None:
    """Tasks and messages of every locale when access ``own`` owns the iterations;
    None if the write-backs would accumulate into overlapping regions."""
    accumulate = own != stmt.write and bool(stmt.reduced_vars)
    tasks = [[] for _ in range(P)]
    fetch = {}
    wback = {}
    pending = []                      # (executor, task index, access, builder key, use, norm info)
    for p, (pc, r) in enumerate(zip(pieces, raw)):
        e = r[own][0]
        shape = tuple(n for lat in pc for n in (lat.ntiles, lat.length))
        refs = []
        for a, (o, off, st) in enumerate(r):
            refs.append(Ref(o, off, st))
            if o == e:
                continue
            region, dims, flips = normalise(off, shape, st)
            key = (e, o, stmt.accesses[a].slot)
            book = wback if a == stmt.write else fetch
            if key not in book:
                book[key] = MessageBuilder(write=a == stmt.write and not accumulate)
            use = book[key].add(*region)
            pending.append((e, len(tasks[e]), a, key, a == stmt.write, use, dims, flips, shape))
        tasks[e].append([p, shape, refs])
    built = {}
    msg_index = {}
    for book, w in ((fetch, False), (wback, True)):
        for e in range(P):
            keys = sorted(k for k in book if k[0] == e)
            for i, k in enumerate(keys):
                built[(w, k)] = book[k].build()
                msg_index[(w, k)] = i
                if w and accumulate and not disjoint(built[(w, k)][0]):
                    return None
    for e, t, a, key, w, use, dims, flips, shape in pending:
        regions, uses = built[(w, key)]
        start, cs = uses[use]
        boff, bst = buffer_view(start, cs, dims, flips, shape, len(shape))
        ref = tasks[e][t][2][a]
        tasks[e][t][2][a] = Ref(ref.owner, ref.offset, ref.strides, msg_index[(w, key)], boff, bst)
    out = []
    for e in range(P):
        msgs = []
        for w in (False, True):
            book = wback if w else fetch
            keys = sorted(k for k in book if k[0] == e)
            msgs.append(tuple(Message(k[1], k[2], built[(w, k)][0],
                                      sum(region_size(r) for r in built[(w, k)][0])) for k in keys))
        out.append(LocalePlan(tuple(Task(p, shape, tuple(refs)) for p, shape, refs in tasks[e]), msgs[0], msgs[1]))
    return tuple(out)

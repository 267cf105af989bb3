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

Each locale plans only its own part (:func:`plan_local`): its pieces are found
with the owning access fixed to its grid coordinates, and its *peers* (the
locales that read or write its memory in this statement) with each other
access fixed to them, so the work grows with what the locale computes and
with the locales it talks to, never with the locale count.  Plans are cached
by structure (statement, layouts, owning access, locale), so a statement
repeated in a time-step loop is planned once.  Non-separable statements
(``A[i + j]``) go to :mod:`pgas.plan.inspector`.  A non-rectangular domain
(:attr:`~pgas.plan.model.Statement.parts`) is planned part by part, and the
pieces of all parts share the messages: still at most one per (peer, array).
A clipped domain (:attr:`~pgas.plan.model.Statement.clips`) is planned as its
bounding box, each piece clipped (:mod:`pgas.plan.clip`): pieces without a
domain point are dropped (here and in the peer lists), the others shrink to
their points' hull and carry the constraints that cut through them (cut into
a few bands first when an access reads through both variables of a bound).  Its
iterations are owned by the write.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from .clip import banded, coupled, holds
from .inspector import plan_inspector
from .model import PlanError, Statement
from .pieces import access_on_piece, part_lattices
from .result import GlobalPlan, Message, Plan, Ref, Task
from .transfers import MessageBuilder, buffer_view, disjoint, normalise, region_size

OWNER_POLICIES = ("write", "cost")

#: MPI accumulate op of each reduction (in-place ufunc name) that may run on a
#: read's owner; ``subtract`` accumulates the negated sum.
ACCUMULATE_OPS = {"add": "sum", "subtract": "sum", "multiply": "prod", "minimum": "min", "maximum": "max",
                  "bitwise_and": "band", "bitwise_or": "bor", "bitwise_xor": "bxor"}


def candidates(stmt: Statement, layouts, owner: str = "write") -> list[int]:
    """Accesses that may own the iterations: the write, and with the cost policy one
    representative of every distinct (layout, M, c) of the other accesses (for a
    reduction only if its op can accumulate)."""
    if owner not in OWNER_POLICIES:
        raise PlanError(f"owner policy must be one of {OWNER_POLICIES}, got {owner!r}")
    if owner == "write" or not stmt.separable or stmt.clips or (stmt.reduced_vars and stmt.reduce not in ACCUMULATE_OPS):
        return [stmt.write]
    seen, out = set(), []
    for k in [stmt.write] + [k for k in range(len(stmt.accesses)) if k != stmt.write]:
        x = stmt.accesses[k]
        key = (layouts[x.slot].key, x.M, x.c)
        if key not in seen:
            seen.add(key)
            out.append(k)
    return out


def plan_local(stmt: Statement, layouts, own: int, locale: int) -> Plan:
    """The :class:`Plan` of ``locale`` when access ``own`` owns the iterations.

    Pure and cached; the work is proportional to this locale's pieces and peers,
    never to the locale count.

    >>> from pgas.layout import Cyclic
    >>> from pgas.plan.model import Access, Statement
    >>> L = Cyclic().bind((8,), 4)
    >>> s = Statement(((0, 1, 7),), (Access(0, ((1,),), (1,)), Access(1, ((1,),), (0,))), write=0)
    >>> p = plan_local(s, (L, L), 0, 1)        # A[1:] = B[:-1] on Cyclic over 4 locales, locale 1
    >>> len(p.pieces), p.messages, p.moved, p.readers
    (1, 1, 2, (2,))
    """
    return _plan_local(stmt, tuple(layouts), own, locale)


def plans_made() -> int:
    """Plans :func:`plan_local` has made so far (calls it did not find in its cache)."""
    return _plan_local.cache_info().misses


@lru_cache(maxsize=1024)
def _plan_local(stmt: Statement, layouts: tuple, own: int, locale: int) -> Plan:
    P = _nlocales(layouts)
    stmt.check_bounds([L.shape for L in layouts])
    if not stmt.separable:
        return plan_inspector(stmt, layouts, P, locale)
    ox = stmt.accesses[own]
    coords = layouts[ox.slot].coords(locale)
    pieces = [pc for lats in part_lattices(stmt, layouts, _nonempty(stmt), fix=(own, coords))
              for pc in itertools.product(*lats)]
    cuts = None
    if stmt.clips:
        split = coupled(stmt.clips, stmt.accesses, own)
        got = [g for pc in pieces for g in banded(pc, stmt.clips, split)]
        pieces, cuts = [g[0] for g in got], [g[1] for g in got]
    raw = [tuple(access_on_piece(x, pc, layouts[x.slot]) for x in stmt.accesses) for pc in pieces]
    tasks, fetches, writebacks, valid = _build(stmt, pieces, raw, own, locale)
    if cuts is not None:
        tasks = tuple(Task(t.piece, t.shape, t.refs, cuts[t.piece]) for t in tasks)
    readers, writers = _peers(stmt, layouts, own, locale)
    acc = ACCUMULATE_OPS[stmt.reduce] if own != stmt.write and stmt.reduced_vars else None
    return Plan(stmt, P, locale, "pieces", own, tuple(pieces), tasks, fetches, writebacks,
                readers, writers, acc, valid)


def _nonempty(stmt: Statement) -> list:
    """The boxes of the statement's domain that hold iterations."""
    return [b for b in stmt.boxes() if all(n for _, _, n in b)]


def _nlocales(layouts) -> int:
    P = {L.num_locales for L in layouts}
    if len(P) != 1:
        raise PlanError(f"arrays of one statement must live on the same locales, got counts {sorted(P)}")
    return P.pop()


def plan(stmt: Statement, layouts, owner: str = "write") -> GlobalPlan:
    """Every locale's plan of ``stmt`` over ``layouts`` (one :class:`~pgas.layout.Layout`
    per array slot), with the owner policy applied over all locales: for tests and
    :func:`~pgas.plan.explain.describe` (a running statement plans only its own locale).

    >>> from pgas.layout import Cyclic
    >>> from pgas.plan.model import Access, Statement
    >>> L = Cyclic().bind((8,), 4)
    >>> s = Statement(((0, 1, 7),), (Access(0, ((1,),), (1,)), Access(1, ((1,),), (0,))), write=0)
    >>> p = plan(s, (L, L))          # A[1:] = B[:-1] on Cyclic over 4 locales
    >>> len(p.pieces), p.messages, p.moved
    (4, 4, 7)
    """
    layouts = tuple(layouts)
    P = _nlocales(layouts)
    cands = candidates(stmt, layouts, owner)
    scored = []
    for c in cands:
        locs = tuple(plan_local(stmt, layouts, c, r) for r in range(P))
        if all(lp.valid for lp in locs):
            scored.append(((sum(lp.moved for lp in locs), sum(lp.messages for lp in locs), c != stmt.write), c, locs))
    _, c, locs = min(scored, key=lambda t: t[0])
    return GlobalPlan(stmt, P, locs[0].kind if locs else "pieces", c, locs,
                      tuple((cc, key[0], key[1]) for key, cc, _ in scored), locs[0].accumulate if locs else None)


def choose(costs, weights=None) -> int:
    """Index of the best candidate from per-candidate ``(moved, messages, valid)`` totals
    summed over locales (ties go to the first, the write); a candidate counts as valid
    only if it was valid on every locale (its total equals the locale count).  An
    entry may carry a fourth total, its write-back messages (puts or accumulates).

    ``weights = (per element, per message)`` (seconds, from the calibrated model)
    ranks by the predicted time ``moved * per element + messages * per message``
    instead of fewest elements first, so that a candidate moving a few elements
    less in many more messages does not win (ties: fewest elements, then messages).
    A third weight prices each write-back message beyond its transfer (the peer
    round a remote write or accumulate adds after the compute), so that a
    reduction run where a read lives does not win by a few elements when its
    accumulates cost more than the elements saved.

    >>> choose([(100, 2, True), (96, 8, True)])                     # fewest elements
    1
    >>> choose([(100, 2, True), (96, 8, True)], weights=(1e-9, 1e-5))   # fewer messages pay more
    0
    >>> costs = [(120000, 18, True, 0), (1000, 10, True, 4)]           # mvt: x[i] += A[i, j] * y[j]
    >>> choose(costs, weights=(2e-9, 5e-6)), choose(costs, weights=(2e-9, 5e-6, 2e-4))
    (1, 0)
    """
    def key(i):
        moved, msgs, _, *wb = costs[i]
        t = 0.0
        if weights is not None:
            t = moved * weights[0] + msgs * weights[1]
            if len(weights) > 2 and wb:
                t += wb[0] * weights[2]
        return (t, moved, msgs)
    best = None
    for i, (moved, msgs, ok, *_) in enumerate(costs):
        if ok and (best is None or key(i) < key(best)):
            best = i
    return 0 if best is None else best


def _peers(stmt: Statement, layouts, own: int, me: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(readers, writers)``: the other locales that read this locale's memory, or
    write (back) into it, in this statement.  For each access that is not the owning
    one, the iterations where it lies on this locale are cut by the owning access
    alone, and each piece's executor is a peer."""
    readers, writers = set(), set()
    if layouts[0].num_locales == 1:
        return (), ()                          # nobody else
    ox = stmt.accesses[own]
    OL = layouts[ox.slot]
    done = set()
    for k, x in enumerate(stmt.accesses):
        role = writers if k == stmt.write else readers
        if k == own or (x.slot, x.M, x.c, k == stmt.write) in done:
            continue
        done.add((x.slot, x.M, x.c, k == stmt.write))
        here = layouts[x.slot].coords(me)
        for pc in (pc for lats in part_lattices(stmt, layouts, _nonempty(stmt), only=(k, own), fix=(k, here))
                   for pc in itertools.product(*lats) if holds(pc, stmt.clips)):
            g = tuple(c + sum(a * lat.first for a, lat in zip(row, pc)) for row, c in zip(ox.M, ox.c))
            e = OL.owner(g)
            if e != me:
                role.add(e)
    return tuple(sorted(readers)), tuple(sorted(writers))


#: Regions one message builder coalesces new footprints with: a message whose
#: footprints do not merge (a triangle's rows reading one element each) is built in
#: chunks of this many regions, each coalesced alone, so planning stays linear in
#: the footprints.  Footprints that do merge (overlapping rows) stay in one region.
CHUNK = 64


class _Chunked:
    """A :class:`MessageBuilder` in chunks of :data:`CHUNK` regions, built into
    one message (the chunks' regions one after the other)."""

    def __init__(self, write: bool) -> None:
        self.write = write
        self.builders: list = []
        self.ids: list = []                       # per use: (builder, its use id there)

    def add(self, offset: int, counts, strides) -> int:
        if not self.builders or len(self.builders[-1].regions) >= CHUNK:
            self.builders.append(MessageBuilder(write=self.write))
        self.ids.append((len(self.builders) - 1, self.builders[-1].add(offset, counts, strides)))
        return len(self.ids) - 1

    def build(self):
        if len(self.builders) == 1:
            return self.builders[0].build()
        regions, parts, pos = [], [], 0
        for b in self.builders:
            r, u = b.build()
            parts.append((u, pos))
            regions += r
            pos += sum(region_size(x) for x in r)
        uses = []
        for b, u in self.ids:
            got, shift = parts[b]
            uses.append((shift + got[u][0], got[u][1]))
        return tuple(regions), tuple(uses)


def _build(stmt: Statement, pieces, raw, own: int, me: int):
    """``(tasks, fetches, writebacks, valid)`` of locale ``me`` when access ``own`` owns
    the iterations; ``valid`` is False if the write-backs would accumulate into
    overlapping regions."""
    accumulate = own != stmt.write and bool(stmt.reduced_vars)
    tasks = []
    books = ({}, {})                  # fetches, write-backs: (owner, slot) -> MessageBuilder
    pending = []                      # (task index, access, write?, key, use, dims, flips, shape)
    for p, (pc, r) in enumerate(zip(pieces, raw)):
        shape = tuple(n for lat in pc for n in (lat.ntiles, lat.length))
        refs = []
        for a, (o, off, st) in enumerate(r):
            refs.append(Ref(o, off, st))
            if o == me:
                continue
            w = a == stmt.write
            region, dims, flips = normalise(off, shape, st)
            key = (o, stmt.accesses[a].slot)
            book = books[w]
            if key not in book:
                book[key] = _Chunked(write=w and not accumulate)
            pending.append((len(tasks), a, w, key, book[key].add(*region), dims, flips, shape))
        tasks.append([p, shape, refs])
    built, index, valid = {}, {}, True
    for w, book in enumerate(books):
        for i, k in enumerate(sorted(book)):
            built[(w, k)] = book[k].build()
            index[(w, k)] = i
            if w and accumulate and not disjoint(built[(w, k)][0]):
                valid = False
    for t, a, w, key, use, dims, flips, shape in pending:
        regions, uses = built[(w, key)]
        start, cs = uses[use]
        boff, bst = buffer_view(start, cs, dims, flips, shape, len(shape))
        ref = tasks[t][2][a]
        tasks[t][2][a] = Ref(ref.owner, ref.offset, ref.strides, index[(w, key)], boff, bst)
    msgs = tuple(tuple(Message(k[0], k[1], built[(w, k)][0], sum(region_size(r) for r in built[(w, k)][0]))
                       for k in sorted(book)) for w, book in enumerate(books))
    return tuple(Task(p, shape, tuple(refs)) for p, shape, refs in tasks), msgs[0], msgs[1], valid

"""Consecutive statements' kernels as one compiled call, interleaved by rows.

A compiled step (:mod:`pgas.array.step`) replays each statement that exchanges no
messages on this locale by its kept row-kernel call (:mod:`pgas.exec.fuserows`): one
pass over the written array and every operand per statement.  Jacobi's two sweeps,
``B = f(A)`` then ``A = g(B)``, read and write each array twice per step, and the
second sweep finds in the cache none of what the first wrote (a LARGE grid does not
fit).  A *chain* runs a run of such statements as one compiled call that advances them
together over their outermost loop: a block of rows of the first statement, then of
each later one as many rows as its dependences on the earlier ones allow, and so on,
so that the rows a statement reads were written (or read) moments before, while they
are in cache.  Every statement advances by at most a block of rows at a time, so one
that depends on none before it stays near them too.  The rows of one statement still run in order, each row by the same
code as the statement's own kernel, so the values are the same, bit for bit, as the
statements run one after the other.

Dependences come from the calls' own arguments: each view of a call (the written one,
then each operand's) touches, in its outer iteration ``r``, the bytes
``[a + r R, a + r R + E)`` of memory (``a`` its first element's address, ``R`` its
outer stride, ``E`` the extent of one outer iteration; a loop nest of one axis, whose
rows are its elements, alike).  For a later statement ``j`` and an earlier ``i``, every
pair of views of which one is written is compared: row ``r`` of ``j`` may run once
every row of ``i`` whose bytes meet it has run (a read of what ``i`` writes, a write of
what ``i`` reads or writes).  ``need[i][j][e]``, the rows of ``i`` that must have run
before rows ``0:e`` of ``j`` may, is kept for every ``e``; the driver runs the rows of
``j`` that every earlier statement's progress allows.  Intervals cover every byte
between a row's first and last element, so views that interleave (a strided column
beside another) count as meeting: a dependence can be found where there is none, never
missed.  A written view read back through broadcasting (outer stride 0) makes every
row depend on all of ``i``: the chain then runs ``j`` after ``i``, as the statements
would run.
"""

from __future__ import annotations

import functools

import numpy as np

from . import fusecode, fuserows, workers

#: Bytes of written rows a chain advances its first statement by at a time: with the
#: rows the later statements read behind it, a block stays in a core's L2 cache.
CHUNK_BYTES = 1 << 17
#: The most rows (iterations of the outer loop) a later statement of a chain may have:
#: each keeps an array of that length per earlier statement it depends on.
MAX_ROWS = 1 << 18
#: The most entries (8 bytes each) a chain keeps of what its statements wait for: one per
#: row of a later statement per earlier one it depends on.  A chain ends before the
#: statement that would take it past this (a long chain over large arrays would hold
#: many times their memory); the next chain starts there.
MAX_NEED = 1 << 20

#: Chains made (compiled calls built) and run.
stats = {"built": 0, "runs": 0}


class Chain:
    """Statements' row-kernel calls run as one compiled call (:meth:`run`); ``lags[i][j]``:
    the most rows statement ``j`` keeps behind statement ``i`` (None: independent),
    ``chunks[j]``: the rows statement ``j`` advances by at most."""

    __slots__ = ("fn", "args", "lags", "chunks", "count")

    def run(self) -> None:
        self.fn(*self.args)
        stats["runs"] += 1

    def describe(self, first: int = 1) -> str:
        """The chain's blocks and dependences, its statements numbered from ``first``: for
        each later statement, each earlier one it waits on, with the lag (how many
        iterations of the earlier one's outer loop past a row's own index that row waits
        for, at most)."""
        parts = []
        for j in range(1, len(self.lags)):
            on = [f"{first + i} (lag {self.lags[i][j]})" for i in range(j) if self.lags[i][j] is not None]
            parts.append(f"statement {first + j} " + ("waits on " + ", ".join(on) if on else "waits on none"))
        return f"blocks of {'/'.join(map(str, self.chunks))} rows; " + "; ".join(parts)


def rows_of(kernel):
    """Where a row kernel's split cuts its arguments (:func:`pgas.exec.fuserows.offsets`),
    or None for a kernel of another kind."""
    cut = getattr(kernel, "cut", None)
    if type(kernel) is not workers.Split or not isinstance(cut, functools.partial) or cut.func is not fuserows.cut:
        return None
    return cut.args[0]


def make(calls) -> "Chain | None":
    """A :class:`Chain` of ``calls``, one ``(kernel, args)`` row-kernel call per statement
    in program order (``kernel`` a :class:`pgas.exec.workers.Split`, run whole: the locale
    runs one thread), or None where they do not fit one: fewer than two, a kernel of
    another kind, no iteration, a later statement of more than :data:`MAX_ROWS` rows.
    The chain may cover only the first ``count`` calls (:data:`MAX_NEED`)."""
    if len(calls) < 2:
        return None
    wheres, views, rows = [], [], []
    for j, (kernel, args) in enumerate(calls):
        where = rows_of(kernel)
        dims = args[0]
        if where is None or min(dims) <= 0 or (j and dims[0] > MAX_ROWS):
            return None
        got = _views(where, args)
        if got is None:
            return None
        wheres.append(where)
        views.append(got)
        rows.append(int(dims[0]))
    m = len(calls)
    lags = [[None] * m for _ in range(m)]
    at = np.full((m, m), -1, dtype=np.int64)
    needs, size = [], 0
    for j in range(1, m):
        r = np.arange(rows[j], dtype=np.int64)
        mine = []
        for i in range(j):
            last = _last(views[i], rows[i], views[j], r)
            if last is not None:
                mine.append((i, last))
        if j > 1 and size + len(mine) * (rows[j] + 1) > MAX_NEED:
            m = j                              # (statements j on: the next chain)
            break
        for i, last in mine:
            need = np.zeros(rows[j] + 1, dtype=np.int64)
            np.maximum.accumulate(last + 1, out=need[1:])
            lags[i][j] = int((last - r).max())
            at[i, j] = size
            size += len(need)
            needs.append(need)
    lags, at, calls, wheres, views = [x[:m] for x in lags[:m]], at[:m, :m].copy(), calls[:m], wheres[:m], views[:m]
    chain = Chain()
    chain.lags = lags
    chain.chunks = tuple(max(1, CHUNK_BYTES // (m * v[0][2])) for v in views)
    chain.count = m
    chain.fn, flat = _driver([k.kernel for k, _ in calls], wheres, [a for _, a in calls])
    need = np.concatenate(needs) if needs else np.zeros(1, dtype=np.int64)
    chain.args = (np.array(chain.chunks, dtype=np.int64), at, need, *flat)
    stats["built"] += 1
    return chain


def _views(where, args):
    """Per view of a row-kernel call (the written one first): ``(address of its first
    element, outer stride, extent of one outer iteration)`` in bytes; None where a
    stride is negative."""
    dims = args[0]
    got = []
    for o, s, step in where:
        flat = args[o - 1]
        full = tuple(args[s]) if step is None else tuple(args[s]) + (step,)
        if len(full) != len(dims) or any(x < 0 for x in full):
            return None
        size = flat.itemsize
        extent = sum((n - 1) * x for n, x in zip(dims[1:], full[1:])) + 1
        got.append((flat.__array_interface__["data"][0] + int(args[o]) * size, full[0] * size, extent * size))
    return got


def _last(vi, ni: int, vj, r):
    """Per row ``r`` of a later statement (views ``vj``), the last row of an earlier one
    (views ``vi``, ``ni`` rows) that it depends on, -1 where none; None where no row
    depends on any: over the pairs of views of which one is written (each list's first)."""
    worst = None
    for a, (xa, ra, ea) in enumerate(vi):
        for b, (yb, rb, eb) in enumerate(vj):
            if a and b:                        # two reads: no dependence
                continue
            lo = yb + r * rb
            hi = lo + eb                       # row r of j: bytes [lo, hi)
            if ra == 0:
                meets = (xa < hi) & (lo < xa + ea)
                last = np.full(len(r), ni - 1, dtype=np.int64)
            else:
                last = np.minimum((hi - xa - 1) // ra, ni - 1)
                meets = last >= np.maximum((lo - xa - ea) // ra + 1, 0)
            if meets.any():
                last = np.where(meets, last, -1)
                worst = last if worst is None else np.maximum(worst, last)
    return worst


def _driver(kernels, wheres, argss):
    """The compiled driver of a chain and its arguments after ``chunks``, ``at`` and
    ``need``: each call's arguments, an array passed once however many views read it."""
    names, flat, index = [], [], {}
    per_call = []
    for args in argss:
        mine = []
        for a in args:
            if isinstance(a, np.ndarray):
                if id(a) not in index:
                    index[id(a)] = f"x{len(flat)}"
                    flat.append(a)
                    names.append(index[id(a)])
                mine.append(index[id(a)])
            else:
                mine.append(f"x{len(flat)}")
                names.append(mine[-1])
                flat.append(a)
        per_call.append(mine)
    modules = [k.py_func.__module__ for k in kernels]
    src = _source(modules, wheres, per_call, names, [len(a[0]) > 1 for a in argss])
    fn = _drivers.get(src)
    if fn is None:
        if len(_drivers) >= DRIVERS:
            _drivers.clear()
        fn = _drivers[src] = fusecode.load_module(src, "chain").chain
    return fn, flat


#: Drivers loaded in this process, by source: a chain made again (its arrays replaced)
#: reuses its compiled driver rather than loading it from the cache again.
_drivers: dict = {}
DRIVERS = 64


def _source(modules, wheres, per_call, names, outer) -> str:
    """The driver: each statement in turn advances by at most its block of rows, as far
    as every earlier one's progress allows (``need``), until every one is done (a later
    statement may end first, if it depends on none of an earlier one's last rows)."""
    m = len(modules)
    lines = ["import numpy as np", "from numba import njit"]
    lines += [f"from {mod} import kernel as k{j}" for j, mod in enumerate(modules)]
    lines += ["", "", "@njit(cache=True, nogil=True)", f"def chain(chunks, at, need, {', '.join(names)}):"]
    for j, mine in enumerate(per_call):
        lines += [f"    n{j} = {mine[0]}[0]", f"    p{j} = 0"]
    lines.append(f"    while {' or '.join(f'p{j} < n{j}' for j in range(m))}:")
    for j, (mine, where) in enumerate(zip(per_call, wheres)):
        lines.append(f"        e = min(p{j} + chunks[{j}], n{j})")
        for i in range(j):
            lines += [f"        a = at[{i}, {j}]",
                      f"        if a >= 0 and p{i} < n{i}:",
                      f"            e = min(e, np.searchsorted(need[a:a + n{j} + 1], p{i}, side='right') - 1)"]
        lines.append(f"        if e > p{j}:")
        call = [f"(e - p{j},) + {mine[0]}[1:]"]
        moved = {o: (s, step) for o, s, step in where}
        for q in range(1, len(mine)):
            if q not in moved:
                call.append(mine[q])
                continue
            s, step = moved[q]
            call.append(f"{mine[q]} + p{j} * " + (f"{mine[s]}[0]" if outer[j] or step is None else str(step)))
        lines += [f"            k{j}({', '.join(call)})", f"            p{j} = e"]
    return "\n".join(lines) + "\n"

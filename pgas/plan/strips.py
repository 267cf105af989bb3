"""Strip-mining one locale's plan: its reads fetched and computed in strips.

A plan whose remote reads need more buffer than a limit is cut into *strips*:
consecutive groups of its tasks, a task too big for one strip being cut along
one of its lattice axes (never one the write reduces over, so every element's
reduction stays in one task, computed in NumPy's order).  Each strip has its own
fetch messages, built as the planner builds them; its sub-tasks keep their write
references into the whole plan's write-back buffers.  With two strips in flight
at once (the next one's transfers start before the current one is computed),
each strip gets half the limit.

>>> from pgas.layout import Block
>>> from pgas.plan.model import Access, Statement
>>> from pgas.plan.planner import plan_local
>>> L = Block().bind((64,), 2)
>>> s = Statement(((0, 1, 64),), (Access(0, ((1,),), (0,)), Access(1, ((-1,),), (63,))), write=0)
>>> p = plan_local(s, (L, L), 0, 0)                 # A[:] = B[::-1]: locale 0 reads all of its half from 1
>>> [sum(m.size for m in st.fetches) for st in strips(p, (8, 8), 128)[1]]
[8, 8, 8, 8]
"""

from __future__ import annotations

from dataclasses import dataclass

from .lattice import Lattice
from .result import Message, Ref, Task
from .transfers import MessageBuilder, buffer_view, normalise, region_size


@dataclass(frozen=True)
class Strip:
    """One strip: sub-tasks (``piece`` indexing the ``pieces`` that :func:`strips` returns) and their fetches."""

    tasks: tuple[Task, ...]
    fetches: tuple[Message, ...]


def footprint(plan, itemsizes) -> int:
    """Bytes of the plan's fetch buffers (``itemsizes`` per array slot)."""
    return sum(m.size * itemsizes[m.slot] for m in plan.fetches)


def strips(plan, itemsizes, limit: int, count: int = 1):
    """``(pieces, strips)``: the strips of ``plan`` whose fetch buffers hold at most
    ``limit // 2`` bytes each, and about ``count`` strips or more (each at most
    ``footprint / count`` bytes; as far as cutting tasks along non-reduced axes
    allows), with the lattices of their sub-tasks; None when all of the plan's
    fetches fit in ``limit`` and ``count`` is 1."""
    foot = footprint(plan, itemsizes)
    if foot <= limit and count <= 1:
        return None
    budget = max(1, limit // 2 if foot > limit else limit)
    return _strips(plan, tuple(itemsizes), budget, min(budget, -(-foot // max(1, count))))


def forced(plan, itemsizes, limit: int) -> int:
    """The least strip count the buffer limit forces on ``plan`` (1 when its fetches fit)."""
    foot = footprint(plan, itemsizes)
    return 1 if foot <= limit else -(-foot // max(1, limit // 2))


def _task_bytes(plan, task, itemsizes) -> int:
    me, W = plan.locale, plan.stmt.write
    n = 0
    for a, r in enumerate(task.refs):
        if a != W and r.owner != me:
            region, _, _ = normalise(r.offset, task.shape, r.strides)
            n += region_size(region) * itemsizes[plan.stmt.accesses[a].slot]
    return n


def _cut_axis(plan, task) -> int | None:
    red = set(plan.reduce_axes)
    axes = [a for a, n in enumerate(task.shape) if n > 1 and a not in red]
    return max(axes, key=lambda a: task.shape[a]) if axes else None


def _sub(plan, pc, task, axis, start, n):
    """The part ``[start, start + n)`` of ``task`` (on lattices ``pc``) along lattice
    ``axis``: (lattices, task)."""
    pc = list(pc)
    v = axis // 2
    lat = pc[v]
    if axis % 2 == 0:
        pc[v] = Lattice(lat.first + lat.dt * start, lat.du, lat.length, lat.dt, n)
    else:
        pc[v] = Lattice(lat.first + lat.du * start, lat.du, n, lat.dt, lat.ntiles)
    shape = task.shape[:axis] + (n,) + task.shape[axis + 1:]
    refs = tuple(Ref(r.owner, r.offset + r.strides[axis] * start, r.strides, r.msg,
                     r.boffset + (r.bstrides[axis] * start if r.bstrides else 0), r.bstrides) for r in task.refs)
    return tuple(pc), Task(task.piece, shape, refs)


def _split(plan, pc, task, itemsizes, budget, out, target=None) -> None:
    """Append ``(lattices, task, bytes)`` parts of ``task`` of at most ``budget`` bytes
    each (cut along one non-reduced axis, then further along others if needed); with
    ``target``, first cut into parts of about ``target`` bytes (not cut again for
    bytes every part repeats, such as a vector the cut axis does not index)."""
    b = _task_bytes(plan, task, itemsizes)
    axis = _cut_axis(plan, task)
    aim = budget if target is None else target
    if b <= aim or axis is None:
        out.append((pc, task, b))
        return
    ext = task.shape[axis]
    k = min(ext, -(-b // max(aim, 1)))
    step = -(-ext // k)
    for start in range(0, ext, step):
        spc, sub = _sub(plan, pc, task, axis, start, min(step, ext - start))
        _split(plan, spc, sub, itemsizes, budget, out)


def _strips(plan, itemsizes, budget: int, target: int | None = None):
    """Strips of at most ``budget`` bytes each, of about ``target`` bytes when given."""
    aim = budget if target is None else target
    parts = []                                       # [(lattices, task, bytes)]
    for task in plan.tasks:
        _split(plan, plan.pieces[task.piece], task, itemsizes, budget, parts, target)
    groups, cur, used = [], [], 0
    for part in parts:
        if cur and used + part[2] > aim:
            groups.append(cur)
            cur, used = [], 0
        cur.append(part)
        used += part[2]
    if cur:
        groups.append(cur)
    pieces, out = [], []
    for group in groups:
        tasks, fetches = _build_reads(plan, group, len(pieces))
        pieces += [pc for pc, _, _ in group]
        out.append(Strip(tasks, fetches))
    return tuple(pieces), tuple(out)


def _build_reads(plan, group, first: int):
    """The strip's tasks, their remote reads pointing into the strip's own fetches."""
    me, W = plan.locale, plan.stmt.write
    book, pending, tasks = {}, [], []
    for t, (_, task, _) in enumerate(group):
        refs = list(task.refs)
        for a, r in enumerate(refs):
            if a == W or r.owner == me:
                continue
            region, dims, flips = normalise(r.offset, task.shape, r.strides)
            key = (r.owner, plan.stmt.accesses[a].slot)
            if key not in book:
                book[key] = MessageBuilder(write=False)
            pending.append((t, a, key, book[key].add(*region), dims, flips))
        tasks.append([first + t, task.shape, refs])
    keys = sorted(book)
    built = {k: book[k].build() for k in keys}
    for t, a, key, use, dims, flips in pending:
        start, cs = built[key][1][use]
        shape = tasks[t][1]
        boff, bst = buffer_view(start, cs, dims, flips, shape, len(shape))
        r = tasks[t][2][a]
        tasks[t][2][a] = Ref(r.owner, r.offset, r.strides, keys.index(key), boff, bst)
    fetches = tuple(Message(k[0], k[1], built[k][0], sum(region_size(r) for r in built[k][0])) for k in keys)
    return tuple(Task(p, s, tuple(r)) for p, s, r in tasks), fetches

"""A planned group of statements compiled for repeated runs (a cached polyshift).

:func:`pgas.exec.group.run_together` does, every run, what a plan that is run
again and again on the same arrays could do once: it groups the fetches into
messages, makes their buffers, synchronises with its peers by notices (READY,
then DONE_READ), reads one-sided and flushes, and makes a strided view per task
and operand.  :class:`ShiftGroup` does all of that once per plan and once per
binding (the arrays a run uses):

- every message becomes a persistent two-sided transfer
  (:class:`pgas.comm.p2p.Transfers`): the owner packs the regions a reader's
  plan fetches into a send buffer kept with the binding and sends it
  (:class:`pgas.comm.p2p.PackedSends`; the owner plans its readers' fetches
  from it with the pure planner, as its readers do), the reader receives into
  a buffer kept for the plan.  The data message itself says the owner's data
  is ready: no notice at all; and the owner never waits for its readers (a
  send in flight is waited for before its buffer is packed again);
- every task is a pair of views made once per binding (destination, source:
  the local storage or the receive buffer), so a run is ``dst[...] = src``;
  the local copies are done while the messages are in flight.

A run therefore only starts its requests, copies, waits and copies.  It applies
when (replicated conditions, the same on every locale) every statement is
groupable, aggregation is on and no statement reads an array the group writes;
otherwise :meth:`ShiftGroup.run` returns False and the caller runs the generic
path (:func:`pgas.exec.group.run_together`).

Arrays with ghost cells are sent too, even when the reader's ghost cells are
current: proving them current takes the owner's write version, a notice round
trip, which costs more than the border it saves (a small pshift with ghost reads
and notices takes several times as long as compiled).  The generic path, for
groups run once, reads current ghost cells instead of fetching.
"""


from __future__ import annotations

import weakref

import numpy as np

from .. import comm
from ..comm import trace
from ..comm.p2p import PackedSends, RegionType, Transfers, segments, start_all, wait
from ..plan import plan_local
from .copies import Copies
from .group import groupable
from .tasks import TaskContext, evaluate, evaluate_boxes, large, strided

#: Off: every group takes the generic path (for tests of that path).
ENABLED = True


class ShiftGroup:
    """The compiled form of planned items ``[(low, plan), ...]`` (:func:`pgas.array.statements.plan_group`).

    ``keep``: hold the views and send requests of the last binding between runs
    (a user's plan, freed with it); otherwise they are made per run and freed."""

    def __init__(self, items, keep: bool = True) -> None:
        self.items = items
        self.keep = keep
        self._built = False
        self.ok = False
        self._binding = None

    # -- structure (per plan) --------------------------------------------------
    def _build(self) -> None:
        self._built = True
        items = self.items
        if not items or not all(groupable(p) for _, p in items):
            return
        keys, written, read = {}, set(), set()
        for low, _ in items:
            stmt = low.stmt
            for a in low.arrays:
                keys.setdefault(id(a), a)
            written.add(id(low.arrays[stmt.accesses[stmt.write].slot]))
            read.update(id(low.arrays[x.slot]) for j, x in enumerate(stmt.accesses) if j != stmt.write)
        if written & read:
            return
        self.written_read = (written, read)
        # bound to arrays where a destination is a source (an in-place shift), a run snapshots
        # the local sources of its moves first; one evaluating expressions takes the generic path
        self.moves_only = all(low.prog[0] in ("acc", "const") for low, _ in items)
        me = items[0][1].locale
        self.keys = list(keys)                      # array identities, in first appearance
        self.protos = list(keys.values())           # the arrays planned with (a run rebinds them)
        self.written = [k for k, a in enumerate(self.protos) if id(a) in written]
        self.recvs, self.bufs, self.sends, self.types, self.xfer = peer_transfers(items, me)
        self.peers = bool(self.recvs or self.sends)
        # tasks: ("copy", k, task, src access) / ("const", k, task, value) / ("eval", k, task)
        self.tasks = []
        for k, (low, plan) in enumerate(items):
            prog = low.prog
            for task in plan.tasks:
                if prog[0] == "acc":
                    self.tasks.append(("copy", k, task, prog[1]))
                elif prog[0] == "const":
                    self.tasks.append(("const", k, task, prog[1]))
                else:
                    self.tasks.append(("eval", k, task, None))
        self.ok = True

    def describe(self) -> str:
        """What a run of this group does on this locale, for :func:`pgas.explain`: compiled
        (its messages, local moves and how they are made) or why it takes the generic path."""
        if not ENABLED:
            return "  runs by the generic path (compiled groups are off: shiftgroup.ENABLED)"
        if not self._built:
            self._build()
        if not self.ok:
            return ("  runs by the generic path (pgas.exec.group.run_together): a statement is not groupable, "
                    "or the group reads an array it writes")
        me = self.items[0][1].locale
        recv = sorted({p for p, _, _ in self.recvs})
        send = sorted({r for r, _, _ in self.sends})
        received = sum(b.size for per in self.bufs for b in per if b is not None)
        moves = [(kind, t.refs[x].msg < 0 if kind == "copy" else True) for kind, _, t, x in self.tasks]
        early = sum(1 for kind, e in moves if kind != "eval" and e)
        late = sum(1 for kind, e in moves if kind == "copy" and not e)
        evals = sum(1 for kind, _ in moves if kind == "eval")
        b = self._binding
        how = ("in one numba kernel" if b is not None and (b.early.kernel or b.late.kernel) else
               "by NumPy, or in one numba kernel per list once pg.config(fuse=...) allows (pgas.exec.copies)")
        return "\n".join([
            f"  runs as a compiled group (pgas.exec.shiftgroup), on locale {me}: persistent two-sided "
            f"transfers, no notices, no one-sided gets",
            f"  receives: {_n(len(self.recvs), 'message')} from locales {recv} "
            f"({received} elements, into kept buffers)",
            f"  sends: {_n(len(self.sends), 'message')} to locales {send} "
            f"({sum(t.size for _, parts, _ in self.sends for _, t in parts)} elements, packed at each run's start)",
            f"  local moves: {early} while the messages travel, {late} from the receive buffers, "
            f"{evals} evaluated per run; moved {how}",
            ("  a repeated call on the same arrays reuses its views (ShiftGroup.rerun); " if self.keep else "  ")
            + "the statements' plans follow (the generic path's)"])

    # -- binding (per set of arrays) -------------------------------------------
    def _bind(self, lows):
        real = {}
        for (low0, _), (low, _) in zip(self.items, lows):
            for a0, a in zip(low0.arrays, low.arrays):
                real[id(a0)] = a
        arrays = [real[k] for k in self.keys]
        b = self._binding
        if b is not None and b.same(arrays):
            return b
        written, read = self.written_read
        inplace = {id(real[k]) for k in written} & {id(real[k]) for k in read}
        if inplace and not self.moves_only:
            return None
        self._drop()
        early, late, evals, snaps = [], [], [], []
        for kind, k, task, x in self.tasks:
            low, plan = lows[k]
            stmt = plan.stmt
            ref = task.refs[stmt.write]
            dst = strided(low.arrays[stmt.accesses[stmt.write].slot].store.storage, ref.offset, ref.strides, task.shape)
            if kind == "copy":
                src = task.refs[x]
                if src.msg < 0:
                    a = low.arrays[stmt.accesses[x].slot]
                    view = strided(a.store.storage, src.offset, src.strides, task.shape)
                    if id(a) in inplace:              # copied before any move writes it (the paper's temporary)
                        snap = np.empty(task.shape, a.dtype)
                        snaps.append((snap, view))
                        view = snap
                    early.append((dst, view))
                else:
                    late.append((dst, strided(self.bufs[k][src.msg], src.boffset, src.bstrides, task.shape)))
            elif kind == "const":
                early.append((dst, x))
            else:
                evals.append((k, task, dst))
        sends = PackedSends([(r, [(real[akey].store.storage, t) for akey, t in parts], tag)
                             for r, parts, tag in self.sends])
        wins = list({id(a.store.window): a.store.window for a in arrays}.values())
        b = _Binding(arrays, snaps, early, late, evals, sends, wins, self.xfer)
        if self.keep:
            self._binding = b
        return b

    def _drop(self) -> None:
        if self._binding is not None:
            self._binding.sends.free()
            self._binding = None

    # -- running ---------------------------------------------------------------
    def run(self, lows) -> bool:
        """Run the group on ``lows`` (the items with their arrays rebound); False (nothing
        done) if this group does not qualify, the same on every locale."""
        if not ENABLED:
            return False
        if not self._built:
            self._build()
        if not self.ok:
            return False
        b = self._bind(lows)
        if b is None:
            return False
        self._go(b, lows)
        if not self.keep:
            b.sends.free()
        return True

    def rerun(self, rebind, before_write) -> bool:
        """Run again on the arrays of the kept binding, if ``rebind`` (prototype array id:
        array) names exactly those (the same objects): the fast path of a repeated call,
        without lowering, rebinding or views (the caller's checks done).  Calls
        ``before_write(array, None)`` on each written array first (the front end's
        ``before_write``: pending readers materialised, the write counted).
        False, with nothing done, where the call needs :meth:`run` (another binding, tasks
        evaluated per run, compiled groups off)."""
        b = self._binding
        if b is None or b.evals or not ENABLED:
            return False
        refs = b.refs
        for k, p in enumerate(self.protos):
            if refs[k]() is not rebind.get(id(p), p):
                return False
        self._again(b, before_write)
        return True

    def rerun_arrays(self, arrays, before_write) -> bool:
        """:meth:`rerun` with the arrays given in :attr:`keys` order (a caller that knows
        that order, a compiled ``pg.pshift`` plan, saves building the mapping)."""
        b = self._binding
        if b is None or b.evals or not ENABLED:
            return False
        refs = b.refs
        if len(arrays) != len(refs):
            return False
        for k, a in enumerate(arrays):
            if refs[k]() is not a:
                return False
        self._again(b, before_write)
        return True

    def _again(self, b, before_write) -> None:
        refs = b.refs
        for k in self.written:
            before_write(refs[k](), None)
        self._go(b, None)

    def _go(self, b, lows) -> None:
        if self.peers:
            t0 = trace.on and trace.now()
            for w in b.wins:                          # my async updates done, my stores visible
                if w.pending:                         # (pgas.exec.notices.sync_windows, inlined)
                    w.complete()
                w.win.Sync()
            if t0:
                trace.add("mpi", "MPI_Win_sync", t0)
        sends = b.sends
        if sends.packs:
            sends.pack()                              # (after its last sends completed)
        start_all(b.requests, b.counts)
        sends.started()                               # read from the packed copies: never waited for here
        if b.snaps:
            b.snaps()                                 # in-place sources, before any move writes them
        b.early()                                     # local moves while the messages travel
        if b.recvs:
            wait(b.recvs)
        b.late()
        t0 = trace.on and b.evals and trace.now()
        for k, task, dst in b.evals:
            low, plan = lows[k]
            flats = [a.store.storage for a in low.arrays]
            ctx = TaskContext(low, plan, task, flats, self.bufs[k], True)
            dst[...] = (evaluate_boxes(low.prog, ctx, task.shape) if large(low.prog, task.shape)   # bounded temporaries
                        else np.broadcast_to(evaluate(low.prog, ctx), task.shape))
        if t0:
            trace.add("kernel", "NumPy tasks", t0)
        comm.statement_done()

    def __del__(self) -> None:                   # an unfreed plan or template: its MPI handles (on MPI's thread)
        comm.free_handles(self.free)

    def free(self) -> None:
        """Release the MPI requests and datatypes."""
        self._drop()
        if self._built and self.ok:
            self.xfer.free()
            for t in self.types:
                t.free()
        self.ok, self._built = False, True


def _read_here(items, reader: int, me: int) -> dict:
    """What locale ``reader`` fetches from ``me`` for planned items ``[(low, plan), ...]``
    (the owner plans its readers' fetches as they do): ``{id of an array: (array,
    [regions])}``, in order of each array's first fetch."""
    out: dict = {}
    for low, plan in items:
        rp = plan_local(low.stmt, tuple(a.layout for a in low.arrays), plan.owning, reader)
        for m in rp.fetches:
            if m.peer == me:
                out.setdefault(id(low.arrays[m.slot]), (low.arrays[m.slot], []))[1].extend(m.regions)
    return out


def transfers(items, me: int):
    """The messages of planned items ``[(low, plan), ...]`` on locale ``me`` as persistent
    two-sided transfers: ``(recvs, bufs, sends, types, xfer)``.  One receive per (array,
    owner), the regions of every fetch from that owner back to back as
    :func:`pgas.exec.group.run_together` has them: ``recvs`` ``[(peer, buffer, tag)]``,
    ``bufs[k][j]`` the part of a buffer fetch ``j`` of item ``k`` reads, ``xfer`` the
    receives made (:class:`Transfers`).  One send per (reader, array read here), its
    regions planned here as the reader plans them (the pure planner): ``sends``
    ``[(reader, id of the array in the items, RegionType, tag)]`` (bound to storage by
    the caller), ``types`` their datatypes (freed by the caller).  Tags count a locale
    pair's messages in order of the arrays' first fetch, on both sides alike."""
    groups: dict = {}
    for k, (low, plan) in enumerate(items):
        for j, m in enumerate(plan.fetches):
            a = low.arrays[m.slot]
            g = groups.setdefault((id(a), m.peer), [a, m.peer, [], 0])
            g[2].append((k, j, g[3], m.size))
            g[3] += m.size
    recvs, bufs, tags = [], [[None] * len(p.fetches) for _, p in items], {}
    for a, peer, parts, size in groups.values():
        tag = tags[peer] = tags.get(peer, -1) + 1
        buf = np.empty(size, dtype=a.dtype)
        recvs.append((peer, buf, tag))
        for k, j, start, n in parts:
            bufs[k][j] = buf[start:start + n]
    readers = sorted({r for _, p in items for r in p.readers})
    sends, types = [], []
    for r in readers:
        for tag, (akey, (a, regions)) in enumerate(_read_here(items, r, me).items()):
            t = RegionType(a.dtype, regions)
            types.append(t)
            sends.append((r, akey, t, tag))
    xfer = Transfers()
    for peer, buf, tag in recvs:
        xfer.recv(peer, buf, tag)
    return recvs, bufs, sends, types, xfer


def peer_transfers(items, me: int):
    """The messages of planned items ``[(low, plan), ...]`` on locale ``me`` as persistent
    two-sided transfers, ONE per locale pair and direction however many arrays it
    carries (the polyshift of several sources): ``(recvs, bufs, sends, types, xfer)``
    as :func:`transfers` has them, except that a receive is a byte buffer holding each
    array's fetches from that owner back to back (each array's part at the offset
    :func:`pgas.comm.p2p.segments` gives, in order of the arrays' first fetch), and
    ``sends`` is ``[(reader, [(id of an array in the items, RegionType), ...], tag)]``,
    its parts in the same order (the owner plans its readers' fetches as they do)."""
    groups: dict = {}                           # peer -> {array id: [array, [(k, j, start, n)], size]}
    for k, (low, plan) in enumerate(items):
        for j, m in enumerate(plan.fetches):
            a = low.arrays[m.slot]
            g = groups.setdefault(m.peer, {}).setdefault(id(a), [a, [], 0])
            g[1].append((k, j, g[2], m.size))
            g[2] += m.size
    recvs, bufs = [], [[None] * len(p.fetches) for _, p in items]
    for peer, per in groups.items():
        parts = list(per.values())
        offsets, total = segments([size * a.dtype.itemsize for a, _, size in parts])
        buf = np.empty(total, dtype=np.uint8)
        recvs.append((peer, buf, 0))
        for (a, fetches, size), off in zip(parts, offsets):
            typed = buf[off:off + size * a.dtype.itemsize].view(a.dtype)
            for k, j, start, n in fetches:
                bufs[k][j] = typed[start:start + n]
    readers = sorted({r for _, p in items for r in p.readers})
    sends, types = [], []
    for r in readers:
        parts = []
        for akey, (a, regions) in _read_here(items, r, me).items():
            t = RegionType(a.dtype, regions)
            types.append(t)
            parts.append((akey, t))
        if parts:
            sends.append((r, parts, 0))
    xfer = Transfers()
    for peer, buf, tag in recvs:
        xfer.recv(peer, buf, tag)
    return recvs, bufs, sends, types, xfer


def _n(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


class _Binding:
    """A compiled group bound to its arrays: the views of its tasks, its send requests."""

    __slots__ = ("refs", "snaps", "early", "late", "evals", "sends", "wins", "requests", "counts", "recvs")

    def __init__(self, arrays, snaps, early, late, evals, sends, wins, xfer) -> None:
        self.refs = [weakref.ref(a) for a in arrays]
        self.snaps = Copies(snaps) if snaps else None
        self.early, self.late = Copies(early), Copies(late)
        self.evals, self.sends, self.wins = evals, sends, wins
        self.recvs = xfer.requests()[0]
        self.requests = self.recvs + sends.requests      # receives first: started in one call
        self.counts = xfer.counts() + sends.counts

    def same(self, arrays) -> bool:
        return len(self.refs) == len(arrays) and all(w() is a for w, a in zip(self.refs, arrays))

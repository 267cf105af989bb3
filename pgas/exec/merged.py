"""Several recorded statements' halo transfers as one exchange (a compiled step's merged messages).

Each statement run by persistent transfers (:mod:`pgas.exec.persistent`) starts its own
sends and receives and waits for its own receives: a step of ``k`` such statements is
``k`` exchanges, and a locale pair that several of them connect exchanges several
messages.  A compiled step (:mod:`pgas.array.step`) knows its statements in advance,
and where no statement of a run of consecutive ones writes what a later one's messages
carry (the caller decides that, the same way on every locale), their transfers can all
start before the first of them runs:

1. every statement of the run is bound and its stores made visible
   (:meth:`PersistentStatement.begin`), and the regions each sends are packed into its
   send buffers, as a statement's own run packs them;
2. one message per peer carries, back to back, what every statement of the run sends
   that peer (:class:`pgas.comm.p2p.Gathered`: straight from the statements' send
   buffers, no further copy), and one message per peer lands, scattered, in the
   statements' receive buffers: one ``MPI_Startall`` for the run;
3. the statements compute in order (:meth:`PersistentStatement.finish`), the first that
   reads a receive buffer waiting for all the receives, after its tasks that read none.

Sender and receiver order a pair's parts alike: by statement, then by the tag each
statement's own transfers give them.  The exchange points at the statements' buffers
and holds them; if a statement was rebuilt (its compiled form freed and made again), the
exchange is made again (on this locale alone: the messages' structure is the plans',
the same everywhere).  As with a statement's own sends, the sends may complete after
the run: they are waited for before the buffers are packed again, also by a statement
run on its own (its ``inflight``).

A run repeated on the same arrays under the same settings (a compiled step's next replay)
keeps what its last run found (:class:`Kept`, made by :meth:`Group.kept`): the exchange,
each statement's kernel calls or a fill's views (:class:`pgas.exec.persistent.Kept`,
:class:`~pgas.exec.persistent.KeptFill`), the windows to make visible and the regions to
pack, so that a repeat looks nothing up: no lowered statement, binding or compiled form is
found again.  It is checked valid by the identity of what it holds (the exchange still the
group's, each statement's binding and calls still kept) and made again after a run the usual
way where it is not.
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import comm
from ..comm import trace
from ..comm.p2p import Transfers, start_all, wait
from . import persistent

#: Exchanges made (statements' transfers merged) and runs of them; repeats kept
#: (:class:`Kept`) and runs by them (counted in ``runs`` too where they merge).
stats = {"built": 0, "runs": 0, "kept": 0, "repeats": 0}


class Exchange:
    """The merged transfers of compiled statements ``members`` (built
    :class:`pgas.exec.persistent.PersistentStatement` objects, in run order) on this locale."""

    def __init__(self, members) -> None:
        self.members = list(members)
        self.snapshot = [(fs.recvs, fs.packed) for fs in members]
        recv: dict = {}
        send: dict = {}
        for fs in members:
            for peer, buf, _ in fs.recvs:              # (each peer's in tag order)
                recv.setdefault(peer, []).append(buf)
            for (peer, _, _, _), buf in zip(fs.sends, fs.packed):
                send.setdefault(peer, []).append(buf)
        self.parts = (sum(len(v) for v in recv.values()), sum(len(v) for v in send.values()))
        self.peers = (sorted(recv), sorted(send))
        self.xfer = Transfers()
        for peer in sorted(recv):
            self.xfer.recv_gathered(peer, recv[peer])
        for peer in sorted(send):
            self.xfer.send_gathered(peer, send[peer])
        self.recvs, self.sends = self.xfer.requests()
        self.requests = self.recvs + self.sends
        self.counts = self.xfer.counts()
        self.inflight = False
        stats["built"] += 1

    def current(self, members) -> bool:
        """Whether this exchange still points at ``members``' buffers."""
        return (len(members) == len(self.members)
                and all(fs is m and fs.built and fs.recvs is r and fs.packed is p
                        for fs, m, (r, p) in zip(members, self.members, self.snapshot)))

    def settle(self) -> None:
        """Wait until the sends of the last run are complete (the send buffers may be packed)."""
        if self.inflight:
            wait(self.sends)
            self.inflight = False

    def free(self) -> None:
        self.settle()
        self.xfer.free()
        self.members = self.snapshot = []


class Group:
    """A run of compiled statements whose transfers travel together, run after run: its
    exchange (made again when it no longer holds) and, for a statement whose compiled form
    another statement of the run shares (the same plan and dtypes: the same buffers), a
    compiled form of its own."""

    def __init__(self) -> None:
        self.ex: Exchange | None = None
        self.own: dict = {}                            # position -> PersistentStatement
        self.last: tuple = ((), ())                    # the last run's compiled forms and members

    def members(self, items) -> list:
        """The compiled form each of ``items`` runs by here (its own where another shares it)."""
        fss, members = self.last
        if len(fss) == len(items) and all([fs is f for (fs, _, _), f in zip(items, fss)]):
            return members
        members = self._members(items)
        self.last = (tuple([fs for fs, _, _ in items]), members)
        return members

    def _members(self, items) -> list:
        out = []
        for k, (fs, _, _) in enumerate(items):
            if any(fs is m or fs is getattr(m, "shared", None) for m in out):
                own = self.own.get(k)
                if own is None or own.plan is not fs.plan or own.key != fs.key:
                    if own is not None:
                        own.free()
                    own = self.own[k] = persistent.PersistentStatement(fs.plan, fs.key)
                    own.shared = fs
                fs = own
            out.append(fs)
        return out

    def run(self, items, compute, write, before) -> None:
        """Run compiled statements ``items`` (``[(PersistentStatement, Lowered, target
        array)]``, in order) with their transfers merged; ``compute``, ``write``: as for
        :meth:`~pgas.exec.persistent.PersistentStatement.run`; ``before(array, None)``:
        called on each target just before its statement computes.  Collective over the
        peers, as the statements are."""
        members = self.members(items)
        # (a member built here may not free another beyond KEEP_BYTES: the exchange reads them all)
        persistent.pinned.update([id(fs) for fs in members])
        try:
            bindings = [fs.begin(low) for fs, (_, low, _) in zip(members, items)]
        finally:
            persistent.pinned.clear()
        ex = self.ex
        if ex is None or not ex.current(members):
            if ex is not None:
                ex.free()
            ex = self.ex = Exchange(members)
        ex.settle()
        for fs, b in zip(members, bindings):
            if b.sends.packs:
                last = fs.inflight
                if last is not None and last is not ex:    # its own sends of a run on its own
                    last.settle()
                b.sends.pack()
                fs.inflight = ex
        if ex.requests:
            start_all(ex.requests, ex.counts)
            if ex.sends:
                ex.inflight = True
        waits = [ex.recvs] if ex.recvs else []
        try:
            for fs, (_, low, target), b in zip(members, items, bindings):
                before(target, None)
                try:
                    fs.finish(low, b, compute, write, waits if fs.recvs else [])
                finally:
                    comm.statement_done()
                    persistent.stats["reruns"] += 1    # (counted alike on every locale)
        finally:
            if waits:                                  # an error before the wait: no receive left active
                wait(waits.pop())
            stats["runs"] += 1

    def kept(self, items, values) -> "Kept | None":
        """The repeat of the run of ``items`` that :meth:`run` just made (:class:`Kept`),
        where every statement's binding keeps its kernel calls, or a fill's views
        (``values``: per item the fill's value, a NumPy scalar or 0-d array of the
        target's dtype whose contents each repeat stores, else None); else None.
        ``items``: ``[(Replay, Lowered, target array)]``."""
        members = self.members([(r.fs, low, t) for r, low, t in items])
        steps = []
        for fs, (r, low, target), value in zip(members, items, values):
            if value is not None:
                k = persistent.kept_fill(r, low.arrays, fs)
            else:
                k = persistent.kept(r, low.arrays, fs) if low.prog is r.prog else None
            if not _holds(k, value):
                return None
            steps.append((k, weakref.ref(target), value, bool(fs.recvs)))
        return Kept(self, self.ex, steps)

    def free(self) -> None:
        if self.ex is not None:
            self.ex.free()
            self.ex = None
        for fs in self.own.values():
            fs.free()
        self.own.clear()
        self.last = ((), ())


def alone(k, target, value) -> "Kept | None":
    """The repeat of one statement that exchanges its own messages (a :class:`Kept` of one
    step with no merged exchange): ``k`` its :class:`~pgas.exec.persistent.Kept` (``value``
    None) or :class:`~pgas.exec.persistent.KeptFill` (``value``: what it stores), None if it
    has none; ``target``: the array it writes."""
    return Kept(None, None, [(k, weakref.ref(target), value, False)]) if _holds(k, value) else None


def _holds(k, value) -> bool:
    """Whether repeat ``k`` (or None) runs a statement: kernel calls for no ``value``, a
    fill's views for a ``value`` of its dtype."""
    if value is None:
        return type(k) is persistent.Kept
    return type(k) is persistent.KeptFill and value.dtype == k.dtype


class Kept:
    """A run of compiled statements repeated with nothing looked up (see the module's
    docstring): ``steps``, in order, ``(repeat, target array (a weak reference: a compiled
    step's caller may let it go between replays), value, reads)``, each
    statement's :class:`pgas.exec.persistent.Kept` (``value`` None; ``reads``: it reads
    the exchange's receives) or a fill's :class:`~pgas.exec.persistent.KeptFill`
    (``value``: what it stores); ``ex``: ``group``'s exchange they share, or None for a
    statement that exchanges its own messages (one step)."""

    __slots__ = ("group", "ex", "steps", "syncs", "wins", "packing", "packs")

    def __init__(self, group, ex, steps) -> None:
        self.group, self.ex, self.steps = group, ex, steps
        if ex is not None:
            peers = [k for k, _, value, _ in steps if value is None and k.fs.peers]
            self.syncs = [k.b for k in peers]
            #: the windows the statements make visible, each once (their bindings' own, kept
            #: while the bindings are)
            self.wins = list({id(w): w for b in self.syncs for w in b.wins}.values())
            self.packing = [k.fs for k in peers if k.b.sends.packs]
            self.packs = [p for k in peers for p in k.b.sends.packs]
        stats["kept"] += 1

    def valid(self) -> bool:
        """Whether what it holds is still kept: the group's exchange, each statement's
        compiled form, binding and calls (the caller checks the settings,
        :func:`pgas.exec.persistent.settings_key`)."""
        if self.ex is not None and self.group.ex is not self.ex:
            return False
        for k, _, _, _ in self.steps:
            if not k.valid():
                return False
        return True

    def run(self, before) -> None:
        """Run the statements (:meth:`valid` checked by the caller), as :meth:`Group.run`
        would; ``before(array, None)``: called on each target just before its statement
        computes.  The caller clears the processor's flags before and reads them after
        (:func:`pgas.exec.fperr.cleared`)."""
        stats["repeats"] += 1
        ex = self.ex
        if ex is None:
            for k, target, value, _ in self.steps:
                before(target(), None)
                if value is None:
                    k.run(False)
                else:
                    k.run(value)
            return
        if trace.on:
            sync = persistent.PersistentStatement.sync
            for b in self.syncs:
                sync(b)
        else:                                            # (as sync, each window once)
            for w in self.wins:
                if w.pending:
                    w.complete()
                w.win.Sync()
        if ex.inflight:
            ex.settle()
        for fs in self.packing:
            last = fs.inflight
            if last is not ex:                           # its own sends of a run on its own
                if last is not None:
                    last.settle()
                fs.inflight = ex
        t0 = trace.on and trace.now()
        for one, views, dst in self.packs:           # (as PackedSends.pack)
            if one is not None:
                dst[...] = one
            else:
                np.concatenate(views, axis=None, out=dst)
        if t0:
            trace.add("pack", "pack sends", t0, {"peers": ex.peers[1], "bytes": sum(n for _, n in ex.counts)})
        if ex.requests:
            start_all(ex.requests, ex.counts)
            if ex.sends:
                ex.inflight = True
        waits = [ex.recvs] if ex.recvs else []
        try:
            for k, target, value, reads in self.steps:
                before(target(), None)
                if value is None:
                    k.finish(waits if reads else ())
                else:
                    k.run(value)
        finally:
            if waits:                                    # (see Group.run)
                wait(waits.pop())
            stats["runs"] += 1

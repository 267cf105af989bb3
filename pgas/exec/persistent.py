"""One statement's halo by persistent two-sided transfers.

The generic path (:mod:`pgas.exec.run`) synchronises a statement
with its peers by notices: every owner tells its readers that its data is
ready, each reader waits for that word, reads one-sided, flushes and says it is
done, and the owner waits for that before it returns.  An owner therefore waits
a round trip on its slowest reader in every statement with remote reads, and a
run pays two notices, their waits, a get and a flush per peer.

A statement whose every write is local (the owner computes: no reduction, no
clipped domain, the owning access is the write) can do what a compiled shift
group does (:mod:`pgas.exec.shiftgroup`): every owner sends each reader the
regions that reader's plan fetches from it (one persistent send per reader and
array: the owner plans its readers' fetches with the pure planner, as they do),
and every reader receives each owner's regions into one buffer kept with the
plan (one persistent receive).  The message says that the owner's data is
ready.  A run:

1. packs the regions each reader fetches into a send buffer kept with the
   compiled statement (first waiting, if need be, for the sends of its last
   run out of those buffers to be reported complete);
2. starts every receive and send (``MPI_Startall``);
3. computes the tasks that read no message buffer (the interior, by the fused
   kernel or NumPy as in the generic path);
4. waits for its receives;
5. computes the border tasks from the buffers, and stores what was not stored
   in place.

An owner never waits for its readers: its sends read the packed copies, not its
memory, so they may complete after the statement returns (a send larger than
MPI's eager limit, about 8 KB for MPICH's shared memory, completes only when its
reader has taken it, and a reader behind by a statement would otherwise hold
its owner back every statement).  Every reader has its data when the statement
returns there, as on the generic path.  A send still in flight is waited for
before its buffer is packed again, before its requests are freed, and (for a
few seconds at most) at exit.  A task stored in place during step 3 writes an
array that no other locale reads in the statement
(:func:`pgas.exec.fuse.in_place`); a written array that others read is stored
after step 4.

A repeat on the same arrays (a binding, :class:`_Binding`) skips laying its tasks out
where it can: a run whose every task a fused row kernel stored in place keeps its
kernel calls, whose arguments name only the binding's storage and the statement's
buffers, and the next run of the same program object (a recorded statement's, with its
constants) under the same settings makes those calls again; a scalar fill of the
target's dtype (no reads) stores into views of its tasks kept with the binding.  Both
give the values the generic steps give (the same kernels and arguments, the same
stores).

Which path runs is decided from replicated facts only (the statement, the
arrays' layouts and the settings), so every locale takes the same one: see
:func:`qualifies`.  Where the calibrated model measures overlap (a network that
moves data while the processor computes, :mod:`pgas.exec.calibration`), the generic
path runs instead, so that the overlap model may strip-mine large reads
(:mod:`pgas.exec.strip`); whether the model of every locale measures none is
agreed once per model by one reduction, since locales on different hosts may
load different calibrations.  The first run of a plan on a locale plans its readers'
fetches from it (each reader's plan, cached) and makes the requests; a run on
other arrays of the same layouts makes new sends (a few are kept per plan).
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from .. import comm
from ..comm import counters, process, trace
from ..comm.p2p import MAX_PER_PAIR, PackedSends, start_all, wait
from . import calibration as calibrate
from . import chain, fperr, fuse, group, interior, settings, shiftgroup, threads, workers
from .lowered import Lowered
from .tasks import strided

#: Off: every statement takes the generic path (for tests of that path, and to compare).
ENABLED = True

#: Compiled statements kept, by plan (the oldest dropped first, its requests freed).
CACHE = 256
#: Bindings (sets of arrays) kept per compiled statement.
BINDINGS = 4
#: Bytes of messages the kept compiled statements may hold together, received and sent
#: (the receive buffers, and whatever MPI keeps per persistent send of a non-contiguous
#: datatype); the oldest dropped first, and a statement whose own messages exceed it is
#: freed after each run.  A halo's messages are small; a redistribution's are not kept.
KEEP_BYTES = 4 << 20

_cache: dict = {}
#: Runs by this path, compiled statements made (their transfers planned), runs of
#: recorded statements (:func:`rerun`), runs that made their last run's kernel calls again
#: (``calls``) and scalar fills into kept views (``fills``), all counted in ``runs`` too.
stats = {"runs": 0, "built": 0, "reruns": 0, "calls": 0, "fills": 0}

#: ``pg.explain``'s strip line for a statement run here.
STRIPS = ("strips: 1; its messages are persistent two-sided transfers (pgas.exec.persistent), the tasks "
          "that read none computed while they travel")


def qualifies(low, plan, agree: bool = True, layouts=None) -> bool:
    """True if ``plan`` (this locale's, of ``low``) runs by :class:`PersistentStatement`: from
    replicated facts only, so the answer is the same on every locale.  The owner
    computes every element it writes, no array has ghost cells, the reads fit the
    buffer limit (:func:`pgas.exec.group.fits`; on one locale nothing is received), no locale's model measures overlap
    (:func:`no_overlap`; ``agree=False``: this locale's model alone, for a
    description), and the settings are those of the model's choice:
    ``protocol="auto"``, ``strips="auto"``, ``nonblocking=True`` and the interior mode
    off (a pinned protocol or strip count, and the interior modes, are the generic
    path's to honour).  Collective (every locale, the same statement) the first time
    a model is used with ``agree``.  ``layouts``: those the plan was made with, where
    not the arrays' own (``pg.explain(locales=N)``)."""
    if not ENABLED or interior.MODE != "off":
        return False
    get = settings.get
    if get("protocol") != "auto" or get("strips") != "auto" or not get("nonblocking"):
        return False
    stmt = plan.stmt
    if plan.kind != "pieces" or plan.owning != stmt.write or stmt.reduce is not None or stmt.clips:
        return False
    arrays = low.arrays
    for a in arrays:
        if a.store.ghost is not None:
            return False
    if len(arrays) > MAX_PER_PAIR or not _fits(low, plan, layouts or [a.layout for a in arrays]):
        return False
    return no_overlap() if agree else calibrate.current().overlap <= 0


#: :func:`pgas.exec.group.fits` by plan (its layouts), dtypes and buffer limit.
_fitting: dict = {}


def _fits(low, plan, layouts) -> bool:
    """:func:`pgas.exec.group.fits` of the statement alone; on one locale (the grids of
    ``layouts``, the arrays' own or those ``pg.explain(locales=N)`` plans with), where a
    statement receives nothing, always."""
    if all(math.prod(L.grid) == 1 for L in layouts):
        return True
    key = (id(plan), settings.get("buffer_limit"), *[a.dtype for a in low.arrays])
    got = _fitting.get(key)
    if got is None or got[0] is not plan:
        if len(_fitting) >= CACHE:
            _fitting.clear()
        got = _fitting[key] = (plan, group.fits([(low, plan)]))
    return got[1]


_agreed: list = []


def no_overlap() -> bool:
    """True if no locale's calibrated model measures overlap (strip-mining cannot pay):
    one reduction the first time each model is used (collective), then cached."""
    model = calibrate.current()
    if not _agreed or _agreed[0] is not model:
        _agreed[:] = [model, bool(comm.allreduce(int(model.overlap <= 0), "min"))]
    return _agreed[1]


def get(low, plan) -> "PersistentStatement":
    """The compiled form of ``plan`` for arrays of ``low``'s dtypes (made on first use,
    cached by plan and dtypes: arrays of the same layouts share a plan, but their
    buffers and datatypes are made for their dtypes)."""
    key = (id(plan), *[a.dtype for a in low.arrays])
    got = _cache.get(key)
    if got is not None and got.plan is plan:
        return got
    if got is not None:                 # another plan at a reused id: free the old one's buffers and requests
        _cache.pop(key).free()
    if len(_cache) >= CACHE:
        _cache.pop(next(iter(_cache))).free()
    got = _cache[key] = PersistentStatement(plan, key)
    return got


_kept = [0]                     # bytes of messages the cached compiled statements hold (KEEP_BYTES)
#: ``(id of the lowered statement, compiled statement)`` of the last run by this path (set by
#: :meth:`PersistentStatement.run`, cleared by the statement engine before each statement), for
#: :func:`record`: it records what ran instead of working the choice out again.
ran: list = [None, None]


def _keep(fs) -> None:
    """Count a newly built ``fs``'s buffers; drop the oldest others beyond :data:`KEEP_BYTES`.
    A statement whose own buffers exceed the budget is freed after its run (transient) and
    drops nothing: dropping every other statement for it would not bring the count within
    the budget, only rebuild them all on every step of a loop that runs it."""
    _kept[0] += fs.nbytes
    if _cache.get(fs.key) is not fs:        # built outside the cache (evicted, then run by a merged exchange)
        _outside[id(fs)] = fs
    if fs.nbytes > KEEP_BYTES:
        fs.transient = True
        return
    for key in list(_cache):
        if _kept[0] <= KEEP_BYTES:
            break
        if _cache[key] is not fs and id(_cache[key]) not in pinned:
            _cache.pop(key).free()
    for other in list(_outside.values()):
        if _kept[0] <= KEEP_BYTES:
            break
        if other is not fs and id(other) not in pinned:
            other.free()


#: Ids of compiled statements that :func:`_keep` does not free: the members of a merged run
#: being bound (:mod:`pgas.exec.merged`), whose exchange reads every member's buffers.
pinned: set = set()


#: Built compiled statements outside the cache (a merged exchange's own copies, see
#: :mod:`pgas.exec.merged`, and cached ones evicted, then built again by a merged run), by id:
#: their buffers count toward :data:`KEEP_BYTES`, the oldest are freed beyond it (a later run
#: rebuilds them) and :func:`clear` frees them all.
_outside: dict = {}


def clear() -> None:
    """Free every compiled statement (their MPI requests and datatypes), the cache's and
    those built outside it, and forget the recorded statements."""
    for f in list(_cache.values()) + list(_outside.values()):
        f.free()
    _cache.clear()
    _replays.clear()


# -- repeated statements, run again without lowering or planning --------------------
#: Statements recorded by structure (the key of the front end's lowering memo), oldest
#: dropped first.
REPLAYS = 256
_replays: dict = {}


class Replay:
    """A statement that ran by this path, recorded by structure for its repeats on the
    same arrays (the front end's ``assign``): its lowered statement and
    program, its compiled form, and what its choice of path depended on (the settings'
    version, the calibrated model); ``fs`` None: it does not run by this path (a repeat
    then takes the usual way without trying to record it again).  The arrays are held
    weakly.  ``tag``: what the front end keeps with the recording (collective checking's
    signature of the statement), None until it sets it."""

    __slots__ = ("refs", "stmt", "prog", "names", "fs", "version", "model", "tag")


def rerun(r: Replay, bases, compute, write, fill=None, prog=None) -> None:
    """Run recorded statement ``r`` on ``bases`` (its arrays, checked by :func:`replayable`,
    or arrays of the same layouts, dtypes and aliasing; ``compute``, ``write``: as for
    :meth:`PersistentStatement.run`); ``fill``: the scalar of a fill recorded by dtype (its
    program is that constant); ``prog``: the program with other constants of the same types
    (a compiled step's parameters), else the recorded one."""
    if prog is None:
        prog = r.prog if fill is None else ("const", fill)
    try:
        r.fs.run(Lowered(r.stmt, bases, prog, r.names), compute, write)
    finally:                        # (an error raised on this locale alone: see pgas.exec.run.run)
        comm.statement_done()
        stats["reruns"] += 1        # (counted alike on every locale)


def replayable(key, bases):
    """The :class:`Replay` recorded under structure ``key`` for exactly the arrays
    ``bases``, if it is still valid (the same settings, model and switches, its compiled
    form kept), else None."""
    r = _replays.get(key)
    if r is None or r.version != settings.version[0]:
        return None
    refs = r.refs
    if len(refs) != len(bases):
        return None
    for w, b in zip(refs, bases):
        if w() is not b:
            return None
    fs = r.fs
    if fs is not None and (not fs.built or fs.transient or not ENABLED or interior.MODE != "off"
                           or calibrate.current() is not r.model):
        return None
    return r


def valid(r: Replay) -> bool:
    """True if recorded statement ``r`` may run by :func:`rerun` now (its arrays aside: the
    same settings, model and switches, its compiled form kept)."""
    fs = r.fs
    return (fs is not None and r.version == settings.version[0] and fs.built and not fs.transient and ENABLED
            and interior.MODE == "off" and calibrate.current() is r.model)


def valid_everywhere(r: Replay) -> bool:
    """The part of :func:`valid` that is the same on every locale (the settings, model and
    switches; not whether this locale still keeps the compiled form, which
    :meth:`PersistentStatement.begin` makes again): merged exchanges decide by it."""
    return (r.fs is not None and r.version == settings.version[0] and ENABLED and interior.MODE == "off"
            and calibrate.current() is r.model)


def record(key, low, replay: bool = True) -> None:
    """Record the statement ``low`` just run under structure ``key``: with the compiled
    statement it ran by (:data:`ran`), or as not run by this path (also when that one
    was freed at once, too big to keep, or ``replay`` is false: its owner was chosen by
    an agreement that every locale must take part in)."""
    r = Replay()
    r.refs = [weakref.ref(a) for a in low.arrays]
    r.stmt, r.prog, r.names = low.stmt, low.prog, low.names
    fs = ran[1] if replay and ran[0] == id(low) else None
    r.fs = fs if fs is not None and fs.built else None
    r.version, r.model = settings.version[0], calibrate.current()
    r.tag = None
    _replays.pop(key, None)
    if len(_replays) >= REPLAYS:
        del _replays[next(iter(_replays))]
    _replays[key] = r


class PersistentStatement:
    """One locale's plan of one statement with its messages as persistent transfers."""

    def __init__(self, plan, key) -> None:
        self.plan, self.key = plan, key
        self.built = self.transient = False
        self.bindings: dict = {}
        self.nbytes = 0

    def _build(self, low) -> None:
        plan = self.plan
        me = plan.locale
        self.recvs, bufs, sends, self.types, self.xfer = shiftgroup.transfers([(low, plan)], me)
        self.bufs = bufs[0]
        slot = {id(a): k for k, a in enumerate(low.arrays)}
        self.sends = [(r, slot[akey], t, tag) for r, akey, t, tag in sends]
        # what each send carries, packed here at a run's start: the sends read these
        # buffers, not the arrays, so a run need not wait for its readers (see run)
        self.packed = [np.empty(t.size, dtype=low.arrays[k].dtype) for _, k, t, _ in self.sends]
        self.inflight = None                          # the sends (a binding's) last packed into them
        self.peers = bool(self.recvs or self.sends)
        W = plan.stmt.write
        self.early = [i for i, t in enumerate(plan.tasks) if all(r.msg < 0 for k, r in enumerate(t.refs) if k != W)]
        early = set(self.early)
        self.late = [i for i in range(len(plan.tasks)) if i not in early]
        self.dtypes = [low.arrays[x.slot].dtype for x in plan.stmt.accesses]    # (part of the cache key)
        self.inplace = fuse.in_place(plan, None, plan.reduce_axes, True)
        self.built = True
        self.nbytes = (sum(buf.nbytes for _, buf, _ in self.recvs)     # MPI may keep a packing buffer
                       + sum(t.nbytes for _, _, t, _ in self.sends))    # per persistent send: counted too
        stats["built"] += 1
        _keep(self)

    def _bind(self, arrays) -> "_Binding":
        key = tuple(map(id, arrays))
        b = self.bindings.get(key)
        if b is not None and b.same(arrays):
            return b
        if b is not None or len(self.bindings) >= BINDINGS:
            old = self.bindings.pop(key if b is not None else next(iter(self.bindings)))
            old.free()
        b = self.bindings[key] = _Binding(self, arrays)
        return b

    def run(self, low, compute, write) -> None:
        """Run the statement on ``low``'s arrays (``compute``, ``write``: the generic
        path's :func:`pgas.exec.run.compute_tasks` and ``write_results``)."""
        b = self.begin(low)
        self.start(b)
        self.finish(low, b, compute, write, [b.recvs] if b.recvs else [])

    def begin(self, low) -> "_Binding":
        """Build if need be, bind ``low``'s arrays, and make this locale's stores visible
        to its peers' transfers (step 1's preparation): the binding."""
        if not self.built:
            self._build(low)
        b = self._bind(low.arrays)
        if self.peers:
            self.sync(b)
        return b

    @staticmethod
    def sync(b: "_Binding") -> None:
        """Make this locale's stores into ``b``'s arrays visible to its peers' transfers (its
        one-way updates completed first)."""
        t0 = trace.on and trace.now()
        for w in b.wins:
            if w.pending:
                w.complete()
            w.win.Sync()
        if t0:
            trace.add("mpi", "MPI_Win_sync", t0)

    def start(self, b: "_Binding") -> None:
        """Steps 1-2 on binding ``b``: pack what each reader fetches, start every transfer."""
        sends = b.sends
        if sends.packs:
            last = self.inflight
            if last is not None and last is not sends:    # the buffers are shared by the bindings
                last.settle()
            sends.pack()
            self.inflight = sends
        if b.requests:
            start_all(b.requests, b.counts)
            sends.started()

    def finish(self, low, b, compute, write, waits) -> None:
        """Steps 3-5 of a run on binding ``b`` whose transfers were started: the tasks;
        ``waits``: the receives to wait for before the tasks that read the buffers (a list
        emptied once waited for: several statements may share one, see
        :mod:`pgas.exec.merged`)."""
        plan = self.plan
        prog = low.prog
        if (prog[0] == "const" and not self.peers and isinstance(prog[1], np.generic)    # a NumPy scalar of
                and prog[1].dtype == self.dtypes[plan.stmt.write]):                  # the target's dtype
            fills = b.fills                           # a scalar fill (no reads): its tasks' views
            if fills is None:
                W = plan.stmt.write
                flat = b.flats[plan.stmt.accesses[W].slot]
                fills = b.fills = [strided(flat, t.refs[W].offset, t.refs[W].strides, t.shape) for t in plan.tasks]
            for target in fills:
                target[...] = prog[1]
            stats["fills"] += 1
            stats["runs"] += 1
            ran[0], ran[1] = id(low), self
            return
        try:
            self._tasks(low, b, compute, write, waits)
        finally:
            if waits:               # an error raised before the wait (a warning made an error by
                wait(waits.pop())   # a filter, an error callback): no receive left active
            stats["runs"] += 1      # (counted alike on every locale)
        ran[0], ran[1] = id(low), self
        if self.transient:                            # too big to keep (KEEP_BYTES)
            if _cache.get(self.key) is self:
                del _cache[self.key]
            self.free()

    def _tasks(self, low, b, compute, write, waits) -> None:
        """Steps 3-5 of a run on binding ``b`` (its requests started): the tasks, by the
        kept kernel calls where they apply; ``waits``: the receives to wait for before the
        tasks that read their buffers (emptied once waited for)."""
        plan = self.plan
        calls = b.calls
        if calls is not None and (calls[0] is not low.prog or calls[4] != (settings.version[0], fuse.generation[0])
                                  or fperr.numpy_only):
            calls = None                              # another program (its constants), or settings
        if calls is not None:                         # a repeat: the kernel calls its last run made
            _calls(calls[1], calls[2], calls[3], waits)
        else:
            results = [None] * len(plan.tasks)
            inplace = self.inplace
            flats = b.flats
            got = fuse.capture = [] if inplace and not fperr.numpy_only else None
            try:
                if self.early:
                    compute(low, plan, self.early, flats, self.bufs, inplace, results, True, self.dtypes)
                early = None if got is None else list(got)
                if waits:
                    wait(waits.pop())                 # my buffers are full
                if self.late:
                    compute(low, plan, self.late, flats, self.bufs, inplace, results, True, self.dtypes)
            finally:
                fuse.capture = None
            stmt = plan.stmt
            slot = stmt.accesses[stmt.write].slot
            t0 = trace.on and trace.now()
            write(plan, low.arrays[slot], flats[slot], results, True, (), ())
            if t0:
                trace.add("pack", "store results", t0)
            if (got and len(got) == len(plan.tasks) and None not in got
                    and all(r is None for r in results)):  # every task stored in place by a kernel
                # (not where this locale has no task: nothing then says that the program is
                # one a kernel keeps, and holding it would keep its replicated NumPy operands
                # and 0-d arrays alive on this locale alone)
                b.calls = (low.prog, early, got[len(early):], len(got), (settings.version[0], fuse.generation[0]))

    def free(self) -> None:
        for b in self.bindings.values():
            b.free()
        self.bindings.clear()
        self.inflight = None
        _outside.pop(id(self), None)
        if self.built:
            _kept[0] -= self.nbytes
            self.xfer.free()
            for t in self.types:
                t.free()
            self.built = False
            # let the buffers go: a recorded statement (Replay.fs) may still name this object,
            # and would otherwise hold them beyond KEEP_BYTES; a run rebuilds
            self.recvs = self.bufs = self.sends = self.types = self.xfer = self.packed = None
            self.nbytes = 0


def _calls(early, late, count: int, waits, flags: bool = True) -> None:
    """A repeat's kept kernel calls: ``early`` (reading no message buffer), the wait for
    ``waits`` (emptied once waited for), then ``late``; ``count`` tasks.  The processor's
    flags are read once after them all (:func:`pgas.exec.fperr.cleared`), or (``flags``
    false) by the caller, who cleared them before."""
    if trace.on:
        fperr.compiled_calls(early)
        if waits:
            wait(waits.pop())
        fperr.compiled_calls(late)
    else:
        mask = fperr.cleared() if flags else 0
        for kernel, args in early:
            kernel(*args)
        if waits:
            wait(waits.pop())
        for kernel, args in late:
            kernel(*args)
        if mask:
            fperr.reported(mask)
    fuse.stats["fused"] += count
    fuse.stats["rows"] += count
    stats["calls"] += 1


class Kept:
    """A recorded statement's repeat with nothing looked up (for a compiled step, which holds
    one per statement between its replays, :mod:`pgas.array.step`): its compiled
    statement, the binding of its arrays and the kernel calls the binding keeps
    (``b.calls``), the kernels taken out of their thread splitter where this locale runs
    one thread.  Made by :func:`kept` when they apply; :meth:`valid` while they still do
    (the caller checks the settings, :func:`settings_key`)."""

    __slots__ = ("fs", "b", "calls", "early", "late", "count")

    def valid(self) -> bool:
        """Whether the compiled statement and the binding are still kept, with these calls."""
        fs, b = self.fs, self.b
        return fs.built and not fs.transient and b.flats is not None and b.calls is self.calls

    def run(self, flags: bool = True) -> None:
        """Steps 1-5 of a run by the kept kernel calls (:meth:`PersistentStatement.run`'s
        on the same binding with the same program); :meth:`valid` checked by the caller.
        ``flags`` false: the caller cleared the processor's flags and reads them after
        (:func:`pgas.exec.fperr.cleared`), once for several statements."""
        fs, b = self.fs, self.b
        waits = []
        try:
            if fs.peers:
                if trace.on or counters._on:
                    fs.sync(b)
                    fs.start(b)
                else:                        # (sync and start as they are, no span or count to make)
                    for w in b.wins:
                        if w.pending:
                            w.complete()
                        w.win.Sync()
                    sends = b.sends
                    if sends.packs:
                        last = fs.inflight
                        if last is not None and last is not sends:
                            last.settle()            # (another binding's, or a merged exchange's)
                        if sends.inflight:
                            wait(sends.requests)
                            sends.inflight = False
                        for one, views, dst in sends.packs:
                            if one is not None:
                                dst[...] = one
                            else:
                                np.concatenate(views, axis=None, out=dst)
                        fs.inflight = sends
                    if b.requests:
                        process._MPI.Prequest.Startall(b.requests)
                        if sends.requests:
                            sends.inflight = True
                if b.recvs:
                    waits.append(b.recvs)
            _calls(self.early, self.late, self.count, waits, flags)
        finally:
            if waits:               # (see PersistentStatement.finish)
                wait(waits.pop())
            stats["runs"] += 1
            comm.statement_done()
            stats["reruns"] += 1

    def ran(self) -> None:
        """Count a run of this repeat whose kernel calls the caller made (a chain of
        statements, :mod:`pgas.exec.chain`), as :meth:`run` counts its own."""
        fuse.stats["fused"] += self.count
        fuse.stats["rows"] += self.count
        stats["calls"] += 1
        stats["runs"] += 1
        comm.statement_done()
        stats["reruns"] += 1

    def chainable(self) -> bool:
        """Whether this repeat is one row-kernel call, run whole (this locale runs one
        thread), with no message: a link of a chain (:mod:`pgas.exec.chain`)."""
        return (not self.fs.peers and not self.late and len(self.early) == 1
                and type(self.early[0][0]) is not workers.Split and chain.rows_of(self.calls[1][0][0]) is not None)


    def finish(self, waits) -> None:
        """Steps 3-5 by the kept kernel calls, the transfers started by the caller (a merged
        exchange's, :class:`pgas.exec.merged.Kept`): ``waits`` as for
        :meth:`PersistentStatement.finish`; the caller reads the processor's flags, as for
        :meth:`run` with ``flags`` false."""
        try:
            _calls(self.early, self.late, self.count, waits, False)
        finally:
            stats["runs"] += 1
            comm.statement_done()
            stats["reruns"] += 1


class KeptFill:
    """A recorded scalar fill's repeat with nothing looked up: the views of its tasks in its
    binding's storage (``b.fills``, made by the fill's last run there, with no peers).
    Made by :func:`kept_fill`; :meth:`valid` while they are still kept."""

    __slots__ = ("fs", "b", "views", "dtype")

    def valid(self) -> bool:
        fs, b = self.fs, self.b
        return fs.built and not fs.transient and b.flats is not None and b.fills is self.views

    def takes(self, value) -> bool:
        """Whether :meth:`run` stores ``value``: a NumPy scalar of the target's dtype (else the
        statement runs the usual way)."""
        return isinstance(value, np.generic) and value.dtype == self.dtype

    def run(self, value) -> None:
        """Store ``value`` (:meth:`takes` it) into every task's view, as
        :meth:`PersistentStatement.finish`'s fill path does."""
        try:
            for view in self.views:
                view[...] = value
        finally:
            stats["fills"] += 1
            stats["runs"] += 1
            comm.statement_done()
            stats["reruns"] += 1


def kept_fill(r: Replay, bases, fs=None) -> "KeptFill | None":
    """The :class:`KeptFill` repeat of recorded fill ``r`` on ``bases`` where its binding keeps
    its tasks' views, else None; ``fs``: the compiled form it runs by where that is not
    ``r.fs`` (a merged run's own copy, :mod:`pgas.exec.merged`)."""
    fs = r.fs if fs is None else fs
    if not valid(r) or fs.peers or not fs.built or fs.transient:
        return None
    b = fs.bindings.get(tuple(map(id, bases)))
    if b is None or not b.same(bases) or b.fills is None:
        return None
    k = KeptFill()
    k.fs, k.b, k.views, k.dtype = fs, b, b.fills, fs.dtypes[fs.plan.stmt.write]
    return k


def settings_key() -> tuple:
    """What a :class:`Kept` depends on beyond its own objects, compared by the holder before
    each use: the settings' version, the fuse generation, the calibrated model, the switches
    and the locale's thread count."""
    return (settings.version[0], fuse.generation[0], calibrate.current(), ENABLED, interior.MODE,
            threads._applied[0])                # (workers.count(): the thread limit, None before it is known)


def kept(r: Replay, bases, fs=None, prog=None) -> "Kept | None":
    """The :class:`Kept` repeat of recorded statement ``r`` on ``bases`` (the arrays it last
    ran on) where its binding keeps kernel calls of ``r``'s own program (or of ``prog``, the
    program with other constants that :func:`rerun` last ran it by) made under the current
    settings (it last ran every task by a kernel stored in place), else None; ``fs``: the
    compiled form it runs by where that is not ``r.fs`` (a merged run's own copy,
    :mod:`pgas.exec.merged`)."""
    fs = r.fs if fs is None else fs
    if not valid(r) or not fs.built or fs.transient:
        return None
    b = fs.bindings.get(tuple(map(id, bases)))
    calls = None if b is None or not b.same(bases) else b.calls
    if calls is None or calls[0] is not (r.prog if prog is None else prog) or calls[4] != (
            settings.version[0], fuse.generation[0]):
        return None
    k = Kept()
    k.fs, k.b, k.calls, k.count = fs, b, calls, calls[3]
    k.early, k.late = ([(_unsplit(kernel, args), args) for kernel, args in part] for part in (calls[1], calls[2]))
    return k


def _unsplit(kernel, args):
    """``kernel`` itself, not its thread splitter (:class:`pgas.exec.workers.Split`), where
    the splitter would call it as it is at this thread count (part of :func:`settings_key`)."""
    if type(kernel) is workers.Split and workers.ways(*kernel.measure(args)) < 2:
        return kernel.kernel
    return kernel


class _Binding:
    """A compiled statement bound to its arrays: their storage, the send requests.  It
    holds the arrays only weakly, and lets their storage go (its views and send requests)
    as soon as one of them is collected, so that their windows are released to the pool
    (:mod:`pgas.comm.window`) as they would be without it."""

    __slots__ = ("refs", "flats", "wins", "sends", "requests", "counts", "calls", "fills", "recvs", "__weakref__")

    def __init__(self, fs: PersistentStatement, arrays) -> None:
        me = weakref.ref(self)
        gone = lambda _, me=me: (lambda b: b is not None and comm.free_handles(b.free))(me())  # noqa: E731 (on MPI's thread)
        self.refs = [weakref.ref(a, gone) for a in arrays]
        self.flats = [a.store.storage for a in arrays]
        self.wins = list({id(a.store.window): a.store.window for a in arrays}.values())
        self.sends = PackedSends([(r, arrays[slot].store.storage, t, tag) for r, slot, t, tag in fs.sends], fs.packed)
        self.recvs = fs.xfer.requests()[0]
        self.requests = self.recvs + self.sends.requests          # receives first
        self.counts = fs.xfer.counts() + self.sends.counts
        #: ``(program, early calls, late calls, count, (settings version, fuse generation))``:
        #: the ``(kernel, args)`` of a run of ``program`` whose every task a fused kernel
        #: stored in place (:data:`pgas.exec.fuse.capture`; its constants immutable, converted
        #: into the arguments).  The arguments name only this binding's storage and the
        #: statement's buffers, so a repeat of the same program object (a recorded statement,
        #: :func:`rerun`) under the same settings makes the same calls without laying the
        #: tasks out.
        self.calls = None
        #: The views of a scalar fill's tasks in this binding's storage.
        self.fills = None

    def same(self, arrays) -> bool:
        return (self.flats is not None and len(self.refs) == len(arrays)
                and all(w() is a for w, a in zip(self.refs, arrays)))

    def free(self) -> None:
        """Free the send requests and drop the storage views (idempotent)."""
        if self.flats is not None:
            self.sends.free()                         # (waits for sends still in flight)
            self.flats = self.wins = self.requests = self.calls = self.fills = self.recvs = None

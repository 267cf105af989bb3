"""Persistent point-to-point transfers of a repeated exchange (a cached polyshift's).

A plan run many times on the same arrays moves the same regions between the
same locales every time.  Here each such message is an MPI persistent request
(``MPI_Send_init`` / ``MPI_Recv_init``), made once: the send reads its regions
straight out of the source array's storage through one committed struct
datatype (no packing), the receive lands in a buffer kept by the caller.  A run
then only starts its requests and waits for them: no notice, no one-sided get,
no flush.  The sender's message itself says its data is ready, and a completed
send says the receiver no longer needs the sender's memory.

Messages go on the notices' communicator with tags from :data:`TAG` up (one
per message of a locale pair, in order), so they never mix with the
statements' notices or with :mod:`pgas.comm.exchange`; between two locales
they are matched in the order started (MPI's non-overtaking rule).  A message
gathered from (or scattered into) several buffers, one of several statements'
merged messages to a peer (:class:`Gathered`), has the tag ``TAG +
MAX_PER_PAIR``.
"""

from __future__ import annotations

import atexit
import time
import weakref

import numpy as np

from . import counters, process, runtime, trace, waits
from .counters import record, record_sync
from .window import _region_type

#: The first tag of persistent transfers (notices use 11-14 and 21-22, exchanges 41).
TAG = 100
#: Messages per locale pair in one exchange (tags ``TAG .. TAG + MAX_PER_PAIR - 1``).
MAX_PER_PAIR = 64
#: Where each part of a message that carries several arrays starts: a multiple of this
#: many bytes (every dtype's elements aligned in the receive buffer).
ALIGN = 16


def segments(nbytes) -> tuple[list, int]:
    """The byte offsets of parts of ``nbytes`` bytes each, back to back in one message,
    each aligned to :data:`ALIGN`, and the message's length: the layout both ends of a
    message that carries several arrays compute alike."""
    offsets, total = [], 0
    for n in nbytes:
        total = -(-total // ALIGN) * ALIGN
        offsets.append(total)
        total += n
    return offsets, total


class RegionType:
    """A committed MPI datatype for several boxes ``(offset, counts, strides)`` of an
    array of ``dtype`` (element units), read back to back; owned (freed by :meth:`free`,
    never evicted from a cache under a live request)."""

    def __init__(self, dtype, regions) -> None:
        MPI = process.mpi()
        dtype = np.dtype(dtype)
        item = dtype.itemsize
        regions = [(int(o), tuple(int(c) for c in cs), tuple(int(s) for s in ss)) for o, cs, ss in regions]
        types = [_region_type(dtype, c, s) for _, c, s in regions]
        self.type = MPI.Datatype.Create_struct([1] * len(regions), [o * item for o, _, _ in regions], types)
        self.type.Commit()
        self.regions = regions
        self.size = sum(int(np.prod(c)) for _, c, _ in regions)
        self.nbytes = self.size * item

    def free(self) -> None:
        if self.type is not None and live():
            self.type.Free()
        self.type = None


class Gathered:
    """A committed MPI datatype for the bytes of several contiguous NumPy buffers back to
    back, at their addresses (a message sent from or received into ``MPI_BOTTOM``): one
    message carrying what would otherwise be several.  Holds the buffers, so that a
    message in flight never outlives its memory; owned (freed by :meth:`free`)."""

    def __init__(self, buffers) -> None:
        MPI = process.mpi()
        self.buffers = [b.reshape(-1).view(np.uint8) for b in buffers]
        self.type = MPI.BYTE.Create_hindexed([b.nbytes for b in self.buffers],
                                             [MPI.Get_address(b) for b in self.buffers])
        self.type.Commit()
        self.nbytes = sum(b.nbytes for b in self.buffers)

    def free(self) -> None:
        if self.type is not None and live():
            self.type.Free()
        self.type = None


#: The tag (above :data:`TAG`) of a gathered message (:class:`Gathered`).
GATHERED = MAX_PER_PAIR


class Transfers:
    """A set of persistent sends and receives, started and completed together."""

    def __init__(self) -> None:
        self._recvs: list = []
        self._sends: list = []
        self._counts: list = []          # (peer, nbytes) per send, for the message counters
        self._types: list = []           # the Gathered types made here, freed with the requests

    def recv_gathered(self, peer: int, buffers) -> None:
        """Receive one message from ``peer`` into contiguous ``buffers``, filled back to back, each run."""
        g = Gathered(buffers)
        self._types.append(g)
        self._recvs.append(runtime._notices().Recv_init([process.mpi().BOTTOM, 1, g.type], peer, TAG + GATHERED))

    def send_gathered(self, peer: int, buffers) -> None:
        """Send contiguous ``buffers`` back to back to ``peer`` as one message, each run
        (they must not change between a run's start and the send's completion)."""
        g = Gathered(buffers)
        self._types.append(g)
        self._sends.append(runtime._notices().Send_init([process.mpi().BOTTOM, 1, g.type], peer, TAG + GATHERED))
        self._counts.append((peer, g.nbytes))

    def recv(self, peer: int, buf: np.ndarray, tag: int) -> None:
        """Receive ``buf.nbytes`` bytes from ``peer`` into contiguous ``buf``, each run."""
        c, byte = runtime._notices(), process.mpi().BYTE
        self._recvs.append(c.Recv_init([buf.reshape(-1).view(np.uint8), byte], peer, TAG + tag))

    def recv_regions(self, peer: int, storage: np.ndarray, rtype: RegionType, tag: int) -> None:
        """Receive from ``peer`` straight into the regions ``rtype`` of flat ``storage``, each run."""
        c = runtime._notices()
        self._recvs.append(c.Recv_init([storage, 1, rtype.type], peer, TAG + tag))

    def send(self, peer: int, storage: np.ndarray, rtype: RegionType, tag: int) -> None:
        """Send the regions ``rtype`` of flat ``storage`` to ``peer``, each run (``storage``
        must not change between a run's start and its :meth:`wait`)."""
        c = runtime._notices()
        self._sends.append(c.Send_init([storage, 1, rtype.type], peer, TAG + tag))
        self._counts.append((peer, rtype.nbytes))

    def send_packed(self, peer: int, buf: np.ndarray, tag: int) -> None:
        """Send contiguous ``buf`` (regions the caller packed into it) to ``peer``, each run;
        counted as a message of ``buf.nbytes``.  ``buf`` must not change between a run's
        start and the send's completion; the regions it was packed from may."""
        c, byte = runtime._notices(), process.mpi().BYTE
        self._sends.append(c.Send_init([buf.reshape(-1).view(np.uint8), byte], peer, TAG + tag))
        self._counts.append((peer, buf.nbytes))

    def send_values(self, peer: int, buf: np.ndarray, tag: int) -> None:
        """Send contiguous ``buf`` (a few values, e.g. a write version) to ``peer``, each run;
        counted as a synchronisation notice, not a message."""
        c, byte = runtime._notices(), process.mpi().BYTE
        self._sends.append(c.Send_init([buf.reshape(-1).view(np.uint8), byte], peer, TAG + tag))
        self._counts.append((peer, None))

    def start(self) -> None:
        """Start every receive, then every send, each in the order added."""
        start_all(self._recvs + self._sends, self._counts)

    def requests(self) -> tuple[list, list]:
        """The receive and the send requests (for :func:`start_all` of several sets)."""
        return list(self._recvs), list(self._sends)

    def counts(self) -> list:
        """``(peer, nbytes)`` per send (None bytes: a notice), for :func:`start_all`."""
        return list(self._counts)

    def wait_recvs(self) -> None:
        """Wait until every receive has landed."""
        if self._recvs:
            wait(self._recvs)

    def wait_all(self) -> None:
        """Wait until every receive has landed and every send is complete, in one polling
        loop (every locale starts its transfers before it waits, so none waits on another's
        wait)."""
        if self._recvs or self._sends:
            wait(self._recvs + self._sends)

    def wait_sends(self) -> None:
        """Wait until every send is complete (the source may change again)."""
        if self._sends:
            wait(self._sends)

    def free(self) -> None:
        """Free the requests (none may be active; after MPI is finalised, only forget them)."""
        if live():
            for r in self._recvs + self._sends:
                r.Free()
        for g in self._types:
            g.free()
        self._recvs, self._sends, self._counts, self._types = [], [], [], []


#: Polls (each followed by a yield of the core) before a wait starts sleeping ``NAP`` seconds
#: between polls, on an oversubscribed node (wait policy ``"nap"``, :mod:`pgas.comm.node`;
#: :func:`pgas.comm.waits.yielding_wait`).  With more processes than cores a yielding
#: poller stays runnable and takes the time slices its peers need to send; a napping one
#: leaves the run queue (small plans in turn ran faster with a nap after 20 polls than
#: yielding only, with more locales than cores).  Where every locale has a core of its
#: own the waits never nap.
SPINS = 20
NAP = 5e-5


class PackedSends:
    """Persistent sends of regions of arrays' storage, packed at each start into send
    buffers, so that the sender need not wait for its readers: the sends read the
    buffers, never the storage, and may complete after the caller goes on.

    ``sends``: ``[(peer, flat storage, RegionType, tag)]``, or ``[(peer, [(flat storage,
    RegionType), ...], tag)]`` for a message carrying regions of several arrays (each part
    at the offset :func:`segments` gives, in a byte buffer of this object's own);
    ``buffers``: one contiguous
    array per send (of the storage's dtype, ``RegionType.size`` long) to pack into,
    shared by several ``PackedSends`` of which at most one is in flight (the caller
    settles the last before packing), or None to own them.  A run calls :meth:`pack`
    (which settles this set's last sends first), starts :attr:`requests` with its
    receives (:func:`start_all`), then :meth:`started`.  A send larger than MPI's
    eager limit completes only once its reader has taken it; the reader waits for its
    receive within its own statement, so a send in flight depends on nothing this
    locale still has to do, and :meth:`settle` never waits on a peer's later work."""

    __slots__ = ("xfer", "packs", "requests", "counts", "inflight", "__weakref__")

    def __init__(self, sends, buffers=None) -> None:
        self.xfer = Transfers()
        self.packs = []
        for k, send in enumerate(sends):
            if len(send) == 3:                        # several arrays' regions in one message
                peer, parts, tag = send
                offsets, total = segments([rtype.nbytes for _, rtype in parts])
                whole = np.empty(total, dtype=np.uint8)
                self.xfer.send_packed(peer, whole, tag)
                for (flat, rtype), off in zip(parts, offsets):
                    self._add(flat, rtype, whole[off:off + rtype.nbytes].view(flat.dtype))
                continue
            peer, flat, rtype, tag = send
            dst = np.empty(rtype.size, dtype=flat.dtype) if buffers is None else buffers[k]
            self.xfer.send_packed(peer, dst, tag)
            self._add(flat, rtype, dst)
        self.requests = self.xfer.requests()[1]
        self.counts = self.xfer.counts()
        self.inflight = False
        if self.requests:
            _inflight.add(self)                       # (for exit: its sends, while in flight)

    def _add(self, flat, rtype, dst) -> None:
        views = [_view(flat, off, steps, counts) for off, counts, steps in rtype.regions]
        if len(views) == 1:                           # (packed by one copy)
            self.packs.append((views[0], views, dst.reshape(views[0].shape)))
        else:
            self.packs.append((None, views, dst))

    def pack(self) -> None:
        """Copy the regions into the send buffers (after this set's last sends completed)."""
        if self.inflight:
            self.settle()
        t0 = trace.on and trace.now()
        for one, views, dst in self.packs:
            if one is not None:
                dst[...] = one                        # (a copy as np.copyto makes it: the same dtype)
            else:
                np.concatenate(views, axis=None, out=dst)
        if t0:
            trace.add("pack", "pack sends", t0, {"peers": [p for p, _ in self.counts],
                                                 "bytes": sum(n for _, n in self.counts)})

    def started(self) -> None:
        """The sends were started: in flight until :meth:`settle`."""
        if self.requests:
            self.inflight = True

    def settle(self) -> None:
        """Wait until the sends of the last start are complete (their readers took them)."""
        if self.inflight:
            if trace.on:
                trace.waiting = "sends to " + ",".join(str(p) for p, _ in self.counts) + " taken (last run's)"
            wait(self.requests)
            self.inflight = False

    def free(self) -> None:
        """Settle, then free the requests (idempotent)."""
        self.settle()
        self.xfer.free()
        self.packs, self.requests = [], []


def _view(flat: np.ndarray, offset: int, strides, counts) -> np.ndarray:
    """The region ``(offset, counts, strides)`` (elements) of contiguous ``flat``."""
    item = flat.itemsize
    return np.ndarray(tuple(counts), flat.dtype, buffer=flat, offset=offset * item,
                      strides=tuple(s * item for s in strides))


#: Sends that may be in flight (:class:`PackedSends` with requests, held weakly: each is in
#: flight while its ``inflight`` says so), settled at exit.
_inflight: "weakref.WeakSet" = weakref.WeakSet()


def settle_all() -> None:
    """Wait for every send still in flight."""
    for s in list(_inflight):
        s.settle()


def _at_exit() -> None:
    """At exit, before MPI finalises (Python's exit handlers run first): the sends in
    flight are waited for a few seconds at most (a job ending on an error need not have
    run its readers' statements)."""
    if not live():
        return
    reqs = [r for s in list(_inflight) if s.inflight for r in s.requests]
    end = time.monotonic() + 5.0
    while reqs and not process.mpi().Request.Testall(reqs) and time.monotonic() < end:
        time.sleep(0.001)


atexit.register(_at_exit)


def start_all(requests: list, counts: list) -> None:
    """Start persistent ``requests`` in one call (``MPI_Startall``, in list order: receives
    before sends) and count the sends ``counts`` (``(peer, nbytes)``; None bytes: a notice)."""
    if requests:
        t0 = trace.on and trace.now()
        process.mpi().Prequest.Startall(requests)
        if t0:
            trace.add("mpi", "MPI_Startall", t0, {"requests": len(requests),
                                                  "sends to": sorted({p for p, _ in counts})})
    if counters._on:
        for peer, nbytes in counts:
            if nbytes is None:
                record_sync()
            else:
                record(peer, nbytes)


def wait(requests: list) -> None:
    """Wait for ``requests`` (started), polling as :func:`pgas.comm.waits.yielding_wait`
    with :data:`SPINS` and :data:`NAP` (which nap only on an oversubscribed node)."""
    MPI = process._MPI
    if trace.on or MPI is None:
        waits.yielding_wait(requests, SPINS, NAP)
        return
    # (as yielding_wait untraced; requests already complete, the usual case for sends settled a
    # statement later, are tested once with no polling loop set up, unless frees deferred to this
    # thread wait for the loop, which makes them)
    testall = MPI.Request.Testall
    if waits._deferred or not testall(requests):
        waits.poll(lambda: testall(requests), SPINS, NAP)


def live() -> bool:
    """Whether MPI handles may still be freed (MPI is initialised and not finalised)."""
    MPI = process._MPI
    return MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized()

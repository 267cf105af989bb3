"""Personalised exchanges by point-to-point messages, without a collective per message size.

:func:`alltoallv <pgas.comm.collectives.alltoallv>` costs two collectives (the counts,
then the data), and an operation that must raise its errors on every locale alike
adds a third (:func:`~pgas.comm.agreement.agree`).  On a busy machine each collective
is a rendezvous of every locale, and in a loop of small exchanges (RandomAccess's
blocks of 1024 updates, CG's gathers) the rendezvous, not the data, take the time.
Waits poll as the node's wait policy says (:mod:`pgas.comm.node`: yielding the core
between polls, unless every locale has a core of its own and ``PGAS_WAIT=spin``):

- :func:`exchange`: sizes and senders unknown to the receiver.  Up to
  :data:`DENSE_MAX` locales every pair exchanges one message, empty or not, with a
  status byte ("this locale failed"); beyond, only non-empty parts travel and the
  end is found by a non-blocking consensus (NBX) whose one O(log P) reduction
  carries the status.  Either way the callers' errors are agreed on in the same
  exchange (then raised alike with :func:`~pgas.comm.agreement.raise_agreed`), and so,
  in the folding mode of collective call checking, are the calls folded since the
  last agreement (:func:`pgas.comm.check.carried`: a mismatch raises
  :class:`~pgas.comm.check.CollectiveMismatch` on every locale), so a call whose
  synchronisation is an exchange (``update``) needs no agreement of its own; and a
  locale's cost beyond :data:`DENSE_MAX` locales grows with the locales it sends
  to, not with the locale count.
- :func:`exchange_known`: senders and sizes known to the receiver (an index
  plan's), received straight into the caller's buffers; no consensus needed, and
  only the peers named are touched; :class:`KnownExchange` repeats one with
  persistent requests.

:func:`exchange` orders like a barrier: what a locale did before it (its
one-sided operations, completed by the caller first) happened before any
locale's return from it.  :func:`exchange_known` orders only the locales that
message each other.
Messages go on the notices' communicator with tags of their own; between two
locales they are matched in the order sent (MPI's non-overtaking rule), so
successive exchanges never mix.
"""

from __future__ import annotations

import numpy as np

from . import check, trace
from .counters import record, record_collective, record_sync
from .p2p import live, start_all
from .agreement import raise_agreed
from .process import here, mpi, mpi_type, num_locales
from .runtime import _notices, comm
from .waits import STALL_POLLS, pause, stall_probe, yielding_wait

#: The tags of exchange messages (dense: TAG; sparse: TAG + 1 and TAG + 2, alternating) and
#: of known-size exchanges (statements' notices use 11-14, ghost exchanges 21-22).
TAG = 41
KNOWN_TAG = 44
#: Up to this many locales an exchange messages every locale and needs no collective;
#: beyond it, only the locales it has data for, ended by a non-blocking consensus.
DENSE_MAX = 8
_round = 0                  # exchanges so far (the same count on every locale: they are collective)


def exchange(send: list[np.ndarray], dtype, error: BaseException | None = None) -> list[np.ndarray]:
    """Collective: ``send[r]`` (of ``dtype``) goes to locale ``r``; returns what each locale
    sent here, in locale order (``send[here]`` itself for this locale; an empty array from
    a locale that sent nothing).

    Up to :data:`DENSE_MAX` locales, every locale sends one message to every other
    (empty ones too, with a trailing status byte): no collective at all, which is
    what is fastest when there are few locales.  Beyond that, only non-empty parts
    travel, as synchronous sends, and the end is found by a non-blocking consensus
    (Hoefler, Siebert and Lumsdaine's NBX): a locale whose own sends have all been
    received enters a non-blocking reduction and keeps receiving until that
    reduction completes, which it can do only once every locale's sends have been
    received.  A locale's cost is then its messages plus one O(log P) reduction,
    never a message to every locale.  The reduction carries whether some locale
    failed, so errors are agreed on in it.

    Either way every locale's record of folded collective calls travels with it (dense:
    in each message; sparse: in the reduction), and if two differ every locale raises
    :class:`~pgas.comm.check.CollectiveMismatch` (before any ``error``).

    ``error``: this locale's error, if its part could not be made (it sends nothing
    then).  If any locale passes one, every locale raises (this locale's own error,
    or the first failing locale's as a :class:`~pgas.comm.agreement.LocaleError`)
    once the messages are through, before anything is returned.
    """
    dtype = np.dtype(dtype)
    comm()
    P, me = num_locales(), here()
    if P == 1:
        if error is not None:
            raise_agreed(error)
        return [np.asarray(send[0], dtype=dtype).reshape(-1)]
    t0 = trace.on and trace.now()
    raw, failed, differ = (_dense if P <= DENSE_MAX else _sparse)(send, dtype, error, me, P, check.carried())
    if t0:
        trace.add("mpi", "exchange (all to all)" if P <= DENSE_MAX else "exchange (NBX)", t0)
    check.exchanged(differ)
    if failed:
        raise_agreed(error)
    empty = np.empty(0, dtype)
    return [np.ascontiguousarray(send[r], dtype=dtype).reshape(-1) if r == me
            else raw[r].view(dtype) if r in raw else empty for r in range(P)]


#: The bytes after the payload of a dense exchange's message: the sender's record of folded
#: calls (:func:`pgas.comm.check.carried`, 16 bytes) and its status byte.
TRAILER = 17


def _dense(send, dtype, error, me: int, P: int, words: bytes):
    """One message to and from every other locale, ``words`` and a status byte at the end of
    each: ``(payloads by source, whether any locale failed, whether any locale's words
    differ from another's)``.  Every locale sees every locale's words, so each finds a
    difference alike."""
    c, MPI = _notices(), mpi()
    reqs, keep = [], []
    tail = np.frombuffer(words + bytes([error is not None]), dtype=np.uint8)
    for r in range(P):
        if r == me:
            continue
        payload = np.ascontiguousarray(send[r], dtype=dtype).reshape(-1).view(np.uint8)
        msg = np.empty(payload.size + TRAILER, dtype=np.uint8)
        msg[:payload.size] = payload
        msg[payload.size:] = tail
        keep.append(msg)
        reqs.append(c.Isend([msg, MPI.BYTE], r, TAG))
        if payload.size:
            record(r, payload.size)
        else:
            record_sync()
    raw, failed, differ, status = {}, error is not None, False, MPI.Status()
    waiting = [r for r in range(P) if r != me]
    polls, since = 0, None
    while waiting:
        rest = []
        for r in waiting:
            msg = c.Improbe(r, TAG, status)
            if msg is None:
                rest.append(r)
                continue
            buf = np.empty(status.Get_count(MPI.BYTE), dtype=np.uint8)
            msg.Recv([buf, MPI.BYTE])
            failed = failed or bool(buf[-1])
            differ = differ or buf[-TRAILER:-1].tobytes() != words
            if buf.size > TRAILER:
                raw[r] = buf[:-TRAILER]
        if rest:
            pause()
            polls += 1
            if not polls % STALL_POLLS:
                since = stall_probe(since)
        waiting = rest
    yielding_wait(reqs)
    return raw, failed, differ


def _sparse(send, dtype, error, me: int, P: int, words: bytes):
    """Messages to the non-empty parts' locales only, ended by NBX (see :func:`exchange`),
    whose reduction ors ``words`` (each with its complement, so that a difference shows)
    and the status: ``(payloads by source, whether any locale failed, whether any
    locale's words differ from another's)``."""
    global _round
    c, MPI = _notices(), mpi()
    # Exchanges alternate between two tags: a locale that has left exchange k (its
    # reduction complete) may already send for k + 1 while this one still receives for
    # k, but it cannot get to k + 2 before this locale has entered k + 1.
    tag, _round = TAG + 1 + (_round & 1), _round + 1
    reqs, keep = [], []
    if error is None:
        for r in range(P):
            if r != me and len(send[r]):
                msg = np.ascontiguousarray(send[r], dtype=dtype).reshape(-1).view(np.uint8)
                keep.append(msg)
                reqs.append(c.Issend([msg, MPI.BYTE], r, tag))
                record(r, msg.size)
    raw: dict[int, np.ndarray] = {}
    mine = np.frombuffer(words, dtype=np.uint64)
    flag = np.array([mine[0], ~mine[0], mine[1], ~mine[1], error is not None], dtype=np.uint64)
    status, got, u64 = MPI.Status(), np.empty_like(flag), mpi_type(np.dtype(np.uint64))
    done, polls, since = None, 0, None
    while True:
        msg = c.Improbe(MPI.ANY_SOURCE, tag, status)
        if msg is not None:
            buf = np.empty(status.Get_count(MPI.BYTE), dtype=np.uint8)
            msg.Recv([buf, MPI.BYTE])
            raw[status.Get_source()] = buf
            continue
        if done is None and MPI.Request.Testall(reqs):
            record_collective()
            done = c.Iallreduce([flag, u64], [got, u64], op=MPI.BOR)
        if done is not None and done.Test():
            break
        pause()
        polls += 1
        if not polls % STALL_POLLS:
            since = stall_probe(since)
    return raw, bool(got[4]), bool(got[0] & got[1] or got[2] & got[3])


def exchange_known(sends, recvs, local=None) -> None:
    """Point-to-point between the locales named: each ``(peer, data)`` of ``sends`` goes to
    ``peer``, and from each ``(peer, out)`` of ``recvs`` one message lands in ``out`` (a
    contiguous 1-D array of exactly the size the peer sends: both sides know the sizes,
    as from an index plan).  ``local()``, if given, runs while the messages travel.

    Only the pairs listed are touched (list only non-empty parts, not this locale):
    a locale's work grows with the peers it talks to, never with the locale count.
    No collective: it orders only the locales that message each other.  A locale
    sending more than its receiver expects is an MPI truncation error."""
    if not sends and not recvs:
        if local is not None:
            local()
        return
    t0 = trace.on and trace.now()
    c, byte = _notices(), mpi().BYTE
    reqs = [c.Irecv([out.view(np.uint8), byte], r, KNOWN_TAG) for r, out in recvs]
    keep = []
    for r, data in sends:
        msg = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        keep.append(msg)
        reqs.append(c.Isend([msg, byte], r, KNOWN_TAG))
        record(r, msg.size)
    if local is not None:
        local()
    yielding_wait(reqs)
    if t0:
        trace.add("mpi", "exchange with known peers", t0, {"peers": sorted({r for r, _ in recvs} | {r for r, _ in sends})})


class KnownExchange:
    """:func:`exchange_known` repeated with the same peers, sizes and buffers (an index
    plan's gather): its messages are persistent requests (``MPI_Recv_init`` /
    ``MPI_Send_init``) made once, so each run only starts and waits for them.

    ``sends``: ``(peer, buf)`` pairs, ``buf`` contiguous, read at each run (fill it
    before :meth:`start`); ``recvs``: ``(peer, out)`` pairs, ``out`` contiguous,
    written at each run.  The buffers are kept alive with the requests; :meth:`free`
    frees the requests (none may be active).  A run's work grows with the peers
    listed, never with the locale count."""

    def __init__(self, sends, recvs) -> None:
        c, byte = _notices(), mpi().BYTE
        self._bufs = [b for _, b in recvs] + [b for _, b in sends]
        self._reqs = ([c.Recv_init([out.view(np.uint8), byte], r, KNOWN_TAG) for r, out in recvs]
                      + [c.Send_init([buf.view(np.uint8), byte], r, KNOWN_TAG) for r, buf in sends])
        self._counts = [(r, buf.nbytes) for r, buf in sends]

    def start(self) -> None:
        """Start every receive, then every send."""
        start_all(self._reqs, self._counts)

    def wait(self) -> None:
        """Wait until every receive has landed and every send is complete (polling as
        :func:`exchange_known`)."""
        yielding_wait(self._reqs)

    def free(self) -> None:
        """Free the requests (after MPI is finalised, only forget them)."""
        if live():
            for r in self._reqs:
                r.Free()
        self._reqs, self._counts, self._bufs = [], [], []

"""Personalised exchanges by point-to-point messages: one message per locale pair, no collective.

:func:`alltoallv <pgas.comm.runtime.alltoallv>` costs two collectives (the counts,
then the data), and an operation that must raise its errors on every locale alike
adds a third (:func:`~pgas.comm.runtime.agree`).  On a busy machine each collective
is a rendezvous of every locale, and in a loop of small exchanges (RandomAccess's
blocks of 1024 updates, CG's gathers) the rendezvous, not the data, take the time.
Here every locale sends one message to every other locale (empty ones too) and
receives one from each, polling and yielding the core between polls (with more
processes than cores, as on a shared machine, a spinning wait takes the time the
peers need to send; measured 1.7x faster RandomAccess rounds at 2 locales on 2
busy cores):

- :func:`exchange`: sizes unknown to the receiver (it probes each message), and
  one status byte per message carries "this locale failed", so the callers' errors
  are agreed on in the same messages (then raised alike with
  :func:`~pgas.comm.runtime.raise_agreed`);
- :func:`exchange_known`: sizes known to the receiver (an index plan's), received
  straight into one buffer in locale order; no status byte.

As every locale hears from every other, an exchange orders like a barrier: what
a locale did before it (its one-sided operations, completed by the caller first)
happened before any locale's return from it.  Messages go on the notices'
communicator with a tag of their own; between two locales they are matched in
the order sent (MPI's non-overtaking rule), so successive exchanges never mix.
"""

from __future__ import annotations

import numpy as np

from .counters import record, record_sync
from .runtime import _notices, _yield, comm, here, mpi, num_locales, raise_agreed, yielding_wait

#: The tag of exchange messages (statements' notices use 11-14, ghost exchanges 21-22).
TAG = 41


def _post(send, dtype, me: int, P: int, status: int | None):
    """Start the sends to every other locale (with a trailing status byte unless None)."""
    c, byte, reqs, keep = _notices(), mpi().BYTE, [], []
    for r in range(P):
        if r == me:
            continue
        payload = np.ascontiguousarray(send[r], dtype=dtype).reshape(-1).view(np.uint8)
        if status is not None:
            msg = np.empty(payload.size + 1, dtype=np.uint8)
            msg[:-1] = payload
            msg[-1] = status
        else:
            msg = payload
        keep.append(msg)
        reqs.append(c.Isend([msg, byte], r, TAG))
        if payload.size:
            record(r, payload.size)
        else:
            record_sync()
    return reqs, keep


def exchange(send: list[np.ndarray], dtype, error: BaseException | None = None) -> list[np.ndarray]:
    """Collective: ``send[r]`` (of ``dtype``) goes to locale ``r``; returns what each locale
    sent here, in locale order (``send[here]`` itself for this locale).

    ``error``: this locale's error, if its part could not be made (send empty parts
    then).  If any locale passes one, every locale raises (this locale's own error,
    or the first failing locale's as a :class:`~pgas.comm.runtime.LocaleError`)
    once the messages are through, before anything is returned.
    """
    dtype = np.dtype(dtype)
    comm()
    P, me = num_locales(), here()
    if P == 1:
        if error is not None:
            raise_agreed(error)
        return [np.asarray(send[0], dtype=dtype).reshape(-1)]
    reqs, _keep = _post(send, dtype, me, P, 1 if error is not None else 0)
    c, MPI = _notices(), mpi()
    raw, failed = [None] * P, error is not None
    status = MPI.Status()
    waiting = [r for r in range(P) if r != me]
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
            raw[r] = buf
        if rest:
            _yield()
        waiting = rest
    yielding_wait(reqs)
    if failed:
        raise_agreed(error)
    out = [None] * P
    for r in range(P):
        out[r] = (np.ascontiguousarray(send[r], dtype=dtype).reshape(-1) if r == me
                  else raw[r][:-1].view(dtype))
    return out


def exchange_known(send: list[np.ndarray], out: np.ndarray, counts) -> list[np.ndarray]:
    """Collective: ``send[r]`` goes to locale ``r``; what locale ``r`` sends here (``counts[r]``
    elements, known in advance) lands in ``out`` (1-D, of the parts' dtype, ``sum(counts)``
    long) at the place of locale ``r`` in locale order.  Returns the parts (views of ``out``).
    A locale sending more than the receiver expects is an MPI truncation error."""
    P, me = num_locales(), here()
    ends = np.cumsum(counts)
    starts = ends - np.asarray(counts)
    parts = [out[int(a):int(b)] for a, b in zip(starts, ends)]
    parts[me][...] = send[me]
    if P == 1:
        return parts
    c, MPI = _notices(), mpi()
    reqs = [c.Irecv([parts[r].view(np.uint8), MPI.BYTE], r, TAG) for r in range(P) if r != me]
    sends, _keep = _post(send, out.dtype, me, P, None)
    yielding_wait(reqs + sends)
    return parts

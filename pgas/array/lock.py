"""``pg.Lock``: a distributed lock, held by one locale at a time (UPC's ``upc_lock``).

A ticket lock on two int64 counters of a small DistArray, ``next`` (the next
ticket to hand out) and ``serving`` (the ticket that holds the lock), moved only
by the one-sided atomics (``fetch_add``, ``compare_exchange``):

- ``acquire()`` takes a ticket (``fetch_add(next, 1)``) and polls ``serving``
  (an atomic read) until it reaches it, giving the core away between polls as the
  runtime's wait policy says (:func:`pgas.comm.poll`).  Locales are served in the
  order they took their tickets: none waits for ever while others go round again;
- ``acquire(blocking=False)`` takes a ticket only if the lock is free
  (``compare_exchange(next, serving, serving + 1)``: UPC's ``upc_lock_attempt``);
- ``release()`` advances ``serving`` by one.

Memory ordering: the one-sided operations of a critical section are ordered with
the holders before and after it.  Acquiring completes with a fence and releasing
starts with one (:func:`pgas.comm.fence`: every window's operations flushed, local
stores synchronised), so what one holder wrote one-sided (``put``, ``put_async``,
``update_one``, atomics) or through ``A.local`` is seen by the next holder's reads,
with no ``pg.barrier()``.
"""

from __future__ import annotations

import numpy as np

from .. import comm
from ..comm.p2p import NAP, SPINS
from .creation.constructors import zeros

_NEXT, _SERVING = 0, 1


class Lock:
    """A distributed lock held by one locale at a time, as UPC's ``upc_lock``; fair (a
    ticket lock: locales get it in the order they asked).

    The constructor is collective (every locale makes the lock, in the same order, as an
    array); ``acquire``, ``release``, ``locked`` and ``waiting`` are one-sided: a locale calls them
    alone.  ``with lock:`` acquires and releases.  One-sided writes made while holding
    it (``put``, ``update_one``, stores through ``A.local``) are seen by the reads of the
    locale that holds it next, without a ``pg.barrier()``::

        lock = pg.Lock()
        with lock:
            C.put(0, C.get(0) + 1)        # no locale's increment is lost

    The lock is not reentrant: acquiring it again on the locale holding it raises
    ``RuntimeError``, as does releasing it on a locale that does not hold it.
    """

    def __init__(self) -> None:
        self._counters = zeros(2, dtype=np.int64, name="lock")
        self._ticket: int | None = None

    def acquire(self, blocking: bool = True) -> bool:
        """Take the lock, waiting until the locales that asked before have released it; with
        ``blocking=False`` take it only if it is free now.  Returns whether this locale
        holds it (always True when blocking).  One-sided."""
        if self._ticket is not None:
            raise RuntimeError(f"pg.Lock: locale {comm.here()} already holds this lock (it is not reentrant)")
        c = self._counters
        if blocking:
            ticket = int(c.fetch_add(_NEXT, 1))
            comm.poll(lambda: int(c.fetch_add(_SERVING, 0)) == ticket, SPINS, NAP)
        else:
            ticket = int(c.fetch_add(_SERVING, 0))
            if int(c.compare_exchange(_NEXT, ticket, ticket + 1)) != ticket:
                return False
        self._ticket = ticket
        comm.fence()                   # the previous holder's writes, seen by this one's reads
        return True

    def release(self) -> None:
        """Let the next locale waiting take the lock (RuntimeError if this locale does not
        hold it).  One-sided."""
        if self._ticket is None:
            raise RuntimeError(f"pg.Lock: release on locale {comm.here()}, which does not hold this lock")
        comm.fence()                   # this holder's writes complete before the next holder reads
        self._ticket = None
        self._counters.fetch_add(_SERVING, 1)

    def locked(self) -> bool:
        """Whether some locale holds the lock now (a snapshot: it may change at once).
        One-sided."""
        c = self._counters
        serving = int(c.fetch_add(_SERVING, 0))
        return int(c.fetch_add(_NEXT, 0)) > serving

    def waiting(self) -> int:
        """How many locales are waiting for the lock now (a snapshot).  One-sided."""
        c = self._counters
        serving = int(c.fetch_add(_SERVING, 0))
        return max(0, int(c.fetch_add(_NEXT, 0)) - serving - 1)

    def __enter__(self) -> Lock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"pg.Lock(held here: {self._ticket is not None})"

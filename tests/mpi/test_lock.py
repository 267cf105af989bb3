"""pg.Lock: mutual exclusion under contention (non-atomic get + put increments lose
nothing), what one holder writes one-sided is read by the next without a barrier,
fairness (a releasing locale queues behind the locales already waiting), the
non-blocking attempt, and errors (release without acquire, acquire twice)."""

import numpy as np
import pytest
from util import collective_verdict

import pgas as pg
from pgas import comm

P = pg.num_locales
ME = pg.here
TOTAL = 1000


def my_share(total: int) -> int:
    """This locale's part of ``total`` acquisitions (the parts add up to ``total``)."""
    return total // P + (ME < total % P)


@pytest.mark.parametrize("owner", ["first", "last"])
def test_get_put_increments_under_the_lock_lose_nothing(owner):
    """1,000 read-modify-writes by a one-sided get and a put (not atomic), each under the
    lock: the counter ends at exactly 1,000, and every holder read a different value (the
    previous holder's put was complete and seen: no barrier in between)."""
    lock = pg.Lock()
    C = pg.zeros(P, dtype=np.int64)
    k = 0 if owner == "first" else P - 1            # the owner reads and writes its own storage
    seen = []
    for _ in range(my_share(TOTAL)):
        with lock:
            v = int(C.get(k))
            seen.append(v)
            C.put(k, v + 1)
    pg.barrier()
    got = int(C.get(k))
    every = sorted(x for part in comm.allgather(seen) for x in part)
    collective_verdict(got == TOTAL and every == list(range(TOTAL)),
                       lambda: f"counter {got}, values seen {len(set(every))} distinct of {len(every)}")


def test_asynchronous_updates_and_local_stores_complete_before_release():
    """A holder's update_one (asynchronous) and its stores through A.local are seen by the
    next holder's get."""
    lock = pg.Lock()
    C = pg.zeros(P, dtype=np.int64)
    seen = []
    for _ in range(my_share(200)):
        with lock:
            v = int(C.get(0))
            seen.append(v)
            if ME == C.owner(0):
                C.local[0] = v + 1
            else:
                C.update_one(0, 1)
    pg.barrier()
    every = sorted(x for part in comm.allgather(seen) for x in part)
    collective_verdict(every == list(range(200)) and int(C.get(0)) == 200, lambda: f"values seen {every}")


def test_a_releasing_locale_queues_behind_the_waiting_ones():
    """Round robin of holders: locale h holds the lock while every other locale queues for
    it; h then releases and asks again at once: every other locale has its turn before h's
    next one (a test-and-set lock could hand it straight back to h)."""
    lock = pg.Lock()
    log = pg.full(P * P, -1, dtype=np.int64)
    pos = pg.zeros(1, dtype=np.int64)

    def record():
        p = int(pos.get(0))
        log.put(p, ME)
        pos.put(0, p + 1)

    for h in range(P):
        if ME == h:
            lock.acquire()
        pg.barrier()
        if ME == h:
            comm.poll(lambda: lock.waiting() == P - 1)
            lock.release()
        with lock:                               # h's turn comes after the others'
            record()
        pg.barrier()
    got = log.to_numpy().reshape(P, P)
    ok = all(sorted(got[h, :P - 1].tolist()) == sorted(set(range(P)) - {h}) and got[h, P - 1] == h
             for h in range(P))
    collective_verdict(ok, lambda: f"acquisition order per round: {got.tolist()}")


def test_attempt_and_locked():
    lock = pg.Lock()
    collective_verdict(not lock.locked() and lock.waiting() == 0, "a new lock is free")
    if ME == 0:
        assert lock.acquire(blocking=False)
    pg.barrier()
    got = lock.locked(), (ME == 0 or not lock.acquire(blocking=False))
    collective_verdict(all(got), lambda: f"held by locale 0: locked {got[0]}, attempt refused {got[1]}")
    pg.barrier()
    if ME == 0:
        lock.release()
    pg.barrier()
    won = lock.acquire(blocking=False)
    winners = comm.allreduce(np.int64(won))
    if won:
        lock.release()
    pg.barrier()
    collective_verdict(winners == 1 and not lock.locked(), lambda: f"{winners} locales took a free lock at once")


def test_errors():
    lock = pg.Lock()
    with pytest.raises(RuntimeError, match="does not hold"):
        lock.release()
    lock.acquire()
    with pytest.raises(RuntimeError, match="not reentrant"):
        lock.acquire()
    lock.release()
    with pytest.raises(RuntimeError, match="does not hold"):
        lock.release()
    with pytest.raises(ValueError, match="inside"):
        with lock:
            raise ValueError("inside")
    pg.barrier()
    collective_verdict(not lock.locked(), "a with block left by an exception releases the lock")

"""How many statements each locale has completed, readable one-sided: a one-sided
operation towards a locale first waits until that locale has completed every statement
this one has."""

from __future__ import annotations

import atexit
import time

import numpy as np

from .process import here, mpi


class _Epochs:
    """How many collective writes (statements) each locale has completed, readable by
    one-sided gets: a one-sided operation towards a locale first waits until that locale
    has completed every statement this one has (read once per target after each new
    statement, then cached), so it never races with a statement still running there,
    even on a locale that was no peer of it.  ``pg.barrier()`` makes every cache current."""

    def __init__(self) -> None:
        self.win = None
        self.count = None
        self.mine = 0
        self.seen: dict[int, int] = {}
        self.all_seen = 0
        self.probe = np.zeros(1, dtype=np.int64)

    def open(self, c) -> None:
        MPI = mpi()
        self.win = MPI.Win.Allocate(8, 8, comm=c)
        self.win.Lock_all()
        self.count = np.frombuffer(self.win.tomemory(), dtype=np.int64)
        self.count[0] = 0
        self.win.Sync()
        atexit.register(self.close)             # collective, like the array windows' free at exit

    def done(self) -> None:
        self.mine += 1
        if self.count is not None:
            self.count[0] = self.mine
            self.win.Sync()

    def realign(self, n: int) -> None:
        self.mine = n
        if self.count is not None:
            self.count[0] = n
            self.win.Sync()

    def wait(self, target: int) -> None:
        if self.all_seen >= self.mine or self.seen.get(target, -1) >= self.mine or target == here():
            return
        pause = 0.00002
        while True:
            self.win.Get([self.probe, mpi().INT64_T], target, 0)
            self.win.Flush(target)
            if self.probe[0] >= self.mine:
                self.seen[target] = int(self.probe[0])
                return
            time.sleep(pause)
            pause = min(2 * pause, 0.005)

    def close(self) -> None:
        if self.win is not None:
            self.win.Unlock_all()
            self.count = None
            self.win.Free()
            self.win = None


_epochs = _Epochs()


def statement_done() -> None:
    """This locale completed one collective write (a statement): see :class:`_Epochs`."""
    _epochs.done()


def completed() -> int:
    """How many statements this locale has completed."""
    return _epochs.mine


def realign(n: int) -> None:
    """Count ``n`` statements completed (the most of any locale, after a collective
    mismatch that ran statements on some locales only: see
    :func:`pgas.comm.check.realign_statements`)."""
    _epochs.realign(n)


def await_target(target: int) -> None:
    """Before a one-sided operation towards ``target``: wait until it has completed every
    statement this locale has (usually one cached comparison)."""
    _epochs.wait(target)

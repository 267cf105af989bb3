"""A bare MPI window for baseline measurements: what plain mpi4py code does,
with none of pgas's layers, so benchmarks can put the two side by side.

The window (``MPI.Win.Allocate``, ``Lock_all`` for its lifetime, like pgas's
own storage) holds ``size`` float64 values and one stop flag, which another
locale sets with :meth:`RawWindow.signal` to end a busy loop.
"""

from __future__ import annotations

import time

import numpy as np

from pgas.comm import process, runtime


class RawWindow:
    """Collective: a ``Win.Allocate`` window of ``size`` float64 values plus a stop flag."""

    def __init__(self, size: int) -> None:
        MPI = process.mpi()
        self.size = int(size)
        self.win = MPI.Win.Allocate((self.size + 1) * 8, 8, comm=runtime.comm())
        mem = np.frombuffer(self.win.tomemory(), dtype=np.float64)
        self.local, self._flag = mem[: self.size], mem[self.size:self.size + 1]
        self.local[:] = 0.0
        self._flag[:] = 0.0
        self.win.Lock_all()
        self.win.Sync()
        runtime.comm().Barrier()

    def time_gets(self, target: int, index: int, reps: int) -> tuple[np.ndarray, float]:
        """Seconds taken by each of ``reps`` one-element ``Win.Get`` + ``Flush`` from
        ``target``'s element ``index``, and the value read."""
        MPI = process.mpi()
        win, buf, spec = self.win, np.empty(1), [index, 1, MPI.DOUBLE]
        origin = [buf, MPI.DOUBLE]
        times = np.empty(reps)
        clock = time.perf_counter
        for k in range(reps):
            t0 = clock()
            win.Get(origin, target, spec)
            win.Flush(target)
            times[k] = clock() - t0
        return times, float(buf[0])

    def signal(self, target: int) -> None:
        """Set ``target``'s stop flag (one put, completed)."""
        MPI = process.mpi()
        self.win.Put([np.ones(1), MPI.DOUBLE], target, [self.size, 1, MPI.DOUBLE])
        self.win.Flush(target)

    def signalled(self) -> bool:
        """Whether this locale's stop flag is set; clears it if so."""
        self.win.Sync()
        if self._flag[0] == 0.0:
            return False
        self._flag[0] = 0.0
        self.win.Sync()
        return True

    def free(self) -> None:
        """Collective: free the window."""
        runtime.comm().Barrier()
        self.win.Unlock_all()
        self.local = self._flag = None
        self.win.Free()


def alltoallw(send: np.ndarray, recv: np.ndarray, send_runs: list, recv_runs: list):
    """What an expert writes by hand to move data between two distributions in mpi4py:
    one ``Alltoallw`` whose per-peer datatypes (``Create_indexed`` of ``(offset, length)``
    runs in elements) select what goes to each peer from ``send`` and where what comes
    from each peer lands in ``recv`` (both float64, this locale's local storage).

    ``send_runs[r]`` / ``recv_runs[r]`` are ``(offsets, lengths)`` arrays for peer ``r``.
    The datatypes are built and committed here, once; the returned function does one
    exchange, and ``.free()`` on it frees the datatypes (collective use only)."""
    MPI = process.mpi()
    c = runtime.comm()

    def types(runs):
        out = []
        for offs, lens in runs:
            if len(offs):
                t = MPI.DOUBLE.Create_indexed([int(x) for x in lens], [int(x) for x in offs])
                t.Commit()
            else:
                t = MPI.DOUBLE
            out.append(t)
        return out

    stypes, rtypes = types(send_runs), types(recv_runs)
    p = c.Get_size()
    scounts = [1 if len(send_runs[r][0]) else 0 for r in range(p)]
    rcounts = [1 if len(recv_runs[r][0]) else 0 for r in range(p)]
    zeros = [0] * p

    def exchange() -> None:
        c.Alltoallw([send, (scounts, zeros), stypes], [recv, (rcounts, zeros), rtypes])

    def free() -> None:
        for t in stypes + rtypes:
            if t != MPI.DOUBLE:
                t.Free()

    exchange.free = free
    return exchange

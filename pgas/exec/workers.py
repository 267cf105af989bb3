"""A locale's worker threads: one large task's kernel run over blocks of its outer loop at once.

``pg.config(threads=N)`` (or ``$PGAS_THREADS``, ``pgas run --threads N``, else the
node's cores shared out among its locales: :mod:`pgas.exec.threads`) lets each
locale run ``N`` threads.  The fused kernels (:mod:`pgas.exec.fuse`), the local
part of whole-array reductions and the compiled loops of gathers and updates
then split a task of at least :data:`SPLIT_MIN` elements into at most ``N``
blocks of its outermost loop: this thread runs the first block, the pool's
``N - 1`` threads the others (numba's kernels release the GIL, ``nogil=True``;
NumPy's reductions do too), and the call returns when every block is done.  A
block computes each element exactly as the whole loop does, so the values are
the same bit for bit whatever ``N``.  At one thread, or below the threshold,
the kernel is called as it is, with no other work.

The threshold: handing a block to a pool thread and waiting for it costs about
30-40 µs here (measured on a 64x64 stencil: 4 µs alone, 37 µs split in two),
while a 5-point stencil computes about 1.3 elements per ns on one core; at
2^18 elements (about 200 µs of work) the hand-over costs under a fifth of what
a second thread saves, and below it a split gains too little to measure.

The floating-point status flags a pool thread's block raised (divide by zero,
overflow, ...) are raised again in the calling thread, so that
:func:`pgas.exec.fperr.compiled` reports them as it does for one thread.
"""

from __future__ import annotations

import contextvars
from concurrent.futures import ThreadPoolExecutor

from . import fperr, threads

#: Elements a task needs before its loop is split over the locale's threads (see the
#: module's docstring); each block then has at least half of it.
SPLIT_MIN = 1 << 18
#: The most blocks a call is split into, whatever the thread count: each block is handed
#: to a pool thread through the GIL, one after another.  Measured on 16 cores
#: (``benchmarks/threads.py --n 1300``, one locale), a Jacobi step took 0.65, 0.51 and
#: 0.74 of one thread's time at 2, 4 and 16 threads (12 blocks), a sum 0.67, 0.59 and
#: 1.24: past 4 blocks the hand-overs cost more than the threads save.
MAX_BLOCKS = 4

_pool: list = [None, 0]               # the executor, and its number of threads
#: Calls split (:class:`Split`, and reductions), and the blocks they were split into.
stats = {"split": 0, "blocks": 0}


def count() -> int:
    """The threads this locale's kernels may run (the thread limit; 1 before it is known)."""
    n = threads.limit()
    return 1 if n is None else n


def ways(size: int, rows: int) -> int:
    """Blocks a task of ``size`` elements over ``rows`` outer iterations is split into:
    1 at one thread or below :data:`SPLIT_MIN`, else up to the thread count and
    :data:`MAX_BLOCKS`, each block at least ``SPLIT_MIN // 2`` elements and one row."""
    n = count()
    if n < 2 or size < SPLIT_MIN:
        return 1
    return max(1, min(n, MAX_BLOCKS, rows, size // (SPLIT_MIN // 2)))


def bounds(n: int, k: int) -> list[tuple[int, int]]:
    """``k`` consecutive blocks ``(start, stop)`` of ``range(n)``, sizes differing by at most one."""
    q, r = divmod(n, k)
    out, start = [], 0
    for i in range(k):
        stop = start + q + (i < r)
        out.append((start, stop))
        start = stop
    return out


def pool(n: int) -> ThreadPoolExecutor:
    """The locale's pool of ``n`` threads (made again when the thread count changes, not
    per call: a call of fewer blocks leaves some of them idle)."""
    if _pool[1] != n:
        old = _pool[0]
        _pool[0], _pool[1] = ThreadPoolExecutor(n, thread_name_prefix="pgas-worker"), n
        if old is not None:
            old.shutdown(wait=False)
    return _pool[0]


def run(calls) -> list:
    """Run ``calls`` (a list of ``(function, arguments)``) at once: the first in this
    thread, the others on the pool, each in a copy of this thread's context (NumPy's
    ``np.errstate`` lives there); their results, in order.  Waits for every call even
    when one raises (the first exception is raised after); the floating-point flags the
    pool's calls raised are raised in this thread."""
    if len(calls) == 1:
        fn, args = calls[0]
        return [fn(*args)]
    stats["split"] += 1
    stats["blocks"] += len(calls)
    ex = pool(max(1, count() - 1))      # (more calls than threads: the rest wait their turn)
    futures = [ex.submit(contextvars.copy_context().run, fperr.in_thread, fn, args) for fn, args in calls[1:]]
    error = None
    try:
        first = calls[0][0](*calls[0][1])
    except BaseException as e:        # noqa: BLE001 - raised once the others are done
        first, error = None, e
    results, flags = [first], 0
    for f in futures:
        try:
            got, bits = f.result()
            results.append(got)
            flags |= bits
        except BaseException as e:    # noqa: BLE001
            error = error or e
            results.append(None)
    if flags:
        fperr.raise_flags(flags)
    if error is not None:
        raise error
    return results


class Split:
    """A compiled kernel whose calls run over blocks of their outer loop on the locale's
    threads (see the module's docstring); called like the kernel itself.  ``measure(args)``:
    ``(elements, outer rows)`` of a call; ``cut(args, start, stop)``: the arguments of
    the call restricted to rows ``start:stop``."""

    __slots__ = ("kernel", "measure", "cut")

    def __init__(self, kernel, measure, cut) -> None:
        self.kernel, self.measure, self.cut = kernel, measure, cut

    def __call__(self, *args):
        if count() < 2:                        # one thread: the kernel as it is
            return self.kernel(*args)
        size, rows = self.measure(args)
        k = ways(size, rows)
        if k < 2:
            return self.kernel(*args)
        run([(self.kernel, self.cut(args, a, b)) for a, b in bounds(rows, k)])

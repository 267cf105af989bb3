"""Each locale's thread pools (BLAS, OpenMP, numba's) limited to its share of the node's cores.

Sixteen locales on a sixteen-core node that each start a full BLAS pool run 256
threads on 16 cores (a 4096 matmul at 16 locales: 78 Gflop/s, against 450 with one
BLAS thread per locale).  When the library starts (its first collective), every
locale limits its pools to the number :mod:`pgas.comm.node` decided (``$PGAS_THREADS``,
else the node's cores shared out among its locales), through threadpoolctl, and
numba's count too where numba's parallel layer is already running (numba is not
imported for it).  ``pg.config(threads=N)`` sets another number; ``pg.config()``
goes back to the node's.  Libraries loaded after the limit was set are not limited.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

from ..comm import node

#: The limit set last (None: none yet), and the one ``pg.config(threads=N)`` asked for (None: the node's).
_applied: list = [None]
_asked: list = [None]


def limit() -> int | None:
    """The thread limit in force on this locale (None before the library started, unless
    ``pg.config(threads=N)`` set one)."""
    return _applied[0]


def choose(threads) -> None:
    """``pg.config(threads=...)``: a positive whole number, or ``"auto"`` for the node's
    choice (applied now if the node is known, else when the library starts)."""
    _asked[0] = None if threads == "auto" else int(threads)
    if _asked[0] is not None:
        apply(_asked[0])
    elif node.current() is not None:
        apply(node.current().threads)


def apply(n: int) -> None:
    """Limit this process's BLAS / OpenMP pools (and numba's, if running) to ``n`` threads."""
    if n == _applied[0]:
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:             # an install without it: the pools keep their size
        threadpool_limits = None
    if threadpool_limits is not None:
        threadpool_limits(limits=n)
    _numba(n)
    _applied[0] = n


@contextmanager
def limited(n: int):
    """Within the block, this locale's pools may run ``n`` threads (a benchmark's
    one-process reference, timed while the other locales sleep, uses the whole node's
    cores); the limit in force before comes back after it."""
    before = _applied[0]
    apply(n)
    try:
        yield
    finally:
        if before is not None:
            apply(before)


def _numba(n: int) -> None:
    """numba's thread count, if numba is loaded and its threads were launched (setting it
    otherwise would launch them)."""
    if "numba" not in sys.modules:
        return
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    if parallel is None or not getattr(parallel, "_is_initialized", False):
        return
    numba = sys.modules["numba"]
    try:
        numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
    except Exception:  # noqa: BLE001 - a numba without the call, or one that refuses
        pass


def _started(learned) -> None:
    """The node is known: apply its thread count unless ``pg.config(threads=N)`` chose one."""
    if _asked[0] is None:
        apply(learned.threads)


node.on_learned(_started)


def blas() -> list[dict]:
    """threadpoolctl's view of this process's pools (``[]`` without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return threadpool_info()

"""Hand-written MPI + NumPy versions of jacobi2D, fdtd-2d and mvt: what an expert
writes without pgas, for ``pgas bench`` comparisons.

Rows are split in blocks (as ``pg.Block()`` would), each locale keeps its rows
plus one halo row above and below, and neighbours swap halo rows with
``Sendrecv`` before each sweep that reads them; mvt replicates ``y1`` once
(``Allgather``) and sums the ``A^T y2`` partial products with ``Allreduce``.
The initialisation is the pgas kernels' (:mod:`pgas.tools.bench.kernels`), so the
results compare with the same NumPy references.

MPI is reached through :func:`pgas.comm.runtime.comm` (the communicator pgas
itself uses): benchmarks of hand-written MPI are the one place outside
:mod:`pgas.comm` that issues MPI calls, on purpose, since that is what they
measure.  Each function is collective and returns ``(results, seconds per
step, messages per step)``: the result arrays gathered on every locale, the
slowest locale's time, and the point-to-point messages all locales send.
"""

from __future__ import annotations

import time

import numpy as np

from pgas.comm import process, runtime
from pgas.tools.bench.kernels import linear, stencils


def _rows(n: int, P: int, r: int) -> tuple[int, int]:
    """Block rows ``[lo, hi)`` of locale ``r`` (the first ``n % P`` get one more)."""
    q, e = divmod(n, P)
    lo = r * q + min(r, e)
    return lo, lo + q + (r < e)


class _Halo:
    """Rows ``[lo - 1, hi + 1)`` of an ``n x n`` array (halo rows kept at the edges too)."""

    def __init__(self, full: np.ndarray, lo: int, hi: int) -> None:
        self.lo, self.hi, self.n = lo, hi, full.shape[0]
        self.a = np.zeros((hi - lo + 2,) + full.shape[1:])
        a, b = max(lo - 1, 0), min(hi + 1, self.n)
        self.a[a - (lo - 1):b - (lo - 1)] = full[a:b]

    def own(self) -> np.ndarray:
        return self.a[1:-1]


def _swap(comm, h: _Halo, up: bool = True, down: bool = True) -> int:
    """Swap halo rows with the neighbours: ``up`` fills the row above from the locale
    above (sending my last row down), ``down`` the row below.  Returns messages sent."""
    null = process.mpi().PROC_NULL
    r, P = comm.Get_rank(), comm.Get_size()
    above, below = (r - 1 if r > 0 else null), (r + 1 if r < P - 1 else null)
    sent = 0
    if up:
        comm.Sendrecv(h.a[-2], dest=below, recvbuf=h.a[0], source=above)
        sent += below != null
    if down:
        comm.Sendrecv(h.a[1], dest=above, recvbuf=h.a[-1], source=below)
        sent += above != null
    return sent


def _check(n: int, comm) -> None:
    if n < comm.Get_size():
        raise ValueError(f"hand-written MPI kernels need n >= locales (one row each), got n={n} "
                         f"on {comm.Get_size()} locales")


def _gather(comm, part: np.ndarray, n: int) -> np.ndarray:
    parts = comm.allgather(part)
    return np.concatenate(parts, axis=0) if parts else np.zeros((0, n))


def _timed(comm, fn, steps: int):
    comm.Barrier()
    t0 = time.perf_counter()
    msgs = 0
    for t in range(steps):
        msgs += fn(t)
    comm.Barrier()
    dt = comm.allreduce(time.perf_counter() - t0, op=process.mpi().MAX)
    return dt / max(steps, 1), comm.allreduce(msgs) / max(steps, 1)


def jacobi2d(n: int, steps: int):
    """Collective: jacobi2D on Block rows with halo swaps."""
    comm = runtime.comm()
    _check(n, comm)
    lo, hi = _rows(n, comm.Get_size(), comm.Get_rank())
    A = _Halo(stencils._init2(n), lo, hi)
    B = np.zeros_like(A.a)
    g = np.arange(lo - 1, hi + 1)
    inner = (g >= 1) & (g <= n - 2)
    inner[0] = inner[-1] = False

    def step(t):
        sent = _swap(comm, A)
        a = A.a
        B[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[inner, 1:-1] = B[inner, 1:-1]
        return sent

    sec, msgs = _timed(comm, step, steps)
    return {"A": _gather(comm, A.own(), n)}, sec, msgs


def jacobi2d_polybench(n: int, steps: int):
    """Collective: PolyBench's jacobi-2d (:mod:`pgas.tools.bench.polybench`: its initial
    values, each step two 5-point sweeps, ``A`` to ``B`` and back) on Block rows with
    halo swaps before each sweep."""
    from pgas.tools.bench.polybench import jacobi_init

    comm = runtime.comm()
    _check(n, comm)
    lo, hi = _rows(n, comm.Get_size(), comm.Get_rank())
    A, B = (_Halo(G, lo, hi) for G in jacobi_init(n))
    g = np.arange(lo - 1, hi + 1)
    rows = np.flatnonzero((g >= 1) & (g <= n - 2) & (g >= lo) & (g < hi))

    def sweep(D, S):
        sent = _swap(comm, S)
        s = S.a
        D.a[rows, 1:-1] = 0.2 * (s[rows, 1:-1] + s[rows, :-2] + s[rows, 2:] + s[rows + 1, 1:-1] + s[rows - 1, 1:-1])
        return sent

    sec, msgs = _timed(comm, lambda t: sweep(B, A) + sweep(A, B), steps)
    return {"A": _gather(comm, A.own(), n), "B": _gather(comm, B.own(), n)}, sec, msgs


def fdtd2d(n: int, steps: int, init=None):
    """Collective: fdtd-2d on Block rows (``hz`` halo above, ``ey`` halo below); ``init``:
    the initial ``ex``, ``ey``, ``hz`` (default the pgas kernel's; PolyBench's step is the same)."""
    comm = runtime.comm()
    _check(n, comm)
    lo, hi = _rows(n, comm.Get_size(), comm.Get_rank())
    init = [stencils._init2(n, k) for k in (1, 2, 3)] if init is None else init
    ex, ey, hz = (_Halo(G, lo, hi) for G in init)
    g = np.arange(lo, hi)

    def step(t):
        sent = _swap(comm, hz, up=True, down=False)
        e, y, h = ex.a, ey.a, hz.a
        if lo == 0 and hi > 0:
            y[1] = float(t)
        rows = 1 + np.flatnonzero(g >= 1)
        y[rows] -= 0.5 * (h[rows] - h[rows - 1])
        e[1:-1, 1:] -= 0.5 * (h[1:-1, 1:] - h[1:-1, :-1])
        sent += _swap(comm, ey, up=False, down=True)
        rows = 1 + np.flatnonzero(g <= n - 2)
        h[rows, :-1] -= 0.7 * (e[rows, 1:] - e[rows, :-1] + y[rows + 1, :-1] - y[rows, :-1])
        return sent

    sec, msgs = _timed(comm, step, steps)
    return {k: _gather(comm, v.own(), n) for k, v in (("ex", ex), ("ey", ey), ("hz", hz))}, sec, msgs


def mvt(n: int, steps: int):
    """Collective: mvt with A in Block rows, ``y1`` replicated, ``A^T y2`` summed."""
    comm = runtime.comm()
    _check(n, comm)
    P = comm.Get_size()
    lo, hi = _rows(n, P, comm.Get_rank())
    A, x1, x2, y1, y2 = linear._mvt_init(n)
    A, x1, x2, y2 = A[lo:hi].copy(), x1[lo:hi].copy(), x2.copy(), y2[lo:hi].copy()
    y1 = np.concatenate(comm.allgather(y1[lo:hi]))
    MPI = process.mpi()

    def step(t):
        x1[:] += A @ y1
        part = A.T @ y2
        total = np.empty_like(part)
        comm.Allreduce(part, total, op=MPI.SUM)
        x2[:] += total
        return 2 * (P - 1) if P > 1 else 0         # a ring allreduce's messages per locale, about

    sec, msgs = _timed(comm, step, steps)
    return {"x1": np.concatenate(comm.allgather(x1)), "x2": x2}, sec, msgs


HAND = {"jacobi2D": jacobi2d, "fdtd-2d": fdtd2d, "mvt": mvt}


def compare(name: str, n: int, steps: int = 5, dist=None) -> dict:
    """Collective: kernel ``name`` (one of :data:`HAND`) with pgas (aggregated, on
    ``dist``, default Block) and by hand, each checked against the NumPy reference;
    seconds and messages per step of both, and pgas's time as a ratio of the hand's."""
    import pgas as pg
    from pgas.tools.bench.kernels import KERNELS
    k = KERNELS[name]
    state = k.setup(n, pg.Block() if dist is None else dist)
    k.step(state, 0)                                   # warm-up: plans every statement
    comm = runtime.comm()
    with pg.comm_diagnostics() as d:
        comm.Barrier()
        t0 = time.perf_counter()
        for t in range(1, steps + 1):
            k.step(state, t)
        comm.Barrier()
        dt = comm.allreduce(time.perf_counter() - t0, op=process.mpi().MAX) / steps
    want = k.reference(n, steps + 1)
    ok = all(np.allclose(state[key].to_numpy(), want[key], rtol=1e-9) for key in k.result)
    got, hsec, hmsgs = HAND[name](n, steps + 1)
    hok = all(np.allclose(got[key], want[key], rtol=1e-9) for key in k.result)
    return {"kernel": name, "n": n, "locales": comm.Get_size(), "pgas_seconds_per_step": dt,
            "pgas_messages_per_step": d.messages / steps, "hand_seconds_per_step": hsec,
            "hand_messages_per_step": hmsgs, "ratio": dt / hsec if hsec else float("nan"),
            "correct": bool(ok and hok)}

"""How long locales take to hear from each other, under the wait policy in force.

Times, on every locale of the job, with the slowest locale's figure reported:

- ``barrier``: ``MPI_Barrier`` called by mpi4py (MPICH's own busy poll) and pgas's
  barrier (``Ibarrier`` waited for by :func:`pgas.comm.waits.yielding_wait`);
- ``pingpong``: one 8-byte message from locale 0 to the last locale and back, each
  waited for by ``yielding_wait``: half the round trip;
- ``ring``: each locale swaps 8 KiB with its left and right neighbours (persistent
  requests, as a halo exchange) back to back, ``--reps`` times: the mean per swap,
  and each locale's swaps taking over 10x the median (a delay on one locale reaches
  its neighbours through the messages);
- ``jitter``: the same small NumPy computation (about 10 us) repeated with no
  communication at all: runs taking over 10x the median are the machine's own
  interruptions (other processes, the hypervisor), which no runtime can remove.

Run it under each wait policy (``PGAS_WAIT=spin|yield|nap``) to compare them:

    pgas run -n 16 benchmarks/wait_latency.py
    PGAS_WAIT=spin pgas run -n 16 benchmarks/wait_latency.py --reps 2000
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import pgas as pg
from pgas.comm import collectives, process, runtime, waits


def _each(f, reps: int) -> np.ndarray:
    """The seconds of each of ``reps`` calls of ``f``."""
    out = np.empty(reps)
    for i in range(reps):
        t = time.perf_counter()
        f()
        out[i] = time.perf_counter() - t
    return out


def _mean(f, reps: int) -> float:
    """The slowest locale's mean time of ``reps`` calls of ``f`` run back to back."""
    c = runtime.comm()
    c.Barrier()
    t = time.perf_counter()
    for _ in range(reps):
        f()
    return c.allreduce((time.perf_counter() - t) / reps, op=process.mpi().MAX)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=1000)
    p.add_argument("--json", default=None, metavar="FILE", help="write the figures here (locale 0)")
    args = p.parse_args()
    MPI, c = process.mpi(), runtime.comm()
    me, n, reps = c.Get_rank(), c.Get_size(), args.reps
    res = {"locales": n, "wait": waits.wait_mode(), "reps": reps}

    res["mpi_barrier_us"] = _mean(c.Barrier, reps) * 1e6
    res["pgas_barrier_us"] = _mean(lambda: collectives.barrier(windows=[]), reps) * 1e6

    buf = np.zeros(1)
    last = n - 1

    def ping():
        if me == 0:
            waits.yielding_wait([c.Isend(buf, dest=last, tag=7)])
            waits.yielding_wait([c.Irecv(buf, source=last, tag=8)])
        elif me == last:
            waits.yielding_wait([c.Irecv(buf, source=0, tag=7)])
            waits.yielding_wait([c.Isend(buf, dest=0, tag=8)])
    if n > 1:
        res["pingpong_us"] = _mean(ping, reps) / 2 * 1e6

    if n > 1:
        left, right = (me - 1) % n, (me + 1) % n
        out_l, out_r, in_l, in_r = (np.zeros(1024) for _ in range(4))
        reqs = [c.Send_init(out_l, dest=left, tag=1), c.Send_init(out_r, dest=right, tag=2),
                c.Recv_init(in_l, source=left, tag=2), c.Recv_init(in_r, source=right, tag=1)]

        def swap():
            MPI.Prequest.Startall(reqs)
            waits.yielding_wait(reqs)
        c.Barrier()
        ring = _each(swap, reps)
        res["ring_mean_us"] = c.allreduce(float(ring.mean()), op=MPI.MAX) * 1e6
        res["ring_median_us"] = c.allreduce(float(np.median(ring)), op=MPI.MAX) * 1e6
        res["ring_slow_per_locale"] = c.allgather(int((ring > 10 * np.median(ring)).sum()))
        for r in reqs:
            r.Free()

    a = np.random.default_rng(me).random(2000)
    c.Barrier()
    jit = _each(lambda: np.sort(a), reps * 5)
    med = float(np.median(jit))
    res["jitter_median_us"] = c.allreduce(med, op=MPI.MAX) * 1e6
    res["jitter_slow_per_locale"] = c.allgather(int((jit > 10 * med).sum()))
    res["jitter_slowest_us"] = c.allreduce(float(jit.max()), op=MPI.MAX) * 1e6
    res["jitter_slow_seconds_per_locale"] = c.allgather(round(float(jit[jit > 10 * med].sum()), 6))
    if me == 0:
        print(json.dumps(res))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1)
    pg.barrier()


if __name__ == "__main__":
    main()

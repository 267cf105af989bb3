"""Threads within a locale against more locales: a Jacobi step and a sum at n x n.

Run without a launcher, it starts one job per configuration ``LOCALESxTHREADS``
(``--configs``, default ``1x1,1x2,2x1``: one locale on one thread, one locale on two
threads, two locales on one thread each) with ``pgas run -n L --threads T``, in
``--rounds`` alternating rounds (the best median of the rounds is kept: a loaded
machine slows some rounds), and prints each configuration's time per Jacobi step
(``B[1:-1, 1:-1] = 0.2 * (...)`` and back, two statements, ``fuse=True``) and per
``A.sum()``, with the ratio to the first configuration; ``--json FILE`` writes them.

``--pool`` times the choice behind :mod:`pgas.exec.workers` instead, in this process: a
row kernel of the fused kernels' shape over n x n run alone, split over 2 threads by
the thread pool (blocks of rows, the caller running one), and compiled with numba's
``prange`` (``parallel=True``) at 1 and 2 threads.

    python benchmarks/threads.py --n 2048 --reps 20 --rounds 3 --json /tmp/threads.json
    python benchmarks/threads.py --n 2048 --pool
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def measure(n: int, reps: int) -> dict:
    """In a job: the median and fastest of ``reps`` Jacobi steps and sums (slowest locale)."""
    import pgas as pg
    from pgas import comm
    from pgas.exec import workers

    pg.config(fuse=True)
    A = pg.from_numpy(np.add.outer(np.arange(n), np.arange(n)) % 7 / 7.0)
    B = pg.zeros((n, n))

    def step():
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])

    got = {}
    for name, fn in (("jacobi step", step), ("sum", A.sum)):
        for _ in range(3):
            fn()
        times = []
        for _ in range(reps):
            pg.barrier()
            t = time.perf_counter()
            fn()
            times.append(comm.allreduce(time.perf_counter() - t, "max"))
        got[name] = {"median_ms": float(np.median(times)) * 1e3, "min_ms": float(min(times)) * 1e3}
    got["threads"] = workers.count()
    got["splits"] = int(comm.allreduce(workers.stats["split"], "sum"))
    return got


def drive(args) -> None:
    configs = [tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
    best: dict = {}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")])))
    for _ in range(args.rounds):
        for L, T in configs:
            with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
                out = f.name
            cmd = [sys.executable, "-m", "pgas", "run", "-n", str(L), "--threads", str(T), __file__,
                   "--n", str(args.n), "--reps", str(args.reps), "--job-json", out]
            subprocess.run(cmd, check=True, env=env)
            with open(out) as f:
                got = json.load(f)
            os.unlink(out)
            mine = best.setdefault(f"{L}x{T}", got)
            for k in ("jacobi step", "sum"):
                if got[k]["median_ms"] < mine[k]["median_ms"]:
                    mine[k] = got[k]
    first = next(iter(best.values()))
    print(f"n = {args.n}, {args.reps} reps x {args.rounds} rounds; ms per call (best median), ratio to {next(iter(best))}")
    print(f"{'locales x threads':>18} {'jacobi step':>12} {'ratio':>6} {'sum':>9} {'ratio':>6}")
    for name, got in best.items():
        j, s = got["jacobi step"]["median_ms"], got["sum"]["median_ms"]
        print(f"{name:>18} {j:12.2f} {j / first['jacobi step']['median_ms']:6.2f} {s:9.3f} "
              f"{s / first['sum']['median_ms']:6.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "reps": args.reps, "rounds": args.rounds, "configs": best}, f, indent=1)


def pool_against_prange(n: int, reps: int) -> None:
    """The fused row kernel's shape, split by the thread pool and by numba's prange."""
    import numba
    from numba import njit, prange

    from pgas.exec import fuserows, threads, workers

    def make(parallel):
        loop = prange if parallel else range

        def kernel(dims, out, bo, so, c, b, s):
            m, w = dims[-1], s[0]
            for i in loop(dims[0]):
                o, x = bo + i * so[0], b + i * s[0]
                ro, r0, r1, r2 = out[o:o + m], c[x:x + m], c[x - 1:x - 1 + m], c[x + 1:x + 1 + m]
                r3, r4 = c[x - w:x - w + m], c[x + w:x + w + m]
                for j in range(m):
                    ro[j] = 0.2 * (r0[j] + r1[j] + r2[j] + r3[j] + r4[j])
        return njit(nogil=True, error_model="numpy", parallel=parallel)(kernel)
    serial, par = make(False), make(True)
    A, B = np.random.default_rng(0).random((n + 2) * (n + 2)), np.zeros(n * n)
    args = ((n, n), B, 0, (n,), A, n + 3, (n + 2,))
    where = ((2, 3, 1), (5, 6, 1))

    def split():
        workers.run([(serial, fuserows.cut(where, args, a, b)) for a, b in workers.bounds(n, 2)])

    def timed(fn):
        fn()
        ts = []
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        return np.median(ts) * 1e3, min(ts) * 1e3
    threads.apply(2)
    rows = []
    for _ in range(3):                  # alternating
        numba.set_num_threads(1)
        p1 = timed(lambda: par(*args))
        numba.set_num_threads(2)
        p2 = timed(lambda: par(*args))
        rows.append((timed(lambda: serial(*args)), timed(split), p1, p2))
    print(f"{n}x{n} 5-point row kernel, ms (median / fastest), numba threading layer {numba.threading_layer()}")
    for s1, s2, p1, p2 in rows:
        print(f"  one thread {s1[0]:.2f}/{s1[1]:.2f}  pool 2 threads {s2[0]:.2f}/{s2[1]:.2f}  "
              f"prange 1 thread {p1[0]:.2f}/{p1[1]:.2f}  prange 2 threads {p2[0]:.2f}/{p2[1]:.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2048)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--configs", default="1x1,1x2,2x1")
    p.add_argument("--json")
    p.add_argument("--pool", action="store_true")
    p.add_argument("--job-json", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.pool:
        pool_against_prange(args.n, args.reps)
    elif args.job_json:
        got = measure(args.n, args.reps)
        import pgas as pg
        if pg.here == 0:
            with open(args.job_json, "w") as f:
                json.dump(got, f)
    else:
        drive(args)


if __name__ == "__main__":
    main()

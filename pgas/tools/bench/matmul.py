"""``pgas bench matmul``: distributed ``C = A @ B`` against NumPy on one process.

For each size ``n`` and distribution (both operands alike, and Block @ Cyclic)
it times ``A @ B`` (:func:`pgas.matmul`: owner computes, with k-panels of A's
rows and B's columns fetched by one-sided strided gets, see
:mod:`pgas.array.linalg`) and, up to ``--forall-max``, the planner's forall
reduction ``D[i, j] += A[i, k] * B[k, j]`` over ``(i, j, k)``.  Reported per
run: seconds (slowest locale, best of the trials), Gflop/s (``2 n^3`` flops),
the ratio to NumPy's single-process ``matmul`` of the same ``n`` timed on locale 0
(the others sleeping),
messages and bytes per product from :func:`pgas.comm_diagnostics`, and whether
the result equals NumPy's.
"""

from __future__ import annotations

import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.comm import node
from pgas.exec import threads
from pgas.tools.bench import parser, print_table, time_trials, write_result

LOCALES = 4
DISTS = {"Block": lambda: pg.Block(), "Cyclic": lambda: pg.Cyclic(), "BlockCyclic(16)": lambda: pg.BlockCyclic(16)}


def numpy_seconds(n: int, trials: int) -> float:
    """Best time of NumPy's ``matmul`` of two ``n x n`` float64 matrices on locale 0, its
    BLAS allowed the node's cores (the locales' own limit is their share of them).  The
    other locales sleep meanwhile (an MPI wait would spin and take cores from NumPy):
    locale 0 times one product first, and they sleep long enough for the trials."""
    g = np.random.default_rng(0)
    a, b = g.random((n, n)), g.random((n, n))
    first = 0.0
    cores = node.info().cores               # one process alone: its BLAS may use the node's cores
    if comm.here() == 0:
        with threads.limited(cores):
            t0 = time.perf_counter()
            a @ b
            first = time.perf_counter() - t0
    first = float(comm.bcast(first, 0))
    best = 0.0
    if comm.here() == 0:
        with threads.limited(cores):
            best = min(_timed(a, b) for _ in range(trials))
    else:
        time.sleep(2 * first * trials + 0.05)
    return float(comm.bcast(best, 0))


def _timed(a, b) -> float:
    t0 = time.perf_counter()
    a @ b
    return time.perf_counter() - t0


def _forall_product(A, B, n: int):
    D = pg.zeros((n, n), dist=A.dist)

    def body(i, j, k):
        D[i, j] += A[i, k] * B[k, j]

    pg.forall((range(n), range(n), range(n)), body)
    return D


def run_one(n: int, da: str, db: str, method: str, trials: int, warmup: int, np_seconds: float) -> dict:
    """Collective: time one method on one pair of distributions."""
    g = np.random.default_rng(1)
    GA, GB = g.random((n, n)), g.random((n, n))
    A = pg.from_numpy(GA, dist=DISTS[da]())
    B = pg.from_numpy(GB, dist=DISTS[db]())
    fn = (lambda: A @ B) if method == "owner-computes" else (lambda: _forall_product(A, B, n))
    timing = time_trials(fn, trials, warmup)
    with pg.comm_diagnostics() as d:
        C = fn()
    ok = bool(np.allclose(C.to_numpy(), GA @ GB, rtol=1e-10))
    t = timing.min
    return {"n": n, "dist_a": da, "dist_b": db, "method": method, "seconds": t, "gflops": 2 * n**3 / t / 1e9,
            "numpy_seconds": np_seconds, "numpy_gflops": 2 * n**3 / np_seconds / 1e9,
            "speed_vs_numpy": np_seconds / t, "messages": d.messages, "bytes": d.bytes,
            "times": list(timing.times), "correct": ok}


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("matmul", __doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="256,512,1024", help="comma-separated n (default 256,512,1024)")
    p.add_argument("--forall-max", type=int, default=256,
                   help="largest n for the forall-reduction comparison (default 256; 0 skips it)")
    p.set_defaults(trials=3)
    return p


def main(argv=None) -> int:
    """Run the benchmark; see the module docstring."""
    args = make_parser().parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    pairs = [("Block", "Block"), ("Cyclic", "Cyclic"), ("BlockCyclic(16)", "BlockCyclic(16)"), ("Block", "Cyclic")]
    rows = []
    for n in sizes:
        np_s = numpy_seconds(n, args.trials)
        for da, db in pairs:
            rows.append(run_one(n, da, db, "owner-computes", args.trials, args.warmup, np_s))
            if n <= args.forall_max and da == db == "Block":
                rows.append(run_one(n, da, db, "forall-reduction", 1, 0, np_s))
    ok = all(r["correct"] for r in rows)
    path = write_result("matmul", {"runs": rows, "correct": ok}, args.out)
    print_table(["n", "A", "B", "method", "seconds", "Gflop/s", "NumPy Gflop/s", "vs NumPy", "messages", "MB",
                 "correct"],
                [[r["n"], r["dist_a"], r["dist_b"], r["method"], r["seconds"], r["gflops"], r["numpy_gflops"],
                  r["speed_vs_numpy"], r["messages"], r["bytes"] / 1e6, r["correct"]] for r in rows])
    if comm.here() == 0:
        print(f"results written to {path}")
    return 0 if ok else 1

"""Jacobi-2D relaxation on Cyclic data: run it with ``pgas run -n 4 examples/jacobi.py``.

Every locale runs this script.  The arrays are dealt cyclically over a 2 x 2
grid of locales (with 4 locales), so every neighbour of an element lives on
another locale: the worst case for communication, and the case of the
modulo-unrolling paper.  Each sweep is two global-view statements; pgas
plans each once, runs every iteration on the owner of the element it
writes, and fetches each remote footprint in ONE message per (locale, other
locale, array).  The same sweeps run again in baseline mode (one message per
remote element, as an unoptimised PGAS runtime does), and both results are
checked against NumPy.

    python examples/jacobi.py [n] [sweeps]
"""

import sys
import time

import numpy as np

import pgas as pg

n = int(sys.argv[1]) if len(sys.argv) > 1 else 128
sweeps = int(sys.argv[2]) if len(sys.argv) > 2 else 10


def initial(n):
    G = np.zeros((n, n))
    G[0, :] = 1.0                                   # a hot edge
    G[:, 0] = np.linspace(1.0, 0.0, n)
    return G


def relax(A, B, sweeps):
    """``sweeps`` Jacobi sweeps; returns the residual max |B - A| of the last one."""
    for _ in range(sweeps):
        B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
        residual = np.abs(B - A).max()              # whole arrays of one layout: local, one reduction
        A[1:-1, 1:-1] = B[1:-1, 1:-1]
    return residual


def run(aggregate):
    pg.config(aggregate=aggregate)
    A = pg.from_numpy(initial(n), dist=pg.Cyclic())
    B = pg.from_numpy(initial(n), dist=pg.Cyclic())
    relax(A, B, 1)                                  # plans the statements (cached from now on)
    with pg.comm_diagnostics() as d:
        pg.barrier()
        t0 = time.perf_counter()
        residual = relax(A, B, sweeps)
        pg.barrier()
        seconds = time.perf_counter() - t0
    pg.config()
    return A.to_numpy(), residual, d, seconds


G = initial(n)
H = G.copy()
for _ in range(sweeps + 1):
    H[1:-1, 1:-1] = 0.25 * (G[:-2, 1:-1] + G[2:, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:])
    G[1:-1, 1:-1] = H[1:-1, 1:-1]

results = {mode: run(mode == "aggregated") for mode in ("baseline", "aggregated")}
if pg.here == 0:
    print(f"Jacobi-2D, {n} x {n} Cyclic over {pg.num_locales} locales, {sweeps} sweeps")
    for mode, (A, residual, d, seconds) in results.items():
        ok = np.allclose(A, G, rtol=1e-12, atol=0.0)
        print(f"  {mode:<10}  residual {residual:.3e}  matches NumPy: {ok}  "
              f"messages {d.messages:>8}  bytes {d.bytes:>9}  time {seconds:.3f} s")
    (_, _, db, tb), (_, _, da, ta) = results["baseline"], results["aggregated"]
    print(f"  aggregation: {db.messages / max(da.messages, 1):.0f}x fewer messages, {tb / ta:.1f}x faster")
    print("communication report, aggregated mode (messages: row = from, column = to):")
    print(da.report())
    print(da.matrix)

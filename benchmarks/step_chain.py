"""A compiled step's statements chained into one compiled call, interleaved by rows
(:mod:`pgas.exec.chain`), against the same step replayed statement by statement.

PolyBench's jacobi-2d (2 statements) and fdtd-2d (a fill and 3 statements) at ``--n`` are
compiled twice, with chains (the default) and without (``CHAIN_AFTER = None``), warmed up,
then timed in ``--trials`` pairs of ``--steps`` steps, the two ways alternating within each
pair.  Each trial records wall and processor seconds per step (the processor time depends
less on other jobs on the machine); the ratios are chained / unchained per pair, and
their medians are reported.  The arrays each way ends with are compared bit for bit.
Kernels run on one thread per locale (``pg.config(threads=1)``): a chain runs whole.

    pgas run -n 1 benchmarks/step_chain.py --n 1300 --json chain.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import pgas as pg
from pgas.array.step import replay
from pgas.comm import allreduce, barrier
from pgas.exec import chain
from pgas.tools.bench.polybench import _dist, fdtd_init, fdtd_step, jacobi_init, jacobi_step


def _timed(step, args, steps: int, vary=None):
    barrier()
    w, c = time.perf_counter(), time.process_time()
    for t in range(steps):
        step(*args) if vary is None else step(*args[:-1], vary[t % len(vary)])
    c = time.process_time() - c
    w = time.perf_counter() - w
    return float(allreduce(w, "max")) / steps, float(allreduce(c, "max")) / steps


def _arrays(name: str, n: int):
    if name == "jacobi-2d":
        return [_dist(G) for G in jacobi_init(n)], None
    ex, ey, hz, fict = fdtd_init(n, n, 64)
    return [_dist(G) for G in (ex, ey, hz)] + [0.0], fict


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1300, help="the grids' side (PolyBench LARGE jacobi-2d: 1300)")
    p.add_argument("--steps", type=int, default=50, help="steps per trial")
    p.add_argument("--trials", type=int, default=5, help="pairs of trials")
    p.add_argument("--kernels", default="jacobi-2d,fdtd-2d")
    p.add_argument("--chunk-bytes", type=int, default=None,
                   help="bytes of written rows a chain advances by (pgas.exec.chain.CHUNK_BYTES; default its own)")
    p.add_argument("--json", default=None, metavar="FILE")
    a = p.parse_args()
    if a.chunk_bytes is not None:
        chain.CHUNK_BYTES = a.chunk_bytes
    pg.config(protocol="auto", threads=1)
    after = replay.CHAIN_AFTER
    res = {}
    for name in a.kernels.split(","):
        fn = {"jacobi-2d": jacobi_step, "fdtd-2d": fdtd_step}[name]
        ways = {}
        for way in ("chained", "unchained"):
            replay.CHAIN_AFTER = after if way == "chained" else None
            args, vary = _arrays(name, a.n)
            step = pg.compile(fn)
            _timed(step, args, max(2 * (after or 8), 20), vary)        # warm-up: kernels, repeats, chains
            ways[way] = (step, args, vary, [])
        built = chain.stats["built"]
        for _ in range(a.trials):
            for way in ("chained", "unchained"):
                step, args, vary, times = ways[way]
                replay.CHAIN_AFTER = after if way == "chained" else None
                times.append(_timed(step, args, a.steps, vary))
        replay.CHAIN_AFTER = after
        same = all(np.array_equal(x.to_numpy(), y.to_numpy())
                   for x, y in zip(ways["chained"][1], ways["unchained"][1]) if not isinstance(x, float))
        tc, tu = ways["chained"][3], ways["unchained"][3]
        res[name] = {
            "chained_wall_s_per_step": statistics.median(t[0] for t in tc),
            "unchained_wall_s_per_step": statistics.median(t[0] for t in tu),
            "wall_ratio": statistics.median(c[0] / u[0] for c, u in zip(tc, tu)),
            "cpu_ratio": statistics.median(c[1] / u[1] for c, u in zip(tc, tu)),
            "chains_built": built, "bit_identical": bool(same),
            "explain": ways["chained"][0].explain() if hasattr(ways["chained"][0], "explain") else None}
    if pg.here == 0:
        print(f"{pg.num_locales} locales, n={a.n}, {a.steps} steps x {a.trials} pairs: chained / unchained "
              "(median of the pairs' ratios)")
        for name, x in res.items():
            print(f"  {name}: wall {x['wall_ratio']:.3f}, processor {x['cpu_ratio']:.3f} "
                  f"({1e3 * x['chained_wall_s_per_step']:.3f} vs {1e3 * x['unchained_wall_s_per_step']:.3f} ms "
                  f"per step; bit-identical: {x['bit_identical']})")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"locales": pg.num_locales, "n": a.n, "steps": a.steps, "trials": a.trials,
                           "chunk_bytes": chain.CHUNK_BYTES, "kernels": res}, f, indent=1)


if __name__ == "__main__":
    main()

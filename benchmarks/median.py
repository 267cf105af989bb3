"""The distributed median against NumPy's median of the gathered array.

Times, on ``--n`` float64 values (2**22 by default, standard normal, Block), the slowest
locale's ``np.median(A)`` (the distributed selection: samples and counts move, the data does
not) and, in the same job, ``np.median(g)`` of the array gathered to every locale
(``A.to_numpy()``, not timed) and the gather itself; then ``np.quantile(A, q)`` of 9
quantiles against NumPy's.  Each figure is the median of ``--reps`` runs; the results are
checked equal to NumPy's.  ``--json FILE`` writes the figures.

    pgas run -n 1 benchmarks/median.py --json /tmp/median1.json
    pgas run -n 2 benchmarks/median.py --json /tmp/median2.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import pgas as pg
from pgas import comm


def _time(fn, reps: int) -> tuple[float, object]:
    """The median over ``reps`` runs of the slowest locale's seconds, and the last result."""
    ts = []
    for _ in range(reps):
        pg.barrier()
        t = time.perf_counter()
        res = fn()
        ts.append(comm.allreduce(time.perf_counter() - t, "max"))
    return float(np.median(ts)), res


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2**22)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    g = np.random.default_rng(0).standard_normal(args.n)
    A = pg.from_numpy(g)
    q = np.linspace(0.1, 0.9, 9)
    gather, full = _time(A.to_numpy, args.reps)
    pg_med, got = _time(lambda: np.median(A), args.reps)
    np_med, want = _time(lambda: np.median(full), args.reps)
    pg_q, got_q = _time(lambda: np.quantile(A, q), args.reps)
    np_q, want_q = _time(lambda: np.quantile(full, q), args.reps)
    ok = bool(got == want and np.array_equal(got_q, want_q))
    res = {"locales": pg.num_locales, "n": args.n, "reps": args.reps, "equal_to_numpy": ok,
           "pgas_median_s": pg_med, "numpy_median_s": np_med, "gather_s": gather,
           "median_ratio": pg_med / np_med, "median_ratio_with_gather": pg_med / (np_med + gather),
           "pgas_quantile9_s": pg_q, "numpy_quantile9_s": np_q, "quantile9_ratio": pg_q / np_q}
    if pg.here == 0:
        print(f"{pg.num_locales} locales, n = {args.n}: median pgas {pg_med * 1e3:.1f} ms, NumPy on the gathered "
              f"array {np_med * 1e3:.1f} ms (ratio {res['median_ratio']:.2f}; gathering {gather * 1e3:.1f} ms); "
              f"9 quantiles pgas {pg_q * 1e3:.1f} ms, NumPy {np_q * 1e3:.1f} ms (ratio {res['quantile9_ratio']:.2f}); "
              f"equal to NumPy: {ok}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()

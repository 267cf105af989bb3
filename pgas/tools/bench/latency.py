"""``pgas bench latency``: remote scalar read latency while the owner computes.

Locale 0 reads one element owned by locale 1, over and over, two ways in one
run: pgas's one-sided ``A.get(i)`` on a ``Block``-distributed array, and a raw
mpi4py ``Win.Get`` + ``Flush`` of one float64 from a ``Win.Allocate`` window
(:class:`pgas.tools.bench.rawmpi.RawWindow`).  Meanwhile every other locale is
``idle`` (polling its stop flag), or busy in a ``numpy`` or pure-``python``
loop that makes no MPI call until locale 0 sets its flag.  The two ways are
interleaved in rounds so both see the same conditions.  Reported: mean and
median microseconds per get, and the ratio pgas / raw.
"""

from __future__ import annotations

import time

import numpy as np

import pgas as pg
from pgas.tools.bench import choices, parser, print_table, progress, write_result
from pgas.tools.bench.rawmpi import RawWindow

LOCALES = 2
BUSY = ("idle", "numpy", "python")


def _busy_until_signalled(raw: RawWindow, kind: str) -> int:
    """Compute in chunks of about 0.1 ms until the stop flag is set; returns the chunk count."""
    x = np.linspace(0.0, 1.0, 4096)
    y = np.empty_like(x)
    chunks = 0
    while not raw.signalled():
        if kind == "numpy":
            np.sin(x, out=y)
            np.multiply(y, 1.000001, out=x)
        elif kind == "python":
            s = 0
            for k in range(1000):
                s += k * k
        chunks += 1
    return chunks


def _time_pgas_gets(A, index: int, reps: int) -> tuple[np.ndarray, float]:
    times = np.empty(reps)
    clock = time.perf_counter
    value = None
    for k in range(reps):
        t0 = clock()
        value = A.get(index)
        times[k] = clock() - t0
    return times, float(value)


def measure(kind: str, A, raw: RawWindow, index: int, reps: int, rounds: int) -> dict | None:
    """One condition: ``rounds`` rounds of ``reps`` pgas and ``reps`` raw gets on locale 0
    while the others behave as ``kind``; the per-get times (seconds) on locale 0, else None."""
    me, P = pg.here, pg.num_locales
    pg.barrier()
    result = None
    if me == 0:
        ours, theirs = [], []
        for r in range(rounds):
            first, second = (("pgas", "raw") if r % 2 == 0 else ("raw", "pgas"))
            for way in (first, second):
                if way == "pgas":
                    t, v = _time_pgas_gets(A, index, reps)
                    ours.append(t)
                else:
                    t, v = raw.time_gets(1, 0, reps)
                    theirs.append(t)
                if v != index:
                    raise RuntimeError(f"latency benchmark read {v} via {way}, expected {index}")
        for r in range(1, P):
            raw.signal(r)
        result = {"pgas": np.concatenate(ours), "raw": np.concatenate(theirs)}
    else:
        _busy_until_signalled(raw, kind)
    pg.barrier()
    return result


def _stats(t: np.ndarray) -> dict:
    us = t * 1e6
    return {"mean_us": float(us.mean()), "median_us": float(np.median(us)), "min_us": float(us.min()),
            "p90_us": float(np.percentile(us, 90)), "gets": int(us.size)}


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("latency", __doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=2000, help="gets per round and way (default %(default)s)")
    p.add_argument("--busy", type=choices(BUSY), default=list(BUSY), metavar="LIST",
                   help=f"what locale 1 does meanwhile, comma-separated from {', '.join(BUSY)} (default all)")
    return p


def main(argv: list[str]) -> int:
    p = make_parser()
    args = p.parse_args(argv)
    kinds = args.busy
    if pg.num_locales < 2:
        p.error("needs at least 2 locales: run `pgas bench latency -n 2`")
    n = 1024 * pg.num_locales
    A = pg.zeros(n, dist=pg.Block())
    A.local[:] = A.layout.owned(pg.here)[0]
    index = int(A.layout.maps[0].b)          # the first element of locale 1's block
    raw = RawWindow(1)
    raw.local[:] = index
    if A.owner(index) != 1:
        raise RuntimeError(f"element {index} is on locale {A.owner(index)}, expected 1")
    for kind in kinds:                       # warm-up: windows, datatypes, caches
        measure(kind, A, raw, index, min(args.reps, 100), max(args.warmup, 1))
    results, rows = {}, []
    for kind in kinds:
        progress(f"measuring with locale 1 {kind}")
        m = measure(kind, A, raw, index, args.reps, 2 * args.trials)
        if m is not None:
            ours, theirs = _stats(m["pgas"]), _stats(m["raw"])
            ratio = ours["median_us"] / theirs["median_us"]
            results[kind] = {"pgas_get": ours, "raw_get": theirs, "ratio_median": ratio,
                             "ratio_mean": ours["mean_us"] / theirs["mean_us"]}
            rows.append([kind, ours["median_us"], theirs["median_us"], ratio, ours["mean_us"], theirs["mean_us"],
                         ours["mean_us"] / theirs["mean_us"]])
    raw.free()
    if pg.here == 0:
        path = write_result("latency", {"unit": "microseconds per one-element get from locale 1 to locale 0",
                                        "reps_per_round": args.reps, "rounds": 2 * args.trials,
                                        "conditions": results}, args.out)
        print(f"remote scalar get, locale 0 <- locale 1, {pg.num_locales} locales; target: condition")
        print_table(["target", "pgas med us", "raw med us", "ratio med", "pgas mean us", "raw mean us",
                     "ratio mean"], rows)
        print(f"results written to {path}")
    return 0

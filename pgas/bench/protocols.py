"""``pgas bench protocols``: packed vs pipelined vs bounding transfers over region length x count.

Every locale reads, at once, ``count`` regions of ``length`` float64 elements
(every other block of ``length``: the bounding interval is twice the payload)
from the next locale, through the statement runtime's transfer code
(:mod:`pgas.exec.transfer`) with each protocol pinned, and with ``auto`` (the
calibrated model's choice, :mod:`pgas.calibrate`; run ``pgas calibrate`` first
for this machine's figures). A trial times every protocol in turn (so that
the load of a shared machine hits all alike); a protocol's time at a point is
the slowest locale's, the median over trials (what a statement typically pays:
on MPICH's network path packed reads of short regions are fast at best and
milliseconds typically), with the minimum reported beside it
(``seconds_min``, ``*_by_min``). Reported per point: the times, T_packed /
T_pipelined (the paper's Figure 3 map), the automatic choice and the time of
the protocol it chose over the best fixed protocol's (``auto`` is also timed on
its own, which adds only noise: the choice is cached per message), and the
same for the choice the fitted formulas alone would make (``fitted_choice``:
without the calibration's measured grid); overall, how
``auto`` compares with always using one protocol. With matplotlib (``pip
install pgas[plot]``) the map is drawn as a PNG next to the JSON, with the
automatic choice marked in each cell. Run it again with
``MPIR_CVAR_NOLOCAL=1`` to force MPICH's network path instead of shared memory.
"""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np

import pgas as pg
from pgas import comm
from pgas.bench import choices, parser, print_table, progress, time_trials, write_result
from pgas.plan import lmad
from pgas.plan.result import Message

FIXED = ("packed", "pipelined", "bounding")
LENGTHS = (1, 4, 16, 64, 256, 1024, 4096)
COUNTS = (1, 4, 16, 64, 256, 1024)
MAX_ELEMENTS = 1 << 20
LOCALES = 2


def _ints(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s]


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("protocols", __doc__.splitlines()[0])
    p.add_argument("--lengths", type=_ints, default=list(LENGTHS), metavar="LIST",
                   help="region lengths in elements (default %(default)s)")
    p.add_argument("--counts", type=_ints, default=list(COUNTS), metavar="LIST",
                   help="region counts (default %(default)s)")
    p.add_argument("--protocols", type=choices(FIXED), default=list(FIXED), metavar="LIST",
                   help="fixed protocols to time besides auto (default all)")
    p.add_argument("--png", default=None, metavar="PATH", help="colour map path (default: the JSON path, .png)")
    p.add_argument("--strips", type=int, default=0, metavar="N",
                   help="instead, time y[i] += A[j, i] * x[j] (A of N x N, Block rows: a remote matrix) "
                        "under buffer limits of the footprint / 1, 2, 4, ... 256 (strip-mining)")
    return p


def strip_sweep(args) -> int:
    """Time the vector-matrix product with a remote matrix against the buffer limit."""
    n, P = args.strips, comm.num_locales()
    rng = np.random.default_rng(0)
    GA, gx = rng.random((n, n)), rng.random(n)
    A, x = pg.from_numpy(GA, dist=pg.Block()), pg.from_numpy(gx, dist=pg.Block())
    y = pg.zeros(n, dist=pg.Block())

    def body(i, j):
        y[i] += A[j, i] * x[j]

    def step():
        y[:] = 0
        pg.forall((range(n), range(n)), body)
    foot = 8 * n * (n // P) * (P - 1) // P
    runs, ok = [], True
    for div in (0, 1, 2, 4, 8, 16, 64, 256):
        limit = (1 << 40) if div == 0 else max(foot // div, 64)
        pg.config(buffer_limit=limit)
        try:
            t = time_trials(step, args.trials, args.warmup)
            good = bool(np.allclose(y.to_numpy(), GA.T @ gx))
        finally:
            pg.config()
        ok &= good
        runs.append({"limit": None if div == 0 else limit, "divisor": div, "seconds": t.summary(), "correct": good})
        progress(f"limit {'none' if div == 0 else limit}: {t.min * 1e3:.1f} ms")
    base = runs[0]["seconds"]["min"]
    print_table(["buffer limit", "strips (about)", "ms (min)", "ms (median)", "vs no limit", "ok"],
                [[r["limit"] or "none", 2 * r["divisor"] if r["divisor"] else 1, r["seconds"]["min"] * 1e3,
                  r["seconds"]["median"] * 1e3, r["seconds"]["min"] / base, r["correct"]] for r in runs])
    path = write_result("protocols-strips", {"n": n, "footprint_bytes": foot, "runs": runs}, args.out)
    if comm.here() == 0:
        print(f"wrote {path}")
    return 0 if ok else 1


def _message(target: int, length: int, count: int) -> Message:
    regions = lmad.stack([(2 * length * j, (length,), (1,)) for j in range(count)])
    return Message(target, 0, regions, length * count)


def _time(win, m, bufs: dict, trials: int, warmup: int) -> tuple[dict, dict]:
    """``(median, minimum)`` seconds per protocol of one read of ``m`` with that protocol
    pinned (``bufs``: protocol -> buffer). Each trial times every protocol in turn, so
    the load of this shared machine hits them alike; a trial's time is the slowest
    locale's."""
    import time

    from pgas.exec import transfer

    def fn(proto):
        f = transfer.start_get(win, m, bufs[proto], 8)
        win.flush(m.peer)
        if f is not None:
            f()
    ts: dict = {p: [] for p in bufs}
    try:
        for k in range(warmup + trials):
            for p in bufs:
                pg.config(protocol=p)           # outside the timed part
                comm.barrier()
                t0 = time.perf_counter()
                fn(p)
                dt = float(comm.allreduce(time.perf_counter() - t0, "max"))
                if k >= warmup:
                    ts[p].append(dt)
    finally:
        pg.config()
    return {p: float(np.median(v)) for p, v in ts.items()}, {p: min(v) for p, v in ts.items()}


def main(argv=None) -> int:
    """Run the benchmark; see the module docstring."""
    from pgas import calibrate
    from pgas.exec import transfer

    args = make_parser().parse_args(argv)
    if args.strips:
        return strip_sweep(args)
    me, P = comm.here(), comm.num_locales()
    target = (me + 1) % P
    n = 2 * max(args.lengths) * max(args.counts)
    win = comm.allocate(n, np.float64, key=("bench-protocols", n))
    win.local[:] = np.arange(n, dtype=np.float64) + 1e6 * me
    win.sync()
    comm.barrier()
    model = calibrate.current()
    progress(f"model: {model.source}")
    points, rows, ok = [], [], True
    for L in args.lengths:
        for C in args.counts:
            if L * C > MAX_ELEMENTS:
                continue
            m = _message(target, L, C)
            want = (np.concatenate([lmad.expand(*r) for r in m.regions]) + 1e6 * target).astype(np.float64)
            protos = list(args.protocols) + ["auto"]
            bufs = {p: np.zeros(m.size) for p in protos}
            t, tmin = _time(win, m, bufs, args.trials, args.warmup)
            ok &= all(bool(np.array_equal(b, want)) for b in bufs.values())
            pg.config(protocol="auto")
            choice = transfer.protocol(m, 8, False)
            pg.config()
            runs, nel, lo, hi = transfer.shape_of(m.regions)
            fitted = dataclasses.replace(model, grid=None).choose(runs, 8 * nel, 8 * (hi - lo), False)[0]
            best = min(args.protocols, key=lambda p: t[p])
            bmin = min(args.protocols, key=lambda p: tmin[p])
            pt = {"length": L, "count": C, "bytes": 8 * L * C, "seconds": t, "seconds_min": tmin,
                  "choice": choice, "best": best, "best_by_min": bmin,
                  "auto_over_best_by_min": tmin.get(choice, tmin["auto"]) / tmin[bmin],
                  "fitted_choice": fitted, "fitted_over_best": t.get(fitted, t["auto"]) / t[best],
                  "auto_over_best": t.get(choice, t["auto"]) / t[best], "auto_timed_over_best": t["auto"] / t[best],
                  "packed_over_pipelined": t["packed"] / t["pipelined"] if {"packed", "pipelined"} <= set(t) else None}
            points.append(pt)
            rows.append([L, C, *(t[p] * 1e6 for p in args.protocols), t["auto"] * 1e6, choice, best,
                         pt["auto_over_best"], pt["packed_over_pipelined"] or float("nan")])
            progress(f"length {L} count {C}: auto={choice} best={best} ({pt['auto_over_best']:.2f}x)")
    print_table(["length", "count", *(f"{p} us" for p in args.protocols), "auto us", "choice", "best",
                 "auto/best", "packed/pipe"], rows)
    totals = {p: sum(pt["seconds"][p] for pt in points) for p in list(args.protocols) + ["auto"]}
    totals["auto_choice"] = sum(pt["seconds"].get(pt["choice"], pt["seconds"]["auto"]) for pt in points)
    best_fixed = min(args.protocols, key=lambda p: totals[p])
    summary = {"total_seconds": totals, "best_fixed": best_fixed,
               "auto_over_best_fixed_total": totals["auto_choice"] / totals[best_fixed],
               "auto_timed_over_best_fixed_total": totals["auto"] / totals[best_fixed],
               "auto_over_best_geomean": math.exp(np.mean([math.log(pt["auto_over_best"]) for pt in points])),
               "points_auto_within_10pct": sum(pt["auto_over_best"] <= 1.1 for pt in points),
               "points_auto_within_10pct_by_min": sum(pt["auto_over_best_by_min"] <= 1.1 for pt in points),
               "points_auto_timed_differs_10pct_from_its_choice": sum(
                   abs(pt["seconds"]["auto"] / pt["seconds"][pt["choice"]] - 1) > 0.1
                   for pt in points if pt["choice"] in pt["seconds"]),
               "points_fitted_within_10pct": sum(pt["fitted_over_best"] <= 1.1 for pt in points),
               "measured_grid_points": len(model.grid) if model.grid is not None else 0,
               "points": len(points), "model": model.source, "figures": model.figures(),
               "nolocal": os.environ.get("MPIR_CVAR_NOLOCAL", ""), "correct": ok}
    path = write_result("protocols", {"lengths": args.lengths, "counts": args.counts, "points": points,
                                      "summary": summary}, args.out)
    if me == 0:
        print(f"auto within 10% of the best protocol at {summary['points_auto_within_10pct']} of {len(points)} "
              f"points by median ({summary['points_auto_within_10pct_by_min']} by minimum; the fitted formulas "
              f"alone: {summary['points_fitted_within_10pct']}; noise: auto timed apart from its choice differs "
              f"by >10% at {summary['points_auto_timed_differs_10pct_from_its_choice']}; measured grid of "
              f"{summary['measured_grid_points']} points); total time auto / always-{best_fixed}: {summary['auto_over_best_fixed_total']:.3f}; "
              f"results all correct: {ok}")
        png = args.png or os.path.splitext(path)[0] + ".png"
        if _plot(points, args, png, summary):
            print(f"wrote {path} and {png}")
        else:
            print(f"wrote {path} (no PNG: pip install pgas[plot] for matplotlib)")
    comm.barrier()                       # the others wait while locale 0 draws
    return 0 if ok else 1


def _plot(points, args, png: str, summary) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    Ls, Cs = list(args.lengths), list(args.counts)
    grid = np.full((len(Cs), len(Ls)), np.nan)
    fig, ax = plt.subplots(figsize=(1.1 * len(Ls) + 2.5, 0.8 * len(Cs) + 1.8))
    for pt in points:
        if pt["packed_over_pipelined"] is not None:
            grid[Cs.index(pt["count"]), Ls.index(pt["length"])] = math.log2(pt["packed_over_pipelined"])
    lim = max(1.0, float(np.nanmax(np.abs(grid)))) if np.isfinite(grid).any() else 1.0
    im = ax.imshow(grid, origin="lower", cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
    mark = {"packed": "K", "pipelined": "P", "bounding": "B", "elements": "E"}
    for pt in points:
        y, x = Cs.index(pt["count"]), Ls.index(pt["length"])
        good = pt["auto_over_best"] <= 1.1
        ax.text(x, y, mark[pt["choice"]] + ("" if good else "!"), ha="center", va="center", fontsize=9,
                color="black" if good else "darkred", fontweight="bold")
    ax.set_xticks(range(len(Ls)), [str(v) for v in Ls])
    ax.set_yticks(range(len(Cs)), [str(v) for v in Cs])
    ax.set_xlabel("region length (float64 elements)")
    ax.set_ylabel("regions per transfer")
    nl = " (MPIR_CVAR_NOLOCAL=1)" if summary["nolocal"] else ""
    ax.set_title(f"log2 T_packed / T_pipelined, {comm.num_locales()} locales{nl}\n"
                 "auto's choice: K packed, P pipelined, B bounding (! = >10% off best)", fontsize=9)
    fig.colorbar(im, ax=ax, label="log2 ratio (<0: packed faster)")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return True

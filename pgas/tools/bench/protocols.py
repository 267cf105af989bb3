"""``pgas bench protocols``: packed vs pipelined vs bounding transfers over region length x count.

Every locale reads, at once, ``count`` regions of ``length`` float64 elements
(every other block of ``length``: the bounding interval is twice the payload)
from the next locale, through the statement runtime's transfer code
(:mod:`pgas.exec.transfer`) with each protocol pinned, and with ``auto`` (the
calibrated model's choice, :mod:`pgas.exec.calibration`; run ``pgas calibrate`` first
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

import argparse
import dataclasses
import math
import os

import numpy as np

import pgas as pg
from pgas import comm
from pgas.plan import lmad
from pgas.plan.result import Message
from pgas.tools.bench import choices, parser, print_table, progress, write_result
from pgas.tools.calibrate.network import COUNTS, LENGTHS, MAX_ELEMENTS  # the grid pgas calibrate measures

FIXED = ("packed", "pipelined", "bounding")
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
    p.add_argument("--puts", action=argparse.BooleanOptionalAction, default=True,
                   help="also sweep puts (write-backs: packed vs pipelined, chosen by the put grid; default on)")
    p.add_argument("--png", default=None, metavar="PATH", help="colour map path (default: the JSON path, .png)")
    p.add_argument("--strips", type=int, default=0, metavar="N",
                   help="instead, time y[i] += A[j, i] * x[j] (A of N x N, Block rows: a remote matrix) "
                        "in 1, 2, 4, ... 64 strips pinned and in the overlap model's choice (strip-mining)")
    return p


def strip_sweep(args) -> int:
    """Time the vector-matrix product with a remote matrix against the strip count."""
    import time

    from pgas.exec import strip

    n, P = args.strips, comm.num_locales()
    rng = np.random.default_rng(0)
    GA, gx = rng.random((n, n)), rng.random(n)
    A, x = pg.from_numpy(GA, dist=pg.Block()), pg.from_numpy(gx, dist=pg.Block())
    y = pg.zeros(n, dist=pg.Block())
    want = GA.T @ gx

    def body(i, j):
        y[i] += A[j, i] * x[j]

    def step():
        y[:] = 0
        pg.forall((range(n), range(n)), body)
    foot = 8 * (n // P) * (n - n // P + 1)
    settings = ["auto"] + [k for k in STRIP_COUNTS if k <= max(1, n // P)]
    pg.config(buffer_limit=1 << 40)             # strips by the model or the pin only
    try:
        strip.clear()
        step()                                  # the model's choice, and its predictions
        mine = strip.choices()
        choice = mine[0][0] if mine else None
        said = [ln for ln in pg.explain(step).splitlines() if ln.startswith("strips:")]
        ts: dict = {s: [] for s in settings}
        ok = True
        for k in range(args.warmup + args.trials):   # each trial times every setting in turn,
            for s in settings[k % len(settings):] + settings[:k % len(settings)]:    # from a rotating start
                pg.config(strips=s)
                comm.barrier()
                t0 = time.perf_counter()
                step()
                dt = float(comm.allreduce(time.perf_counter() - t0, "max"))
                if k >= args.warmup:
                    ts[s].append(dt)
                ok &= bool(comm.allreduce(int(np.allclose(y.to_numpy(), want)), "min"))
            progress(f"trial {k + 1 - args.warmup}: " + ", ".join(f"{s}={ts[s][-1] * 1e3:.1f} ms"
                                                                  for s in settings if ts[s]))
    finally:
        pg.config()
    # the model's choice and predictions, agreed (locale 0's, every locale's count listed)
    chosen = comm.allgather(choice.k if choice else 1)
    pred = dict(choice.times) if choice else {}
    runs = [{"strips": s, "seconds": {"median": float(np.median(ts[s])), "min": min(ts[s]), "all": ts[s]},
             "predicted_seconds": pred.get(s) if s != "auto" else pred.get(chosen[0])} for s in settings]
    med = {r["strips"]: r["seconds"]["median"] for r in runs}
    mn = {r["strips"]: r["seconds"]["min"] for r in runs}
    fixed = [s for s in settings if s != "auto"]
    best = min(fixed, key=lambda s: med[s])
    summary = {"model_strips_per_locale": chosen, "explain": said,
               "auto_over_no_strips": med["auto"] / med[1], "auto_over_best_fixed": med["auto"] / med[best],
               "best_fixed": best, "overlap_gain_best_vs_no_strips": med[1] / med[best],
               "auto_over_no_strips_by_min": mn["auto"] / mn[1],
               "auto_over_best_fixed_by_min": mn["auto"] / min(mn[s] for s in fixed),
               "load": list(os.getloadavg()), "correct": ok}
    from pgas.exec import calibration
    model = calibration.current()
    summary.update(model=model.source, overlap=model.overlap, compute=model.compute, task=model.task)
    print_table(["strips", "ms (median)", "ms (min)", "predicted ms", "vs 1 strip"],
                [[f"auto ({chosen[0]})" if r["strips"] == "auto" else r["strips"], r["seconds"]["median"] * 1e3,
                  r["seconds"]["min"] * 1e3, (r["predicted_seconds"] or float("nan")) * 1e3,
                  r["seconds"]["median"] / med[1]] for r in runs])
    path = write_result("protocols-strips", {"n": n, "footprint_bytes": foot, "runs": runs, "summary": summary},
                        args.out)
    if comm.here() == 0:
        print(f"model chose {chosen[0]} strips ({said[0] if said else ''}); auto / 1 strip: "
              f"{summary['auto_over_no_strips']:.3f}, auto / best fixed ({best}): {summary['auto_over_best_fixed']:.3f}, "
              f"best / 1 strip: {1 / summary['overlap_gain_best_vs_no_strips']:.3f}; load {summary['load'][0]:.1f}; "
              f"correct: {ok}")
        png = args.png or os.path.splitext(path)[0] + ".png"
        print(f"wrote {path}" + (f" and {png}" if _plot_strips(runs, chosen[0], n, png) else ""))
    comm.barrier()
    return 0 if ok else 1


#: Strip counts the ``--strips`` sweep pins.
STRIP_COUNTS = (1, 2, 4, 8, 16, 32, 64)


def _plot_strips(runs, chosen: int, n: int, png: str) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fixed = [r for r in runs if r["strips"] != "auto"]
    auto = next(r for r in runs if r["strips"] == "auto")
    ks = [r["strips"] for r in fixed]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(ks, [r["seconds"]["median"] * 1e3 for r in fixed], "o-", label="measured (median)")
    ax.plot(ks, [r["seconds"]["min"] * 1e3 for r in fixed], "v:", alpha=0.6, label="measured (min)")
    if all(r["predicted_seconds"] for r in fixed):
        ax.plot(ks, [r["predicted_seconds"] * 1e3 for r in fixed], "s--", alpha=0.7, label="overlap model")
    ax.plot([chosen], [auto["seconds"]["median"] * 1e3], "r*", markersize=16, label=f"auto: model chose {chosen}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("strips")
    ax.set_ylabel("ms per product")
    ax.set_title(f"y[i] += A[j, i] * x[j], remote A, n = {n}, {comm.num_locales()} locales", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return True


def _message(target: int, length: int, count: int) -> Message:
    regions = lmad.stack([(2 * length * j, (length,), (1,)) for j in range(count)])
    return Message(target, 0, regions, length * count)


def _time(win, m, bufs: dict, trials: int, warmup: int, write: bool = False) -> tuple[dict, dict]:
    """``(median, minimum)`` seconds per protocol of one read (``write``: one put) of
    ``m`` with that protocol pinned (``bufs``: protocol -> buffer). Each trial times
    every protocol in turn, so the load of this shared machine hits them alike; a
    trial's time is the slowest locale's."""
    import time

    from pgas.exec import transfer

    def fn(proto):
        if write:
            transfer.start_put(win, m, bufs[proto], 8)
            win.flush(m.peer)
            return
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


def _puts_correct(win, m, data: np.ndarray, protos, length: int, count: int) -> bool:
    """Collective: each pinned protocol's put of ``data`` into ``m`` (on the next locale)
    lands exactly where the regions say, and nowhere else."""
    from pgas.exec import transfer

    me, P = comm.here(), comm.num_locales()
    src = (me - 1) % P
    mine = _message(me, length, count)
    idx = np.concatenate([lmad.expand(*r) for r in mine.regions])
    want = np.full(win.local.shape, -1.0)
    want[idx] = np.arange(len(idx), dtype=np.float64) + 1e6 * src
    ok = True
    try:
        for p in protos:
            win.local[:] = -1.0
            win.sync()
            comm.barrier()
            pg.config(protocol=p)
            src_buf = data.copy()                      # must live until the flush
            transfer.start_put(win, m, src_buf, 8)
            win.flush(m.peer)
            del src_buf
            comm.barrier()
            win.sync()
            ok &= bool(np.array_equal(win.local, want))
    finally:
        pg.config()
    return bool(comm.allreduce(int(ok), "min"))


def _sweep(win, args, model, write: bool) -> tuple[list, list, bool]:
    """Collective: every (length, count) point of reads (``write``: puts) timed per protocol."""
    from pgas.exec import transfer

    me, P = comm.here(), comm.num_locales()
    target = (me + 1) % P
    fixed = [p for p in args.protocols if not (write and p == "bounding")]   # a put never goes bounding
    points, rows, ok = [], [], True
    for L in args.lengths:
        for C in args.counts:
            if L * C > MAX_ELEMENTS:
                continue
            m = _message(target, L, C)
            protos = fixed + ["auto"]
            if write:
                data = np.arange(m.size, dtype=np.float64) + 1e6 * me
                bufs = {p: data.copy() for p in protos}
            else:
                want = (np.concatenate([lmad.expand(*r) for r in m.regions]) + 1e6 * target).astype(np.float64)
                bufs = {p: np.zeros(m.size) for p in protos}
            t, tmin = _time(win, m, bufs, args.trials, args.warmup, write)
            if write:
                good = _puts_correct(win, m, data, protos, L, C)
            else:
                good = bool(comm.allreduce(int(all(np.array_equal(b, want) for b in bufs.values())), "min"))
            ok &= good
            pg.config(protocol="auto")
            choice = transfer.protocol(m, 8, write)
            pg.config()
            runs, nel, lo, hi = transfer.shape_of(m.regions)
            fitted = dataclasses.replace(model, grid=None, put_grid=None).choose(runs, 8 * nel, 8 * (hi - lo),
                                                                                 write)[0]
            best = min(fixed, key=lambda p: t[p])
            bmin = min(fixed, key=lambda p: tmin[p])
            pt = {"length": L, "count": C, "bytes": 8 * L * C, "correct": good, "seconds": t, "seconds_min": tmin,
                  "choice": choice, "best": best, "best_by_min": bmin,
                  "auto_over_best_by_min": tmin.get(choice, tmin["auto"]) / tmin[bmin],
                  "fitted_choice": fitted, "fitted_over_best": t.get(fitted, t["auto"]) / t[best],
                  "auto_over_best": t.get(choice, t["auto"]) / t[best], "auto_timed_over_best": t["auto"] / t[best],
                  "packed_over_pipelined": t["packed"] / t["pipelined"] if {"packed", "pipelined"} <= set(t) else None}
            points.append(pt)
            rows.append([L, C, *(t[p] * 1e6 if p in t else float("nan") for p in args.protocols), t["auto"] * 1e6,
                         choice, best, pt["auto_over_best"], pt["packed_over_pipelined"] or float("nan")])
            progress(f"{'put' if write else 'get'} length {L} count {C}: auto={choice} best={best} "
                     f"({pt['auto_over_best']:.2f}x)")
    return points, rows, ok


def _summary(points, protocols, model) -> dict:
    totals = {p: sum(pt["seconds"][p] for pt in points) for p in list(protocols) + ["auto"]}
    totals["auto_choice"] = sum(pt["seconds"].get(pt["choice"], pt["seconds"]["auto"]) for pt in points)
    best_fixed = min(protocols, key=lambda p: totals[p])
    return {"total_seconds": totals, "best_fixed": best_fixed,
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
            "nolocal": os.environ.get("MPIR_CVAR_NOLOCAL", "")}


def main(argv=None) -> int:
    """Run the benchmark; see the module docstring."""
    from pgas.exec import calibration

    args = make_parser().parse_args(argv)
    if args.strips:
        return strip_sweep(args)
    me = comm.here()
    n = 2 * max(args.lengths) * max(args.counts)
    win = comm.allocate(n, np.float64, key=("bench-protocols", n))
    win.local[:] = np.arange(n, dtype=np.float64) + 1e6 * me
    win.sync()
    comm.barrier()
    model = calibration.current()
    progress(f"model: {model.source}")
    points, rows, ok = _sweep(win, args, model, False)
    head = ["length", "count", *(f"{p} us" for p in args.protocols), "auto us", "choice", "best", "auto/best",
            "packed/pipe"]
    print_table(head, rows)
    summary = _summary(points, args.protocols, model)
    doc = {"lengths": args.lengths, "counts": args.counts, "points": points, "summary": summary}
    put_ok = True
    if args.puts:
        put_protos = [p for p in args.protocols if p != "bounding"]
        if put_protos:
            win.local[:] = np.arange(n, dtype=np.float64) + 1e6 * me
            win.sync()
            comm.barrier()
            put_points, put_rows, put_ok = _sweep(win, args, model, True)
            print_table(["put " + h if h == "length" else h for h in head], put_rows)
            doc["puts"] = put_points
            doc["puts_summary"] = _summary(put_points, put_protos, model)
    summary["correct"] = bool(ok and put_ok)
    path = write_result("protocols", doc, args.out)
    if me == 0:
        for kind, sm in (("reads", summary), ("puts", doc.get("puts_summary"))):
            if sm is None:
                continue
            print(f"{kind}: auto within 10% of the best protocol at {sm['points_auto_within_10pct']} of "
                  f"{sm['points']} points by median ({sm['points_auto_within_10pct_by_min']} by minimum; the fitted "
                  f"formulas alone: {sm['points_fitted_within_10pct']}; noise: auto timed apart from its choice "
                  f"differs by >10% at {sm['points_auto_timed_differs_10pct_from_its_choice']}; measured grid of "
                  f"{sm['measured_grid_points']} points); total time auto / always-{sm['best_fixed']}: "
                  f"{sm['auto_over_best_fixed_total']:.3f}")
        print(f"results all correct: {summary['correct']}; load {os.getloadavg()[0]:.1f}")
        png = args.png or os.path.splitext(path)[0] + ".png"
        if _plot(points, args, png, summary):
            wrote = [png]
            if "puts" in doc and _plot(doc["puts"], args, os.path.splitext(png)[0] + "-puts.png",
                                       doc["puts_summary"], "puts"):
                wrote.append(os.path.splitext(png)[0] + "-puts.png")
            print(f"wrote {path} and {' and '.join(wrote)}")
        else:
            print(f"wrote {path} (no PNG: pip install pgas[plot] for matplotlib)")
    comm.barrier()                       # the others wait while locale 0 draws
    return 0 if summary["correct"] else 1


def _plot(points, args, png: str, summary, kind: str = "reads") -> bool:
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
    ax.set_title(f"{kind}: log2 T_packed / T_pipelined, {comm.num_locales()} locales{nl}\n"
                 "auto's choice: K packed, P pipelined, B bounding (! = >10% off best)", fontsize=9)
    fig.colorbar(im, ax=ax, label="log2 ratio (<0: packed faster)")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return True

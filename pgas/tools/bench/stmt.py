"""``pgas bench stmt``: the paper's Figure 11 kernels, baseline vs aggregated.

Each kernel runs on Cyclic and Block-Cyclic (block 4 and 16) data in both
modes: *baseline* (``pg.config(aggregate=False)``: one message per remote
element access, as Chapel's unoptimised Cyclic follower) and *aggregated*
(the default).  After untimed warm-up steps (the first plans; ``--warmup``, default
3 in the aggregated and auto modes, 1 in the baseline), ``--steps``
steps are timed and their messages counted; the result is checked against
the kernel's NumPy reference.  Reported per run: messages and bytes per step,
seconds per step, and the aggregated / baseline ratios; then the geometric
means of the ratios per distribution, next to the paper's (messages -64 %
Cyclic, -72 % Block-Cyclic; runtime -36 %, -53 %).

The aggregated mode (plain aggregation: one packed message per peer and
array) runs once per ``--owners`` policy (``pg.config(owner=...)``;
default ``write`` for every kernel, plus ``cost`` for mvt, whose reductions
the cost model runs on A's owner with remote accumulates).  The baseline runs
with ``owner="write"`` and the geometric means use the ``write`` rows.

The *auto* mode (``--auto``, default on) runs every choice automatic: the
owner by the cost model, each message's protocol by the calibrated model
with its guard (:mod:`pgas.tools.bench.measure`'s ``auto``). Reported per kernel and
distribution: auto's time over the better of baseline and plain aggregation
(the issue's check: at most 1.05).

Each mode runs ``--trials`` times (default 3), the modes interleaved in a
rotating order so that the load of a shared machine hits them alike; a mode's
time is the median over its trials (``seconds_per_step``, with every trial's
in ``trials_seconds_per_step``).
"""

from __future__ import annotations

import math

import numpy as np

import pgas as pg
from pgas import comm
from pgas.tools.bench import _positive, choices, parser, print_table, progress, write_result
from pgas.tools.bench.kernels import KERNELS, ORIGINAL
from pgas.tools.bench.measure import timed_steps

LOCALES = 4
DISTS = {"Cyclic": lambda: pg.Cyclic(), "BlockCyclic(4)": lambda: pg.BlockCyclic(4),
         "BlockCyclic(16)": lambda: pg.BlockCyclic(16)}
PAPER = {"Cyclic": {"messages": 0.36, "time": 0.64}, "BlockCyclic": {"messages": 0.28, "time": 0.47}}


def run_one(kernel, n: int, dist_name: str, aggregate: bool, steps: int, owner: str = "write",
            protocol: str = "packed", warmup: int = 1) -> dict:
    """Collective: one kernel, distribution, mode, owner policy and protocol; messages and
    time per step (after ``warmup`` untimed steps).  The baseline takes one warm-up step
    and at most 2 timed ones: its steps are 10-1000x longer, gain nothing from more, and
    its time never decides a comparison with the other modes."""
    pg.config(aggregate=aggregate, owner=owner, protocol=protocol)
    if not aggregate:
        warmup, steps = 1, min(steps, 2)
    try:
        state = kernel.setup(n, DISTS[dist_name]())
        dt, d = timed_steps(kernel, state, steps, warmup)
        want = kernel.reference(n, steps + warmup)
        ok = all(np.allclose(state[k].to_numpy(), want[k], rtol=1e-9) for k in kernel.result)
    finally:
        pg.config()
    mode = "baseline" if not aggregate else "auto" if protocol == "auto" else "aggregated"
    return {"kernel": kernel.name, "n": n, "dist": dist_name, "mode": mode, "owner": owner, "protocol": protocol,
            "messages_per_step": d.messages / steps, "bytes_per_step": d.bytes / steps,
            "seconds_per_step": dt / steps, "correct": bool(ok)}


def _size(kernel, size: str) -> int:
    if size == "bench":
        return kernel.bench_size
    if size == "paper":
        return kernel.paper
    if size == "tiny":
        return kernel.tiny
    return max(kernel.tiny, int(kernel.paper * float(size)))


def geomean(xs) -> float:
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("stmt", __doc__.splitlines()[0])
    p.add_argument("--kernels", type=choices(KERNELS), default=list(ORIGINAL), metavar="LIST",
                   help=f"comma-separated kernel names from {', '.join(KERNELS)} (default {','.join(ORIGINAL)})")
    p.add_argument("--dists", type=choices(DISTS), default=list(DISTS), metavar="LIST",
                   help=f"comma-separated distributions from {', '.join(DISTS)} (default all)")
    p.add_argument("--size", default="bench", help="bench (Figure 11 sizes, mvt 1000), paper, tiny, "
                   "or a scale factor of the paper size such as 0.25 (default bench)")
    p.add_argument("--steps", type=_positive, default=2, help="timed steps per run (default 2; the baseline times "
                   "at most 2)")
    p.set_defaults(warmup=3)
    p.set_defaults(trials=3)
    p.add_argument("--no-auto", dest="auto", action="store_false",
                   help="skip the auto mode (owner and protocol chosen by the models)")
    p.add_argument("--owners", type=choices(("write", "cost")), default=None, metavar="LIST", help="comma-separated owner policies for the aggregated runs "
                   "(write, cost); default write, and write,cost for mvt")
    return p


def _median_run(runs: list) -> dict:
    """One mode's trials as one run: the median seconds per step, every trial's listed."""
    ts = [r["seconds_per_step"] for r in runs]
    out = dict(runs[0], seconds_per_step=float(np.median(ts)), trials_seconds_per_step=ts,
               correct=all(r["correct"] for r in runs))
    return out


def _trials(kernel, n: int, dist: str, modes: list, trials: int, steps: int, warmup: int = 1) -> list:
    """Collective: ``(aggregate, owner, protocol)`` modes each run ``trials`` times,
    interleaved from a rotating start; one :func:`_median_run` per mode."""
    got: list = [[] for _ in modes]
    for t in range(trials):
        for i in [(t + k) % len(modes) for k in range(len(modes))]:
            agg, owner, proto = modes[i]
            got[i].append(run_one(kernel, n, dist, agg, steps, owner, proto, warmup))
    return [_median_run(r) for r in got]


def main(argv=None) -> int:
    """Run the benchmark; see the module docstring."""
    args = make_parser().parse_args(argv)
    rows, results, autos = [], [], []
    for name in args.kernels:
        kernel = KERNELS[name]
        n = _size(kernel, args.size)
        owners = args.owners if args.owners else (["write", "cost"] if name == "mvt" else ["write"])
        for dist in args.dists:
            progress(f"kernel {name}, n={n}, {dist}")
            modes = [(False, "write", "packed")] + [(True, o, "packed") for o in owners]
            modes += [(True, "cost", "auto")] if args.auto else []
            got = _trials(kernel, n, dist, modes, args.trials, args.steps, args.warmup)
            base, aggs = got[0], got[1:1 + len(owners)]
            plain = None
            for owner, agg in zip(owners, aggs):
                rm = agg["messages_per_step"] / base["messages_per_step"] if base["messages_per_step"] else float("nan")
                rt = agg["seconds_per_step"] / base["seconds_per_step"]
                results.append({"baseline": base, "aggregated": agg, "owner": owner, "message_ratio": rm,
                                "time_ratio": rt})
                rows.append([name, n, dist, owner, base["messages_per_step"], agg["messages_per_step"], rm,
                             agg["bytes_per_step"], base["seconds_per_step"], agg["seconds_per_step"], rt,
                             "yes" if base["correct"] and agg["correct"] else "NO"])
                if owner == "write" or plain is None:
                    plain = agg
            if args.auto:
                auto = got[-1]
                best = min((base, plain), key=lambda r: r["seconds_per_step"])
                autos.append({"kernel": name, "n": n, "dist": dist, "auto": auto, "best_fixed": best["mode"],
                              "auto_over_best": auto["seconds_per_step"] / best["seconds_per_step"],
                              "auto_over_aggregated": auto["seconds_per_step"] / plain["seconds_per_step"],
                              "auto_over_baseline": auto["seconds_per_step"] / base["seconds_per_step"]})
    summary = {}
    for kind in ("Cyclic", "BlockCyclic"):
        sel = [r for r in results if r["baseline"]["dist"].startswith(kind) and r["owner"] == "write"]
        if sel:
            gm, gt = geomean([r["message_ratio"] for r in sel]), geomean([r["time_ratio"] for r in sel])
            summary[kind] = {"message_ratio_geomean": gm, "time_ratio_geomean": gt,
                             "message_reduction": 1 - gm, "time_reduction": 1 - gt,
                             "paper_message_reduction": 1 - PAPER[kind]["messages"],
                             "paper_time_reduction": 1 - PAPER[kind]["time"]}
    print_table(["kernel", "n", "dist", "owner", "msgs base", "msgs agg", "ratio", "bytes agg", "s base", "s agg",
                 "ratio", "ok"], rows)
    if comm.here() == 0:
        for kind, s in summary.items():
            print(f"{kind}: messages {-100 * s['message_reduction']:+.1f}% (paper -{100 * s['paper_message_reduction']:.0f}%),"
                  f" time {-100 * s['time_reduction']:+.1f}% (paper -{100 * s['paper_time_reduction']:.0f}%)")
    if autos:
        print_table(["kernel", "n", "dist", "s auto", "auto msgs", "better fixed", "auto / better", "ok"],
                    [[a["kernel"], a["n"], a["dist"], a["auto"]["seconds_per_step"], a["auto"]["messages_per_step"],
                      a["best_fixed"], a["auto_over_best"], "yes" if a["auto"]["correct"] else "NO"] for a in autos])
        worst = max(autos, key=lambda a: a["auto_over_best"])
        summary["auto"] = {"runs": len(autos), "within_5pct": sum(a["auto_over_best"] <= 1.05 for a in autos),
                           "worst": worst["auto_over_best"], "worst_run": f"{worst['kernel']} {worst['dist']}",
                           "geomean_auto_over_best": geomean([a["auto_over_best"] for a in autos])}
        from pgas.exec import calibration
        model = calibration.current().source
        model = None if model == "defaults" else model
        summary["auto"]["model"] = model or "defaults"
        if comm.here() == 0:
            s = summary["auto"]
            print(f"auto within 5% of the better of baseline and plain aggregation in {s['within_5pct']} of "
                  f"{s['runs']} runs (worst {s['worst_run']}: {s['worst']:.2f}x; geometric mean "
                  f"{s['geomean_auto_over_best']:.3f}); its model: "
                  + (f"calibrated, {model}" if model else "the defaults (no calibration for this machine and "
                     "locale count: run `pgas calibrate -n N` first to measure what auto is meant to use)"))
    import os
    summary["load"] = list(os.getloadavg())
    path = write_result("stmt", {"size": args.size, "steps": args.steps, "trials": args.trials, "runs": results,
                                 "auto": autos, "summary": summary}, args.out)
    if comm.here() == 0:
        print(f"wrote {path}")
    return 0 if all(r["baseline"]["correct"] and r["aggregated"]["correct"] for r in results) and \
        all(a["auto"]["correct"] for a in autos) else 1

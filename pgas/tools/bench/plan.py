"""``pgas bench plan``: does the statement runtime scale with the locale count?

Three measurements, written to one JSON file (and a PNG plot with ``--plot``,
which needs matplotlib: ``pip install pgas[plot]``):

1. **Cold planning time of one locale** against the locale count P (4 ... 65536,
   planned in this process: the planner is pure) for a 2-D 5-point stencil, a 3-D
   27-point stencil, mvt (``x[i] += A[i, j] * y[j]``) and the matmul forall
   (``D[i, j] += A[i, k] * B[k, j]``) on Block, Cyclic and Block-Cyclic(4) data.
   A locale plans its own pieces and finds its peers; nothing of the other
   locales' plans is built.  With ``--baseline-src DIR`` (a checkout of an older
   pgas, e.g. ``git worktree add /tmp/old <rev>``) the same statements are
   planned by that version's planner, which planned every locale, side by side
   in this run (up to ``--baseline-max`` locales).
2. **Cached per-statement time** of ``B[1:-1] = 0.5 * (A[:-2] + A[2:])`` against
   the same NumPy statement on the global arrays, at the job's locale count.
3. **A halo with 8 neighbours** (2-D 9-point stencil, Cyclic, 2x2 grid when the
   job has 4 locales) with blocking transfers (each one completed before the
   next starts: ``pg.config(nonblocking=False)``) against non-blocking ones, and
   the global barriers and point-to-point notices per statement.
4. **Planning overhead per kernel** of ``pgas bench stmt`` (:mod:`pgas.tools.bench.planparts`):
   one step's time split into tracing, lowering, the plan-cache lookup (and the
   first-time plan), fetching, computing, writing back and synchronising, against
   the targets of 50 us to describe and analyse a cached statement and 2 ms for a
   first-time plan (``--kernels none`` skips it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.layout import Block, BlockCyclic, Cyclic
from pgas.plan import Access, Statement, candidates, plan_local
from pgas.tools.bench import parser, print_table, progress, time_trials, write_result

LOCALES = 2
COUNTS = (4, 16, 64, 256, 1024, 4096, 16384, 65536)
DISTS = {"Block": lambda: Block(), "Cyclic": lambda: Cyclic(), "BlockCyclic(4)": lambda: BlockCyclic(4)}


def statements() -> dict:
    """Name -> (statement, extents per array slot)."""
    n2, n3, nm, nk = 8192, 512, 8192, 2048
    five = [Access(0, ((1, 0), (0, 1)), (1, 1))] + [Access(1, ((1, 0), (0, 1)), c)
                                                    for c in [(0, 1), (2, 1), (1, 0), (1, 2), (1, 1)]]
    cube = [Access(0, ((1, 0, 0), (0, 1, 0), (0, 0, 1)), (1, 1, 1))]
    cube += [Access(1, ((1, 0, 0), (0, 1, 0), (0, 0, 1)), (a, b, c))
             for a in range(3) for b in range(3) for c in range(3)]
    mvt = [Access(0, ((1, 0),), (0,)), Access(1, ((1, 0), (0, 1)), (0, 0)), Access(2, ((0, 1),), (0,))]
    mm = [Access(0, ((1, 0, 0), (0, 1, 0)), (0, 0)), Access(1, ((1, 0, 0), (0, 0, 1)), (0, 0)),
          Access(2, ((0, 0, 1), (0, 1, 0)), (0, 0))]
    return {
        "stencil5 2-D": (Statement(((0, 1, n2 - 2),) * 2, tuple(five), 0), [(n2, n2)] * 2),
        "stencil27 3-D": (Statement(((0, 1, n3 - 2),) * 3, tuple(cube), 0), [(n3, n3, n3)] * 2),
        "mvt": (Statement(((0, 1, nm), (0, 1, nm)), tuple(mvt), 0, "add"), [(nm,), (nm, nm), (nm,)]),
        "matmul forall": (Statement(((0, 1, nk),) * 3, tuple(mm), 0, "add"), [(nk, nk)] * 3),
    }


def _layouts(shapes, dist, P):
    return tuple(dist.bind(s, P) for s in shapes)


def plan_time(stmt, shapes, dist, P: int) -> tuple[float, int, int]:
    """Seconds to plan one locale cold (a locale in the middle of the grid), its
    pieces and peers."""
    from pgas.plan import planner

    layouts = _layouts(shapes, dist, P)
    r = P // 2 + 1 if P > 2 else 0
    planner._plan_local.cache_clear()
    t0 = time.perf_counter()
    for c in candidates(stmt, layouts, "write"):
        lp = plan_local(stmt, layouts, c, r)
    dt = time.perf_counter() - t0
    peers = {m.peer for m in lp.fetches + lp.writebacks} | set(lp.readers) | set(lp.writers)
    return dt, len(lp.pieces), len(peers)


_BASELINE_SCRIPT = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pgas.plan import Access, Statement, plan
from pgas.{layout} import Block, BlockCyclic, Cyclic
stmt, shapes, dist, P = eval(sys.argv[2])
layouts = tuple(dist.bind(s, P) for s in shapes)
t0 = time.perf_counter()
plan(stmt, layouts, "write")
print(json.dumps(time.perf_counter() - t0))
"""


def baseline_plan_time(src: str, stmt, shapes, dist_name: str, P: int, limit: float) -> float | None:
    """Seconds the planner in checkout ``src`` takes (None past ``limit`` seconds)."""
    pkg = "layout" if os.path.isdir(os.path.join(src, "pgas", "layout")) else "dist"
    dist_src = {"Block": "Block()", "Cyclic": "Cyclic()", "BlockCyclic(4)": "BlockCyclic(4)"}[dist_name]
    arg = f"({stmt!r}, {shapes!r}, {dist_src}, {P})"
    try:
        out = subprocess.run([sys.executable, "-c", _BASELINE_SCRIPT.format(layout=pkg), src, arg], capture_output=True,
                             text=True, timeout=limit, env=dict(os.environ, PYTHONPATH=src))
    except subprocess.TimeoutExpired:
        return None
    if out.returncode:
        raise RuntimeError(f"the baseline planner failed: {out.stderr[-500:]}")
    return float(out.stdout.strip().splitlines()[-1])


def scaling(args) -> list[dict]:
    rows = []
    for name, (stmt, shapes) in statements().items():
        for dname, mk in DISTS.items():
            for P in args.counts:
                dt, pieces, peers = plan_time(stmt, shapes, mk(), P)
                row = {"statement": name, "dist": dname, "locales": P, "seconds": dt, "pieces": pieces,
                       "peers": peers}
                if args.baseline_src and P <= args.baseline_max:
                    row["baseline_seconds"] = baseline_plan_time(args.baseline_src, stmt, shapes, dname, P,
                                                                 args.baseline_limit)
                rows.append(row)
                progress(f"{name}, {dname}, P={P}: {dt * 1e3:.2f} ms, {pieces} pieces, {peers} peers"
                         + (f" (baseline {row['baseline_seconds']})" if "baseline_seconds" in row else ""))
    return rows


def statement_time(args) -> dict:
    """Collective: cached time of a small shifted statement, pgas vs NumPy."""
    n = args.size
    A = pg.from_numpy(np.arange(n, dtype=float), dist=pg.Block())
    B = pg.zeros(n)
    a, b = np.arange(n, dtype=float), np.zeros(n)

    def stmt():
        B[1:-1] = 0.5 * (A[:-2] + A[2:])

    def numpy_stmt():
        b[1:-1] = 0.5 * (a[:-2] + a[2:])

    reps = args.reps
    t = time_trials(lambda: [stmt() for _ in range(reps)], args.trials, args.warmup)
    t0 = time.perf_counter()
    for _ in range(args.trials * reps):
        numpy_stmt()
    tn = (time.perf_counter() - t0) / (args.trials * reps)
    return {"n": n, "pgas_us": t.median / reps * 1e6, "numpy_us": tn * 1e6,
            "difference_us": (t.median / reps - tn) * 1e6}


def halo(args) -> dict:
    """Collective: a 9-point stencil on Cyclic data, blocking vs non-blocking transfers."""
    n = args.halo_size
    P = comm.num_locales()
    grid = (2, P // 2) if P % 2 == 0 and P > 2 else None
    dist = pg.Cyclic(grid=grid)
    g = np.random.default_rng(0).random((n, n))
    A = pg.from_numpy(g, dist=dist)
    B = pg.zeros((n, n), dist=dist)

    def sweep():
        B[1:-1, 1:-1] = (A[:-2, :-2] + A[:-2, 1:-1] + A[:-2, 2:] + A[1:-1, :-2] + A[1:-1, 1:-1]
                         + A[1:-1, 2:] + A[2:, :-2] + A[2:, 1:-1] + A[2:, 2:]) / 9.0

    out = {"n": n, "grid": list(A.layout.grid)}
    for mode in (False, True):
        pg.config(nonblocking=mode)
        t = time_trials(sweep, args.trials, args.warmup)
        with pg.comm_diagnostics() as d:
            sweep()
        key = "nonblocking" if mode else "blocking"
        out[key] = {"seconds": t.median, "messages": d.messages, "barriers": d.barriers, "syncs": d.syncs}
    pg.config()
    want = g.copy()
    want[1:-1, 1:-1] = sum(g[1 + a:n - 1 + a, 1 + b:n - 1 + b] for a in (-1, 0, 1) for b in (-1, 0, 1)) / 9.0
    out["matches_numpy"] = bool(np.allclose(B.to_numpy()[1:-1, 1:-1], want[1:-1, 1:-1]))
    out["speedup"] = out["blocking"]["seconds"] / out["nonblocking"]["seconds"]
    return out


def plot(rows, path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install 'pgas[plot]'") from None
    names = sorted({r["statement"] for r in rows})
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.6), sharey=True)
    for ax, name in zip(np.atleast_1d(axes), names):
        for dname in DISTS:
            sel = [r for r in rows if r["statement"] == name and r["dist"] == dname]
            ax.loglog([r["locales"] for r in sel], [r["seconds"] * 1e3 for r in sel], "o-", label=dname)
            base = [r for r in sel if r.get("baseline_seconds")]
            if base:
                ax.loglog([r["locales"] for r in base], [r["baseline_seconds"] * 1e3 for r in base], "x--",
                          label=f"{dname}, every locale planned")
        ax.set_title(name)
        ax.set_xlabel("locales")
        ax.grid(True, which="both", alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel("cold planning time of one locale (ms)")
    np.atleast_1d(axes)[-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _overhead(args) -> dict:
    """Collective: the per-kernel planning overhead (:mod:`pgas.tools.bench.planparts`), printed."""
    from pgas.tools.bench import planparts
    from pgas.tools.bench.kernels import KERNELS

    if args.kernels == "none":
        return {}
    names = sorted(KERNELS) if args.kernels == "all" else [k for k in args.kernels.split(",") if k]
    bad = [k for k in names if k not in KERNELS]
    if bad:
        raise SystemExit(f"unknown kernels {bad}; choose from {sorted(KERNELS)}")
    rows = planparts.measure(names, args.kernel_size, args.kernel_steps, pg.Block(), args.cold_trials)
    stages = ("trace", "lower", "plan", "fetch", "compute", "write", "sync")
    print_table(["kernel", "n", "stmts", "step us", *(f"{s} us" for s in stages), "describe us/stmt (min)",
                 "first plan us/stmt (min)", "longest first plan us (min)", "first plan cpu us/stmt",
                 "longest first plan cpu us"],
                [[r["kernel"], r["n"], r["statements_per_step"], r["step_us"],
                  *(r["parts_us_per_step"][s] for s in stages),
                  f"{r['cached_describe_us_per_statement']:.1f} ({r['cached_describe_us_per_statement_min']:.1f})",
                  f"{r['first_plan_us_per_statement']:.0f} ({r['first_plan_us_per_statement_min']:.0f})",
                  f"{r['first_plan_us_longest']:.0f} ({r['first_plan_us_longest_min']:.0f})",
                  r["first_plan_cpu_us_per_statement"], r["first_plan_cpu_us_longest"]] for r in rows])
    worst = max(rows, key=lambda r: r["cached_describe_us_per_statement"])
    slow = max(rows, key=lambda r: r["first_plan_us_longest"])
    summary = {"describe_target_us": 50.0, "first_plan_target_us": 2000.0,
               "worst_describe_us_per_statement": worst["cached_describe_us_per_statement"],
               "worst_describe_kernel": worst["kernel"],
               "kernels_describe_within_target": sum(r["cached_describe_us_per_statement"] <= 50 for r in rows),
               "longest_first_plan_us": slow["first_plan_us_longest"], "longest_first_plan_kernel": slow["kernel"],
               "kernels_first_plan_within_target": sum(r["first_plan_us_longest"] <= 2000 for r in rows),
               "kernels_describe_min_within_target": sum(r["cached_describe_us_per_statement_min"] <= 50
                                                         for r in rows),
               "kernels_first_plan_min_within_target": sum(r["first_plan_us_longest_min"] <= 2000 for r in rows),
               "kernels_first_plan_cpu_within_target": sum(r["first_plan_cpu_us_longest"] <= 2000 for r in rows),
               "kernels": len(rows)}
    if comm.here() == 0:
        print(f"describe + analyse a cached statement: within 50 us in {summary['kernels_describe_within_target']} "
              f"of {len(rows)} kernels (worst {worst['kernel']}, {summary['worst_describe_us_per_statement']:.0f} "
              f"us); first-time plan within 2 ms in {summary['kernels_first_plan_within_target']} (longest "
              f"{slow['kernel']}, {summary['longest_first_plan_us']:.0f} us); by the least of the trials: "
              f"{summary['kernels_describe_min_within_target']} and {summary['kernels_first_plan_min_within_target']}; "
              f"first plans within 2 ms of CPU time: {summary['kernels_first_plan_cpu_within_target']}")
    return {"dist": "Block", "kernels": rows, "summary": summary}


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("plan", "Planning time vs locale count, cached statement time vs NumPy, and a halo "
                       "exchange with blocking vs non-blocking transfers.")
    p.add_argument("--counts", type=lambda s: [int(x) for x in s.split(",")], default=list(COUNTS),
                   help="locale counts to plan for (default " + ",".join(map(str, COUNTS)) + ")")
    p.add_argument("--baseline-src", default=None, help="an older pgas checkout to plan with too, side by side")
    p.add_argument("--baseline-max", type=int, default=1024, help="largest locale count for the baseline")
    p.add_argument("--baseline-limit", type=float, default=120.0, help="seconds allowed per baseline plan")
    p.add_argument("--size", type=int, default=1000, help="extent of the small statement (default 1000)")
    p.add_argument("--reps", type=int, default=200, help="statements per timed trial (default 200)")
    p.add_argument("--halo-size", type=int, default=512, help="extent of the 9-point stencil (default 512)")
    p.add_argument("--plot", default=None, help="write a PNG of the planning times here")
    p.add_argument("--skip-scaling", action="store_true", help="only the measurements at this job's locales")
    p.add_argument("--kernels", default="all", help="stmt kernels whose planning overhead to split "
                                                    "(comma list, 'all' or 'none'; default all)")
    p.add_argument("--kernel-size", type=int, default=0, help="their size (default 0: each kernel's test size)")
    p.add_argument("--kernel-steps", type=int, default=7, help="cached steps timed per kernel (default 7)")
    p.add_argument("--cold-trials", type=int, default=3,
                   help="first steps per kernel, every plan cache emptied before each (default 3)")
    return p


def main(argv=None) -> int:
    """Run the benchmark; see the module docstring."""
    args = make_parser().parse_args(argv)
    rows = []
    if not args.skip_scaling and comm.here() == 0:
        rows = scaling(args)
    rows = comm.bcast(rows, 0)
    small = statement_time(args)
    halo_res = halo(args)
    parts = _overhead(args)
    print_table(["statement", "pgas us", "NumPy us", "difference us"],
                [[f"B[1:-1] = 0.5*(A[:-2]+A[2:]), n={small['n']}", small["pgas_us"], small["numpy_us"],
                  small["difference_us"]]])
    print_table(["9-point halo", "seconds", "messages", "barriers", "notices"],
                [[k, halo_res[k]["seconds"], halo_res[k]["messages"], halo_res[k]["barriers"], halo_res[k]["syncs"]]
                 for k in ("blocking", "nonblocking")])
    path = write_result("plan", {"scaling": rows, "statement": small, "halo": halo_res, "overhead": parts},
                        args.out)
    if args.plot and comm.here() == 0 and rows:
        plot(rows, args.plot)
    if comm.here() == 0:
        print(f"results in {path}" + (f", plot in {args.plot}" if args.plot else ""))
    return 0 if halo_res["matches_numpy"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

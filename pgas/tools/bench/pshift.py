"""``pgas bench pshift``: the polyshift paper's Tables 1-4, sequential cshift vs pshift vs ghost cells.

For ranks 1-4 and local subarray extents L (per locale, per axis: every power of two
4..16384 for rank 1, 2..128 for rank 2, 2..16 for rank 3, 2..8 for rank 4, as the
paper's Tables 1-4),
an array of global shape ``L * grid`` on the default grid is shifted by +1 and
-1 along every axis (2k circular shifts) three ways:

- ``cshift``: 2k sequential circular shifts, each its own exchange (2k
  one-shift ``pg.pshift_setup`` plans run one after another: each side uses
  its best cached path, as a user repeating the shifts would; the front end's
  lowering is left out of both sides, so the ratio is the exchange phases');
- ``pshift``: one call of a ``pg.pshift_setup`` plan (one exchange; the setup
  time is reported apart);
- ``ghosts``: one ``update_ghosts(periodic=True, corners=False)`` of an array
  with ghost width 1 (one exchange, no local copy of the interior: a stencil
  then reads its neighbours as views of the padded block).

The three ways take turns, batch by
batch (a change of the machine's load hits all three alike).  A batch times
``--reps`` calls back to back, as a stencil loop makes them (default: the
power of two that first fills 2 ms, timed as ``timeit``'s autorange does, so
every way's batches last alike), after a barrier; a trial is the least of
:data:`BATCHES` batches per way.  One call alone after a barrier mostly times
how unevenly the locales leave the barrier; a long batch, on a machine with
more processes than cores, mostly times how often the locales were
descheduled (each exchange then waits for its peer's next time slice, so
calls that cost 20 us when the locales run at once took 0.2-1 ms, and the
ways' ratios swung from 0.3 to 50 between runs).  The least of many short
batches is the cost of a call when its locales run at once, as on a
dedicated machine.  ``--reps 1`` times single calls.  It runs under
``pg.config(fuse=True)``: a compiled group's small local moves go to one numba
kernel from the second run (:mod:`pgas.exec.copies`), the steady state of a
long loop (``fuse="auto"`` gets there after ``copies.AFTER`` runs).

Reported per size: seconds per call (min over trials, the slowest locale),
messages per call, and the speedups cshift/pshift and cshift/ghosts, in wall
time and in CPU time (``time.process_time``, the slowest locale, min over
trials: the paper's "Elapsed" and "CM-time"; on a machine with more processes
than cores the CPU time leaves out the time a locale waits descheduled), each
rank's table beside the paper's Table 1-4 (:data:`pgas.tools.bench.pshift_model.PAPER`).
Two fits of the paper's model: per rank and way, eq. (2) ``T = a + b L^(k-1) + c L^k``
(a, b, c and the relative RMS residual); per way over every rank at once, eq. (1)
in full (:mod:`pgas.tools.bench.pshift_model`: ``T0``, ``Tmm``, ``Tmt+Ttm``,
``Tex`` per 32-bit slice, ``Nsl`` from the element type, each size's residual),
beside the same fit of the paper's own CM times.  At 2 locales only the first
axis is split, so ``Tex`` and ``Tmt+Ttm`` share a column and ``Tex`` is "not
determined"; at 4 locales rank 1 splits one axis and ranks 2-4 two, which
separates them.  ``--plot DIR`` draws the paper's Figures 8-11 there
(``fig8.png``: speedups; ``fig9.png``-``fig11.png``: pshift time against L at
ranks 1-3 with both fits, the paper's CM times beside), with matplotlib
(``pip install 'pgas[plot]'``).  Run it at 2 and 4 locales (``-n 2``, ``-n 4``).
"""

from __future__ import annotations

import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.layout.distribution import default_grid
from pgas.tools.bench import Timing, choices, parser, print_table, progress, write_result
from pgas.tools.bench import pshift_model as model

LOCALES = 4
#: Local extents per axis, per rank (the paper's Tables 1-4).
PAPER_SIZES = model.PAPER_SIZES
#: A few of them per rank, for a quick look (a minute at 2 locales).
QUICK_SIZES = {1: [4, 64, 1024, 16384], 2: [2, 8, 32, 128], 3: [2, 4, 8, 16], 4: [2, 4, 8]}
TINY_SIZES = {1: [4, 64], 2: [2, 8], 3: [2, 4], 4: [2, 3]}
SIZES = {"paper": PAPER_SIZES, "quick": QUICK_SIZES, "tiny": TINY_SIZES}
WAYS = ("cshift", "pshift", "ghosts")


def shifts(rank: int) -> list:
    return [(s, ax) for ax in range(rank) for s in (1, -1)]


#: Batches per way in one trial (the trial's time: their least).
BATCHES = 8


def repeats(fn, reps: int, target: float = 0.002) -> int:
    """Collective: ``reps``, or if 0 the calls of ``fn`` that fill about ``target`` seconds:
    batches of 1, 2, 4, ... calls are timed (the slowest locale's time) until one lasts
    ``target`` (as ``timeit``'s autorange; at most 1024)."""
    if reps:
        return reps
    n = 1
    while n < 1024:
        comm.barrier()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if float(comm.allreduce(time.perf_counter() - t0, "max")) >= target:
            break
        n *= 2
    return n


def timed(fn) -> tuple:
    """Collective: ``(wall, cpu)`` seconds of one call of ``fn`` after a barrier, each the
    slowest locale's (CPU: this process's ``time.process_time``, which leaves out the time
    a locale is descheduled, as the paper's CM time leaves out the front end's)."""
    comm.barrier()
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    c1, t1 = time.process_time(), time.perf_counter()
    both = comm.allreduce(np.array([t1 - t0, c1 - c0]), "max")
    return float(both[0]), float(both[1])


def batched(fn, reps: int):
    """``fn`` called ``reps`` times (one trial of a batch)."""
    if reps == 1:
        return fn

    def run():
        for _ in range(reps):
            fn()
    return run


def measure(rank: int, L: int, trials: int, warmup: int, reps: int = 0) -> dict:
    """Collective: the three ways at one rank and local extent."""
    grid = default_grid(comm.num_locales(), rank)
    shape = tuple(L * p for p in grid)
    A = pg.from_numpy(np.random.default_rng(rank).random(shape))
    sh = shifts(rank)
    outs = [pg.empty_like(A) for _ in sh]
    comm.barrier()
    t0 = time.perf_counter()
    plan = pg.pshift_setup(A, sh)
    setup = float(comm.allreduce(time.perf_counter() - t0, "max"))
    singles = [pg.pshift_setup(A, [s]) for s in sh]
    G = pg.from_numpy(A.to_numpy(), ghosts=(1,) * rank)

    def seq():
        for one, R in zip(singles, outs):
            one(A, out=[R])

    def poly():
        plan(A, out=outs)

    def ghosts():
        G.update_ghosts(periodic=True, corners=False)

    row = {"rank": rank, "L": L, "shape": shape, "grid": grid, "setup_s": setup,
           "nsl": model.slices(A.dtype.itemsize)}
    fns = dict(zip(WAYS, (seq, poly, ghosts)))
    for fn in fns.values():
        for _ in range(3):                          # compiles the cached path, then its kernel
            fn()
    counts = {name: repeats(fn, reps) for name, fn in fns.items()}
    times = {name: [] for name in fns}
    cpus = {name: [] for name in fns}
    runs = {name: batched(fn, counts[name]) for name, fn in fns.items()}
    for trial in range(warmup + trials):
        best = {name: [np.inf, np.inf] for name in fns}
        for _ in range(BATCHES):                    # the ways interleaved: a load change hits all alike
            for name, run in runs.items():
                wall, cpu = timed(run)
                b = best[name]
                b[0], b[1] = min(b[0], wall), min(b[1], cpu)
        if trial >= warmup:
            for name, (wall, cpu) in best.items():
                times[name].append(wall)
                cpus[name].append(cpu)
    for name, fn in fns.items():
        with pg.comm_diagnostics() as d:
            fn()
        n, t, c = counts[name], Timing(tuple(times[name])), Timing(tuple(cpus[name]))
        row[name] = {"seconds": t.min / n, "median": t.median / n, "cpu_seconds": c.min / n,
                     "cpu_median": c.median / n, "reps": n, "messages": d.messages,
                     "max_per_pair": int(d.matrix.max(initial=0)), "bytes": d.bytes}
    want = [np.roll(A.to_numpy(), -s, ax) for s, ax in sh]
    poly()
    ok = all(np.array_equal(R.to_numpy(), w) for R, w in zip(outs, want))
    seq()
    ok = ok and all(np.array_equal(R.to_numpy(), w) for R, w in zip(outs, want))
    row["correct"] = bool(ok)
    row["speedup_pshift"] = row["cshift"]["seconds"] / row["pshift"]["seconds"]
    row["speedup_ghosts"] = row["cshift"]["seconds"] / row["ghosts"]["seconds"]
    row["speedup_pshift_cpu"] = row["cshift"]["cpu_seconds"] / row["pshift"]["cpu_seconds"]
    row["speedup_ghosts_cpu"] = row["cshift"]["cpu_seconds"] / row["ghosts"]["cpu_seconds"]
    for p in [plan, *singles]:
        p.free()
    return row


def fit(rows: list, rank: int, way: str) -> dict | None:
    """Least-squares ``T = a + b L^(k-1) + c L^k`` over the sizes of one rank, weighted to
    minimise relative errors (for rank 1, ``L^0`` is the constant: ``b`` is reported 0)."""
    sel = [r for r in rows if r["rank"] == rank]
    if len(sel) < 3:
        return None
    L = np.array([r["L"] for r in sel], dtype=float)
    T = np.array([r[way]["seconds"] for r in sel])
    cols = [np.ones_like(L), L ** rank] if rank == 1 else [np.ones_like(L), L ** (rank - 1), L ** rank]
    X = np.stack(cols, axis=1) / T[:, None]
    coef, *_ = np.linalg.lstsq(X, np.ones_like(T), rcond=None)
    model = (X * T[:, None]) @ coef
    if rank == 1:
        coef = np.array([coef[0], 0.0, coef[1]])
    resid = float(np.sqrt(np.mean(((model - T) / T) ** 2)))
    return {"a": float(coef[0]), "b": float(coef[1]), "c": float(coef[2]), "relative_rms_residual": resid}


def columns(row: dict, way: str) -> np.ndarray:
    """Eq. (1)'s columns for one measured row and way (cshift: one call per shift; the
    others overlap their exchanges; an axis whose grid extent is 1 is not split)."""
    return model.regressors([row["L"]] * row["rank"], split=[p > 1 for p in row["grid"]], nsl=row.get("nsl", 2),
                            exchanges="sum" if way == "cshift" else "max")


def fit_eq1(rows: list, way: str, key: str = "seconds") -> dict | None:
    """Eq. (1) fitted in full to one way's times (``key``: ``"seconds"`` wall, ``"cpu_seconds"``
    CPU) over every rank at once (relative least squares,
    :func:`pgas.tools.bench.pshift_model.fit`), with ``Nsl`` and each size's residual."""
    if len(rows) < 2:
        return None
    X = np.array([columns(r, way) for r in rows])
    f = model.fit(X, [max(r[way][key], 1e-12) for r in rows])
    f["Nsl"] = rows[0].get("nsl", 2)
    f["sizes"] = [[r["rank"], r["L"]] for r in rows]
    return f


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install 'pgas[plot]'") from None
    return plt


def plot(rows: list, folder: str, fits: dict | None = None) -> list:
    """The paper's Figures 8-11 as ``fig8.png`` .. ``fig11.png`` in ``folder``; the paths."""
    import os

    os.makedirs(folder, exist_ok=True)
    paths = [os.path.join(folder, "fig8.png")]
    plot_speedups(rows, paths[0])
    for k, fig in ((1, 9), (2, 10), (3, 11)):
        if any(r["rank"] == k for r in rows):
            paths.append(os.path.join(folder, f"fig{fig}.png"))
            plot_times(rows, k, fig, paths[-1], fits)
    return paths


def plot_times(rows: list, k: int, fig: int, path: str, fits: dict | None) -> None:
    """Figure 9-11: pshift time per call against the local extent at rank ``k``, pgas's
    measured wall and CPU times with eq. (1)'s fits to each and eq. (2)'s, the paper's CM
    times beside."""
    plt = _pyplot()
    sel = sorted((r for r in rows if r["rank"] == k), key=lambda r: r["L"])
    f, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    L = np.array([r["L"] for r in sel], float)
    left.loglog(L, [r["pshift"]["seconds"] * 1e6 for r in sel], "o", label="pgas pshift, wall")
    left.loglog(L, [r["pshift"]["cpu_seconds"] * 1e6 for r in sel], "x", label="pgas pshift, CPU")
    dense = np.unique(np.geomspace(L.min(), L.max(), 40).round().astype(int))
    like = [dict(sel[0], L=int(x)) for x in dense]
    for key, style, what in (("eq1", "-", "wall"), ("eq1_cpu", ":", "CPU")):
        eq1 = (fits or {}).get(key, {}).get("pshift")
        if eq1:
            left.loglog(dense, [model.model_time(eq1["params"], columns(r, "pshift")) * 1e6 for r in like], style,
                        label=f"eq. (1), all ranks, {what}")
    eq2 = (fits or {}).get(f"rank{k}", {}).get("pshift")
    if eq2:
        left.loglog(dense, [(eq2["a"] + eq2["b"] * x ** (k - 1) + eq2["c"] * x ** k) * 1e6 for x in dense], "--",
                    label="eq. (2), this rank, wall")
    left.set_title(f"pgas, {_locales(sel)} locales, rank {k}")
    left.set_xlabel("local extent L")
    left.set_ylabel("us per call")
    left.legend(fontsize=8)
    paper = model.PAPER[k]
    pf = model.paper_fit()
    PL = np.array([p[0] for p in paper], float)
    right.loglog(PL, [p[4] * 1e3 for p in paper], "o", label="CM-200 PSHIFT (CM time)")
    right.loglog(PL, [model.model_time(pf["params"], model.regressors([x] * k)) * 1e6 for x in PL], "-",
                 label="eq. (1), all ranks")
    right.set_title(f"the paper's Figure {fig} (Table {k})")
    right.set_xlabel("local extent L")
    right.legend(fontsize=8)
    f.tight_layout()
    f.savefig(path, dpi=120)
    plt.close(f)


def _locales(rows: list) -> int:
    """The locale count the rows were measured at (their grid's size)."""
    return int(np.prod(rows[0]["grid"])) if rows else comm.num_locales()


def plot_speedups(rows: list, path: str) -> None:
    """Figure 8: speedup over sequential cshift vs local subarray size, one panel per rank
    (pgas's pshift and update_ghosts, the paper's PSHIFT)."""
    plt = _pyplot()
    ranks = sorted({r["rank"] for r in rows})
    fig, axes = plt.subplots(1, len(ranks), figsize=(4 * len(ranks), 3.4), squeeze=False)
    for ax, k in zip(axes[0], ranks):
        sel = [r for r in rows if r["rank"] == k]
        sizes = [r["L"] ** k for r in sel]
        ax.semilogx(sizes, [r["speedup_pshift"] for r in sel], "o-", label="pshift")
        ax.semilogx(sizes, [r["speedup_ghosts"] for r in sel], "s-", label="update_ghosts")
        paper = model.PAPER.get(k, [])
        ax.semilogx([p[0] ** k for p in paper], [p[1] / p[2] for p in paper], "^:", label="CM-200 PSHIFT")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_title(f"rank {k}, {_locales(sel)} locales")
        ax.set_xlabel("local subarray elements")
    axes[0][0].set_ylabel("speedup over sequential cshift")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("pshift", __doc__.splitlines()[0])
    p.add_argument("--ranks", type=choices(["1", "2", "3", "4"]), default=["1", "2", "3", "4"], metavar="LIST",
                   help="comma-separated array ranks (default 1,2,3,4)")
    p.add_argument("--size", choices=tuple(SIZES), default="paper",
                   help="paper: the paper's local extents (every power of two 4..16384 at rank 1); quick: 3-4 of "
                        "them per rank; tiny: two small ones per rank (default paper)")
    p.add_argument("--reps", type=int, default=0, metavar="R",
                   help="calls per timed batch (default 0: as many as fill about 2 ms)")
    p.add_argument("--plot", default=None, metavar="DIR",
                   help="draw the paper's Figures 8-11 as DIR/fig8.png .. fig11.png (needs matplotlib)")
    return p


def main(argv=None) -> int:
    """Run the benchmark; see the module docstring."""
    args = make_parser().parse_args(argv)
    pg.config(fuse=True)                            # the steady state of a long loop (see above)
    sizes = SIZES[args.size]
    rows = []
    for k in map(int, args.ranks):
        for L in sizes[k]:
            progress(f"rank {k}, local extent {L}")
            rows.append(measure(k, L, args.trials, args.warmup, args.reps))
    fits = {f"rank{k}": {w: fit(rows, int(k), w) for w in WAYS} for k in args.ranks}
    fits["eq1"] = {w: fit_eq1(rows, w) for w in WAYS}
    fits["eq1_cpu"] = {w: fit_eq1(rows, w, "cpu_seconds") for w in WAYS}
    fits["eq1_paper"] = model.paper_fit()
    print_table(["rank", "L", "local elems", "cshift s", "pshift s", "ghosts s", "msgs c/p/g", "max/pair p",
                 "speedup p", "speedup g", "cpu speedup p", "cpu speedup g", "setup s", "ok"],
                [[r["rank"], r["L"], r["L"] ** r["rank"], r["cshift"]["seconds"], r["pshift"]["seconds"],
                  r["ghosts"]["seconds"], f"{r['cshift']['messages']}/{r['pshift']['messages']}/"
                  f"{r['ghosts']['messages']}", r["pshift"]["max_per_pair"], r["speedup_pshift"],
                  r["speedup_ghosts"], r["speedup_pshift_cpu"], r["speedup_ghosts_cpu"], r["setup_s"],
                  "yes" if r["correct"] else "NO"] for r in rows])
    if comm.here() == 0:
        print(report(rows, fits))
    out = args.out or f"results/pshift-{comm.num_locales()}.json"
    path = write_result("pshift", {"size": args.size, "locales": comm.num_locales(), "rows": rows, "fits": fits},
                        out)
    drawn = plot(rows, args.plot, fits) if args.plot and comm.here() == 0 else []
    comm.barrier()                                  # the others wait for the plot (a slow import)
    if comm.here() == 0:
        print(f"wrote {path}" + (f" and {', '.join(drawn)}" if drawn else ""))
    return 0 if all(r["correct"] for r in rows) else 1


def report(rows: list, fits: dict) -> str:
    """The tables beside the paper's (Markdown) and both fits, as text."""
    lines = []
    for k in sorted({r["rank"] for r in rows}):
        lines += ["", f"Table {k} (rank {k}): the paper's CM-200 ms per call beside pgas's us per call", "",
                  model.markdown_table(rows, k)]
    for key, per in fits.items():
        if key.startswith("rank"):
            for w, f in per.items():
                if f:
                    lines.append(f"{key} {w}: eq. (2) T = {f['a']:.3g} + {f['b']:.3g} L^(k-1) + {f['c']:.3g} L^k "
                                 f"(relative rms residual {f['relative_rms_residual']:.2f})")
    both = {f"pgas {w}": f for w, f in fits["eq1"].items()}
    both.update({f"pgas {w} (CPU)": f for w, f in fits["eq1_cpu"].items() if w != "cshift"})
    both["paper PSHIFT (CM time)"] = fits["eq1_paper"]
    lines += ["", "Eq. (1) over every rank at once (per 32-bit slice; Tmt and Ttm share a column, so their sum):",
              "", model.markdown_fits(both), ""]
    f = fits["eq1"].get("pshift")
    if f:
        lines.append("pshift residuals (model - measured) / measured: " + ", ".join(
            f"{k}x{L} {r:+.2f}" for (k, L), r in zip(f["sizes"], f["residuals"])))
    return "\n".join(lines)

"""``pgas bench pshift``: the polyshift paper's Tables 1-4, sequential cshift vs pshift vs ghost cells.

For ranks 1-4 and local subarray extents L (per locale, per axis: 4..16384 for
rank 1, 2..128 for rank 2, 2..16 for rank 3, 2..8 for rank 4, powers of two),
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
than cores the CPU time leaves out the time a locale waits descheduled); per rank
and way, the least-squares fit of the paper's model ``T = a + b L^(k-1) + c L^k``
(a, b, c and the fit's relative RMS residual).  Run it at 2 and 4 locales
(``-n 2``, ``-n 4``); ``--plot PNG`` draws the speedups like the paper's
Figure 8 (needs matplotlib: ``pip install 'pgas[plot]'``).
"""

from __future__ import annotations

import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.layout.distribution import default_grid
from pgas.tools.bench import Timing, choices, parser, print_table, progress, write_result

LOCALES = 4
#: Local extents per axis, per rank (the paper's Tables 1-4).
PAPER_SIZES = {1: [4 ** k for k in range(1, 8)], 2: [2 ** k for k in range(1, 8)],
               3: [2 ** k for k in range(1, 5)], 4: [2 ** k for k in range(1, 4)]}
TINY_SIZES = {1: [4, 64], 2: [2, 8], 3: [2, 4], 4: [2, 3]}
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

    row = {"rank": rank, "L": L, "shape": shape, "grid": grid, "setup_s": setup}
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


def plot(rows: list, path: str) -> None:
    """Speedup over sequential cshift vs local subarray size, one panel per rank (Figure 8)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install 'pgas[plot]'") from None
    ranks = sorted({r["rank"] for r in rows})
    fig, axes = plt.subplots(1, len(ranks), figsize=(4 * len(ranks), 3.4), squeeze=False)
    for ax, k in zip(axes[0], ranks):
        sel = [r for r in rows if r["rank"] == k]
        sizes = [r["L"] ** k for r in sel]
        ax.semilogx(sizes, [r["speedup_pshift"] for r in sel], "o-", label="pshift")
        ax.semilogx(sizes, [r["speedup_ghosts"] for r in sel], "s-", label="update_ghosts")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_title(f"rank {k}, {comm.num_locales()} locales")
        ax.set_xlabel("local subarray elements")
    axes[0][0].set_ylabel("speedup over sequential cshift")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("pshift", __doc__.splitlines()[0])
    p.add_argument("--ranks", type=choices(["1", "2", "3", "4"]), default=["1", "2", "3", "4"], metavar="LIST",
                   help="comma-separated array ranks (default 1,2,3,4)")
    p.add_argument("--size", choices=("paper", "tiny"), default="paper",
                   help="paper: the paper's local extents; tiny: two small ones per rank (default paper)")
    p.add_argument("--reps", type=int, default=0, metavar="R",
                   help="calls per timed batch (default 0: as many as fill about 2 ms)")
    p.add_argument("--plot", default=None, metavar="PNG", help="write a speedup plot here (needs matplotlib)")
    return p


def main(argv=None) -> int:
    """Run the benchmark; see the module docstring."""
    args = make_parser().parse_args(argv)
    pg.config(fuse=True)                            # the steady state of a long loop (see above)
    sizes = PAPER_SIZES if args.size == "paper" else TINY_SIZES
    rows = []
    for k in map(int, args.ranks):
        for L in sizes[k]:
            progress(f"rank {k}, local extent {L}")
            rows.append(measure(k, L, args.trials, args.warmup, args.reps))
    fits = {f"rank{k}": {w: fit(rows, int(k), w) for w in WAYS} for k in args.ranks}
    print_table(["rank", "L", "local elems", "cshift s", "pshift s", "ghosts s", "msgs c/p/g", "max/pair p",
                 "speedup p", "speedup g", "cpu speedup p", "cpu speedup g", "setup s", "ok"],
                [[r["rank"], r["L"], r["L"] ** r["rank"], r["cshift"]["seconds"], r["pshift"]["seconds"],
                  r["ghosts"]["seconds"], f"{r['cshift']['messages']}/{r['pshift']['messages']}/"
                  f"{r['ghosts']['messages']}", r["pshift"]["max_per_pair"], r["speedup_pshift"],
                  r["speedup_ghosts"], r["speedup_pshift_cpu"], r["speedup_ghosts_cpu"], r["setup_s"],
                  "yes" if r["correct"] else "NO"] for r in rows])
    if comm.here() == 0:
        for k, per in fits.items():
            for w, f in per.items():
                if f:
                    print(f"{k} {w}: T = {f['a']:.3g} + {f['b']:.3g} L^(k-1) + {f['c']:.3g} L^k "
                          f"(relative rms residual {f['relative_rms_residual']:.2f})")
    out = args.out or f"results/pshift-{comm.num_locales()}.json"
    path = write_result("pshift", {"size": args.size, "locales": comm.num_locales(), "rows": rows, "fits": fits},
                        out)
    if args.plot and comm.here() == 0:
        plot(rows, args.plot)
    comm.barrier()                                  # the others wait for the plot (a slow import)
    if comm.here() == 0:
        print(f"wrote {path}" + (f" and {args.plot}" if args.plot else ""))
    return 0 if all(r["correct"] for r in rows) else 1

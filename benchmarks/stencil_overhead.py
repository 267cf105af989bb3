"""Per-statement run-time overhead of PolyBench's stencil statements.

Runs jacobi-2d's and fdtd-2d's statements (``pgas.tools.bench.polybench``) with
``fuse=True`` and reports, per statement, the fastest of many runs (robust to a
loaded machine): at a small size (``--n 64``) that is almost all Python around
the kernel; at LARGE (``--n 1300``) compare it with ``--kernel``, the fused kernel
alone (``fuse.evaluate`` of the statement's task, re-run with the same
arguments).  ``--profile`` prints a cProfile of the statements instead (locale 0).  ``--trace DIR``
then records a timeline of ``--trace-reps`` more runs of each statement (``pg.trace``;
summarise it with ``pgas trace DIR``); ``--only`` picks statements by name.

    pgas run -n 1 benchmarks/stencil_overhead.py --n 64
    pgas run -n 2 benchmarks/stencil_overhead.py --n 1300 --reps 30 --modes off,auto   (interior first or not)
    pgas run -n 2 benchmarks/stencil_overhead.py --n 1300 --reps 30 --kernel   (fdtd: --n 1200 --m 1000)
    pgas run -n 4 benchmarks/stencil_overhead.py --n 64 --checks off,auto   (collective checking's cost)
    python benchmarks/stencil_overhead.py --n 64 --profile
    pgas run -n 4 benchmarks/stencil_overhead.py --n 1024 --reps 20 --only jacobi --trace /tmp/tr && pgas trace /tmp/tr
    pgas run -n 2 benchmarks/stencil_overhead.py --n 64 --compiled   (steps plain and by pg.compile)

``--compiled`` times jacobi-2d's step (2 statements) and fdtd-2d's (4) called plainly,
compiled by ``pg.compile`` (recorded once, then replayed), compiled with every replayed
statement exchanging its own messages (``unmerged``: ``pgas.array.step.replay.MERGE`` off),
and the kernel calls the compiled step keeps alone (``kernels``: nothing but the calls),
in rotating order, and reports per statement the median and the fastest of each, with the
median of each round's ratios (compiled / plain, unmerged / plain, compiled / unmerged)
and of its compiled - kernels difference (the step's Python and messages per statement);
``--json FILE`` writes the figures.

Run the same command from two checkouts (``PYTHONPATH=OTHER``) one after the
other to compare them.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.array.step import replay
from pgas.comm import check
from pgas.exec import fuse, interior, persistent
from pgas.tools.bench.polybench import _dist, fdtd_init, fdtd_step, fdtd_steps, jacobi_init, jacobi_step


def statements(n: int, m: int) -> dict:
    """jacobi-2d's sweep at n x n, fdtd-2d's statements (its row fill ``ey[0, :] = fict[t]``,
    ey's, ex's, hz's) and step (4 statements) at m x n."""
    GA, GB = jacobi_init(n)
    A, B = _dist(GA), _dist(GB)
    ex, ey, hz = [_dist(G) for G in fdtd_init(m, n, 2)[:3]]

    def jacobi():
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])

    def fdtd_fill():
        ey[0, :] = 0.5

    def fdtd_ey():
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])

    def fdtd_ex():
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])

    def fdtd_hz():
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    def fdtd_step():
        fdtd_steps(ex, ey, hz, (0.5,), 1)
    return {"jacobi": jacobi, "fdtd fill": fdtd_fill, "fdtd ey": fdtd_ey, "fdtd ex": fdtd_ex, "fdtd hz": fdtd_hz, "fdtd step": fdtd_step}


def compare_compiled(n: int, m: int, reps: int, out: str | None) -> None:
    """Steps plain, compiled, and compiled with each statement exchanging its own messages
    (``unmerged``: :data:`pgas.array.step.replay.MERGE` off), in rotating order: per statement,
    median and fastest (slowest locale), and per step the median of each round's ratios."""
    GA, GB = jacobi_init(n)
    A, B = _dist(GA), _dist(GB)
    ex, ey, hz = [_dist(G) for G in fdtd_init(m, n, 2)[:3]]
    cases = {"jacobi-2d step": (jacobi_step, (A, B), 2), "fdtd-2d step": (fdtd_step, (ex, ey, hz, 0.5), 4)}
    hows = ("plain", "compiled", "unmerged", "kernels")
    times, kept = {}, {}
    for name, (fn, args, _) in cases.items():
        step, own = pg.compile(fn), pg.compile(fn)

        def unmerged(*a, own=own):
            replay.MERGE = False
            try:
                own(*a)
            finally:
                replay.MERGE = True
        runs = {"plain": fn, "compiled": step, "unmerged": unmerged}
        for _ in range(5):
            for f in runs.values():
                f(*args)
        runs["kernels"], kept[name] = kernel_calls(step)
        for r in range(reps):
            for how in hows[r % 4:] + hows[:r % 4]:
                times.setdefault((name, how), []).append(fastest(lambda: runs[how](*args), 1))
    res = {}
    for name, (_, _, k) in cases.items():
        x = res[name] = {"statements": k, "statements_by_kept_calls": kept[name]}
        for how in hows:
            t = sorted(times[name, how])
            x[f"{how}_median_us"], x[f"{how}_fastest_us"] = t[len(t) // 2] / k * 1e6, t[0] / k * 1e6
        for a, b in (("compiled", "plain"), ("unmerged", "plain"), ("compiled", "unmerged")):
            x[f"{a}_over_{b}"] = float(np.median([p / q for p, q in zip(times[name, a], times[name, b])]))
        x["compiled_minus_kernels_median_us"] = float(np.median(
            [p - q for p, q in zip(times[name, "compiled"], times[name, "kernels"])])) / k * 1e6
    if comm.here() == 0:
        print(f"{pg.num_locales} locales, n={n}, m={m}, {reps} rounds (plain, compiled, compiled unmerged and the "
              "compiled step's kept kernel calls alone, in rotating order), per statement median / fastest; "
              "ratios and differences: median of each round's")
        for name, x in res.items():
            print(f"  {name}: " + ", ".join(f"{h} {x[h + '_median_us']:.1f} / {x[h + '_fastest_us']:.1f} us"
                                            for h in hows))
            print(f"    compiled / plain {x['compiled_over_plain']:.3f}, unmerged / plain "
                  f"{x['unmerged_over_plain']:.3f}, compiled / unmerged {x['compiled_over_unmerged']:.3f}; "
                  f"compiled - kernels {x['compiled_minus_kernels_median_us']:.1f} us per statement "
                  f"({x['statements_by_kept_calls']} of {x['statements']} statements by kept kernel calls)")
        if out:
            with open(out, "w") as f:
                json.dump({"locales": pg.num_locales, "n": n, "m": m, "reps": reps, "steps": res}, f, indent=1)


def kernel_calls(step):
    """A function making the kernel calls that ``step``'s replays keep (its statements' kept
    repeats, :class:`pgas.exec.persistent.Kept`, also within the merged runs' repeats,
    :class:`pgas.exec.merged.Kept`), nothing else; and how many statements have them (0: the
    function does nothing)."""
    prog = next(iter(step.programs.values()))
    if prog.merging:
        kept = [k for u in prog.units if u[3] is not None for k, _, _, _ in u[3].steps]
    else:
        kept = [] if prog.kept is None else prog.kept[1]
    kept = [k for k in kept if isinstance(k, persistent.Kept)]
    calls = [c for k in kept for c in k.early + k.late]      # (a kept fill, KeptFill, calls no kernel)

    def run(*_):
        for kernel, args in calls:
            kernel(*args)
    return run, len(kept)


def fastest(f, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        comm.barrier()
        t = time.perf_counter()
        f()
        best = min(best, comm.allreduce(time.perf_counter() - t, "max"))
    return best


def back_to_back(f, reps: int) -> float:
    """The mean time of ``reps`` runs of ``f`` one after the other with no barrier between
    them (the slowest locale's), as a time-stepping loop runs them: one locale's delay
    reaches the others through the messages, which a barrier before each run would hide."""
    comm.barrier()
    t = time.perf_counter()
    for _ in range(reps):
        f()
    return comm.allreduce(time.perf_counter() - t, "max") / reps


def kernel_alone(f, reps: int) -> float:
    """The statement's fused tasks alone: fuse.evaluate re-run with the arguments it got."""
    got, orig = [], fuse.evaluate
    fuse.evaluate = lambda *a: (got.append(a), orig(*a))[1]
    try:
        f()
    finally:
        fuse.evaluate = orig
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        for a in got:
            orig(*a)
        best = min(best, time.perf_counter() - t)
    return float(comm.allreduce(best, "max"))


def set_checking(mode: str) -> None:
    """Collective checking ``"off"`` or ``"auto"`` (folded; at 2 locales or more), switched in
    place: the calls folded so far are agreed before folding stops."""
    if mode not in ("off", "auto"):
        raise SystemExit(f"--checks: off or auto, not {mode!r}")
    if mode == "off" and check.folding:
        check.agree_history()
    check.folding = mode == "auto" and pg.num_locales > 1


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=64, help="jacobi's n, fdtd's ny (LARGE: 1300, 1200)")
    p.add_argument("--m", type=int, default=None, help="fdtd's nx (default n; LARGE: 1000)")
    p.add_argument("--reps", type=int, default=500)
    p.add_argument("--kernel", action="store_true", help="also time the fused kernels alone")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--only", default=None, help="comma-separated statement names (default: all)")
    p.add_argument("--trace", default=None, metavar="DIR",
                   help="after timing, record a timeline of --trace-reps runs of each statement into DIR")
    p.add_argument("--trace-reps", type=int, default=20)
    p.add_argument("--modes", default=None,
                   help="comma-separated pgas.exec.interior.MODE values, timed in turn in the same job")
    p.add_argument("--checks", default=None,
                   help="comma-separated collective checking modes, off and/or auto (folded), timed in turn in "
                        "the same job (switched without pg.config, which would drop the recorded statements)")
    p.add_argument("--compiled", action="store_true", help="time the steps plain and compiled by pg.compile")
    p.add_argument("--json", default=None, metavar="FILE", help="with --compiled: write the figures here")
    p.add_argument("--no-gc", action="store_true", help="Python's cyclic garbage collector off while timing")
    args = p.parse_args()
    if args.no_gc:
        gc.disable()
    pg.config(fuse=True)
    if args.compiled:
        compare_compiled(args.n, args.m or args.n, args.reps, args.json)
        return
    stmts = statements(args.n, args.m or args.n)
    if args.only:
        stmts = {k: stmts[k] for k in args.only.split(",")}
    for f in stmts.values():
        for _ in range(5):
            f()
    if args.profile:
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(args.reps):
            for f in stmts.values():
                f()
        pr.disable()
        if comm.here() == 0:
            s = io.StringIO()
            pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(30)
            print(s.getvalue())
        return
    if args.modes or args.checks:
        modes = (args.modes or args.checks).split(",")
        best = {(name, m): float("inf") for name in stmts for m in modes}
        for r in range(args.reps):
            for m in modes if r % 2 == 0 else modes[::-1]:
                if args.modes:
                    interior.MODE = m
                else:
                    set_checking(m)
                for name, f in stmts.items():
                    best[name, m] = min(best[name, m], fastest(f, 1))
        if comm.here() == 0:
            print(f"{pg.num_locales} locales, n={args.n}, m={args.m or args.n}, fastest of {args.reps} per statement: "
                  + "; ".join(f"{name} [{m}]: {t * 1e6:.0f} us" for (name, m), t in best.items()))
            if args.checks and len(modes) == 2:
                print(f"{modes[1]} / {modes[0]}: " + "; ".join(
                    f"{name} {best[name, modes[1]] / best[name, modes[0]]:.3f}" for name in stmts))
        return
    rows = []
    for name, f in stmts.items():
        t = fastest(f, args.reps)
        b = back_to_back(f, args.reps)
        k = kernel_alone(f, args.reps) if args.kernel else float("nan")
        rows.append(f"{name}: {t * 1e6:.0f} us, back to back {b * 1e6:.0f} us"
                    + (f" (kernels {k * 1e6:.0f} us)" if args.kernel else ""))
    if comm.here() == 0:
        print(f"{pg.num_locales} locales, n={args.n}, m={args.m or args.n}, per statement the fastest of {args.reps} "
              f"(each after a barrier), and the mean of {args.reps} run back to back: " + "; ".join(rows))
    if args.trace:
        with pg.trace(args.trace):
            for f in stmts.values():
                for _ in range(args.trace_reps):
                    f()


if __name__ == "__main__":
    main()

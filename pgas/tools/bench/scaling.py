"""``pgas bench scaling``: strong and weak scaling of the benchmark kernels over locale counts.

``pgas bench scaling --locales 1,2,4,8,16 --kernels jacobi2d,fdtd2d,isx,randomaccess,stream,sort,matmul
[--mode strong|weak|both] [--size small|medium|large] [--reference DIR] [--json FILE] [--png FILE]
[--upc-tables]``
starts one job per locale count (``pgas run -n P``); each job runs every kernel in
every mode, verifies each result and appends its row to ``FILE.jobs/P.jsonl`` as
it finishes.  Strong scaling keeps the global size of :data:`SIZES`; weak scaling
keeps the size per locale (the global size grows with the work: ``P`` times the
elements of the 1-D kernels, ``sqrt(P)`` times the side of the 2-D stencils,
``P^(1/3)`` times matmul's ``n``).  Each kernel is the one its own benchmark times:

- ``jacobi2d``, ``fdtd2d``: PolyBench's jacobi-2d and fdtd-2d (:mod:`pgas.tools.bench.polybench`,
  ``n x n``, ``steps`` steps, Block rows), beside the hand-written mpi4py versions
  (:mod:`pgas.tools.bench.handmpi`) and, for jacobi-2d with ``--reference DIR``, the
  hand-written C + MPI ``DIR/jacobi2d_mpi`` run at the same locale count in the same job;
- ``isx``: ISx's SPMD bucket sort (:mod:`pgas.tools.bench.isx`), ``n`` keys;
- ``randomaccess``: HPCC RandomAccess, aggregated updates, a table of ``n`` words;
- ``stream``: STREAM triad on ``n`` float64 per array;
- ``sort``: ``pg.sort`` of ``n`` float64 keys;
- ``matmul``: ``A @ B`` of two ``n x n`` Block matrices.

Per kernel, implementation and count the result has the seconds (slowest
locale; of ``--trials`` trials the median for the stencils, the best for
stream, randomaccess, sort and matmul and the mean for isx, as their own
benchmarks report), the speedup over the smallest count (the rate, work
over seconds, as a ratio of the smallest count's: ``t(P0) / t(P)`` for strong
scaling, the scaled speedup for weak) and the parallel efficiency (speedup x
``P0 / P``); beside the stencils' other implementations, pgas's seconds over
theirs in the same job (``pgas / this``: above 1, pgas is slower).  ``--upc-tables`` runs
randomaccess and stream weakly scaled and prints them as the XL UPC paper's Tables 1 and 2
(GUPS, GB/s, memory per locale, efficiency ``T1 / (TP x P)``) beside its numbers
(:mod:`pgas.tools.bench.upcpaper`).  A run whose result is wrong is marked and makes the exit status 1.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time

#: The kernels, in the order they run.
KERNELS = ("jacobi2d", "fdtd2d", "isx", "randomaccess", "stream", "sort", "matmul")
MODES = ("strong", "weak")
#: The implementations, in the order they are reported: pgas, the hand-written mpi4py and C + MPI versions.
IMPLS = ("pgas", "hand_mpi4py", "c_mpi")
#: Each kernel's global size at one locale: the side n (jacobi2d, fdtd2d, matmul), keys
#: (isx, sort), table words (randomaccess, a power of two) or float64 per array (stream).
#: ``tiny`` is the tests'.
SIZES = {
    "tiny": {"jacobi2d": 24, "fdtd2d": 24, "isx": 1 << 10, "randomaccess": 1 << 10, "stream": 1 << 12,
             "sort": 1 << 12, "matmul": 32},
    "small": {"jacobi2d": 400, "fdtd2d": 400, "isx": 1 << 20, "randomaccess": 1 << 16, "stream": 1 << 22,
              "sort": 1 << 20, "matmul": 512},
    "medium": {"jacobi2d": 1300, "fdtd2d": 1200, "isx": 1 << 23, "randomaccess": 1 << 20, "stream": 1 << 24,
               "sort": 1 << 22, "matmul": 1024},
    "large": {"jacobi2d": 2800, "fdtd2d": 2400, "isx": 1 << 25, "randomaccess": 1 << 23, "stream": 1 << 26,
              "sort": 1 << 24, "matmul": 2048},
}
#: Time steps of the stencils per size.
STEPS = {"tiny": 2, "small": 20, "medium": 50, "large": 100}
#: Weak scaling: the global size grows as P^(1/GROW) (the work is the size to the power GROW).
GROW = {"jacobi2d": 2, "fdtd2d": 2, "matmul": 3}
DRIVER = True          # pgas bench runs main() here, outside MPI: it starts one job per locale count
LOCALES = 4


def problem(kernel: str, size: str, mode: str, P: int) -> dict:
    """The global size ``n``, the steps and the work (``n^GROW x steps``) of ``kernel`` on ``P`` locales.

    >>> problem("jacobi2d", "small", "weak", 4), problem("stream", "small", "strong", 3)["n"]
    ({'n': 800, 'steps': 20, 'work': 12800000}, 4194303)
    >>> problem("randomaccess", "small", "weak", 6)["n"] == 4 * 2 ** 16
    True
    """
    base, grow = SIZES[size][kernel], GROW.get(kernel, 1)
    if mode == "strong":
        n = base
    elif kernel == "randomaccess":                     # a power of two: the largest not above P x base
        n = base << (P.bit_length() - 1)
    else:
        n = round(base * P ** (1 / grow))
    if kernel == "stream":
        n -= n % P                                     # the same elements on every locale
    steps = STEPS[size] if kernel in ("jacobi2d", "fdtd2d") else 1
    return {"n": int(n), "steps": steps, "work": int(n) ** grow * steps}


# -- in a job: one kernel at one size, every implementation, each verified ---------------------------------
def _stencil(name: str, n: int, steps: int, trials: int, ref: str | None) -> dict:
    from pgas.comm import runtime
    from pgas.tools.bench import handmpi, polybench, reference

    poly = {"jacobi2d": "jacobi-2d", "fdtd2d": "fdtd-2d"}[name]
    sizes = {"jacobi-2d": (n, steps), "fdtd-2d": ((n, n), max(steps, polybench.WARM))}   # fict: the warm-up too
    r = polybench.run_kernel(poly, steps, True, sizes=sizes, trials=trials)
    out = {"pgas": {"seconds": r["seconds"], "trial_seconds": r["trial_seconds"], "verified": r["verified"]}}
    times, ok = [], True
    for _ in range(trials):
        if name == "jacobi2d":
            got, sec, msgs = handmpi.jacobi2d_polybench(n, steps)
            arrays = [got["A"], got["B"]]
        else:
            got, sec, msgs = handmpi.fdtd2d(n, steps, [G.copy() for G in polybench.fdtd_init(n, n, steps)[:3]])
            arrays = [got["ex"], got["ey"], got["hz"]]
        times.append(sec * steps)
        ok &= [float(a.sum()) for a in arrays] == r["sums"]      # pgas's sums are NumPy's, exactly
    out["hand_mpi4py"] = {"seconds": statistics.median(times), "trial_seconds": times, "verified": bool(ok),
                          "messages_per_step": msgs}
    if name == "jacobi2d" and ref:
        P = runtime.comm().Get_size()
        times, ok = [], True
        for _ in range(trials):
            res = reference.run([reference.mpiexec(), "-n", P, os.path.join(ref, "jacobi2d_mpi"), n, steps])
            try:
                line = json.loads(res["stdout"].strip().splitlines()[-1])
            except (ValueError, IndexError):
                line = {}
            times.append(line.get("seconds", math.nan))
            ok &= res["returncode"] == 0 and math.isclose(line.get("sum", math.nan), r["sums"][0], rel_tol=1e-9)
        out["c_mpi"] = {"seconds": statistics.median(times), "trial_seconds": times, "verified": bool(ok)}
    return out


def _others(name: str, n: int, trials: int) -> dict:
    import numpy as np

    import pgas as pg
    from pgas import comm
    from pgas.tools.bench import isx, matmul, randomaccess, sortbench, stream, time_trials

    P = pg.num_locales
    if name == "isx":
        per = max(n // P, 1)
        keys = isx.make_keys(per, per, P, comm.here())
        r = isx.run_style("spmd", keys, per, trials, 1)
        return {"seconds": r["total_seconds_mean"], "verified": r["verified"]}
    if name == "randomaccess":
        T = randomaccess.make_table(n)
        randomaccess.run_aggregated(T, randomaccess.WARMUP_BLOCKS)
        runs = [randomaccess.measure(T, "aggregated") for _ in range(trials)]
        return {"seconds": min(r["seconds"] for r in runs), "trial_seconds": [r["seconds"] for r in runs],
                "verified": all(r["verified"] for r in runs)}
    if name == "stream":
        best, check = stream.run_pgas(n // P, trials, 1)
        return {"seconds": best["triad"], "verified": check["verified"]}
    if name == "sort":
        A = pg.random.default_rng(0).random(n)
        ok = sortbench.verify(A, pg.sort(A))
        t = time_trials(lambda: pg.sort(A), trials, 1)
        return {"seconds": t.min, "trial_seconds": list(t.times), "verified": ok}
    r = matmul.run_one(n, "Block", "Block", "owner-computes", trials, 1, np.nan)
    return {"seconds": r["seconds"], "trial_seconds": r["times"], "verified": r["correct"]}


def run_one(c: dict, trials: int, ref: str | None) -> dict:
    """Collective: configuration ``c`` (kernel, mode, n, steps, work) measured: its row."""
    import pgas as pg

    if c["kernel"] in ("jacobi2d", "fdtd2d"):
        impls = _stencil(c["kernel"], c["n"], c["steps"], trials, ref)
    else:
        impls = {"pgas": _others(c["kernel"], c["n"], trials)}
    return {**c, "locales": pg.num_locales, "impls": impls}


def run_job(path: str, out: str, trials: int, ref: str | None) -> int:
    """Collective (in a job): the configurations in JSON file ``path``, each row appended to the
    JSON-lines file ``out`` as it is measured (a strong and a weak run of the same size run once)."""
    from pgas import comm
    from pgas.tools.bench import ProgressBar
    from pgas.tools.bench.suite import drop_cut_line

    with open(path) as f:
        todo = json.load(f)
    if comm.here() == 0:
        drop_cut_line(out)
    bar = ProgressBar(len(todo), f"{comm.num_locales()} locale(s)")
    done, ok = {}, True
    for c in todo:
        key = (c["kernel"], c["n"], c["steps"])
        row = dict(done[key], mode=c["mode"]) if key in done else run_one(c, trials, ref)
        done[key] = row
        ok &= all(i["verified"] for i in row["impls"].values())
        if comm.here() == 0:
            with open(out, "a") as f:
                f.write(json.dumps({"config": c, "row": row}) + "\n")
        bar.step(f"{c['mode']} {c['kernel']} n={c['n']}")
    bar.close()
    return 0 if ok else 1


# -- outside MPI: the sweep, the figures --------------------------------------------------------------------
def summarise(rows: list[dict]) -> list[dict]:
    """One entry per mode, kernel, implementation and locale count: seconds, speedup over the
    smallest count measured for it, parallel efficiency (see the module docstring) and
    ``pgas_over_this``, pgas's seconds over this implementation's in the same job.

    >>> rows = [{"mode": "strong", "kernel": "k", "locales": P, "n": 8, "steps": 1, "work": 8,
    ...          "impls": {"pgas": {"seconds": s, "verified": True}}} for P, s in ((1, 4.0), (2, 2.5))]
    >>> [(e["locales"], e["speedup"], e["efficiency"]) for e in summarise(rows)]
    [(1, 1.0, 1.0), (2, 1.6, 0.8)]
    """
    out = []
    for r in rows:
        for impl, m in r["impls"].items():
            out.append({"mode": r["mode"], "kernel": r["kernel"], "impl": impl, "locales": r["locales"],
                        "n": r["n"], "steps": r["steps"], "work": r["work"], "seconds": m["seconds"],
                        "verified": m["verified"]})
    out.sort(key=lambda e: (MODES.index(e["mode"]), KERNELS.index(e["kernel"]) if e["kernel"] in KERNELS else 99,
                            IMPLS.index(e["impl"]), e["locales"]))
    pgas = {(e["mode"], e["kernel"], e["locales"]): e["seconds"] for e in out if e["impl"] == "pgas"}
    first: dict = {}
    for e in out:
        mine = pgas.get((e["mode"], e["kernel"], e["locales"]))
        e["pgas_over_this"] = mine / e["seconds"] if mine and e["seconds"] else math.nan
        base = first.setdefault((e["mode"], e["kernel"], e["impl"]), e)
        rate, rate0 = e["work"] / e["seconds"] if e["seconds"] else math.nan, \
            base["work"] / base["seconds"] if base["seconds"] else math.nan
        e["speedup"] = rate / rate0
        e["efficiency"] = e["speedup"] * base["locales"] / e["locales"]
    return out


HEADERS = ["mode", "kernel", "impl", "locales", "n", "seconds", "speedup", "efficiency", "pgas / this", "verified"]


def table_rows(summary: list[dict]) -> list[list]:
    return [[e["mode"], e["kernel"], e["impl"], e["locales"], e["n"], e["seconds"], e["speedup"], e["efficiency"],
             e["pgas_over_this"], "yes" if e["verified"] else "NO"] for e in summary]


def _counts(text: str) -> list[int]:
    try:
        counts = sorted({int(s) for s in text.split(",") if s.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects comma-separated whole numbers, got {text!r}") from None
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError(f"expects locale counts >= 1, got {text!r}")
    return counts


def counts_up_to(n: int) -> list[int]:
    """The powers of two below ``n``, and ``n``: the counts ``-n N`` sweeps.

    >>> counts_up_to(16), counts_up_to(6), counts_up_to(1)
    ([1, 2, 4, 8, 16], [1, 2, 4, 6], [1])
    """
    return [1 << k for k in range(n.bit_length()) if 1 << k < n] + [n]


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    from pgas.tools.bench import _positive, choices, plain

    p = argparse.ArgumentParser(prog="pgas bench scaling", description=plain(__doc__.split("\n\n")[0]),
                                epilog="One job per locale count; the JSON has every run, the table and plot "
                                       "its seconds, speedup and efficiency.")
    p.add_argument("--locales", type=_counts, default=None, metavar="LIST",
                   help="comma-separated locale counts, one job each (default 1,2,4)")
    p.add_argument("-n", type=_positive, default=None, metavar="N",
                   help="number of locales of the largest job: the counts are 1, 2, 4, ... up to N, and N "
                        "(instead of --locales)")
    p.add_argument("--kernels", type=choices(KERNELS), default=list(KERNELS), metavar="LIST",
                   help=f"comma-separated from {', '.join(KERNELS)} (default all)")
    p.add_argument("--mode", choices=("strong", "weak", "both"), default="both",
                   help="strong (fixed global size), weak (fixed size per locale) or both (default)")
    p.add_argument("--size", choices=tuple(SIZES), default="small",
                   help="problem sizes (default small; tiny is the tests')")
    p.add_argument("--trials", type=int, default=3, metavar="T", help="timed trials per run (default 3)")
    p.add_argument("--reference", default=None, metavar="DIR",
                   help="folder of the reference build holding jacobi2d_mpi (hand-written C + MPI), run beside "
                        "jacobi2d at each count")
    p.add_argument("--upc-tables", action="store_true",
                   help="the XL UPC paper's Tables 1 and 2: randomaccess and stream, weak scaling only, with GUPS, "
                        "GB/s, memory per locale and efficiency T1 / (TP x P) beside the paper's numbers")
    p.add_argument("--json", default="results/scaling.json", metavar="FILE", help="JSON results (default %(default)s)")
    p.add_argument("--png", default=None, metavar="FILE", help="plot time and efficiency vs locales (matplotlib)")
    p.add_argument("--timeout", type=float, default=None, metavar="S", help="seconds allowed per job (default none)")
    p.add_argument("--job", default=None, help=argparse.SUPPRESS)       # internal: run one job's configurations
    p.add_argument("--out", default=None, help=argparse.SUPPRESS)       # internal: the job's rows
    return p


def main(argv=None) -> int:
    """Run the sweep; see the module docstring."""
    p = make_parser()
    args = p.parse_args(argv)
    if args.trials < 1:
        p.error(f"--trials must be >= 1, got {args.trials}")
    if args.n and args.locales:
        p.error("give the locale counts either as --locales LIST or as -n N, not both")
    args.locales = args.locales or (counts_up_to(args.n) if args.n else [1, 2, 4])
    if args.job:
        return run_job(args.job, args.out, args.trials, args.reference)
    from pgas.tools.launch.launcher import launch, under_launcher

    if under_launcher():
        p.error("run pgas bench scaling outside pgas run / mpiexec: it starts one job per locale count itself")
    ref = os.path.abspath(args.reference) if args.reference else None
    if ref and not os.access(os.path.join(ref, "jacobi2d_mpi"), os.X_OK):
        p.error(f"--reference {args.reference}: no executable jacobi2d_mpi there (build the reference codes "
                "into it, see docs/benchmarks.md)")
    if args.png:
        from pgas.plan.draw import MissingMatplotlib, pyplot
        try:
            pyplot()
        except MissingMatplotlib as e:
            p.error(f"--png: {e}")
    if args.upc_tables:
        args.kernels, args.mode = [k for k in args.kernels if k in ("randomaccess", "stream")] or \
            ["randomaccess", "stream"], "weak"
    modes = MODES if args.mode == "both" else (args.mode,)
    jobdir = os.path.splitext(os.path.abspath(args.json))[0] + ".jobs"
    os.makedirs(jobdir, exist_ok=True)
    from pgas.tools.bench.suite import load_rows

    rows, failed, t0 = [], [], time.time()
    for k, P in enumerate(args.locales):
        todo = [dict(kernel=kern, mode=m, **problem(kern, args.size, m, P)) for kern in args.kernels for m in modes]
        path, raw = os.path.join(jobdir, f"{P}.json"), os.path.join(jobdir, f"{P}.jsonl")
        with open(path, "w") as f:
            json.dump(todo, f)
        if os.path.exists(raw):
            os.remove(raw)
        print(f"[scaling] job {k + 1}/{len(args.locales)}: {P} locale(s), {len(todo)} runs", file=sys.stderr,
              flush=True)
        status = launch(P, ["-m", "pgas.tools.bench", "scaling", "--job", path, "--out", raw,
                            "--trials", str(args.trials)] + (["--reference", ref] if ref else []), args.timeout)
        if status:
            failed.append(f"the job on {P} locale(s) ended with status {status}")
        rows += load_rows(raw)[1]
    summary = summarise(rows)
    from pgas.tools.bench import environment_plain, format_table

    data = {"benchmark": "scaling", "environment": environment_plain(), "size": args.size, "modes": list(modes),
            "locales": args.locales, "kernels": args.kernels, "trials": args.trials, "reference": ref,
            "seconds": round(time.time() - t0, 1), "runs": rows, "summary": summary, "failures": failed,
            "verified": bool(rows) and all(e["verified"] for e in summary) and not failed}
    if args.upc_tables:
        from pgas.tools.bench import upcpaper

        data["upc_tables"] = [dict(zip(upcpaper.HEADERS, r)) for r in upcpaper.table_rows(summary)]
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(f"Scaling ({', '.join(modes)}, {args.size} sizes) over {args.locales} locales; seconds: median of "
          f"{args.trials} trials, slowest locale; speedup and efficiency against {args.locales[0]} locale(s)")
    print(format_table(HEADERS, table_rows(summary)))
    if args.upc_tables:
        print("\nXL UPC paper, Tables 1 (RandomAccess, GUPS) and 2 (STREAM triad, GB/s), weak scaling; "
              "paper: Blue Gene/L, one thread per processor")
        print(format_table(upcpaper.HEADERS, upcpaper.table_rows(summary)))
    written = [args.json]
    if args.png:
        from pgas.tools.bench.figures import scaling_plot

        written.append(scaling_plot(summary, args.png))
    print(f"wrote {', '.join(written)}")
    for e in summary:
        if not e["verified"]:
            print(f"ERROR: {e['mode']} {e['kernel']} ({e['impl']}) on {e['locales']} locales: wrong result",
                  file=sys.stderr)
    for line in failed:
        print(f"ERROR: {line}", file=sys.stderr)
    return 0 if data["verified"] else 1

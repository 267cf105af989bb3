"""``pgas bench suite``: the modulo-unrolling paper's evaluation (Figures 11-23) in one command.

``pgas bench suite --out DIR [--preset small|paper] [--locales N]`` starts one
job per locale count (``pgas run -n P``); each job appends every run to
``DIR/raw/P.jsonl`` as it finishes (``--resume`` reruns only what is missing
there, after a timeout or a kill).  The suite then writes every run to
``DIR/results.json``, then ``DIR/report.md`` with its tables and PNG plots
(``pip install 'pgas[plot]'``; ``pgas report DIR`` rebuilds both from the JSON).
The studies (each run checked against NumPy, see :mod:`pgas.tools.bench.measure`):

- ``kernels`` (Figures 11-13): every kernel on Block, Cyclic and
  BlockCyclic(4), baseline vs aggregated vs auto, on N locales.
- ``strong`` (Figures 14-17): :data:`SCALING` kernels at a fixed size on 1..N locales.
- ``weak`` (Figures 18-21): the same kernels at several sizes on N locales.
- ``blocksize`` (Figures 22-23): the 1-D ones on BlockCyclic of several block sizes.
- ``planned``: messages per step of the same kernels on 16..1024 locales by
  planning alone (``pg.explain``), past the locales this machine has.

The ``small`` preset runs in a few minutes on a 2-core machine; ``paper`` uses
Figure 11's sizes and the paper's 8 locales (sizes to x4 for weak scaling).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

#: The kernels of the scaling studies (Figures 14-23).
SCALING = ("pascal", "folding", "jacobi2D", "fdtd-2d", "jacobi1D")
PRESETS = {
    "small": {"size": "small", "locales": 4, "steps": 2, "weak": (0.25, 0.5, 1.0, 2.0),
              "blocks": (1, 2, 4, 8, 16, 32), "planned": (16, 64, 256, 1024), "plan_size": "bench"},
    "paper": {"size": "paper", "locales": 8, "steps": 5, "weak": (0.25, 0.5, 1.0, 2.0, 4.0),
              "blocks": (1, 2, 4, 8, 16, 32, 64, 128), "planned": (16, 32, 64, 128, 256, 512, 1024),
              "plan_size": "paper"},
}
STUDIES = ("kernels", "strong", "weak", "blocksize", "planned")
DRIVER = True          # pgas bench runs main() here, outside MPI: it starts its own jobs
LOCALES = 4


def configs(preset: str, locales: int, kernels, studies) -> dict[int, list[dict]]:
    """The suite's runs, grouped by the locale count of the job that runs them.

    >>> jobs = configs("small", 2, ["jacobi1D", "mvt"], ["kernels", "strong", "planned"])
    >>> sorted(jobs), len(jobs[2]), sorted({c["study"] for c in jobs[1]})
    ([1, 2], 22, ['planned', 'strong'])
    >>> sum(c["study"] == "planned" for c in jobs[1])       # 3 distributions x 4 counts, jacobi1D only
    12
    """
    from pgas.tools.bench.kernels import KERNELS
    from pgas.tools.bench.measure import DISTS, MODES, size_of

    pre = PRESETS[preset]
    jobs: dict[int, list[dict]] = {}

    def add(P, **c):
        jobs.setdefault(P, []).append(c)

    scaling = [k for k in kernels if k in SCALING]
    for k in kernels:
        n = size_of(KERNELS[k], pre["size"])
        for study in studies:
            if study == "kernels":
                for d in DISTS:
                    for m in MODES:
                        add(locales, study=study, kernel=k, n=n, dist=d, block=4 if d == "BlockCyclic" else None,
                            mode=m)
            elif study == "planned" and k in SCALING:
                pn = size_of(KERNELS[k], pre["plan_size"])
                for d in DISTS:
                    for P in pre["planned"]:
                        add(1, study=study, kernel=k, n=pn, dist=d, block=4 if d == "BlockCyclic" else None,
                            locales=P, mode="aggregated")
            elif k in scaling:
                if study == "strong":
                    for P in range(1, locales + 1):
                        for d, b in (("Cyclic", None), ("BlockCyclic", 4)):
                            for m in ("baseline", "aggregated"):
                                add(P, study=study, kernel=k, n=n, dist=d, block=b, mode=m)
                elif study == "weak":
                    for f in pre["weak"]:
                        for d, b in (("Cyclic", None), ("BlockCyclic", 16)):
                            for m in ("baseline", "aggregated"):
                                add(locales, study=study, kernel=k, n=max(KERNELS[k].tiny, int(n * f)), dist=d,
                                    block=b, mode=m)
                elif study == "blocksize" and k in ("pascal", "folding", "jacobi1D"):
                    for b in pre["blocks"]:
                        for m in ("baseline", "aggregated"):
                            add(locales, study=study, kernel=k, n=n, dist="BlockCyclic", block=b, mode=m)
    return jobs


def run_job(path: str, out: str, steps: int) -> int:
    """Collective (in a job): run the configurations in JSON file ``path``, appending each
    run's row to the JSON-lines file ``out`` as soon as it is measured (so a job that is
    killed or times out keeps what it finished; see :func:`load_rows`)."""
    from pgas import comm
    from pgas.tools.bench import ProgressBar
    from pgas.tools.bench.kernels import KERNELS
    from pgas.tools.bench.measure import dist_label, measure, planned

    with open(path) as f:
        todo = json.load(f)
    if comm.here() == 0:
        drop_cut_line(out)
    correct = True
    bar = ProgressBar(len(todo), f"{comm.num_locales()} locale(s)")
    for c in todo:
        kernel = KERNELS[c["kernel"]]
        if c["study"] == "planned":
            row = planned(kernel, c["n"], c["dist"], c["block"], c["locales"], c["mode"])
        else:
            row = measure(kernel, c["n"], c["dist"], c["block"], c["mode"], steps)
        correct &= row.get("correct", True)
        if comm.here() == 0:
            with open(out, "a") as f:
                f.write(json.dumps({"config": c, "row": {"study": c["study"], **row}}) + "\n")
        bar.step(f"{c['study']} {c['kernel']} {dist_label(c['dist'], c['block'])} {c['mode']}")
    bar.close()
    return 0 if correct else 1


def drop_cut_line(out: str) -> None:
    """Remove a last line that a killed job left without its newline, so the rows
    appended next start on a line of their own."""
    if not os.path.exists(out):
        return
    with open(out, "rb+") as f:
        data = f.read()
        if data and not data.endswith(b"\n"):
            f.truncate(data.rfind(b"\n") + 1)


def load_rows(out: str) -> tuple[list[dict], list[dict]]:
    """``(configurations, rows)`` finished in the JSON-lines file ``out`` (none if absent);
    a last line cut short by a killed job is skipped."""
    configs_done, rows = [], []
    if os.path.exists(out):
        with open(out) as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                configs_done.append(rec["config"])
                rows.append(rec["row"])
    return configs_done, rows


def make_parser():
    """The suite's argument parser (no MPI needed)."""
    from pgas.tools.bench.kernels import KERNELS

    p = argparse.ArgumentParser(prog="pgas bench suite", description=__doc__.split("\n\n")[0].split(": ", 1)[1],
                                epilog="pgas report DIR rebuilds the report and plots from DIR/results.json.")
    p.add_argument("-n", "--locales", dest="n", type=int, default=None, metavar="N",
                   help="number of locales of the largest job (default: the preset's, 4 small, 8 paper)")
    p.add_argument("--out", default="results/suite", metavar="DIR", help="output folder (default %(default)s)")
    p.add_argument("--preset", choices=sorted(PRESETS), default="small", help="sizes and counts (default small)")
    p.add_argument("--kernels", default=",".join(KERNELS), metavar="LIST",
                   help="comma-separated kernels (default all registered)")
    p.add_argument("--studies", default=",".join(STUDIES), metavar="LIST",
                   help=f"comma-separated studies from {', '.join(STUDIES)} (default all)")
    p.add_argument("--steps", type=int, default=None, metavar="S", help="timed steps per run (default: the preset's)")
    p.add_argument("--timeout", type=float, default=None, metavar="S", help="seconds allowed per job (default none)")
    p.add_argument("--no-plots", action="store_true", help="write the Markdown report without PNG plots")
    p.add_argument("--resume", action="store_true",
                   help="keep the runs DIR already holds (from an interrupted suite) and run only the others")
    p.add_argument("--job", default=None, help=argparse.SUPPRESS)       # internal: run one job's configurations
    return p


def _check(args, p) -> tuple[list[str], list[str]]:
    from pgas.tools.bench.kernels import KERNELS

    kernels = [k for k in args.kernels.split(",") if k]
    studies = [s for s in args.studies.split(",") if s]
    for bad, names, what in (([k for k in kernels if k not in KERNELS], KERNELS, "kernel"),
                             ([s for s in studies if s not in STUDIES], STUDIES, "study")):
        if bad or not (kernels if what == "kernel" else studies):
            p.error(f"unknown {what} {', '.join(bad) or '(empty list)'}; choose from {', '.join(names)}")
    if args.n is not None and args.n < 1:
        p.error(f"--locales must be >= 1, got {args.n}")
    if args.steps is not None and args.steps < 1:
        p.error(f"--steps must be >= 1, got {args.steps}")
    return kernels, studies


def main(argv=None) -> int:
    """Run the suite; see the module docstring."""
    p = make_parser()
    args = p.parse_args(argv)
    steps = args.steps or PRESETS[args.preset]["steps"]
    if args.job:
        name = os.path.splitext(os.path.basename(args.job))[0] + ".jsonl"
        return run_job(args.job, os.path.join(args.out, "raw", name), steps)
    from pgas.tools.launch.launcher import launch, under_launcher

    if under_launcher():
        p.error("run pgas bench suite outside pgas run / mpiexec: it starts one job per locale count itself")
    kernels, studies = _check(args, p)
    N = args.n or PRESETS[args.preset]["locales"]
    # the steps are part of each configuration, so --resume never keeps rows of other steps
    jobs = {P: [dict(c, steps=steps) for c in cs] for P, cs in configs(args.preset, N, kernels, studies).items()}
    for sub in ("jobs", "raw"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)
    rows, failed, t0 = [], [], time.time()
    for k, P in enumerate(sorted(jobs)):
        path = os.path.abspath(os.path.join(args.out, "jobs", f"{P}.json"))
        raw = os.path.join(args.out, "raw", f"{P}.jsonl")
        if not args.resume and os.path.exists(raw):
            os.remove(raw)
        done, _ = load_rows(raw)
        todo = [c for c in jobs[P] if c not in done]
        print(f"[suite] job {k + 1}/{len(jobs)}: {P} locale(s), {len(todo)} runs"
              + (f" ({len(jobs[P]) - len(todo)} kept)" if len(todo) < len(jobs[P]) else ""), file=sys.stderr, flush=True)
        if todo:
            with open(path, "w") as f:
                json.dump(todo, f)
            status = launch(P, ["-m", "pgas.tools.bench", "suite", "--job", path, "--out", os.path.abspath(args.out),
                                "--steps", str(steps)], args.timeout)
            if status:
                failed.append(f"the job on {P} locale(s) ended with status {status}")
        done, got = load_rows(raw)
        rows += [r for c, r in zip(done, got) if c in jobs[P]]
    from pgas.tools.bench import environment_plain
    from pgas.tools.bench.report import PlotsUnavailable, build

    data = {"benchmark": "suite", "environment": environment_plain(), "preset": args.preset, "locales": N,
            "steps": steps, "seconds": round(time.time() - t0, 1), "runs": rows, "failures": failed}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    try:
        written = build(args.out, plots=not args.no_plots)
    except PlotsUnavailable as e:
        print(f"[suite] no plots: {e}", file=sys.stderr)
        written = build(args.out, plots=False)
    print(f"wrote {os.path.join(args.out, 'results.json')} and {', '.join(written)}")
    wrong = [r for r in rows if r.get("correct") is False]
    for r in wrong:
        print(f"ERROR: {r['kernel']} n={r['n']} {r['dist']} {r['mode']} on {r['locales']} locales differs from NumPy",
              file=sys.stderr)
    for line in failed:
        print(f"ERROR: {line}", file=sys.stderr)
    return 1 if wrong or failed else 0

"""``pgas bench nas``: NAS Parallel Benchmarks CG, MG, FT and IS written with pgas, verified by NPB's rules.

Each kernel is a module (CG: :mod:`pgas.tools.bench.cg`, IS:
:mod:`pgas.tools.bench.nas_is`, MG: :mod:`pgas.tools.bench.nas_mg`, FT:
:mod:`pgas.tools.bench.nas_ft`) with a
``run_class(name, trials)`` giving Mop/s by NAS's operation count and NPB's
verification.  ``--reference DIR`` runs NPB 3.4 MPI's binary ``DIR/KERNEL.CLASS.x``
(built as ``docs/benchmarks.md`` (Reference codes) describes) in the same job, with
as many processes as locales (a power of two, NPB's rule), after pgas's trials of
that class; its Mop/s and verification are printed beside pgas's with their ratio.
``--variants blocking,optimised`` runs each kernel under ``pg.config(nonblocking=False)``
(the Berkeley UPC paper's Figure 5 baseline, "manually vectorized blocking communication":
aggregated messages, none overlapped) and with the optimised runtime, and reports
optimised / blocking (the paper's ``P_OPT / P_BASE``).
"""

from __future__ import annotations

import importlib
import os
import re

import pgas as pg
from pgas import comm
from pgas.exec import settings
from pgas.tools.bench import choices, parser, print_table, progress, reference, write_result

#: Kernel -> module; each has ``CLASSES`` and ``run_class(name, trials)``.
KERNELS = {"cg": "pgas.tools.bench.cg", "mg": "pgas.tools.bench.nas_mg", "ft": "pgas.tools.bench.nas_ft",
           "is": "pgas.tools.bench.nas_is"}
CLASS_NAMES = ("S", "W", "A", "B", "C")
#: Variant -> its ``pg.config`` settings.
VARIANTS = {"optimised": {"nonblocking": True}, "blocking": {"nonblocking": False}}
LOCALES = 2


def kernel(name: str):
    """The module of NAS kernel ``name``."""
    return importlib.import_module(KERNELS[name])


def run_npb(folder: str, name: str, cls: str) -> dict:
    """Collective: NPB 3.4 MPI ``name`` (cg, mg, ft, is) class ``cls`` at this job's process
    count, from ``folder/name.cls.x`` (``folder`` may be a path to a file in it); its
    Mop/s, seconds and verification."""
    folder = folder if os.path.isdir(folder) else os.path.dirname(folder)
    exe = os.path.join(folder, f"{name}.{cls}.x")
    progress(f"reference: {exe}")
    res = reference.run([reference.mpiexec(), "-n", pg.num_locales, exe])
    out = res["stdout"]
    return dict(res, mops=reference.number(r"Mop/s total\s*=\s*([0-9.]+)", out),
                seconds=reference.number(r"Time in seconds\s*=\s*([0-9.]+)", out),
                verified=bool(re.search(r"Verification\s*=\s*SUCCESSFUL", out)))


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("nas", __doc__.split("\n\n")[0], warmup=False)
    p.add_argument("--kernels", type=choices(KERNELS), default=list(KERNELS), metavar="LIST",
                   help=f"comma-separated NAS kernels from {', '.join(KERNELS)} (default all)")
    p.add_argument("--classes", type=choices(CLASS_NAMES), default=["S", "W"], metavar="LIST",
                   help="comma-separated NAS classes (default S,W; each kernel runs those it has)")
    p.add_argument("--reference", default=None, metavar="DIR",
                   help="folder of NPB 3.4 MPI binaries KERNEL.CLASS.x, run in the same job for comparison")
    p.add_argument("--variants", type=choices(VARIANTS), default=["optimised"], metavar="LIST",
                   help="comma-separated from blocking (pg.config(nonblocking=False)) and optimised (default)")
    p.set_defaults(trials=3)
    return p


def main(argv: list[str]) -> int:
    args = make_parser().parse_args(argv)
    results = []
    for k in args.kernels:
        mod = kernel(k)
        for c in args.classes:
            if c not in mod.CLASSES:
                progress(f"{k} has no class {c}: skipped")
                continue
            runs = {}
            for v in args.variants:
                progress(f"{k} class {c}, {v}: {args.trials} trials")
                was = {s: settings.get(s) for s in VARIANTS[v]}
                pg.config(**VARIANTS[v])
                try:
                    runs[v] = dict(mod.run_class(c, args.trials), kernel=k, variant=v)
                finally:
                    pg.config(**was)
            r = runs.get("optimised", runs[args.variants[-1]])    # the row compared with NPB
            if len(runs) > 1:
                r = dict(r, variants=runs)
                if "blocking" in runs and "optimised" in runs:
                    r["optimised_over_blocking"] = runs["optimised"]["mops"] / runs["blocking"]["mops"]
            if args.reference:
                r["reference"] = run_npb(args.reference, k, c)
                ref = r["reference"]["mops"]
                r["pgas_over_npb"] = r["mops"] / ref if ref else None
            results.append(r)
    ok = all(all(x["verified"] for x in r.get("variants", {}).values()) for r in results) and \
        all(r["verified"] and (not args.reference or r["reference"]["verified"]) for r in results)
    path = write_result("nas", {"results": results, "verified": ok}, args.out)
    if comm.here() == 0:
        print(f"NAS kernels, {pg.num_locales} locales; best of {args.trials} runs")
    ref_cols = ["NPB Mop/s", "NPB verified", "pgas / NPB"] if args.reference else []
    if len(args.variants) > 1:
        print_table(["kernel", "class", *(f"{v} Mop/s" for v in args.variants), "optimised / blocking"],
                    [[r["kernel"], r["class"], *(r["variants"][v]["mops"] for v in args.variants),
                      r.get("optimised_over_blocking", float("nan"))] for r in results])
    print_table(["kernel", "class", "seconds", "Mop/s", "verification", *ref_cols],
                [[r["kernel"], r["class"], r["seconds"], r["mops"],
                  "SUCCESSFUL" if r["verified"] else "UNSUCCESSFUL",
                  *([r["reference"]["mops"], "yes" if r["reference"]["verified"] else "NO",
                     r["pgas_over_npb"] if r["pgas_over_npb"] is not None else float("nan")]
                    if args.reference else [])] for r in results])
    if comm.here() == 0:
        print(f"results written to {path}")
    return 0 if ok else 1

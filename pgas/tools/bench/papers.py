"""``pgas bench papers``: the five papers' tables and measured figures regenerated in one job, beside the papers' numbers.

``pgas bench papers [-n 2] [--quick | --size tiny|quick|full] [--out DIR]
[--reference DIR]`` runs, one after another in one job, the benchmarks that
regenerate pgas's column of the "Reproducing the papers" page
(``docs/papers.md``), each writing ``DIR/NAME.json``:

- ``pshift``: the polyshift paper's Tables 1-4, eq. (1) fitted, Figures 8-11
  (``DIR/figures``, when matplotlib is installed);
- ``stmt``: the modulo-unrolling paper's Figures 12-13 (geometric means of
  messages and time, aggregated over baseline, Cyclic and Block-Cyclic);
- ``nas``: NAS CG, MG, FT and IS, verified (the loops-with-communication
  paper's Figure 5, the XL UPC paper's Figure 4 for CG);
- ``protocols``: packed vs pipelined transfers over region length x count
  (the loops-with-communication paper's Figure 3);
- ``randomaccess`` and ``stream``: the XL UPC paper's Tables 1 and 2 at this
  job's locale count; ``ablation`` (its Table 3), where that benchmark exists;
- ``isx``: the ISx slides' Chapel vs SHMEM comparison.

It then writes ``DIR/papers.json`` (each benchmark's exit status, seconds and
JSON path, and per paper the rows: item, the paper's number, pgas's, the
command) and ``DIR/papers.md`` (the same rows as Markdown tables, and the
polyshift tables beside the paper's).  Sizes: ``tiny`` (the tests', under a
minute at 2 locales), ``quick`` (``--quick``: every benchmark at small sizes,
about 3 minutes at 2 locales on a shared 2-core machine) and ``full`` (the
papers' sizes where this machine holds them; its baselines send one message
per remote element, so it runs for most of an hour on a loaded 2-core
machine: ``docs/papers.md`` gives what was timed).  ``--reference DIR`` passes the reference binaries' folder to the
benchmarks that run one beside pgas (``nas``: ``DIR``; ``stream``:
``DIR/stream_mpi_npP``; ``randomaccess``: ``DIR/ra_hpcc``; ``isx``:
``DIR/isx.weak_iso``).  The exit status is 1 if any benchmark failed or did
not verify.
"""

from __future__ import annotations

import json
import math
import os
import time

from pgas import comm
from pgas.tools.bench import BENCHMARKS, parser, progress, write_result
from pgas.tools.bench import pshift_model as model

LOCALES = 2

#: Each size's arguments per benchmark (``--out`` is added; ``None``: not run at that size).
SIZES = {
    "tiny": {
        "pshift": ["--size", "tiny", "--ranks", "1", "--trials", "1", "--warmup", "0", "--reps", "4"],
        "stmt": ["--kernels", "jacobi1D,jacobi2D", "--size", "tiny", "--trials", "1", "--warmup", "0", "--no-auto"],
        "nas": ["--kernels", "is", "--classes", "S", "--trials", "1"],
        "protocols": ["--lengths", "1,64", "--counts", "1,16", "--trials", "1", "--no-puts"],
        "randomaccess": ["--log2-table", "10", "--trials", "1"],
        "stream": ["--size", "65536", "--no-c", "--trials", "2"],
        "isx": ["--keys", "65536", "--trials", "1"],
        "ablation": ["--log2-table", "10", "--size", "65536", "--stream-trials", "2"],
    },
    "quick": {
        "pshift": ["--size", "quick", "--trials", "1", "--warmup", "0"],
        "stmt": ["--size", "tiny", "--trials", "1", "--warmup", "1", "--no-auto"],
        "nas": ["--kernels", "cg,mg,ft,is", "--classes", "S", "--trials", "1"],
        "protocols": ["--lengths", "1,16,256,4096", "--counts", "1,16,256", "--trials", "2", "--no-puts"],
        "randomaccess": ["--log2-table", "14", "--trials", "1"],
        "stream": ["--size", "1048576", "--no-c", "--trials", "5"],
        "isx": ["--keys", "1048576", "--trials", "2"],
        "ablation": ["--log2-table", "12", "--size", "1048576", "--stream-trials", "3"],
    },
    "full": {
        "pshift": ["--size", "paper", "--trials", "5"],
        "stmt": ["--size", "bench"],
        "nas": ["--kernels", "cg,mg,ft,is", "--classes", "S,W,A", "--trials", "3"],
        "protocols": [],
        "randomaccess": ["--log2-table", "20", "--trials", "2"],
        "stream": ["--size", "8388608"],
        "isx": ["--keys", "4194304", "--key-type", "int32"],
        "ablation": [],
    },
}

#: The papers, in the page's order: key -> (title, the paper's machine).
PAPERS = {
    "modulo-unrolling": ("Affine loop optimization based on modulo unrolling in Chapel (Sharma et al.)",
                         "10-locale InfiniBand cluster, 2 x Xeon X5670 per node, Chapel 1.x trunk"),
    "polyshift": ("POLYSHIFT communications software for the CM-200 (George, Brickner, Johnsson)",
                  "Connection Machine CM-200, CMSSL 3.0, CM Fortran 2.1"),
    "loops": ("Performance portable optimizations for loops containing communication (Iancu, Chen, Yelick)",
              "InfiniBand Opteron cluster, IBM p575 POWER5, Cray XT3; Berkeley UPC"),
    "xlupc": ("Shared memory programming for large scale machines (Barton et al., XL UPC)",
              "BlueGene/L, up to 131072 threads"),
    "isx": ("ISx in Chapel (Harshbarger, CHIUW 2016)", "Cray XC, 36 Broadwell cores per node, Chapel 1.13 vs SHMEM"),
}


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("papers", __doc__.splitlines()[0], trials=False, warmup=False)
    p._option_string_actions["--out"].help = "folder of the results (default results/papers)"
    p._option_string_actions["--out"].metavar = "DIR"
    p.add_argument("--size", choices=tuple(SIZES), default="quick",
                   help="tiny (the tests'), quick (every benchmark small, a few minutes) or full (default quick)")
    p.add_argument("--quick", dest="size", action="store_const", const="quick", help="the same as --size quick")
    p.add_argument("--reference", default=None, metavar="DIR",
                   help="folder of reference binaries, run beside pgas where a benchmark takes one")
    return p


def _argv(name: str, size: str, out: str, ref: str | None) -> list[str] | None:
    args = SIZES[size].get(name)
    if args is None or name not in BENCHMARKS:
        return None
    argv = [*args, "--out", os.path.join(out, f"{name}.json")]
    if name == "pshift":
        argv += ["--plot", os.path.join(out, "figures")] if _has_matplotlib() else []
    if name == "protocols":
        argv += ["--png", os.path.join(out, "protocols.png")] if _has_matplotlib() else []
    if ref:
        P = comm.num_locales()
        extra = {"nas": ref, "stream": os.path.join(ref, f"stream_mpi_np{P}"),
                 "randomaccess": os.path.join(ref, "ra_hpcc"), "isx": os.path.join(ref, "isx.weak_iso")}
        if name in extra:
            argv += ["--reference", extra[name]]
    return argv


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv=None) -> int:
    """Run the benchmarks, then write ``papers.json`` and ``papers.md``; see the module docstring."""
    import pgas as pg
    from pgas.tools import bench

    args = make_parser().parse_args(argv)
    out = args.out or os.path.join("results", "papers")
    if comm.here() == 0:
        os.makedirs(out, exist_ok=True)
    comm.barrier()
    runs = {}
    t_all = time.perf_counter()
    for name in SIZES[args.size]:
        sub = _argv(name, args.size, out, args.reference)
        if sub is None:
            runs[name] = {"status": None, "why": "not run at this size" if name in BENCHMARKS
                          else f"no benchmark {name!r} in this pgas"}
            continue
        progress(f"papers: {name} {' '.join(sub)}")
        t0 = time.perf_counter()
        status = bench.run(name, sub)
        pg.config()                                 # the next one starts from the defaults
        runs[name] = {"status": status, "seconds": time.perf_counter() - t0, "argv": sub,
                      "json": os.path.join(out, f"{name}.json")}
    total = time.perf_counter() - t_all
    data = {}
    if comm.here() == 0:
        results = {n: _load(r["json"]) for n, r in runs.items() if r.get("json")}
        data = {"size": args.size, "locales": comm.num_locales(), "seconds": total, "runs": runs,
                "papers": rows(results)}
        with open(os.path.join(out, "papers.md"), "w") as f:
            f.write(markdown(data, results))
    path = write_result("papers", data, os.path.join(out, "papers.json"))
    ok = all(r["status"] in (None, 0) for r in runs.values())
    if comm.here() == 0:
        print(f"wrote {path} and {os.path.join(out, 'papers.md')} in {total:.0f} s" + ("" if ok else "; FAILED: " + ", ".join(
            n for n, r in runs.items() if r["status"] not in (None, 0))))
    return 0 if ok else 1


def _load(path: str) -> dict | None:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# -- the rows: item, the paper's number, pgas's, the command ------------------------------------
def rows(results: dict) -> dict:
    """Per paper, ``[{"item", "paper", "pgas", "command"}]`` from the benchmarks' JSON
    (``results``: name -> data or None); an item no benchmark here measured says why."""
    def got(name, fn, missing="not run"):
        d = results.get(name)
        if not d:
            return missing
        try:
            return fn(d)
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
            return f"unreadable result ({type(e).__name__}: {e})"

    out = {key: [] for key in PAPERS}

    def add(paper, item, theirs, ours, command):
        out[paper].append({"item": item, "paper": theirs, "pgas": ours, "command": command})

    # modulo unrolling
    add("modulo-unrolling", "Figures 1-3 (Block, Cyclic, Block-Cyclic ownership)", "diagrams, 4 locales",
        "drawn by the command", "pgas show --shape 8,8 --locales 4 --out DIR")
    add("modulo-unrolling", "Figures 4-10 (modulo unrolling, Jacobi-2D aggregation, iterators)",
        "code and diagrams", "one message per source locale and array, planned from the affine accesses",
        "pgas show --dist cyclic --locale 3 --out DIR")
    add("modulo-unrolling", "Figure 11 (the 16 kernels and their sizes)", "16 kernels, 8-10 locales",
        got("stmt", lambda d: f"{len({r['baseline']['kernel'] for r in d['runs']})} kernels run here "
                              f"({', '.join(sorted({r['baseline']['kernel'] for r in d['runs']}))}), "
                              f"size {d['size']}; all 16 are registered"),
        "pgas bench stmt -n 4 --size bench --kernels 2mm,fw,trmm,correlation,covariance,cholesky,lu,mvt,syrk,"
        "fdtd-2d,fdtd-apml,jacobi1D,jacobi2D,stencil9,pascal,folding")
    for fig, what, paper in (("12", "time", "-36% Cyclic, -53% Block-Cyclic"),
                             ("13", "message", "-64% Cyclic, -72% Block-Cyclic")):
        add("modulo-unrolling", f"Figure {fig} ({what}s, geometric mean, modulo unrolling vs Chapel's)", paper,
            got("stmt", lambda d, w=what: ", ".join(
                f"{-100 * s[f'{w}_reduction']:+.2f}% {dist}" for dist, s in d["summary"].items()
                if isinstance(s, dict) and f"{w}_reduction" in s)),
            "pgas bench stmt -n 4 --size bench")
    for figs, study in (("14-17", "strong"), ("18-21", "weak"), ("22-23", "blocksize")):
        add("modulo-unrolling", f"Figures {figs} ({study} scaling study)" if study != "blocksize"
            else "Figures 22-23 (block size study)", "curves, 2-8 locales",
            "not in this job (a driver that starts one job per locale count): see the command",
            f"pgas bench suite --preset small --studies {study} --out DIR")
    # polyshift
    add("polyshift", "Figures 1-3 (CM-200 node, hypercube wiring, transposer slots)", "hardware diagrams",
        "no counterpart (MPI moves the bytes); the machine pgas runs on", "pgas info")
    add("polyshift", "Figures 4-7 (PSHIFT interface, 5-point stencil, QCD, 27-point stencil)", "CM Fortran code",
        "pg.pshift_setup / pg.pshift; the three programs in examples/",
        "pgas run -n 4 examples/stencil5.py (and qcd4d.py, stencil27.py)")
    for k in (1, 2, 3, 4):
        add("polyshift", f"Table {k} (rank {k}, CSHIFT vs PSHIFT, ms per call)",
            _range([p[1] / p[2] for p in model.PAPER[k]], "PSHIFT speedup"),
            got("pshift", lambda d, k=k: _range([r["speedup_pshift"] for r in d["rows"] if r["rank"] == k],
                                                "pshift speedup") + "; " +
                _range([r["speedup_pshift_cpu"] for r in d["rows"] if r["rank"] == k], "CPU")),
            "pgas bench pshift -n 4 --size paper")
    pf = model.paper_fit()
    add("polyshift", "Eq. (1) (the model: T0, Tmm, Tmt, Ttm, Tex, Nsl)", _params(pf),
        got("pshift", lambda d: _params(d["fits"]["eq1_cpu"]["pshift"]) + " (CPU time)"),
        "pgas bench pshift -n 4 --size paper")
    add("polyshift", "Figure 8 (speedup against subarray size)", "3-4x for small subarrays, 1.0 for large",
        got("pshift", lambda d: f"{d['locales']} locales: "
            + _range([r["speedup_pshift"] for r in d["rows"]], "pshift speedup")), "pgas bench pshift -n 4 --plot DIR")
    for fig, k in ((9, 1), (10, 2), (11, 3)):
        add("polyshift", f"Figure {fig} (PSHIFT time, rank {k}, with the model)",
            f"{model.PAPER[k][0][4] * 1e3:.0f}-{model.PAPER[k][-1][4] * 1e3:.0f} us per call",
            got("pshift", lambda d, k=k: _range([r["pshift"]["seconds"] * 1e6 for r in d["rows"] if r["rank"] == k],
                                                "us per call")), "pgas bench pshift -n 4 --plot DIR")
    # loops containing communication
    add("loops", "Figure 1 (compiler and runtime design)", "diagram",
        "the planner and its cost models (docs/planner.md)", "pgas show --kernel jacobi2D")
    add("loops", "Figure 2 (vectorisation, strip-mining)", "loop transformations",
        "strip-mined remote reads chosen by the overlap model", "pgas bench protocols -n 2 --strips 1024")
    add("loops", "Figure 3 (VIS vs pipelined gather, T_VIS / T_PIPE)", "colour map, 8-way POWER5 SMP cluster",
        got("protocols", lambda d: _range([p["seconds"]["packed"] / p["seconds"]["pipelined"] for p in d["points"]],
                                          "T_packed / T_pipelined")
            + f"; auto within 10% of the best at {d['summary'].get('points_auto_within_10pct', '?')} points"),
        "pgas bench protocols -n 2")
    add("loops", "Figure 4 (the optimised code of a loop)", "code",
        "a statement's plan: pieces, transfers and their protocol, printed by pg.explain",
        "pgas run -n 2 docs/examples/explain_stencil.py")
    add("loops", "Table 1 (the systems)", PAPERS["loops"][1], "this machine: see the command", "pgas info")
    add("loops", "Figure 5 (NAS CG, MG, SP, BT, IS, FT: optimised / blocking baseline)",
        "OPT/BASE up to 1.4 (FT at 64 processors); +9.5% over HAND on average (InfiniBand)",
        got("nas", lambda d: "; ".join(
            f"{r['kernel'].upper()} {r['class']} {r['mops']:.0f} Mop/s {'verified' if r['verified'] else 'NOT verified'}"
            + (f", {r['pgas_over_npb']:.2f}x NPB" if r.get("pgas_over_npb") else "") for r in d["results"])
            + "; SP and BT not written with pgas; the blocking baseline is not a switch of pgas bench nas yet"),
        "pgas bench nas -n 2 --kernels cg,mg,ft,is --classes S,W,A --reference DIR")
    add("loops", "Figure 6 (global vs local scheduling: MG, SP, BT)", "normalised to a hand-optimised version",
        "not yet: pgas schedules per statement; PGAS_PROTOCOL=packed vs auto is the VIS vs pipelined choice",
        "PGAS_PROTOCOL=packed pgas bench nas -n 2 --kernels mg (and without PGAS_PROTOCOL)")
    # XL UPC
    add("xlupc", "Figures 1-3 (compiler, shared variable directory, indexing)", "diagrams and code",
        "owner-computes statements on local blocks; no directory (layouts are computed)", "pgas show --kernel jacobi2D")
    add("xlupc", "Table 1 (RandomAccess GUPS over threads)", "5.4e-4 GUPS at 1 thread .. 16.72 at 131072 (23% eff.)",
        got("randomaccess", lambda d: f"{comm_locales(d)} locales, 2^{d['log2_table_per_locale']} words each: "
            + ", ".join(f"{v} {b['gups']:.3g} GUPS ({b['messages']} msgs)" for v, b in d["best"].items())),
        "pgas bench randomaccess -n 2 --log2-table 20; sweeps: pgas bench scaling --upc-tables")
    add("xlupc", "Table 2 (STREAM triad GB/s over threads)", "0.73 GB/s per thread, 100% efficiency",
        got("stream", lambda d: f"{comm_locales(d)} locales, {d['elements_per_locale']} per locale: triad "
            f"{d['gb_per_s']['triad']:.1f} GB/s ({d['gb_per_s_per_locale']['triad']:.1f} per locale), one statement "
            f"{d['gb_per_s']['triad_stmt']:.1f} GB/s"),
        "pgas bench stream -n 2; sweeps: pgas bench scaling --upc-tables")
    add("xlupc", "Table 3 (each optimisation alone, 64 threads)", "RandomAccess 7.09x, STREAM 240.77x all opts",
        got("ablation", lambda d: "see DIR/ablation.json", missing="not in this job: see the command"),
        "pgas bench ablation")
    add("xlupc", "Figure 4 (CG class C, UPC vs MPI over processors)", "equal to 512, UPC ahead from 1024",
        got("nas", lambda d: "; ".join(f"CG {r['class']} {r['mops']:.0f} Mop/s" + (
            f", {r['pgas_over_npb']:.2f}x NPB" if r.get("pgas_over_npb") else "")
            for r in d["results"] if r["kernel"] == "cg") + "; class C not run here"),
        "pgas bench nas -n 2 --kernels cg --classes A --reference DIR")
    # ISx
    add("isx", "Exchange and count steps (Chapel vs SHMEM, 2 nodes)", "exchange 355 s vs 1.6 s; count 56 s vs 0.2 s",
        got("isx", lambda d: ", ".join(
            f"{s['style']}: exchange {s['phase_seconds_mean'].get('exchange', float('nan')) * 1e3:.1f} ms, "
            f"count {s['phase_seconds_mean'].get('count', float('nan')) * 1e3:.1f} ms"
            for s in d["styles"]) + f" ({d['keys_per_locale']} keys per locale)"),
        "pgas bench isx -n 2 --keys 4194304 --key-type int32 --reference DIR/isx.weak_iso")
    add("isx", "Final comparison (Chapel about 2x SHMEM's time)", "about 2x worse",
        got("isx", lambda d: ", ".join(f"{s['style']} {s['mkeys_per_s']:.1f} Mkeys/s" for s in d["styles"])
            + (f"; reference ran: {d['reference'].get('mkeys_per_s', '?')} Mkeys/s" if d.get("reference") else "")),
        "pgas bench isx -n 2 --keys 4194304 --key-type int32 --reference DIR/isx.weak_iso")
    return out


def comm_locales(d: dict) -> int:
    """The locale count a benchmark's JSON was measured at."""
    return d.get("environment", {}).get("locales", d.get("locales", 0))


def _range(values, what: str) -> str:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return f"no {what}"
    vals.sort()
    med = vals[len(vals) // 2] if len(vals) % 2 else 0.5 * (vals[len(vals) // 2 - 1] + vals[len(vals) // 2])
    return f"{what} {vals[0]:.3g}-{vals[-1]:.3g} (median {med:.3g})"


def _params(f: dict | None) -> str:
    if not f:
        return "no fit"
    p = f["params"]
    cells = [f"{n} {'not determined' if p.get(n) is None else f'{p[n] * 1e6:.3g} us'}" for n in model.PARAMETERS]
    return ", ".join(cells) + f", Nsl {f.get('Nsl', 2)}, residual {f['relative_rms_residual']:.2f}"


def markdown(data: dict, results: dict) -> str:
    """``papers.md``: one section per paper (its rows), then the polyshift tables."""
    lines = [f"# The papers beside pgas ({data['size']} size, {data['locales']} locales, {data['seconds']:.0f} s)", ""]
    for key, items in data["papers"].items():
        title, machine = PAPERS[key]
        lines += [f"## {title}", "", f"The paper's machine: {machine}.", "",
                  "| item | paper | pgas (this run) | command |", "|---|---|---|---|"]
        lines += [f"| {r['item']} | {r['paper']} | {r['pgas']} | `{r['command']}` |" for r in items]
        lines.append("")
    ps = results.get("pshift")
    if ps:
        lines += ["## Polyshift Tables 1-4 beside the paper's", ""]
        for k in sorted({r["rank"] for r in ps["rows"]}):
            lines += [f"Table {k}:", "", model.markdown_table(ps["rows"], k), ""]
        fits = {f"pgas {w} (CPU)": f for w, f in ps["fits"]["eq1_cpu"].items()}
        fits["paper PSHIFT (CM time)"] = ps["fits"]["eq1_paper"]
        lines += ["Eq. (1), every rank at once:", "", model.markdown_fits(fits), ""]
    lines += ["## Runs", "", "| benchmark | status | seconds | arguments |", "|---|---|---|---|"]
    for n, r in data["runs"].items():
        lines.append(f"| {n} | {r.get('status', '-')} {r.get('why', '')} | {r.get('seconds', 0):.1f} | "
                     f"`{' '.join(r.get('argv', []))}` |")
    return "\n".join(lines) + "\n"

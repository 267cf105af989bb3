"""``pgas bench run KERNEL``: one of the paper's kernels, per distribution and mode.

``pgas bench run jacobi2D --dist cyclic --locales 4 --size 48 --mode baseline,aggregated``
runs the kernel on each distribution in each mode (:mod:`pgas.tools.bench.measure`):
an untimed warm-up step, ``--steps`` timed steps with their messages counted,
then every result array checked against the kernel's serial NumPy version.
It prints a table (messages and time also as a ratio of the baseline's) and
writes the rows as JSON (``results/run-KERNEL.json`` or ``--out``), which
``pgas report`` turns into tables and plots.  Exit status 1 if any run's result
differs from NumPy (its row is marked, never reported as a measurement).
``pgas bench list`` lists the kernels.
"""

from __future__ import annotations

import argparse

from pgas import comm
from pgas.tools.bench import ProgressBar, parser, print_table, write_result
from pgas.tools.bench.kernels import KERNELS
from pgas.tools.bench.measure import DISTS, MODES, PRESETS, dist_label, measure, size_of

LOCALES = 4


def _pick(names, what: str):
    """An argparse ``type``: a comma-separated subset of ``names``, any case.

    >>> _pick(("Block", "Cyclic"), "distribution")("cyclic,BLOCK")
    ['Cyclic', 'Block']
    """
    lower = {n.lower(): n for n in names}

    def parse(text: str) -> list[str]:
        items = [s.strip() for s in text.split(",") if s.strip()]
        bad = [s for s in items if s.lower() not in lower]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"unknown {what} {', '.join(bad) or '(empty list)'}; "
                                             f"choose from {', '.join(names)}")
        return [lower[s.lower()] for s in items]
    return parse


def _size(text: str) -> str:
    if text in PRESETS or (text.isdigit() and int(text) >= 1):
        return text
    raise argparse.ArgumentTypeError(f"expects a whole number >= 1 or one of {', '.join(PRESETS)}, got {text!r}")


def _block(text: str) -> int:
    try:
        b = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a whole number, got {text!r}") from None
    if b < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {b}")
    return b


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("run", __doc__.split("\n\n")[0], trials=False, warmup=False)
    for a in p._actions:                       # --locales is the long name of the common -n
        if a.dest == "n":
            a.option_strings.append("--locales")
            p._option_string_actions["--locales"] = a
    p.add_argument("kernel", metavar="KERNEL", type=_pick(tuple(KERNELS), "kernel"),
                   help=f"the kernel, or a comma-separated list ({', '.join(KERNELS)})")
    p.add_argument("--dist", type=_pick(DISTS, "distribution"), default=["Cyclic"], metavar="LIST",
                   help="comma-separated distributions: block, cyclic, blockcyclic (default cyclic)")
    p.add_argument("--block", type=_block, default=4, metavar="B", help="BlockCyclic block size (default 4)")
    p.add_argument("--mode", type=_pick(MODES, "mode"), default=list(MODES), metavar="LIST",
                   help="comma-separated modes: baseline, aggregated, auto (default all three)")
    p.add_argument("--size", type=_size, default="small",
                   help=f"input size: a whole number or {', '.join(PRESETS)} (default small)")
    p.add_argument("--steps", type=_block, default=2, metavar="S", help="timed steps per run (default 2)")
    return p


def ratio_rows(rows: list[dict]) -> list[list]:
    """Table rows: each run with its messages and time as a ratio of the baseline's
    run of the same kernel, size, distribution and locale count."""
    base = {(r["kernel"], r["n"], r["dist"], r["block"], r["locales"]): r for r in rows if r["mode"] == "baseline"}
    out = []
    for r in rows:
        b = base.get((r["kernel"], r["n"], r["dist"], r["block"], r["locales"]))
        rm = r["messages_per_step"] / b["messages_per_step"] if b and b["messages_per_step"] else None
        rt = r["seconds_per_step"] / b["seconds_per_step"] if b and b["seconds_per_step"] else None
        out.append([r["kernel"], r["n"], dist_label(r["dist"], r["block"]), r["locales"], r["mode"],
                    r["messages_per_step"], "-" if rm is None else rm, r["elements_per_message"],
                    r["seconds_per_step"], "-" if rt is None else rt, "yes" if r["correct"] else "NO (WRONG)"])
    return out


HEADERS = ["kernel", "n", "dist", "locales", "mode", "msgs/step", "vs base", "elems/msg", "s/step", "vs base",
           "matches NumPy"]


def main(argv=None) -> int:
    """Run the benchmark; see the module docstring."""
    args = make_parser().parse_args(argv)
    rows = []
    bar = ProgressBar(len(args.kernel) * len(args.dist) * len(args.mode), "runs")
    for name in args.kernel:
        kernel = KERNELS[name]
        n = size_of(kernel, args.size)
        for dist in args.dist:
            block = args.block if dist == "BlockCyclic" else None
            for mode in args.mode:
                rows.append(measure(kernel, n, dist, block, mode, args.steps))
                bar.step(f"{name} {dist_label(dist, block)} {mode}")
    bar.close()
    print_table(HEADERS, ratio_rows(rows))
    path = write_result(f"run-{'-'.join(args.kernel)}", {"runs": [{"study": "kernels", **r} for r in rows]},
                        args.out)
    wrong = [r for r in rows if not r["correct"]]
    if comm.here() == 0:
        print(f"wrote {path}")
        for r in wrong:
            print(f"ERROR: {r['kernel']} on {dist_label(r['dist'], r['block'])} ({r['mode']}) differs from NumPy "
                  f"(largest relative difference {r['max_rel_error']:.3g})")
    return 1 if wrong else 0

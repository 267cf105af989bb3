"""``pgas bench ablation``: the XL UPC paper's Table 3, each optimisation switched off alone (and on alone), on RandomAccess and STREAM.

The XL UPC paper (Barton et al., "Shared memory programming for large scale
machines", PLDI 2006) measures RandomAccess and STREAM triad on 64 threads of
Blue Gene/L with each of its compiler's UPC optimisations enabled alone (Table 3:
*indexing*, the privatisation of local shared accesses; *update*, one-way remote
updates; *forall*, ``upc_forall`` without the affinity test), against none and all of
them.  Here the same programs run under ``pg.config``'s switches, one per
optimisation (:mod:`pgas.exec.ablation`, :mod:`pgas.array.ablated`):

- ``privatise`` (the paper's *indexing*): a locale's own elements as plain memory,
  or read through its MPI window;
- ``forall`` (*forall*): each locale enumerates only the iterations it owns, or
  every locale tests the owner of every iteration of the domain;
- ``oneway`` (*update*): remote updates as one-way messages, or get-modify-put
  round trips;
- ``aggregate`` (not in the paper: the XL UPC compiler did not aggregate): one
  message per locale pair, or one per element.

The programs, written once: RandomAccess (:mod:`pgas.tools.bench.randomaccess`, its
``aggregated`` form: per block of at most 1024 updates per locale one collective
``update``; the HPCC verification), and the STREAM triad as one statement,
``A[:] = B[:] + s * C[:]`` over Block arrays, every element checked.  For each
configuration: the best time of ``--trials`` runs (``--stream-trials`` for STREAM; the
configurations take turns trial by trial, so a machine's changing load falls on all alike), GUPS or GB/s, time over the
all-on time, and what the switch changes (messages, local window accesses, affinity
tests, from ``pg.comm_diagnostics``), beside the paper's numbers.  ``--configs``
picks the configurations: ``off`` (all on, then each off alone, then all off),
``on`` (all off, then each on alone, the paper's layout: speedups over all off), or
``both`` (the default).  Tables 1 and 2 (RandomAccess and STREAM over thread counts
with efficiency ``T1 / (TP x P)``) are ``pgas bench scaling --upc-tables``.
"""

from __future__ import annotations

import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.exec import settings
from pgas.tools.bench import _positive, parser, print_table, progress, randomaccess, upcpaper, write_result

SWITCHES = ("privatise", "forall", "oneway", "aggregate")
#: The paper's name for each switch's optimisation (Table 3's columns); aggregation is not in it.
PAPER_NAME = {"privatise": "indexing", "forall": "forall", "oneway": "update", "aggregate": None}
SCALAR = 3.0
BENCHES = ("randomaccess", "stream")


def configurations(which: str) -> list[tuple[str, dict]]:
    """``(name, pg.config settings)`` in the order they run: ``off`` all on, each off
    alone, all off; ``on`` all off, each on alone; ``both`` the two, all off once.

    >>> [n for n, _ in configurations("on")]
    ['all off', 'only privatise', 'only forall', 'only oneway', 'only aggregate']
    """
    none = {s: False for s in SWITCHES}
    off = [("all on", {})] + [(f"{s} off", {s: False}) for s in SWITCHES] + [("all off", none)]
    on = [("all off", none)] + [(f"only {s}", dict(none, **{s: True})) for s in SWITCHES]
    return off if which == "off" else on if which == "on" else off + on[1:]


def paper_column(name: str) -> str | None:
    """The paper's Table 3 column that configuration ``name`` stands beside (None: none).

    >>> paper_column("all on"), paper_column("all off"), paper_column("only oneway"), paper_column("forall off")
    ('all opts', 'no opt', 'update', 'forall')
    """
    if name == "all on":
        return "all opts"
    if name == "all off":
        return "no opt"
    switch = name.replace("only ", "").replace(" off", "")
    return PAPER_NAME.get(switch)


def _counted(fn) -> tuple[float, dict]:
    """Collective: ``fn()`` timed (slowest locale) with its counts."""
    with pg.comm_diagnostics() as d:
        comm.barrier()
        t0 = time.perf_counter()
        fn()
        comm.barrier()
        seconds = float(comm.allreduce(time.perf_counter() - t0, "max"))
    return seconds, {"messages": d.messages, "local_window_accesses": d.local_window_accesses,
                     "affinity_tests": d.affinity_tests}


def run_randomaccess(T) -> dict:
    """Collective: one RandomAccess run (aggregated form) under the settings in force, verified."""
    randomaccess.reset(T)
    seconds, counts = _counted(lambda: randomaccess.run_aggregated(T))
    bad = randomaccess.errors(T)
    return {"seconds": seconds, "rate": 4 * T.size / seconds / 1e9, "errors": bad,
            "verified": bad <= 0.01 * T.size, **counts}


def run_stream(arrays) -> dict:
    """Collective: one triad statement under the settings in force, every element checked."""
    A, B, C = arrays
    A.local[...] = 0.0
    comm.barrier()
    seconds, counts = _counted(lambda: A.__setitem__(slice(None), B[:] + SCALAR * C[:]))
    bad = int(comm.allreduce(int(np.count_nonzero(A.local != 2.0 + SCALAR * 0.5)), "sum"))
    return {"seconds": seconds, "rate": 3 * 8 * A.size / seconds / 1e9, "errors": bad, "verified": bad == 0,
            **counts}


def interleaved(configs, run, trials: int, label: str) -> dict:
    """Collective: ``run()`` under each configuration, the configurations taking turns trial
    by trial (so a machine's changing load falls on all alike); per configuration the
    fastest trial, with ``times`` (every trial's seconds) and ``verified`` over all trials."""
    base = {s: True for s in SWITCHES}
    best: dict = {}
    for t in range(trials):
        progress(f"{label}: trial {t + 1}/{trials} of {len(configs)} configurations")
        for name, kw in configs:
            pg.config(**dict(base, **kw))
            m = run()
            prev = best.get(name)
            times = (prev["times"] if prev else []) + [m["seconds"]]
            ok = m["verified"] and (prev is None or prev["verified"])
            best[name] = dict(m if prev is None or m["seconds"] < prev["seconds"] else prev, times=times, verified=ok)
    return best


def rows_for(bench: str, results: dict) -> list[list]:
    """Table rows of one benchmark: configuration, seconds, rate, x all on / speedup over all
    off, counts, verified, then the paper's column, rate and speedup over no opt."""
    on, off = results.get("all on"), results.get("all off")
    rows = []
    for name, m in results.items():
        col = paper_column(name)
        paper = upcpaper.TABLE3[bench].get(col) if col else None
        rows.append([name, m["seconds"], m["rate"], m["seconds"] / on["seconds"] if on else float("nan"),
                     off["seconds"] / m["seconds"] if off else float("nan"), m["messages"],
                     m["local_window_accesses"], m["affinity_tests"], "yes" if m["verified"] else "NO",
                     col or "-", paper[0] if paper else float("nan"), paper[2] if paper else float("nan")])
    return rows


HEADERS = ["configuration", "seconds", "rate", "time / all on", "speedup / all off", "messages",
           "local window", "affinity tests", "verified", "paper column", "paper rate", "paper speedup"]


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("ablation", __doc__.split("\n\n")[0])
    p.add_argument("--log2-table", type=int, default=12, metavar="K",
                   help="RandomAccess: about 2^K table words per locale (default %(default)s)")
    p.add_argument("--size", type=int, default=1 << 20, metavar="ELEMENTS",
                   help="STREAM: float64 elements per array per locale (default 2^20)")
    p.add_argument("--configs", choices=("off", "on", "both"), default="both",
                   help="each optimisation off alone (off), on alone (on), or both (default)")
    p.add_argument("--benchmarks", default=",".join(BENCHES), metavar="LIST",
                   help=f"comma-separated from {', '.join(BENCHES)} (default both)")
    p.add_argument("--stream-trials", type=_positive, default=10, metavar="T",
                   help="STREAM: timed trials per configuration (default %(default)s; --trials is RandomAccess's)")
    p.set_defaults(trials=3)
    return p


def main(argv: list[str]) -> int:
    p = make_parser()
    args = p.parse_args(argv)
    benches = [b for b in args.benchmarks.split(",") if b]
    if any(b not in BENCHES for b in benches) or not benches:
        p.error(f"--benchmarks: choose from {', '.join(BENCHES)}, got {args.benchmarks!r}")
    P = pg.num_locales
    configs = configurations(args.configs)
    saved = {s: settings.get(s) for s in SWITCHES}
    out: dict = {}
    try:
        if "randomaccess" in benches:
            T = randomaccess.make_table(randomaccess.table_size(args.log2_table, P))
            for _ in range(args.warmup):
                randomaccess.run_aggregated(T, randomaccess.WARMUP_BLOCKS)
            out["randomaccess"] = interleaved(configs, lambda: run_randomaccess(T), args.trials, "randomaccess")
        if "stream" in benches:
            arrays = tuple(pg.full(args.size * P, v, dist=pg.Block(), name=nm)
                           for v, nm in ((0.0, "a"), (2.0, "b"), (0.5, "c")))
            if args.warmup:
                interleaved(configs, lambda: run_stream(arrays), args.warmup, "stream warm-up")
            out["stream"] = interleaved(configs, lambda: run_stream(arrays), args.stream_trials, "stream")
    finally:
        pg.config(**saved)
    ok = all(m["verified"] for r in out.values() for m in r.values())
    path = write_result("ablation", {
        "locales": P, "table_words": 1 << (args.log2_table + P.bit_length() - 1) if "randomaccess" in benches else None,
        "stream_elements_per_locale": args.size, "trials": args.trials, "stream_trials": args.stream_trials, "configurations": dict(configs),
        "results": out, "paper_table3": upcpaper.TABLE3, "verified": ok}, args.out)
    for bench, results in out.items():
        if comm.here() == 0:
            unit = "GUPS" if bench == "randomaccess" else "GB/s (triad)"
            print(f"\n{bench}: {P} locale(s), rate in {unit}; paper: Table 3, 64 threads of Blue Gene/L")
        print_table(HEADERS, rows_for(bench, results))
    if comm.here() == 0:
        print(f"\n{'verified' if ok else 'VERIFICATION FAILED'}; results written to {path}")
    return 0 if ok else 1

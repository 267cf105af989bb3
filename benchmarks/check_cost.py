"""What collective call checking costs per statement: stencil_overhead.py's statements (jacobi-2d's
sweep, fdtd-2d's row fill, ey, ex, hz statements and whole step) with checking off and in the
default, folded mode, compared in the same job.

For each statement it counts the Python function calls per statement under ``cProfile`` in each
mode (``--calls`` of them after a warm-up; the polling of waits aside, whose count depends on how
long a locale waits for its peers), which do not depend on the machine's load, and names the
functions the folded mode adds; with ``--rounds R`` it also times the statement in both modes in
alternated order, R rounds of ``--per-round`` runs each (every run after a barrier, the slowest
locale's time), and reports per mode the fastest run and the median of each round's fastest, with
the median of the rounds' ratios (folded / off).  The load average before and after is recorded:
on a shared machine the times, unlike the counts, move with it.  At one locale the folded mode is
off (nothing to compare), so the counts are equal.

    pgas run -n 2 benchmarks/check_cost.py --json check.json
    pgas run -n 4 benchmarks/check_cost.py --rounds 200 --json check4.json
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pgas as pg  # noqa: E402
from pgas import comm  # noqa: E402
from replay_calls import POLLING  # noqa: E402
from stencil_overhead import fastest, set_checking, statements  # noqa: E402

MODES = ("off", "auto")


def calls(f, n: int) -> dict:
    """Python function calls of ``n`` runs of ``f`` by function (waits' polling aside), per run."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        f()
    prof.disable()
    got = {}
    for (path, line, name), v in pstats.Stats(prof).stats.items():
        if not any(p in name for p in POLLING):
            key = f"{os.path.basename(path)}:{line} {name}" if path != "~" else name
            got[key] = got.get(key, 0) + v[1] / n
    return got


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=64, help="jacobi's n, fdtd's ny and nx")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--calls", type=int, default=200, help="runs profiled per statement and mode")
    p.add_argument("--rounds", type=int, default=0, help="timed rounds per statement (0: no times)")
    p.add_argument("--per-round", type=int, default=5, help="runs per round and mode (the fastest kept)")
    p.add_argument("--only", default=None, help="comma-separated statement names (default: all)")
    p.add_argument("--json", default=None, metavar="FILE")
    a = p.parse_args()
    pg.config(fuse=True)
    stmts = statements(a.n, a.n)
    if a.only:
        stmts = {k: stmts[k] for k in a.only.split(",")}
    load = [os.getloadavg()[0]]
    res = {}
    for name, f in stmts.items():
        x = res[name] = {}
        for mode in MODES:
            set_checking(mode)
            for _ in range(a.warmup):
                f()
            comm.barrier()
            x[mode] = calls(f, a.calls)
        set_checking("auto")
        added = {k: x["auto"].get(k, 0) - x["off"].get(k, 0) for k in set(x["auto"]) | set(x["off"])}
        res[name] = {"calls_off": sum(x["off"].values()), "calls_auto": sum(x["auto"].values()),
                     "added": {k: v for k, v in sorted(added.items()) if abs(v) >= 0.5 / a.calls}}
    for name, f in stmts.items() if a.rounds else ():
        best = {m: [] for m in MODES}
        for r in range(a.rounds):
            for mode in MODES if r % 2 == 0 else MODES[::-1]:
                set_checking(mode)
                best[mode].append(fastest(f, a.per_round))
        set_checking("auto")
        x = res[name]
        for mode in MODES:
            x[f"fastest_{mode}_us"] = min(best[mode]) * 1e6
            x[f"median_{mode}_us"] = float(np.median(best[mode])) * 1e6
        x["ratio_fastest"] = x["fastest_auto_us"] / x["fastest_off_us"]
        x["ratio_median_of_rounds"] = float(np.median([q / p for p, q in zip(best["off"], best["auto"])]))
    load.append(os.getloadavg()[0])
    if comm.here() == 0:
        print(f"{pg.num_locales} locales, n={a.n}: Python calls per statement (checking off / folded, waits' polling "
              f"aside; load average {load[0]:.1f} then {load[1]:.1f} on {os.cpu_count()} cores)")
        for name, x in res.items():
            added = ", ".join(f"{k} {v:+.2f}" for k, v in x["added"].items())
            line = f"  {name}: {x['calls_off']:.1f} / {x['calls_auto']:.1f} ({added or 'none added'})"
            if a.rounds:
                line += (f"; fastest {x['fastest_off_us']:.1f} / {x['fastest_auto_us']:.1f} us "
                         f"(ratio {x['ratio_fastest']:.3f}), median of {a.rounds} rounds' ratios "
                         f"{x['ratio_median_of_rounds']:.3f}")
            print(line)
        if a.json:
            with open(a.json, "w") as out:
                json.dump({"locales": pg.num_locales, "n": a.n, "calls": a.calls, "rounds": a.rounds,
                           "per_round": a.per_round, "load_average": load, "cores": os.cpu_count(),
                           "statements": res}, out, indent=1)


if __name__ == "__main__":
    main()

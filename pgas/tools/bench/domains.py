"""``pgas bench domains``: planning non-rectangular foralls.

Two measurements, written to one JSON file:

1. **Planning time** of one locale (pure, in this process, cold cache) for the
   triangle forall ``X[i, j] = Y[j, i]`` over ``(range(n), lambda i: range(i + 1, n))``,
   and for every forall of one right-looking Cholesky run (its shrinking
   triangle ``(range(k + 1, n), lambda i: range(k + 1, i + 1))`` at every ``k``) and
   one LU run (its rectangles), at sizes ``--sizes`` and locale counts
   ``--counts`` on Cyclic data: resolving the domain, then ``plan_local`` of one
   locale; with its pieces.  With ``--baseline-src DIR`` (a checkout of an older
   pgas, e.g. ``git archive main | tar -x -C /tmp/old``) the same code runs on
   that version's planner in a subprocess, side by side.
2. **One cold Cholesky and LU run** (``pgas.tools.bench.kernels``, planning included,
   caches cleared first) at the job's locale count and each size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from pgas import comm
from pgas.tools.bench import parser, print_table, progress, write_result

#: Planning code run on this pgas and on ``--baseline-src`` alike (so both measure
#: the same thing); prints one JSON row per (statement, n, P).
CODE = r"""
import json, sys, time
if len(sys.argv) > 1 and sys.argv[1]:
    sys.path.insert(0, sys.argv[1])
from pgas.exec.domain import resolve
from pgas.layout import Cyclic
from pgas.plan import Access, Statement, candidates, plan_local
from pgas.plan import planner

def stmt(dom, accs, red):
    D = resolve(dom)
    extra = (D.clips, D.count) if getattr(D, "clips", ()) else ()
    return Statement(D.box, accs, 0, red, D.parts, *extra)

def one(make, shapes, P):
    planner._plan_local.cache_clear()
    t0 = time.perf_counter()
    pieces = 0
    for s in make():
        lay = tuple(Cyclic().bind(sh, P) for sh in shapes)
        for r in (P // 2,):
            for c in candidates(s, lay, "write"):
                pieces += len(plan_local(s, lay, c, r).pieces)
    return time.perf_counter() - t0, pieces

T = (Access(0, ((1, 0), (0, 1)), (0, 0)), Access(1, ((0, 1), (1, 0)), (0, 0)))
def chol_acc(k):
    return (Access(0, ((1, 0), (0, 1)), (0, 0)), Access(0, ((1, 0), (0, 0)), (0, k)),
            Access(0, ((0, 1), (0, 0)), (0, k)))
def lu_acc(k):
    return (Access(0, ((1, 0), (0, 1)), (0, 0)), Access(0, ((1, 0), (0, 0)), (0, k)),
            Access(0, ((0, 0), (0, 1)), (k, 0)))
LU1 = lambda k: (Access(0, ((1,), (0,)), (0, k)), Access(0, ((1,), (0,)), (0, k)), Access(0, ((0,), (0,)), (k, k)))

for n, P in json.loads(sys.argv[2]):
    cases = {
        "triangle forall": (lambda: [stmt((range(n), lambda i: range(i + 1, n)), T, None)], [(n, n), (n, n)]),
        "cholesky run": (lambda: [stmt((range(k + 1, n), lambda i, k=k: range(k + 1, i + 1)), chol_acc(k), "subtract")
                                  for k in range(n - 1)], [(n, n)]),
        "lu run": (lambda: [s for k in range(n - 1) for s in
                            (stmt(range(k + 1, n), LU1(k), None),
                             stmt((range(k + 1, n), range(k + 1, n)), lu_acc(k), "subtract"))], [(n, n)]),
    }
    for name, (make, shapes) in cases.items():
        dt, pieces = one(make, shapes, P)
        print(json.dumps({"statement": name, "n": n, "locales": P, "seconds": dt, "pieces": pieces}), flush=True)
"""


def make_parser():
    p = parser("domains", __doc__.split("\n\n")[0], trials=False, warmup=False)
    p.add_argument("--sizes", default="64,128,256", help="matrix sizes n (comma-separated)")
    p.add_argument("--counts", default="2,4", help="locale counts to plan for (comma-separated)")
    p.add_argument("--baseline-src", default=None, help="checkout of an older pgas to plan with, side by side")
    p.add_argument("--runs", default="cholesky,lu", help="kernels to run cold at the job's locale count ('' for none)")
    return p


def planning(sizes, counts, src=None) -> list[dict]:
    """Rows of planning times (this pgas, or the checkout ``src`` in a subprocess)."""
    pairs = json.dumps([[n, P] for n in sizes for P in counts])
    if src is None:
        out = subprocess.run([sys.executable, "-c", CODE, "", pairs], capture_output=True, text=True)
    else:
        out = subprocess.run([sys.executable, "-c", CODE, os.path.abspath(src), pairs], capture_output=True,
                             text=True, cwd="/")
    if out.returncode:
        raise RuntimeError(f"planning failed: {out.stderr[-800:]}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def cold_runs(kernels, sizes) -> list[dict]:
    """Collective: wall time of one cold run of each kernel (planning included)."""
    import pgas as pg
    from pgas.plan import planner
    from pgas.tools.bench.kernels import KERNELS

    rows = []
    for name in kernels:
        for n in sizes:
            k = KERNELS[name]
            state = k.setup(n, pg.Cyclic())
            planner._plan_local.cache_clear()
            comm.barrier()
            t0 = time.perf_counter()
            k.step(state, 0)
            comm.barrier()
            dt = time.perf_counter() - t0
            rows.append({"kernel": name, "n": n, "locales": pg.num_locales, "seconds": dt})
            progress(f"{name} n={n}: {dt:.2f} s cold")
    return rows


def main(argv=None) -> None:
    args = make_parser().parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",") if x]
    counts = [int(x) for x in args.counts.split(",") if x]
    rows = []
    if comm.here() == 0:
        rows = planning(sizes, counts)
        if args.baseline_src:
            old = {(r["statement"], r["n"], r["locales"]): r for r in planning(sizes, counts, args.baseline_src)}
            for r in rows:
                o = old.get((r["statement"], r["n"], r["locales"]))
                r["baseline_seconds"], r["baseline_pieces"] = (o["seconds"], o["pieces"]) if o else (None, None)
        print_table(["statement", "n", "P", "plan s", "pieces", "baseline s", "baseline pieces"],
                    [[r["statement"], r["n"], r["locales"], f"{r['seconds']:.4f}", r["pieces"],
                      "" if r.get("baseline_seconds") is None else f"{r['baseline_seconds']:.4f}",
                      r.get("baseline_pieces", "")] for r in rows])
    runs = cold_runs([k for k in args.runs.split(",") if k], sizes)
    print_table(["kernel", "n", "P", "cold run s"], [[r["kernel"], r["n"], r["locales"], f"{r['seconds']:.2f}"]
                                                     for r in runs])
    path = write_result("domains", {"sizes": sizes, "counts": counts, "planning": rows, "runs": runs}, args.out)
    if comm.here() == 0:
        print(f"wrote {path}")


if __name__ == "__main__":
    main()

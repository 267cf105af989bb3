"""What one cached statement (or a sort, or ISx's offsets phase) costs per locale, and how it
grows with the locale count.

Runs jacobi-2d's sweep ``B[1:-1, 1:-1] = 0.2 * (...)`` (fused, replayed: no lowering or
planning) on ``n x n`` Block arrays (Block's own 2-D grid, or rows only with ``--rows``: at
most 2 peers per locale at any count) and reports, per statement and locale, quantities that do
not depend on how busy the machine is, so that 8 or 16 locales oversubscribed on a few cores
still measure them:

- ``calls``: Python function calls (cProfile's count, built-ins included, a wait's polling
  not) per statement, the most of any locale: a loop over all locales shows here as growth with P;
- ``msgs``: messages per statement sent by the locale that sends most (``pg.comm_diagnostics``),
  ``syncs``: point-to-point readiness notices per statement, all locales together,
  ``colls``: collective calls (barriers, reductions, gathers, agreements) per statement, most of any locale;
- ``cpu us``: processor time per statement (``time.thread_time``), median and most of the
  locales; it includes the polling of waits, so it grows with descheduling on a loaded machine.

``--what sort`` measures ``pg.sort`` of ``--n`` float64 keys per locale instead, ``--what
offsets`` ISx's offsets phase (``pgas.tools.bench.isx.Sorter.offsets_spmd``).  One job per
locale count; ``--json FILE`` appends the row.  Regenerate the tables of docs/trace.md with::

    for P in 1 2 4 8 16; do
      for n in 64 1024; do pgas run -n $P benchmarks/stmt_scaling.py --n $n --json /tmp/stmt-scaling.jsonl; done
      pgas run -n $P benchmarks/stmt_scaling.py --n 64 --rows --json /tmp/stmt-scaling.jsonl
      pgas run -n $P benchmarks/stmt_scaling.py --what sort --reps 50 --json /tmp/stmt-scaling.jsonl
      pgas run -n $P benchmarks/stmt_scaling.py --what offsets --n 1024 --json /tmp/stmt-scaling.jsonl
    done
    python benchmarks/stmt_scaling.py --table /tmp/stmt-scaling.jsonl

``--profile`` prints locale ``--rank``'s cProfile sorted by call count instead.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import time

#: The comm layer's collective operations, counted as synchronisations where these modules
#: define them (not where :mod:`pgas.comm.check` wraps them, which would count one call twice).
COLLECTIVE_FILES = ("pgas/comm/collectives.py", "pgas/comm/agreement.py")
COLLECTIVES = ("barrier", "allreduce", "iallreduce", "allgather", "allgatherv", "agreement_allgather", "bcast",
               "bcast_value", "alltoallv_buffer", "bitwise_or", "allreduce_with", "agree", "exscan")
#: What a wait calls while it polls: as many as the machine's load makes, so not counted ...
POLLING = ("sleep", "sched_yield", "_stalled", "pause")
#: ... nor what these call (the test of the requests a wait's :func:`pgas.comm.waits.poll`
#: makes until they are complete), nor what those call in turn.
POLLERS = ("poll",)


def _bare(name: str) -> str:
    return name.rsplit(" ", 1)[-1].rstrip("}>").rsplit(".", 1)[-1]


def _counts(stats: pstats.Stats) -> tuple[int, int]:
    """(Python calls but a wait's polling, collective calls) in a profile: the calls a
    polling function makes (and theirs, and so on) are left out with it."""
    polling = {f for f in stats.stats if _bare(f[2]) in POLLING}
    pollers = {f for f in stats.stats if _bare(f[2]) in POLLERS}
    while True:
        left = {f: nc - sum(c[1] for g, c in callers.items() if g in polling or g in pollers)
                for f, (_cc, nc, _tt, _ct, callers) in stats.stats.items() if f not in polling}
        more = {f for f, n in left.items() if n <= 0 and stats.stats[f][1] > 0}
        if not more:
            break
        polling |= more
    calls = colls = 0
    for (file, _line, name), n in left.items():
        calls += n
        if file.endswith(COLLECTIVE_FILES) and name in COLLECTIVES:
            colls += n
    return calls, colls


def operation(what: str, n: int, rows: bool):
    """The collective operation measured: ``jacobi`` (the sweep on n x n), ``sort``
    (``pg.sort`` of n float64 per locale) or ``offsets`` (ISx's offsets phase)."""
    import numpy as np

    import pgas as pg
    from pgas import comm

    if what == "sort":
        K = pg.from_numpy(np.random.default_rng(0).random(n * pg.num_locales))
        return lambda: pg.sort(K)
    if what == "offsets":
        from pgas.tools.bench.isx import Sorter
        sorter = Sorter(n, 8192)
        counts = np.random.default_rng(comm.here()).integers(0, n, pg.num_locales).astype(np.int64)
        return lambda: sorter.offsets_spmd(counts)
    from pgas.tools.bench.polybench import jacobi_init

    pg.config(fuse=True)
    GA, GB = jacobi_init(n)
    dist = pg.Block(grid=(pg.num_locales, 1)) if rows else pg.Block()
    A, B = pg.from_numpy(GA, dist=dist), pg.from_numpy(GB, dist=dist)

    def jacobi():
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    return jacobi


def measure(what: str, n: int, reps: int, profile: bool, rank: int, rows: bool) -> dict | None:
    import pgas as pg
    from pgas import comm

    jacobi = operation(what, n, rows)
    for _ in range(20):
        jacobi()
    P, me = pg.num_locales, comm.here()
    pr = cProfile.Profile()
    comm.barrier()
    pr.enable()
    for _ in range(reps):
        jacobi()
    pr.disable()
    stats = pstats.Stats(pr)
    if profile:
        if me == rank:
            s = io.StringIO()
            stats.stream = s
            stats.sort_stats("ncalls").print_stats()
            print(s.getvalue())
        comm.barrier()
        return None
    calls, colls = _counts(stats)
    comm.barrier()
    t = time.thread_time()
    for _ in range(reps):
        jacobi()
    cpu = (time.thread_time() - t) / reps
    comm.barrier()
    with pg.comm_diagnostics() as d:
        for _ in range(reps):
            jacobi()
    per = comm.allgather((calls / reps, colls / reps, cpu))
    if me != 0:
        return None
    grid = ("rows" if rows else "2-D") if what == "jacobi" else "-"
    return {"what": what, "P": P, "n": n, "grid": grid, "reps": reps,
            "calls": max(r[0] for r in per), "colls": max(r[1] for r in per),
            "msgs": float(d.matrix.sum(axis=1).max()) / reps, "syncs": d.syncs / reps,
            "barriers": d.barriers / reps,
            "cpu_us_median": 1e6 * statistics.median(r[2] for r in per), "cpu_us_max": 1e6 * max(r[2] for r in per)}


def table(path: str) -> str:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    out = ["| what | n | grid | P | calls | msgs | syncs | colls | cpu us (median) | cpu us (max) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r.get("what", "jacobi"), r["n"], r.get("grid", "2-D"), r["P"])):
        out.append(f"| {r.get('what', 'jacobi')} | {r['n']} | {r.get('grid', '2-D')} | {r['P']} | {r['calls']:.0f} | {r['msgs']:.1f} | {r['syncs']:.1f} | "
                   f"{r['colls']:.2f} | {r['cpu_us_median']:.0f} | {r['cpu_us_max']:.0f} |")
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--what", choices=("jacobi", "sort", "offsets"), default="jacobi")
    p.add_argument("--n", type=int, default=64, help="jacobi's side, sort's keys per locale, ISx's keys per locale")
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--rows", action="store_true", help="Block over rows only (default: Block's 2-D grid)")
    p.add_argument("--json", default=None, metavar="FILE", help="append the row (JSON lines)")
    p.add_argument("--profile", action="store_true", help="print a cProfile by call count instead")
    p.add_argument("--rank", type=int, default=0, help="the locale whose profile --profile prints")
    p.add_argument("--table", default=None, metavar="FILE", help="print the Markdown table of FILE's rows and stop")
    args = p.parse_args()
    if args.table:
        print(table(args.table))
        return
    row = measure(args.what, args.n, args.reps, args.profile, args.rank, args.rows)
    if row is not None:
        print(json.dumps(row))
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

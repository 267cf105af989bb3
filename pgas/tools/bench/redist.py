"""``pgas bench redist``: redistribution between Block, Cyclic and Block-Cyclic against a
hand-written ``Alltoallw`` with derived datatypes.

For each ordered pair of distributions of a 1-D float64 array of ``--size`` elements
it times ``A.redistribute(dist)`` (one pgas statement ``B[...] = A``: planned once,
then one aggregated transfer per locale pair) and the expert's mpi4py version: one
``MPI.Alltoallw`` whose per-peer ``Create_indexed`` datatypes were built beforehand
from the two layouts (so only the exchange is timed: a lower bound for any library).
Reported per pair: seconds of each (slowest locale, best trial), the ratio pgas /
Alltoallw, the bytes each moves between locales (pgas from
:func:`pgas.comm_diagnostics`, Alltoallw the elements that change locale times 8),
pgas's message count, and whether both results equal the source.
"""

from __future__ import annotations

import numpy as np

import pgas as pg
from pgas import comm
from pgas.tools.bench import parser, print_table, rawmpi, time_trials, write_result

LOCALES = 4
DISTS = {"Block": lambda: pg.Block(), "Cyclic": lambda: pg.Cyclic(), "BlockCyclic(64)": lambda: pg.BlockCyclic(64)}


def runs(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, lengths)`` of the maximal runs of consecutive integers in sorted ``positions``.

    >>> runs(np.array([0, 1, 2, 5, 7, 8]))
    (array([0, 5, 7]), array([3, 1, 2]))
    """
    if len(positions) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    cut = np.flatnonzero(np.diff(positions) != 1) + 1
    starts = np.concatenate(([0], cut))
    ends = np.concatenate((cut, [len(positions)]))
    return positions[starts], ends - starts


def peer_runs(mine, other, me: int, p: int) -> list:
    """For each peer ``r``: the runs of this locale's local positions under layout ``mine``
    whose elements belong to ``r`` under layout ``other`` (1-D: local storage follows the
    global index under every distribution, so both sides list a pair's elements in the
    same order)."""
    g = mine.owned(me)[0]
    owner = np.asarray(other.owners((g,)), dtype=np.int64).reshape(-1)
    order = np.argsort(owner, kind="stable")
    bounds = np.searchsorted(owner[order], np.arange(p + 1))
    return [runs(order[bounds[r]:bounds[r + 1]]) for r in range(p)]


def run_pair(n: int, src: str, dst: str, trials: int, warmup: int) -> dict:
    """Collective: time pgas and Alltoallw moving an ``n``-element array from ``src`` to ``dst``."""
    me, p = comm.here(), comm.num_locales()
    A = pg.arange(n, dtype=np.float64, dist=DISTS[src]())
    B = A.redistribute(DISTS[dst]())              # plans the statement once (cached after)
    t_pgas = time_trials(lambda: A.redistribute(DISTS[dst]()), trials, warmup)
    with pg.comm_diagnostics() as d:
        B = A.redistribute(DISTS[dst]())
    ok_pgas = bool(np.array_equal(B.local, B.layout.owned(me)[0].astype(np.float64)))
    send, recv = A.local.copy(), np.zeros(B.local.size)
    ex = rawmpi.alltoallw(send, recv, peer_runs(A.layout, B.layout, me, p), peer_runs(B.layout, A.layout, me, p))
    t_raw = time_trials(ex, trials, warmup)
    ex.free()
    ok_raw = bool(np.array_equal(recv, B.layout.owned(me)[0].astype(np.float64)))
    g = A.layout.owned(me)[0]
    moved = int(np.count_nonzero(np.asarray(B.layout.owners((g,))).reshape(-1) != me))
    raw_bytes = 8 * int(comm.allreduce(moved))
    ok = bool(comm.allreduce(int(ok_pgas and ok_raw), "min"))
    return {"n": n, "from": src, "to": dst, "pgas_seconds": t_pgas.min, "alltoallw_seconds": t_raw.min,
            "ratio": t_pgas.min / t_raw.min, "pgas_bytes": d.bytes, "alltoallw_bytes": raw_bytes,
            "pgas_messages": d.messages, "correct": ok}


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("redist", __doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=1 << 22,
                   help="global elements (default 2^22; the issue's figure is 2^26 at 4 locales)")
    p.set_defaults(trials=3)
    return p


def main(argv=None) -> int:
    """Run the benchmark; see the module docstring."""
    args = make_parser().parse_args(argv)
    names = list(DISTS)
    rows = [run_pair(args.size, s, t, args.trials, args.warmup) for s in names for t in names if s != t]
    ok = all(r["correct"] for r in rows)
    path = write_result("redist", {"locales": comm.num_locales(), "runs": rows, "correct": ok}, args.out)
    print_table(["n", "from", "to", "pgas s", "Alltoallw s", "pgas/Alltoallw", "pgas MB", "Alltoallw MB",
                 "pgas msgs", "correct"],
                [[r["n"], r["from"], r["to"], r["pgas_seconds"], r["alltoallw_seconds"], r["ratio"],
                  r["pgas_bytes"] / 1e6, r["alltoallw_bytes"] / 1e6, r["pgas_messages"], r["correct"]] for r in rows])
    if comm.here() == 0:
        print(f"results written to {path}")
    return 0 if ok else 1

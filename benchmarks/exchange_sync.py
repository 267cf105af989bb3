"""What the collective operations built on exchanges cost in synchronisations, per call.

For each operation below, run ``--calls`` times after a warm-up, under the default
collective call checking (folded, ``PGAS_CHECK`` unset; ``--check`` sets it):

- counted by :func:`pgas.comm_diagnostics`: global collectives other than barriers (reductions,
  agreements of collective calls, gathers, an exchange's consensus), barriers, messages and
  point-to-point notices, per call (the most of any locale);
- the collective MPI calls made on the library's communicators (``Iallreduce``,
  ``Iallgather``, ``Ibarrier``...: a rendezvous of every locale each), per call, counted by
  :class:`Counting`; and the RMA windows allocated (``MPI_Win_allocate``, collective too:
  a new result array's), per call.

The operations: ``A[idx]`` and ``A[idx] = v`` with a replicated random NumPy ``idx``
(advanced indexing), ``A.gather(idx)``, ``A.scatter(idx, v)`` and ``A.index_plan(idx)`` with
each locale's own random ``idx``, ``A.gather(plan)``, ``np.searchsorted`` of a distributed and
of a replicated ``v``, ``M.sum(axis=0)`` along a split axis, ``A.cumsum()``, and
``A.update(idx, v)`` for comparison.  The counts do not depend on the machine's load
(oversubscribed locales count the same as real ones): compare two checkouts by running this
script from each checkout's root with ``PYTHONPATH`` set to it, at 1, 2, 4, 8 locales::

    PYTHONPATH=$PWD python -m pgas run -n 4 benchmarks/exchange_sync.py --json /tmp/xs4.json
    cd OTHER && PYTHONPATH=$PWD python -m pgas run -n 4 THIS/benchmarks/exchange_sync.py --json /tmp/xs4-other.json
"""

from __future__ import annotations

import argparse
import json
import re

import numpy as np

import pgas as pg
from pgas import comm

#: MPI calls that every locale must make together (a global synchronisation each).
COLLECTIVE = re.compile(r"^I?(allreduce|Allreduce|barrier|Barrier|allgather|Allgather|allgatherv|Allgatherv|"
                        r"bcast|Bcast|alltoall|Alltoall|alltoallv|Alltoallv|exscan|Exscan|scan|Scan|reduce|Reduce)$")


def counting_comm(c, counts: dict):
    """A communicator object for ``c``'s handle that counts the calls of its methods by name
    (an ``Intracomm`` still: MPI calls taking a communicator, window allocation among them,
    accept it)."""
    from mpi4py import MPI

    class Counting(MPI.Intracomm):
        def __getattribute__(self, name):
            got = super().__getattribute__(name)
            if name[:1].isupper() and callable(got):
                counts[name] = counts.get(name, 0) + 1
            return got
    return Counting(c)


def counting_mpi(counts: dict):
    """Replace the library's communicators by counting ones, and count windows allocated
    (under ``"windows"``); returns what undoes it."""
    from pgas.comm import runtime, window

    names = [k for k in ("_comm", "_ncomm", "_acomm") if getattr(runtime, k, None) is not None]
    saved = {k: getattr(runtime, k) for k in names}
    for k in names:
        setattr(runtime, k, counting_comm(saved[k], counts))
    init = window.Window.__init__

    def counted_init(self, *args, **kw):
        counts["windows"] = counts.get("windows", 0) + 1
        init(self, *args, **kw)
    window.Window.__init__ = counted_init

    def undo():
        for k, v in saved.items():
            setattr(runtime, k, v)
        window.Window.__init__ = init
    return undo


def operations(n: int) -> dict:
    """The operations measured, each a callable of no arguments (collective), on arrays of
    about ``n`` elements per locale."""
    P, me = comm.num_locales(), comm.here()
    N = n * P
    A = pg.from_numpy(np.arange(N, dtype=np.float64), dist=pg.Block())
    S = pg.from_numpy(np.sort(np.random.default_rng(3).random(N)), dist=pg.Block())
    M = pg.from_numpy(np.ones((N // 8, 8)), dist=pg.Block())
    every = np.random.default_rng(1).integers(0, N, n)            # the same on every locale
    vals = np.random.default_rng(2).random(n)
    mine = np.random.default_rng(10 + me).integers(0, N, n)       # this locale's own
    V = pg.from_numpy(np.random.default_rng(4).random(N), dist=pg.Block())
    queries = np.random.default_rng(5).random(64)
    plan = A.index_plan(mine)

    def setitem():
        A[every] = vals
    return {"A[idx]": lambda: A[every], "A[idx] = v": setitem,
            "A.gather(idx)": lambda: A.gather(mine), "A.scatter(idx, v)": lambda: A.scatter(mine, vals),
            "A.index_plan(idx)": lambda: A.index_plan(mine), "A.gather(plan)": lambda: A.gather(plan),
            "searchsorted(S, V)": lambda: np.searchsorted(S, V), "searchsorted(S, v)": lambda: np.searchsorted(S, queries),
            f"M.sum(axis=0), grid {M.layout.grid}": lambda: M.sum(axis=0), "A.cumsum()": lambda: A.cumsum(),
            "A.update(idx, v)": lambda: A.update(mine, vals, "add")}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1024, help="elements per locale (default 1024)")
    p.add_argument("--calls", type=int, default=4, help="calls counted per operation (default 4)")
    p.add_argument("--warmup", type=int, default=2, help="uncounted calls first (default 2)")
    p.add_argument("--check", default=None, help="pg.config(check=...): auto, on, off (default: the library's)")
    p.add_argument("--json", default=None, help="write the figures here (locale 0)")
    a = p.parse_args()
    if a.check is not None:
        pg.config(check={"on": True, "off": False}.get(a.check, a.check))
    P, me = comm.num_locales(), comm.here()
    ops = operations(a.n)
    rows = {}
    for name, op in ops.items():
        for _ in range(a.warmup):
            op()
        with pg.comm_diagnostics() as d:
            for _ in range(a.calls):
                op()
        calls: dict = {}
        comm.barrier()
        undo = counting_mpi(calls)
        try:
            for _ in range(a.calls):
                op()
        finally:
            undo()
        mpi = max(comm.allgather(sum(c for k, c in calls.items() if COLLECTIVE.match(k))))
        windows = max(comm.allgather(calls.get("windows", 0)))
        rows[name] = {"collectives": d.collectives / a.calls, "barriers": d.barriers / a.calls,
                      "messages": d.messages / a.calls, "syncs": d.syncs / a.calls,
                      "collective_mpi_calls": mpi / a.calls, "windows": windows / a.calls}
    if me == 0:
        width = max(len(k) for k in rows)
        print(f"{P} locales, per call: collectives barriers | MPI collective calls, windows | messages syncs")
        for name, r in rows.items():
            print(f"  {name:<{width}}  {r['collectives']:5.2f} {r['barriers']:5.2f} | "
                  f"{r['collective_mpi_calls']:5.2f} {r['windows']:5.2f} | {r['messages']:7.2f} {r['syncs']:7.2f}")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"locales": P, "n": a.n, "calls": a.calls, "check": a.check, "pgas": pg.__file__,
                           "per_call": rows}, f, indent=1)


if __name__ == "__main__":
    main()

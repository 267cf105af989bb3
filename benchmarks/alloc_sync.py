"""What making a new distributed array costs in synchronisations, per call.

For each operation below, run ``--calls`` times after a warm-up (its results dropped at
once, so a steady state reuses pooled windows), under the default collective call
checking (folded, ``PGAS_CHECK`` unset; ``--check on`` / ``off`` sets it):

- counted by :func:`pgas.comm_diagnostics`: global collectives other than barriers
  (reductions, agreements of collective calls, gathers, an exchange's consensus),
  barriers, messages and payload bytes, per call (the most of any locale for the
  synchronisations, all locales together for messages and bytes);
- the collective MPI calls made on the library's communicators (``Iallreduce``,
  ``Ibarrier``, ``Ialltoallv``...: a rendezvous of every locale each), per call and
  locale, and the RMA windows allocated (``MPI_Win_allocate``, collective too), per
  call, counted as ``benchmarks/exchange_sync.py`` counts them.

The operations: ``pg.zeros(n)`` and ``pg.empty(n)`` (a new array), ``A + B`` (a temporary),
``A.copy()``, ``rng.random`` on Block (each locale draws its own values) and on Cyclic
(values dealt out by exchanges), and ``np.quantile`` (selection: samples and counts move,
never the data).  The counts do not depend on the machine's load (oversubscribed
locales count the same as real ones): compare two checkouts by running this script from
each checkout's root with ``PYTHONPATH`` set to it, at 1, 2, 4, 8 locales::

    PYTHONPATH=$PWD python -m pgas run -n 4 benchmarks/alloc_sync.py --json /tmp/as4.json
    cd OTHER && PYTHONPATH=$PWD python -m pgas run -n 4 THIS/benchmarks/alloc_sync.py --json /tmp/as4-other.json
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from exchange_sync import COLLECTIVE, counting_mpi

import pgas as pg
from pgas import comm


def operations(n: int) -> dict:
    """The operations measured, each a callable of no arguments (collective), on arrays of
    ``n`` elements per locale."""
    N = n * comm.num_locales()
    A = pg.from_numpy(np.arange(N, dtype=np.float64))
    B = pg.from_numpy(np.ones(N))
    rng = pg.random.default_rng(7)
    Q = pg.from_numpy(np.random.default_rng(3).random(N))
    return {"pg.zeros(n)": lambda: pg.zeros(N), "pg.empty(n)": lambda: pg.empty(N),
            "A + B": lambda: A + B, "A.copy()": lambda: A.copy(),
            "rng.random(n) (Block)": lambda: rng.random(N),
            "rng.random(n, Cyclic)": lambda: rng.random(N, dist=pg.Cyclic()),
            "np.quantile(Q, [.1, .5, .9])": lambda: np.quantile(Q, [0.1, 0.5, 0.9])}


def measure(op, calls: int, warmup: int) -> dict:
    """Collective: the counts per call of ``op`` (see the module's text)."""
    for _ in range(warmup):
        op()
    with pg.comm_diagnostics() as d:
        for _ in range(calls):
            op()
    counted: dict = {}
    comm.barrier()
    undo = counting_mpi(counted)
    try:
        for _ in range(calls):
            op()
    finally:
        undo()
    mpi = max(comm.allgather(sum(c for k, c in counted.items() if COLLECTIVE.match(k))))
    windows = max(comm.allgather(counted.get("windows", 0)))
    return {"collectives": d.collectives / calls, "barriers": d.barriers / calls,
            "messages": d.messages / calls, "bytes": d.bytes / calls,
            "collective_mpi_calls": mpi / calls, "windows": windows / calls}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1 << 16, help="elements per locale (default 65536)")
    p.add_argument("--calls", type=int, default=4, help="calls counted per operation (default 4)")
    p.add_argument("--warmup", type=int, default=2, help="uncounted calls first (default 2)")
    p.add_argument("--check", default=None, help="pg.config(check=...): auto, on, off (default: the library's)")
    p.add_argument("--json", default=None, help="write the figures here (locale 0)")
    a = p.parse_args()
    if a.check is not None:
        pg.config(check={"on": True, "off": False}.get(a.check, a.check))
    P = comm.num_locales()
    rows = {name: measure(op, a.calls, a.warmup) for name, op in operations(a.n).items()}
    if comm.here() == 0:
        width = max(len(k) for k in rows)
        print(f"{P} locales, per call: collectives barriers | MPI collective calls, windows | messages bytes")
        for name, r in rows.items():
            print(f"  {name:<{width}}  {r['collectives']:5.2f} {r['barriers']:5.2f} | "
                  f"{r['collective_mpi_calls']:5.2f} {r['windows']:5.2f} | {r['messages']:7.2f} {r['bytes']:10.0f}")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"locales": P, "n": a.n, "calls": a.calls, "check": a.check, "pgas": pg.__file__,
                           "per_call": rows}, f, indent=1)


if __name__ == "__main__":
    main()

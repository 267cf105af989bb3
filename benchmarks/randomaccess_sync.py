"""What one block of RandomAccess's aggregated update costs in synchronisations and Python.

Runs the ``aggregated`` variant's loop of ``pgas bench randomaccess`` (per block of at
most 1024 updates per locale one collective ``T.update(indices, values, "xor")``) for
``--blocks`` blocks, four times after a warm-up:

- counted by :func:`pgas.comm_diagnostics`: messages, point-to-point notices, barriers
  and (where the checkout counts them) other global collectives, per block;
- the methods called on the library's communicators, by name (``Iallreduce``,
  ``Isend``, ``Improbe``...), per block and locale: the global synchronisations are
  the collective ones (reductions, barriers, gathers), whichever checkout counts them;
- under cProfile on every locale: Python function calls per block (the C functions
  that cProfile sees included), all of them and less those a wait makes once per poll
  (:data:`POLLING`, ``pause``: how many polls a wait takes depends on the load; so does
  the count of ``Improbe`` calls);
- timed: seconds per block (the slowest locale; a secondary figure, load-dependent).

The other counts do not depend on the machine's load: compare two checkouts by running
this script from each checkout's root with ``PYTHONPATH`` set to it (``python -m pgas``
imports the package of the current directory first), at 1, 2, 4, 8, 16 locales
(oversubscribed locales count the same as real ones)::

    PYTHONPATH=$PWD python -m pgas run -n 4 benchmarks/randomaccess_sync.py --json /tmp/ra4.json
    cd OTHER && PYTHONPATH=$PWD python -m pgas run -n 4 THIS/benchmarks/randomaccess_sync.py --json /tmp/ra4-other.json

``--profile`` prints locale 0's cProfile of the blocks (the 40 first by ``--sort``).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.tools.bench.hpcc_rng import RandomStream
from pgas.tools.bench.randomaccess import LOOKAHEAD, make_table, table_size

#: MPI calls that every locale must make together (a global synchronisation each).
COLLECTIVE = re.compile(r"^I?(allreduce|Allreduce|barrier|Barrier|allgather|Allgather|allgatherv|Allgatherv|"
                        r"bcast|Bcast|alltoall|Alltoall|alltoallv|Alltoallv|exscan|Exscan|reduce|Reduce)$")


#: What a wait calls once per poll (as many as the wait takes: load-dependent).
POLLING = ("<built-in method posix.sched_yield>", "<built-in method time.sleep>", "<method 'append' of 'list' objects>")


def blocks(T, stream, n: int) -> None:
    """Collective: ``n`` blocks of the aggregated variant (``run_aggregated``'s loop body)."""
    mask = np.uint64(T.size - 1)
    for _ in range(n):
        ran = stream.next_block()
        T.update((ran & mask).view(np.int64), ran.view(np.int64), "xor")


class Counting:
    """Stands for one of the library's communicators, counting the calls of its methods by
    name (cProfile does not see mpi4py's methods)."""

    def __init__(self, c, counts: dict) -> None:
        self._c, self._counts = c, counts

    def __getattr__(self, name):
        got = getattr(self._c, name)
        if not callable(got):
            return got

        def call(*args, **kwargs):
            self._counts[name] = self._counts.get(name, 0) + 1
            return got(*args, **kwargs)
        return call


def counting_mpi(counts: dict):
    """Replace the library's communicators by :class:`Counting` ones; returns what undoes it."""
    from pgas.comm import runtime
    names = [k for k in ("_comm", "_ncomm", "_acomm") if getattr(runtime, k, None) is not None]
    saved = {k: getattr(runtime, k) for k in names}
    for k in names:
        setattr(runtime, k, Counting(saved[k], counts))

    def undo():
        for k, v in saved.items():
            setattr(runtime, k, v)
    return undo


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--log2-table", type=int, default=16, help="about 2^K table words per locale (default 16)")
    p.add_argument("--blocks", type=int, default=48, help="blocks per measured pass (default 48)")
    p.add_argument("--warmup", type=int, default=16, help="untimed blocks first (default 16)")
    p.add_argument("--json", default=None, help="write the figures here (locale 0)")
    p.add_argument("--profile", action="store_true", help="print locale 0's cProfile of the blocks")
    p.add_argument("--sort", default="tottime", help="the profile's order (pstats: tottime, ncalls...)")
    a = p.parse_args()
    P, me = comm.num_locales(), comm.here()
    T = make_table(table_size(a.log2_table, P))
    owned = T.layout.owned(me)[0]
    stream = RandomStream(4 * (int(owned[0]) if len(owned) else 0), 4 * len(owned), LOOKAHEAD)
    if stream.blocks < a.warmup + 3 * a.blocks:
        raise SystemExit(f"--log2-table {a.log2_table} gives {stream.blocks} blocks per locale: "
                         f"fewer than --warmup + 3 x --blocks")
    n = a.blocks
    blocks(T, stream, a.warmup)

    with pg.comm_diagnostics() as d:
        blocks(T, stream, n)
    counted = {"messages": d.messages / n, "syncs": d.syncs / n, "barriers": d.barriers / n,
               "collectives": getattr(d, "collectives", None)}
    if counted["collectives"] is not None:
        counted["collectives"] /= n

    comm.barrier()
    calls: dict = {}
    undo = counting_mpi(calls)
    try:
        blocks(T, stream, n)
    finally:
        undo()

    comm.barrier()
    prof = cProfile.Profile()
    prof.enable()
    blocks(T, stream, n)
    prof.disable()
    stats = pstats.Stats(prof)
    polls = sum(c for (file, _, name), (_, c, *_r) in stats.stats.items() if name in POLLING
                or (file.endswith(os.path.join("comm", "waits.py")) and name in ("pause", "<lambda>")))
    mine = {"python_calls": stats.total_calls / n, "python_calls_less_polls": (stats.total_calls - polls) / n,
            "collective_mpi_calls": sum(c for k, c in calls.items() if COLLECTIVE.match(k)) / n,
            "mpi_calls": {k: c / n for k, c in sorted(calls.items())}}
    every = comm.allgather(mine)

    comm.barrier()
    t0 = time.perf_counter()
    blocks(T, stream, n)
    seconds = float(comm.allreduce(time.perf_counter() - t0, "max")) / n

    if me == 0:
        result = {"locales": P, "table_words": T.size, "blocks": n, "diagnostics_per_block": counted,
                  "python_calls_per_block": {"max": max(e["python_calls"] for e in every),
                                             "mean": sum(e["python_calls"] for e in every) / P},
                  "python_calls_less_polls_per_block": {
                      "max": max(e["python_calls_less_polls"] for e in every),
                      "mean": sum(e["python_calls_less_polls"] for e in every) / P},
                  "collective_mpi_calls_per_block": max(e["collective_mpi_calls"] for e in every),
                  "mpi_calls_per_block_by_locale": [e["mpi_calls"] for e in every],
                  "seconds_per_block": seconds, "pgas": pg.__file__}
        print(json.dumps({k: v for k, v in result.items() if k != "mpi_calls_per_block_by_locale"}, indent=1))
        print("locale 0's MPI calls per block:", json.dumps(every[0]["mpi_calls"]))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(result, f, indent=1)
        if a.profile:
            out = io.StringIO()
            stats.stream = out
            stats.sort_stats(a.sort).print_stats(40)
            print(out.getvalue())


if __name__ == "__main__":
    main()

"""``pgas bench sort``: the distributed sample sort (:func:`pgas.sort`) against ``np.sort``.

For each size, every locale holds ``keys`` float64 keys from ``pg.random``
(Block); the timed step is ``pg.sort(A)`` (slowest locale per trial).  The
reference is ``np.sort`` of the whole ``keys * P`` array in one process
(locale 0, alone).  Rates are million keys per second of the whole array.
Verification (no global copy): every locale's part is sorted, the parts are in
order across locales, and the key count and sum are preserved.  ``--dtype``
chooses float64 keys (uniform in [0, 1)) and/or int64 keys (uniform over
[0, 2^62)).  ``--reference PATH`` also runs the ParRes ISx MPI binary
(``isx.weak_iso``, built by the reference build described in ``docs/benchmarks.md`` (Reference codes)) at the same keys per
locale and locale count, and reports its key rate beside pgas's: ISx sorts
32-bit integer keys of a known range with one bucket exchange, which is the
bound a general comparison sort can approach, not match.

``--ops sort,argsort`` also times ``pg.argsort`` (the stable order, which moves
each key's global index with it).  For each size, one more call of each runs
under ``pg.trace``: the JSON's ``phases`` give each locale's processor time and
wall time (ms) in each phase of the sort (the spans named ``sort: ...``: local
sort, splitters, exchange, merge, place), and the table their mean and largest
over locales; processor time is what a phase costs a locale even when the
locales share cores.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.tools import trace as trace_tool
from pgas.tools.bench import choices, parser, print_table, reference, time_trials, write_result

LOCALES = 4
#: The timed calls.
OPS = {"sort": lambda A: pg.sort(A), "argsort": lambda A: pg.argsort(A)}


def verify(A, S) -> bool:
    """Collective: ``S`` is ``A`` sorted (local order, order across locales, count and sum)."""
    part = S.local
    ok = bool(np.all(part[1:] >= part[:-1]))
    edges = comm.allgather((part[:1], part[-1:]))
    seq = [e for pair in edges for e in pair if len(e)]
    ok &= all(a[0] <= b[0] for a, b in zip(seq, seq[1:]))
    sums = comm.allreduce(np.array([A.local.sum(), S.local.sum()]), "sum")
    ok &= S.size == A.size and bool(np.isclose(sums[0], sums[1], rtol=1e-9))
    return bool(comm.allreduce(np.int32(ok), "min"))


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("sort", __doc__.split("\n\n")[0])
    p.add_argument("--keys", default="65536,262144,1048576", help="keys per locale, comma-separated "
                   "(default 2^16,2^18,2^20)")
    p.add_argument("--seed", type=int, default=0, help="seed of pg.random for the keys (default 0)")
    p.add_argument("--dtype", default="float64", help="key dtypes, comma-separated: float64, int64 (default float64)")
    p.add_argument("--ops", type=choices(OPS), default=["sort"], help="what to time, comma-separated: "
                   "sort, argsort (default sort)")
    p.add_argument("--reference", default=None, metavar="PATH",
                   help="the ParRes ISx MPI binary (isx.weak_iso) to run at the same keys per locale")
    return p


def _keys(seed: int, size: int, dtype: str):
    rng = pg.random.default_rng(seed)
    return rng.random(size) if dtype == "float64" else rng.integers(0, 1 << 62, size)


def _numpy_keys(seed: int, size: int, dtype: str):
    g = np.random.default_rng(seed)
    return g.random(size) if dtype == "float64" else g.integers(0, 1 << 62, size)


def phases(fn) -> dict:
    """Collective: ``fn()`` once under ``pg.trace``; ``{phase: {"cpu_ms": [per locale],
    "wall_ms": [per locale]}}`` from its spans named ``sort: PHASE``."""
    where = comm.bcast(tempfile.mkdtemp(prefix="pgas-sort-phases-") if comm.here() == 0 else None, 0)
    with pg.trace(where):
        fn()
    out = None
    if comm.here() == 0:
        out = {}
        for e in trace_tool.load(where):
            if e["name"].startswith("sort: "):
                got = out.setdefault(e["name"][6:], {"cpu_ms": [0.0] * pg.num_locales, "wall_ms": [0.0] * pg.num_locales})
                got["cpu_ms"][e["pid"]] += e["args"]["cpu_us"] / 1e3
                got["wall_ms"][e["pid"]] += e["dur"] / 1e3
        shutil.rmtree(where, ignore_errors=True)
    return comm.bcast(out, 0)


def isx_rate(path: str, keys: int, trials: int):
    """Collective: million keys per second of the ISx MPI reference at ``keys`` per locale
    (its mean total time per iteration), or None if it did not run."""
    log = os.path.join(tempfile.gettempdir(), f"pgas-sort-isx-{comm.bcast(os.getpid(), 0)}.log")
    res = reference.run([reference.mpiexec(), "-n", pg.num_locales, path, keys, trials, log])
    total = reference.number(r"Average total time \(per PE\):\s*([0-9.eE+-]+)", res["stdout"])
    return None if not total else keys * pg.num_locales / total / 1e6


def main(argv=None) -> int:
    """Run the benchmark; see the module docstring."""
    args = make_parser().parse_args(argv)
    P = pg.num_locales
    rows, ok = [], True
    dtypes = [d for d in args.dtype.split(",") if d]
    if any(d not in ("float64", "int64") for d in dtypes):
        raise SystemExit(f"pgas bench sort: --dtype takes float64 and/or int64, got {args.dtype!r}")
    for n in [int(k) for k in args.keys.split(",") if k]:
        isx = isx_rate(args.reference, n, args.trials) if args.reference else None
        for dt in dtypes:
            A = _keys(args.seed, n * P, dt)
            ref = None
            if comm.here() == 0:
                x = _numpy_keys(args.seed, n * P, dt)
                times = []
                for _ in range(args.trials):
                    t0 = time.perf_counter()
                    np.sort(x)
                    times.append(time.perf_counter() - t0)
                ref = min(times)
            ref = comm.bcast(ref, 0)
            for op in args.ops:
                S = OPS[op](A)
                good = verify(A, S) if op == "sort" else verify(A, A[S])
                ok &= good
                t = time_trials(lambda: OPS[op](A), args.trials, args.warmup)
                rows.append({"keys_per_locale": n, "keys": n * P, "dtype": dt, "op": op, "seconds": t.summary(),
                             "np_sort_seconds": ref, "mkeys_per_s": n * P / t.min / 1e6,
                             "np_sort_mkeys_per_s": n * P / ref / 1e6, "isx_mkeys_per_s": isx, "verified": good,
                             "phases": phases(lambda: OPS[op](A))})
    path = write_result("sort", {"locales": P, "sizes": rows, "verified": ok}, args.out)
    print_table(["keys/locale", "dtype", "op", "seconds", "Mkeys/s", "np.sort Mkeys/s (1 process)", "ISx MPI Mkeys/s",
                 "verified"],
                [[r["keys_per_locale"], r["dtype"], r["op"], r["seconds"]["min"], r["mkeys_per_s"],
                  r["np_sort_mkeys_per_s"], "-" if r["isx_mkeys_per_s"] is None else r["isx_mkeys_per_s"],
                  "yes" if r["verified"] else "NO"] for r in rows])
    print_table(["keys/locale", "dtype", "op", "phase", "cpu ms mean", "cpu ms max", "wall ms mean", "wall ms max"],
                [[r["keys_per_locale"], r["dtype"], r["op"], name, float(np.mean(ph["cpu_ms"])), max(ph["cpu_ms"]),
                  float(np.mean(ph["wall_ms"])), max(ph["wall_ms"])]
                 for r in rows for name, ph in r["phases"].items()])
    if comm.here() == 0:
        print(f"results written to {path}")
    return 0 if ok else 1

"""``pgas bench isx``: the ISx scalable integer sort (uniform keys, weak scaling), two styles.

Each locale makes ``keys`` uniform random keys in ``[0, width * locales)``
(its own seed), so locale ``r``'s bucket is ``[r * width, (r + 1) * width)``.
Phases, timed separately (slowest locale per trial, averaged over the trials
after the warm-up):

1. ``bucketize``: group the local keys by destination bucket (a counting sort:
   one counting pass and one placement pass, compiled with numba when present,
   :func:`pgas.array.counting.group_keys`);
2. ``imbalance``: a barrier, timed: how long a locale waits for the slowest
   one's ``bucketize``.  Without it the first phase that synchronises, the
   offsets, took that wait (at 16 locales on 16 cores "offsets" measured 25 ms,
   against 0.2 ms at one locale and 11-18 ms for ParRes's whole all-to-all);
3. ``offsets``: where each locale's keys go in each receive buffer;
4. ``exchange``: one bulk ``put`` of a slice from the middle of the receive
   array per destination locale (one message each), then a barrier;
5. ``count``: count each key of the local bucket.

Styles (the ISx-in-Chapel slides' two): ``spmd`` computes offsets by an
exclusive scan of the bucket counts over locales (``MPI_Exscan``, beside a
reduction of them for the keys each receives) and counts its bucket's keys
serially (``np.bincount``, the slides' ``for`` loop with no atomics);
``global`` is the slides' global view: it reserves space with one one-sided
``fetch_add`` per destination on a counter per locale, and counts with
atomic adds into ONE distributed array of key counts (``keyCounts[key].add(1)``
in a ``forall`` over the received keys): ``np.add.at(counts, keys, 1)`` on
a ``Block`` array of ``width * locales`` counts, an aggregated one-way update
(each locale's keys lie in its own block, so it updates its own counts).
Verification: every key arrives exactly once (totals and key sums agree), all
keys on a locale lie in its bucket, and the counts sum to the keys received.

Keys are int64 by default; ``--key-type int32`` uses ISx's ``KEY_TYPE`` (int).
``--reference PATH`` runs the ParRes ISx MPI binary (``isx.weak_iso``, built by
the reference build described in ``docs/benchmarks.md`` (Reference codes)) in the same job with the same keys per locale and
locale count, after pgas's trials; its bucket width (WEAK_ISO, 8192 keys per
locale) becomes the default ``--width``.  ISx prints its mean total and
all-to-all times per iteration (means over iterations and PEs; its total
includes making the keys, pgas's phases do not); both are reported next to
pgas's.
"""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.array import counting
from pgas.tools.bench import choices, parser, print_table, progress, reference, write_result

PHASES = ("bucketize", "imbalance", "offsets", "exchange", "count")
STYLES = ("spmd", "global")


ISO_WIDTH = 8192                                   # ISx's WEAK_ISO bucket width (params.h)


def make_keys(n: int, width: int, locales: int, locale: int, seed: int = 0, dtype=np.int64) -> np.ndarray:
    """Locale ``locale``'s ``n`` keys, uniform in ``[0, width * locales)`` (``dtype``), from its own
    stream (NumPy's PCG64 seeded with ``(seed, locale)``): the same on any number of runs."""
    rng = np.random.default_rng([seed, locale])
    if width * locales > np.iinfo(dtype).max:
        raise ValueError(f"keys up to {width * locales} do not fit in {np.dtype(dtype)}")
    return rng.integers(0, width * locales, size=n, dtype=np.int64).astype(dtype)


def bucketize(keys: np.ndarray, width: int, locales: int) -> tuple[np.ndarray, np.ndarray]:
    """Keys grouped by destination locale (stable) and the count per destination: O(n)."""
    return counting.group_keys(keys, width, locales)


class Sorter:
    """The distributed state of one ISx run: receive buffers and per-locale fill counters."""

    def __init__(self, keys_per_locale: int, width: int, dtype=np.int64) -> None:
        P = pg.num_locales
        self.width = width
        self.cap = int(keys_per_locale * 1.25) + 1024
        self.recv = pg.zeros(P * self.cap, dtype=dtype, dist=pg.Block(), name="receive buffers")
        self.fill = pg.zeros(P, dtype=np.int64, dist=pg.Block(), name="fill counters")
        self.counts = None                      # the global view's key counts (made at its first count)
        self.received = 0

    def offsets_spmd(self, counts: np.ndarray) -> np.ndarray:
        """Collective: my write offset in every receive buffer, by an exclusive scan over locales
        (``MPI_Exscan`` of the counts), beside a reduction of them for the keys I receive: two
        collectives of P integers each, overlapped, in log P steps."""
        counts = np.asarray(counts, dtype=np.int64)
        total = comm.iallreduce(counts, "sum")
        offsets = comm.exscan(counts)
        self.received = int(total.wait()[comm.here()])
        return offsets

    def offsets_global(self, counts: np.ndarray) -> np.ndarray:
        """My write offsets, reserved with one atomic ``fetch_add`` per destination; the
        receive counts are read after the exchange's barrier."""
        return np.array([self.fill.fetch_add(d, int(c)) if c else 0 for d, c in enumerate(counts)])

    def exchange(self, sorted_keys: np.ndarray, counts: np.ndarray, offsets: np.ndarray, style: str) -> None:
        """Collective: one bulk put per destination, then a barrier."""
        if np.any(offsets + counts > self.cap):
            raise RuntimeError(f"ISx receive buffer of {self.cap} keys overflows")
        start = 0
        for d, (c, off) in enumerate(zip(counts.tolist(), offsets.tolist())):
            if c:
                lo = d * self.cap + off
                self.recv.put(slice(lo, lo + c), sorted_keys[start:start + c])
            start += c
        comm.barrier()
        if style == "global":
            self.received = int(self.fill.local[0])

    def count(self, style: str = "spmd") -> np.ndarray:
        """The count of every key of my bucket among the keys I received (a slot holding
        anything else, e.g. the -1 of a lost key, is left to the verification): serially
        (``spmd``), or (``global``, collective) by atomic adds of one into the distributed
        key counts, ``np.add.at(counts, keys, 1)``, whose block on this locale is my bucket's."""
        lo = comm.here() * self.width
        got = self.recv.local[:self.received]
        if style == "global":
            if self.counts is None:
                self.counts = pg.zeros(pg.num_locales * self.width, dtype=np.int64, dist=pg.Block(),
                                       name="key counts")
            keys = got[(got >= lo) & (got < lo + self.width)].astype(np.int64)
            np.add.at(self.counts, keys, np.ones(keys.size, dtype=np.int64))
            return self.counts.local.copy()
        mine = got - lo
        return np.bincount(mine[(mine >= 0) & (mine < self.width)], minlength=self.width)

    def reset(self) -> None:
        """Collective: empty the counters and fill the receive buffers with -1 (in no
        bucket), so a key lost in the next trial cannot pass for one left by the last."""
        self.fill.local[...] = 0
        self.recv.local[...] = -1
        if self.counts is not None:
            self.counts.local[...] = 0
        self.received = 0
        comm.barrier()


def sort_once(sorter: Sorter, keys: np.ndarray, style: str) -> tuple[dict, np.ndarray]:
    """Collective: one ISx trial; per-phase seconds on this locale and the key counts."""
    P = pg.num_locales
    sorter.reset()
    t = {}
    t0 = time.perf_counter()
    sorted_keys, counts = bucketize(keys, sorter.width, P)
    t1 = time.perf_counter()
    comm.barrier()
    t1b = time.perf_counter()
    offsets = sorter.offsets_spmd(counts) if style == "spmd" else sorter.offsets_global(counts)
    t2 = time.perf_counter()
    err = None
    try:
        sorter.exchange(sorted_keys, counts, offsets, style)
    except RuntimeError as e:
        err = e
    comm.agree(err)
    t3 = time.perf_counter()
    key_counts = sorter.count(style)
    t4 = time.perf_counter()
    t.update(bucketize=t1 - t0, imbalance=t1b - t1, offsets=t2 - t1b, exchange=t3 - t2, count=t4 - t3)
    return t, key_counts


def verify(sorter: Sorter, keys: np.ndarray, key_counts: np.ndarray) -> dict:
    """Collective: every key arrived once, in the right bucket, and was counted."""
    got = sorter.recv.local[:sorter.received]
    lo = comm.here() * sorter.width
    in_bucket = bool(np.all((got >= lo) & (got < lo + sorter.width)))
    sent = comm.allreduce(np.array([keys.size, int(keys.sum())], dtype=np.int64), "sum")
    recv = comm.allreduce(np.array([got.size, int(got.sum())], dtype=np.int64), "sum")
    counted = int(comm.allreduce(int(key_counts.sum()), "sum"))
    ok_bucket = bool(comm.allreduce(np.int32(in_bucket), "min"))
    ok = ok_bucket and np.array_equal(sent, recv) and counted == int(sent[0])
    return {"keys": int(sent[0]), "received": int(recv[0]), "counted": counted, "in_bucket": ok_bucket,
            "verified": bool(ok)}


def run_style(style: str, keys: np.ndarray, width: int, trials: int, warmup: int) -> dict:
    """Collective: warm-up, timed trials and verification of one style."""
    sorter = Sorter(keys.size, width, keys.dtype)
    per_trial, check = [], None
    for k in range(warmup + trials):
        t, key_counts = sort_once(sorter, keys, style)
        if k >= warmup:
            per_trial.append({p: float(comm.allreduce(t[p], "max")) for p in PHASES})
        check = verify(sorter, keys, key_counts)
        if not check["verified"]:
            break
    mean = {p: float(np.mean([t[p] for t in per_trial])) if per_trial else 0.0 for p in PHASES}
    total = sum(mean.values())
    return {"style": style, "phase_seconds_mean": mean, "total_seconds_mean": total,
            "mkeys_per_s": keys.size * pg.num_locales / total / 1e6 if total else 0.0,
            "trials": per_trial, "verification": check, "verified": check["verified"]}


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("isx", __doc__.split("\n\n")[0])
    p.add_argument("--keys", type=int, default=1 << 22, help="keys per locale (default 2^22)")
    p.add_argument("--width", type=int, default=None,
                   help=f"bucket width = key range per locale (default: --keys; {ISO_WIDTH} with --reference)")
    p.add_argument("--key-type", choices=("int32", "int64"), default="int64",
                   help="key dtype (default int64; ISx's keys are int32)")
    p.add_argument("--reference", default=None, metavar="PATH",
                   help="the ISx MPI binary (isx.weak_iso) to run in the same job for comparison")
    p.add_argument("--styles", type=choices(STYLES), default=list(STYLES), metavar="LIST",
                   help=f"comma-separated from {', '.join(STYLES)} (default all)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the random keys (each locale draws from seed and its locale id; default 0)")
    return p


def main(argv: list[str]) -> int:
    p = make_parser()
    args = p.parse_args(argv)
    width = args.width or (ISO_WIDTH if args.reference else args.keys)
    keys = make_keys(args.keys, width, pg.num_locales, comm.here(), args.seed, np.dtype(args.key_type))
    results = []
    for s in args.styles:
        progress(f"style {s}: {args.trials} trials")
        results.append(run_style(s, keys, width, args.trials, args.warmup))
    ok = all(r["verified"] for r in results)
    ref = run_reference(args, width) if args.reference else None
    path = write_result("isx", {"keys_per_locale": args.keys, "bucket_width": width, "key_type": args.key_type,
                                "styles": results, "reference": ref, "verified": ok}, args.out)
    if comm.here() == 0:
        print(f"ISx: {args.keys} keys per locale, {pg.num_locales} locales; mean seconds per phase "
              f"(slowest locale) over {args.trials} trials")
    print_table(["style", *PHASES, "total", "Mkeys/s", "verified"],
                [[r["style"], *(r["phase_seconds_mean"][ph] for ph in PHASES), r["total_seconds_mean"],
                  r["mkeys_per_s"], "yes" if r["verified"] else "NO"] for r in results])
    if comm.here() == 0 and ref:
        print(f"ParRes ISx MPI ({ref['argv'][-3]} keys per PE, width {ISO_WIDTH}, {pg.num_locales} PEs): "
              f"total {ref['total_seconds']} s, all2all {ref['all2all_seconds']} s per iteration; "
              + ", ".join(f"pgas {r['style']} / ISx = {r['total_seconds_mean'] / ref['total_seconds']:.2f}x"
                          for r in results if ref["total_seconds"]))
    if comm.here() == 0:
        print(f"results written to {path}")
    return 0 if ok else 1


def run_reference(args, width: int) -> dict:
    """Collective: the ISx MPI binary at this job's locale count and keys per locale (it
    draws its own keys, with its own generator); its mean times per iteration."""
    if width != ISO_WIDTH:
        progress(f"note: ISx WEAK_ISO uses bucket width {ISO_WIDTH}, pgas ran with {width}")
    iters = args.trials
    progress(f"reference: {args.reference} ({iters} iterations after its burn-in)")
    log = os.path.join(tempfile.gettempdir(), f"pgas-isx-ref-{comm.bcast(os.getpid(), 0)}.log")
    res = reference.run([reference.mpiexec(), "-n", pg.num_locales, args.reference, args.keys, iters, log])
    total = reference.number(r"Average total time \(per PE\):\s*([0-9.eE+-]+)", res["stdout"])
    a2a = reference.number(r"Average all2all time \(per PE\):\s*([0-9.eE+-]+)", res["stdout"])
    return dict(res, total_seconds=total, all2all_seconds=a2a, iterations=iters)

"""``pgas bench soak``: a long mixed workload, with each locale's resident memory sampled
as it runs: it must stay flat (no leak of windows, plans, caches or files).

Each round runs Jacobi sweeps on a 2-D Block array, irregular updates and gathers on a
1-D array (per-locale random indices), reductions, a temporary array made and dropped,
a lazy expression and ``pg.explain`` of a statement; every ``--save-every`` rounds a
``pg.save`` / ``pg.load`` round trip, and every ``--checkpoint-every`` seconds a
``pg.checkpoint`` (``keep=2``), restored and compared on the next one.  Locale 0's clock
decides when the run ends (``--minutes``), so every locale runs the same rounds.

Checked as it runs: each round's update counts (the 1-D array's sum), every round trip
and restore equal to what was saved.  Reported: rounds, statements per second, and per
locale the resident memory (``/proc/self/statm``) sampled every ``--sample`` seconds;
the growth is the median of the last quarter of the samples less the median of the second
quarter (after warm-up), flat when under ``max(8 MiB, 2 %)`` on every locale.

    pgas bench soak -n 4 --minutes 20          (the full soak; a benchmark, not a test)
    pgas bench soak -n 2 --minutes 0.2 --side 64  (a quick look)
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.tools.bench import parser, print_table, write_result

LOCALES = 4
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("soak", __doc__.split("\n\n")[0], trials=False, warmup=False)
    p.add_argument("--minutes", type=float, default=20.0, help="how long to run (default 20)")
    p.add_argument("--side", type=int, default=512, help="rows of the Jacobi grid per locale, and its columns (default 512)")
    p.add_argument("--sweeps", type=int, default=20, help="Jacobi sweeps per round (default 20)")
    p.add_argument("--save-every", type=int, default=10, help="rounds between pg.save/pg.load round trips (default 10)")
    p.add_argument("--checkpoint-every", type=float, default=60.0, help="seconds between checkpoints (default 60)")
    p.add_argument("--sample", type=float, default=5.0, help="seconds between memory samples (default 5)")
    p.add_argument("--dir", default=None, help="directory for files and checkpoints (default: a temporary one)")
    return p


def resident_mib() -> float:
    """This process's resident memory, MiB (``/proc/self/statm``; 0 where there is none)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * _PAGE / 2**20
    except OSError:
        return 0.0


def growth(samples: list[float]) -> float:
    """MiB: the median of the last quarter of ``samples`` less that of the second quarter."""
    q = len(samples) // 4
    if q < 1:
        return 0.0
    return float(np.median(samples[-q:]) - np.median(samples[q:2 * q]))


def main(argv=None) -> int:
    """Run the soak; see the module docstring."""
    args = make_parser().parse_args(argv)
    if not hasattr(pg, "checkpoint"):
        raise SystemExit("pgas bench soak: this pgas has no pg.checkpoint")
    P, me = pg.num_locales, comm.here()
    made = args.dir is None
    where = comm.bcast(tempfile.mkdtemp(prefix="pgas-soak-") if made and me == 0 else args.dir, 0)
    n = max(args.side, 8)
    A = pg.from_numpy(np.add.outer(np.arange(n * P, dtype=float), np.arange(n, dtype=float)) % 7, dist=pg.Block())
    B = pg.zeros((n * P, n))
    C = pg.zeros(1024 * P, dtype=np.int64)
    rng = np.random.default_rng(me)
    ok, rounds, statements, checkpoints, expected = True, 0, 0, 0, 0
    samples: list[tuple[float, float]] = []
    start = last_sample = last_checkpoint = time.monotonic()
    saved = None
    try:
        while True:
            for _ in range(args.sweeps // 2):
                B[1:-1, 1:-1] = 0.25 * (A[1:-1, :-2] + A[1:-1, 2:] + A[:-2, 1:-1] + A[2:, 1:-1])
                A[1:-1, 1:-1] = 0.25 * (B[1:-1, :-2] + B[1:-1, 2:] + B[:-2, 1:-1] + B[2:, 1:-1])
            statements += 2 * (args.sweeps // 2)
            idx = rng.integers(0, C.size, 256)
            C.update(idx, 1)
            expected += 256 * P
            C.gather(idx[:16])
            ok &= int(C.sum()) == expected
            T = A + B                              # a temporary array, dropped at the next round
            float((T[::2, ::3] * 2).sum())
            del T
            A.max()
            if rounds % 50 == 0:
                pg.explain(lambda: B.__setitem__((slice(1, -1), slice(1, -1)), A[1:-1, :-2] + A[1:-1, 2:]))
            if rounds % args.save_every == 0:
                path = os.path.join(where, "soak.npy")
                pg.save(path, A)
                ok &= bool(comm.allreduce(np.int32(np.array_equal(pg.load(path).local, A.local)), "min"))
            now = time.monotonic()
            due = comm.bcast(now - last_checkpoint >= args.checkpoint_every if me == 0 else None, 0)
            if due:                                # locale 0's clock decides, as every collective must agree
                last_checkpoint = now
                if saved is not None:
                    got = pg.restore(os.path.join(where, "checkpoints"))
                    ok &= bool(comm.allreduce(np.int32(np.array_equal(got["A"].to_numpy(), saved)), "min"))
                    del got
                pg.checkpoint(os.path.join(where, "checkpoints"), step=rounds, keep=2, A=A, C=C)
                saved = A.to_numpy()
                checkpoints += 1
            if now - last_sample >= args.sample or rounds == 0:
                last_sample = now
                samples.append((now - start, resident_mib()))
            rounds += 1
            if comm.bcast(time.monotonic() - start >= args.minutes * 60 if me == 0 else None, 0):
                break
    finally:
        pg.barrier()
        if made and me == 0:
            shutil.rmtree(where, ignore_errors=True)
    seconds = time.monotonic() - start
    curves = comm.allgather(samples)
    grown = [growth([m for _, m in c]) for c in curves]
    flat = all(g < max(8.0, 0.02 * max(m for _, m in c)) for g, c in zip(grown, curves))
    out = write_result("soak", {"locales": P, "minutes": seconds / 60, "rounds": rounds, "statements": statements,
                                "checkpoints": checkpoints, "verified": bool(ok), "flat": flat,
                                "growth_mib": grown, "resident_mib": curves}, args.out)
    print_table(["locale", "first MiB", "peak MiB", "last MiB", "growth MiB"],
                [[r, c[0][1], max(m for _, m in c), c[-1][1], g] for r, (c, g) in enumerate(zip(curves, grown))])
    if me == 0:
        print(f"{rounds} rounds, {statements / seconds:.0f} statements/s, {checkpoints} checkpoints in "
              f"{seconds / 60:.1f} min; verified: {'yes' if ok else 'NO'}; memory flat: {'yes' if flat else 'NO'}")
        print(f"results written to {out}")
    return 0 if ok else 1

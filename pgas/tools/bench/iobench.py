"""``pgas bench io``: parallel ``.npy`` I/O (:func:`pgas.save`, :func:`pgas.load`) against
``np.save`` / ``np.load`` of the whole array in one process.

Each locale holds ``--mb`` MiB of float64 (Block); the timed steps are
``pg.save`` and ``pg.load`` of it (slowest locale per trial) and, on locale 0
alone, ``np.save`` / ``np.load`` of an array of the same global size.  Rates
are GB/s of the whole file.  The files go to ``--dir`` (default: a temporary
directory on locale 0's file system, which every locale must see); reads are
mostly served from the page cache, so they measure the I/O path, not the disk.
Verification: the file ``pg.save`` wrote loads back equal (checked locally).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

import numpy as np

import pgas as pg
from pgas import comm
from pgas.tools.bench import parser, print_table, time_trials, write_result

LOCALES = 4


def make_parser():
    """The benchmark's argument parser (no MPI needed)."""
    p = parser("io", __doc__.split("\n\n")[0])
    p.add_argument("--mb", default="8,64", help="MiB per locale, comma-separated (default 8,64)")
    p.add_argument("--dir", default=None, help="directory for the files (default: a temporary one)")
    return p


def main(argv=None) -> int:
    """Run the benchmark; see the module docstring."""
    args = make_parser().parse_args(argv)
    P = pg.num_locales
    made = args.dir is None
    where = comm.bcast(tempfile.mkdtemp(prefix="pgas-io-") if made and comm.here() == 0 else args.dir, 0)
    path, ref = os.path.join(where, "pg.npy"), os.path.join(where, "np.npy")
    rows, ok = [], True
    try:
        for mb in [float(m) for m in args.mb.split(",") if m]:
            n = int(mb * 2**20 / 8) * P
            A = pg.random.default_rng(0).random(n)
            pg.save(path, A)
            B = pg.load(path)
            good = bool(comm.allreduce(np.int32(np.array_equal(A.local, B.local)), "min"))
            ok &= good
            ts = time_trials(lambda: pg.save(path, A), args.trials, args.warmup)
            tl = time_trials(lambda: pg.load(path), args.trials, args.warmup)
            np_times = None
            if comm.here() == 0:
                x = np.random.default_rng(0).random(n)
                save_t, load_t = [], []
                for _ in range(args.trials):
                    t0 = time.perf_counter()
                    np.save(ref, x)
                    t1 = time.perf_counter()
                    np.load(ref)
                    save_t.append(t1 - t0)
                    load_t.append(time.perf_counter() - t1)
                np_times = (min(save_t), min(load_t))
            np_times = comm.bcast(np_times, 0)
            gb = n * 8 / 1e9
            rows.append({"mib_per_locale": mb, "bytes": n * 8, "save_seconds": ts.summary(),
                         "load_seconds": tl.summary(), "save_gb_per_s": gb / ts.min, "load_gb_per_s": gb / tl.min,
                         "np_save_gb_per_s": gb / np_times[0], "np_load_gb_per_s": gb / np_times[1],
                         "verified": good})
    finally:
        pg.barrier()
        if made and comm.here() == 0:
            shutil.rmtree(where, ignore_errors=True)
    out = write_result("io", {"locales": P, "sizes": rows, "verified": ok}, args.out)
    print_table(["MiB/locale", "save GB/s", "load GB/s", "np.save GB/s", "np.load GB/s", "verified"],
                [[r["mib_per_locale"], r["save_gb_per_s"], r["load_gb_per_s"], r["np_save_gb_per_s"],
                  r["np_load_gb_per_s"], "yes" if r["verified"] else "NO"] for r in rows])
    if comm.here() == 0:
        print(f"results written to {out}")
    return 0 if ok else 1

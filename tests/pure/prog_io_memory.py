"""Peak extra memory of pg.save / pg.load / pg.to_hdf5 / pg.from_hdf5 per locale, measured
with ``resource`` (the peak is reset before each step through /proc/self/clear_refs).
Run by tests/pure/test_io_memory.py as ``pgas run -n 3 prog_io_memory.py DIR``; locale 0
prints one JSON line: per step, the largest peak growth over the locales, in bytes."""

import json
import os
import resource
import sys

import numpy as np

import pgas as pg

BLOCK = 6 << 20                      # float64 elements per locale: 48 MiB


def reset() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def step(fn):
    reset()
    before = peak()
    out = fn()
    grew = peak() - before
    return out, int(pg.comm.allreduce(grew, "max"))


def main(d: str) -> None:
    P = pg.num_locales
    A = pg.arange(BLOCK * P, dtype=np.float64)          # built in place: no full copy
    A.local[...] += 0.5
    grown = {}
    _, grown["save"] = step(lambda: pg.save(os.path.join(d, "a.npy"), A))
    Ac = pg.zeros(A.shape, dist=pg.Cyclic())
    Ac[...] = A
    _, grown["save Cyclic"] = step(lambda: pg.save(os.path.join(d, "c.npy"), Ac))
    B, grown["load Block"] = step(lambda: pg.load(os.path.join(d, "a.npy")))
    C, grown["load Cyclic"] = step(lambda: pg.load(os.path.join(d, "a.npy"), dist=pg.Cyclic()))
    _, grown["to_hdf5"] = step(lambda: pg.to_hdf5(A, os.path.join(d, "a.h5"), serial=True))
    D, grown["from_hdf5 Block"] = step(lambda: pg.from_hdf5(os.path.join(d, "a.h5")))
    E = pg.load(os.path.join(d, "c.npy"))              # what the Cyclic array wrote
    ok = all(bool(np.array_equal(X.local, A.local)) for X in (B, D, E))
    ok = bool(pg.comm.allreduce(int(ok), "min"))
    ok = ok and float(C.sum()) == float(A.sum())
    _, grown["to_numpy (a full copy, for contrast)"] = step(lambda: A.to_numpy())
    if pg.here == 0:
        print(json.dumps({"block_bytes": BLOCK * 8, "file_bytes": BLOCK * 8 * P, "grown": grown, "correct": ok}))


if __name__ == "__main__":
    main(sys.argv[1])

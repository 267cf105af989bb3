"""Data in and out: random numbers that do not depend on the locale count, a parallel
.npy file, an HDF5 dataset and a distributed sort, each checked against NumPy.

    pgas run -n 2 docs/examples/data_io.py
"""

import os
import tempfile

import numpy as np

import pgas as pg

n = 10_000
rng = pg.random.default_rng(42)
x = rng.standard_normal(n, dist=pg.Cyclic())      # the same global array on any locale count

tmp = pg.comm.bcast(tempfile.mkdtemp() if pg.here == 0 else None, 0)
path = os.path.join(tmp, "x.npy")
pg.save(path, x)                                  # each locale writes its own elements (MPI-IO)
y = pg.load(path, dist=pg.Block())                # np.load(path) reads the same file

s = pg.sort(y)                                    # sample sort: one all-to-all exchange
k = rng.integers(0, 10, n)                        # Block by default
values, counts = pg.unique(k, return_counts=True)

try:                                              # HDF5 needs h5py (pip install 'pgas[io]')
    pg.to_hdf5(s, os.path.join(tmp, "s.h5"), "sorted", serial=True)
    z = pg.from_hdf5(os.path.join(tmp, "s.h5"), "sorted", dist=pg.Cyclic())
except ImportError:
    z = s

g = np.load(path)                                 # plain NumPy agrees
gv, gc = np.unique(k.to_numpy(), return_counts=True)
ok = (np.array_equal(x.to_numpy(), g) and np.array_equal(s.to_numpy(), np.sort(g))
      and np.array_equal(z.to_numpy(), np.sort(g))
      and np.array_equal(values.to_numpy(), gv) and np.array_equal(counts.to_numpy(), gc))
lo, mid, hi = s[0], s[n // 2], s[n - 1]           # scalar reads are collective: on every locale
if pg.here == 0:
    print(f"sorted {n} normal samples: min {lo:.3f}, median {mid:.3f}, max {hi:.3f}")
if not ok:
    raise SystemExit("data_io.py: differs from NumPy")

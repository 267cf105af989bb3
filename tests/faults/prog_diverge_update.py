"""Locale 0 updates an array (its exchange waits for every locale's message, or its
consensus for every locale) while the others reduce: each waits for the other.  ``KIND``:
``dense`` (the exchange as up to DENSE_MAX locales) or ``sparse`` (as beyond).  Started by a
plain ``mpiexec``: ``prog_diverge_update.py KIND --marker=...``."""
import sys

import numpy as np

import pgas as pg

if sys.argv[1] == "sparse":
    sys.modules["pgas.comm.exchange"].DENSE_MAX = 1
A = pg.zeros(16, dtype=np.int64)
for _ in range(3):
    A.update(np.arange(pg.here, 16, 3), 1, "xor")
pg.barrier()
if pg.here == 0:
    A.update(np.arange(16), 1, "xor")                # LINE update
else:
    A.sum()                                          # LINE reduction
print("finished", pg.here)

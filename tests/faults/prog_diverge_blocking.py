"""Locale 0 runs a stencil statement (it waits for locale 1's halo) while locale 1, after a
statement of its own, waits in a collective of the library's runtime that no agreement
precedes (``KIND``: an allgather, a personalised exchange as sort's, a broadcast, an
agreement on errors or the reduction tree of ``min``/``argmax`` with a Python combination): each waits for the other.  Started by a plain ``mpiexec``:
``prog_diverge_blocking.py KIND --marker=...``."""
import sys

import numpy as np

import pgas as pg
from pgas import comm

kind = sys.argv[1]
A = pg.arange(16.0)
B = pg.zeros(16)
for _ in range(3):
    B[1:-1] = A[:-2] + A[2:]
pg.barrier()
if pg.here == 0:
    B[1:-1] = A[:-2] + A[2:]                         # LINE statement
else:
    B[:] = 2.0                                       # LINE other
    if kind == "allgather":
        comm.allgather(pg.here)
    elif kind == "alltoallv":
        comm.alltoallv([np.arange(3.0)] * pg.num_locales, np.float64)
    elif kind == "bcast":
        comm.bcast("x", 1)
    elif kind == "tree":
        comm.allreduce_with(np.arange(2.0), lambda a, b: np.minimum(a, b))
    else:
        comm.agree(None)
print("finished", pg.here)

"""Locale 0 runs a stencil statement (it waits for locale 1's halo) while the others reduce:
each waits for the other.  Started by a plain ``mpiexec``: ``prog_diverge.py --marker=...``."""
import pgas as pg

A = pg.arange(16.0)
B = pg.zeros(16)
for _ in range(3):
    B[1:-1] = A[:-2] + A[2:]
pg.barrier()
if pg.here == 0:
    for _ in range(3):
        B[1:-1] = A[:-2] + A[2:]                     # LINE statement
else:
    A.sum()                                          # LINE reduction
print("finished", pg.here)

"""Locale 1 calls a compiled step replayed by kept repeats with messages (it waits for locale
0's rows) while the others wait in a barrier: ``prog_diverge_step.py kept|merged --marker=...``
(``kept``: each statement's own messages; ``merged``: one exchange for both statements)."""
import sys

import pgas as pg

pg.config(protocol="auto", fuse=True)
A = pg.arange(64.0).reshape(8, 8)
B = pg.zeros((8, 8))
C = pg.zeros((8, 8))


def kept(A, B, C):
    B[1:, :] = A[:-1, :] + 1.0
    A[1:, :] = B[:-1, :] * 0.5                       # (reads what the first writes: its own exchange)


def merged(A, B, C):
    B[1:, :] = A[:-1, :] + 1.0
    C[1:, :] = A[:-1, :] * 0.5


step = pg.compile(kept if sys.argv[1] == "kept" else merged)
for _ in range(6):
    step(A, B, C)
prog = next(iter(step.programs.values()))
assert prog.kept is not None or any(u[3] is not None for u in prog.units), "no kept repeat"
assert prog.merging == (sys.argv[1] == "merged")
pg.barrier()
if pg.here == 1:
    for _ in range(3):
        step(A, B, C)                                # LINE step
else:
    pg.barrier()                                     # LINE barrier
print("finished", pg.here)

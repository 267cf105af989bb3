"""Locale 1 ends its script early while the others wait in a barrier, started by a plain
``mpiexec`` (no ``pgas run``): ``prog_raise.py raise|interrupt|exit0|exit3|clean``
(``exitN``: every locale calls ``sys.exit(N)``; ``clean``: a correct job)."""
import sys

import pgas as pg

A = pg.arange(8)                                     # windows to free at exit: collective cleanup
mode = sys.argv[1]
if mode == "raise" and pg.here == 1:
    raise ValueError("bad value on one locale")      # LINE raise
if mode == "interrupt" and pg.here == 1:
    raise KeyboardInterrupt                          # LINE interrupt
pg.barrier()
total = A.sum()
if mode.startswith("exit"):
    sys.exit(int(mode[4:]))
if pg.here == 0:
    print("total", total)

"""Locale 1 ends its script early while the others wait in a barrier, started by a plain
``mpiexec`` (no ``pgas run``): ``prog_raise.py raise|interrupt|exit3|clean``
(``exit3``: every locale calls ``sys.exit(3)``; ``clean``: a correct job)."""
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
if mode == "exit3":
    sys.exit(3)
if pg.here == 0:
    print("total", total)

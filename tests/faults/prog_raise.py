"""Locale 1 ends its script early while the others wait in a barrier, started by a plain
``mpiexec`` (no ``pgas run``): ``prog_raise.py raise|interrupt|exit0|exit3|one-exit3|one-builtin3|
one-message|caught|clean`` (``exitN``: every locale calls ``sys.exit(N)``; ``one-...``: locale 1 alone
calls ``sys.exit(3)``, ``exit(3)`` or ``sys.exit("message")``; ``caught``: locale 1 catches its
``sys.exit(3)`` and goes on; ``clean``: a correct job)."""
import sys

import pgas as pg

A = pg.arange(8)                                     # windows to free at exit: collective cleanup
mode = sys.argv[1]
if mode == "raise" and pg.here == 1:
    raise ValueError("bad value on one locale")      # LINE raise
if mode == "interrupt" and pg.here == 1:
    raise KeyboardInterrupt                          # LINE interrupt
if pg.here == 1:
    if mode == "one-exit3":
        sys.exit(3)
    if mode == "one-builtin3":
        exit(3)
    if mode == "one-message":
        sys.exit("stopped on one locale")
    if mode == "caught":
        try:
            sys.exit(3)
        except SystemExit:
            pass
pg.barrier()
total = A.sum()
if mode.startswith("exit"):
    sys.exit(int(mode[4:]))
if pg.here == 0:
    print("total", total)

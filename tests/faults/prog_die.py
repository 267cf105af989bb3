"""Locale 1 dies while the others wait in a barrier (``prog_die.py os_exit|sigkill|segfault``), or in
a stencil statement that needs its halo (``prog_die.py sigkill_statement``)."""
import ctypes
import os
import signal
import sys

import pgas as pg

A = pg.arange(24.0)
B = pg.zeros(24)
pg.barrier()
if pg.here == 1:
    if sys.argv[1] == "os_exit":
        os._exit(3)                                  # LINE os_exit
    elif sys.argv[1] in ("sigkill", "sigkill_statement"):
        os.kill(os.getpid(), signal.SIGKILL)         # LINE sigkill
    else:
        ctypes.string_at(0)                          # LINE segfault
if sys.argv[1] == "sigkill_statement":
    B[1:-1] = A[:-2] + A[2:]                         # LINE statement
pg.barrier()

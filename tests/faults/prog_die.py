"""Locale 1 dies while the others wait in a barrier: ``prog_die.py os_exit|sigkill|segfault``."""
import ctypes
import os
import signal
import sys

import pgas as pg

pg.barrier()
if pg.here == 1:
    if sys.argv[1] == "os_exit":
        os._exit(3)                                  # LINE os_exit
    elif sys.argv[1] == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)         # LINE sigkill
    else:
        ctypes.string_at(0)                          # LINE segfault
pg.barrier()

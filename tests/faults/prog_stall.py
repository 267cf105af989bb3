"""Every locale stops making progress: locale 1 sleeps, the others wait for it in a barrier.
``prog_stall.py SECONDS [ready]`` (``ready``: locale 0 prints ``ready`` first)."""
import sys
import time

import pgas as pg

pg.barrier()
if pg.here == 0 and "ready" in sys.argv[2:]:
    print("ready", flush=True)
if pg.here == 1:
    time.sleep(float(sys.argv[1]))                   # LINE sleep
pg.barrier()                                         # LINE barrier

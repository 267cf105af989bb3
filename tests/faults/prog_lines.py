"""Every locale prints many long lines at once, to standard output and error:
``prog_lines.py`` (each line names its locale and ends with ``end``)."""
import sys

import pgas as pg

me = pg.here
pg.barrier()                                         # start together
for i in range(400):
    print(f"locale {me} line {i}", "x" * (300 + 41 * me + i % 97), "end")
    if i % 5 == 0:
        print(f"locale {me} err {i}", "y" * (5000 + i), "end", file=sys.stderr)
    if i % 50 == 0:
        print(f"locale {me} part {i}", end="", flush=True)   # a line written in pieces
        print(" z" * 2000, "end", flush=True)

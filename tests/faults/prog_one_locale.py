"""A collective called on locale 0 only (a common mistake): the job hangs.
``prog_one_locale.py item|to_numpy|sum``."""
import sys

import pgas as pg

A = pg.zeros((4, 4))
mode = sys.argv[1]
if pg.here == 0:
    if mode == "item":
        print(A[1, 2])                               # LINE item
    elif mode == "to_numpy":
        print(A.to_numpy())                          # LINE to_numpy
    else:
        print(A.sum())                               # LINE sum

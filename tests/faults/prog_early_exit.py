"""The last locale calls sys.exit(0) while the others go on to a collective."""
import sys

import pgas as pg

A = pg.zeros(8)
if pg.here == pg.num_locales - 1:
    sys.exit(0)                                      # LINE exit
print(A.sum())                                       # LINE wait

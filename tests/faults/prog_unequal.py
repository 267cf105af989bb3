"""A correct job whose locales do unequal work: the last locale sleeps 4 s before a
collective; every locale then checks the result."""
import time

import numpy as np

import pgas as pg

A = pg.arange(40)
if pg.here == pg.num_locales - 1:
    time.sleep(4)
total = A.sum()
assert total == np.arange(40).sum(), total
pg.barrier()
if pg.here == 0:
    print("unequal ok", total)

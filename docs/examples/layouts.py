"""Who owns what: an 8 x 8 array on a 2 x 2 grid of locales, for each distribution.

Pure index arithmetic (no messages): ``Distribution.bind(shape, locales)`` gives
the Layout an array of that shape would have, so this runs on one locale.

    python docs/examples/layouts.py
"""

import numpy as np

import pgas as pg

for dist in [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]:
    L = dist.bind((8, 8), 4)                      # what A.layout is for pg.zeros((8, 8), dist=dist) on 4 locales
    owners = np.array([[L.owner((i, j)) for j in range(8)] for i in range(8)])
    # the ownership formula, per dimension: grid coordinate (g // b) % p
    g = np.arange(8)
    rows, cols = (g // L.blocks[0]) % L.grid[0], (g // L.blocks[1]) % L.grid[1]
    assert (owners == rows[:, None] * L.grid[1] + cols[None, :]).all()
    print(f"{dist}: grid {L.grid}, blocks {L.blocks}, each locale stores {L.local_shape(0)}")
    for row in owners:
        print("   " + " ".join(str(r) for r in row))
    print()

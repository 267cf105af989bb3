"""Global-view (collective) and SPMD (one-sided) operations side by side.

    pgas run -n 2 docs/examples/spmd.py
"""

import numpy as np

import pgas as pg

n = 12
A = pg.zeros(n, dtype=np.int64, dist=pg.Cyclic())

# global view: every locale makes the same call; each does the part it owns
A[:] = pg.arange(n, dtype=np.int64, dist=pg.Cyclic()) * 10       # collective statement
total = A.sum()                                                # collective reduction: same on every locale

# SPMD: each locale acts on its own; nobody else takes part
me, p = pg.here, pg.num_locales
right = (me + 1) % p
A.put(right, 1000 + me)            # one-sided write into (maybe) another locale's element
pg.barrier()                       # now every locale sees every put
seen = A.get(me)                   # one-sided read: the value my left neighbour wrote
A.local[:] += 1                    # plain local store on my own elements (no message)
pg.barrier()                       # ... visible to the others after the barrier

expected = np.arange(n) * 10
expected[[(r + 1) % p for r in range(p)]] = [1000 + r for r in range(p)]
result = A.to_numpy()               # collective: called on every locale, never inside an `if`
ok = total == np.arange(n).sum() * 10 and seen == 1000 + (me - 1) % p and np.array_equal(result, expected + 1)
if me == 0:
    print(f"sum {total}; locale 0 read {seen}; after the local += 1: {result[:6]} ...")
    print("matches NumPy:", ok)
if not ok:
    raise SystemExit("spmd.py: unexpected values")

"""A histogram of distributed data with A.update (aggregated remote adds).

    pgas run -n 2 docs/examples/histogram.py
"""

import numpy as np

import pgas as pg

n, nbins = 100_000, 16
data = pg.from_numpy(np.random.default_rng(7).normal(size=n))     # the samples, distributed
counts = pg.zeros(nbins, dtype=np.int64, dist=pg.Cyclic())         # the histogram, distributed too

# each locale bins the samples it owns: plain NumPy on A.local, no messages
edges = np.linspace(-4, 4, nbins + 1)
mine = np.clip(np.digitize(data.local, edges) - 1, 0, nbins - 1)

# one collective call adds every locale's ones into the bins, wherever they live:
# repeats are combined at the source, then one message per pair of locales
with pg.comm_diagnostics() as d:
    counts.update(mine, 1, "add")

result = counts.to_numpy()
expected = np.bincount(np.clip(np.digitize(data.to_numpy(), edges) - 1, 0, nbins - 1), minlength=nbins)
ok = np.array_equal(result, expected) and result.sum() == n
if pg.here == 0:
    print(f"{n} samples, {nbins} bins, {d.messages} messages for the update")
    for lo, c in zip(edges[4:12], result[4:12]):
        print(f"  [{lo:+.1f}, {lo + edges[1] - edges[0]:+.1f})  {'#' * int(60 * c / result.max())}")
    print("matches NumPy:", ok)
if not ok:
    raise SystemExit("histogram.py: differs from NumPy")

"""The array API standard: code written against any namespace runs on distributed arrays.

    pgas run -n 2 docs/examples/array_api.py
"""

import numpy as np

import pgas as pg


def standardise(x):
    """Written for the array API standard: it knows nothing of pgas."""
    xp = x.__array_namespace__()
    mean = xp.mean(x, axis=0)
    std = xp.std(x, axis=0, correction=1)
    return xp.divide(xp.subtract(x, mean), std)


data = np.random.default_rng(0).normal(3.0, 2.0, size=(8, 3))
xp = pg.array_api
X = xp.asarray(data)                       # a DistArray
Z = standardise(X)
total = xp.sum(xp.multiply(Z, Z))          # a 0-d array, the same on every locale

expected = (data - data.mean(axis=0)) / data.std(axis=0, ddof=1)
ok = np.allclose(Z.to_numpy(), expected) and np.isclose(float(total), (expected ** 2).sum())
if pg.here == 0:
    print(f"{type(Z).__name__} on {Z.device}, sum of squares {float(total):.6f}")
    print("matches NumPy:", ok)
if not ok:
    raise SystemExit("array_api.py: differs from NumPy")

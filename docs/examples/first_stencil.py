"""Getting started: smooth a 1-D signal with a three-point stencil.

    pgas run -n 2 docs/examples/first_stencil.py
"""

import numpy as np

import pgas as pg

n = 20
signal = np.sin(np.linspace(0, 3, n)) + np.linspace(0, 1, n) ** 2   # any NumPy array

x = pg.from_numpy(signal)              # split into one block per locale
y = pg.zeros(n)                        # a second distributed array, same layout

for step in range(5):
    y[1:-1] = (x[:-2] + x[1:-1] + x[2:]) / 3    # one statement: neighbours cross locales
    x[1:-1] = y[1:-1]

# the same computation in plain NumPy, to check the answer
expected = signal.copy()
for step in range(5):
    expected[1:-1] = (expected[:-2] + expected[1:-1] + expected[2:]) / 3

result = x.to_numpy()                  # every locale gets the whole array
if pg.here == 0:
    print(f"{pg.num_locales} locales, x[:4] = {np.round(result[:4], 4)}")
    print("matches NumPy:", np.allclose(result, expected))
if not np.allclose(result, expected):
    raise SystemExit("first_stencil.py: differs from NumPy")

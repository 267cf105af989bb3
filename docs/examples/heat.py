"""Heat equation in 2-D, explicit Euler: once with slices, once with pg.forall.

    pgas run -n 2 docs/examples/heat.py
"""

import numpy as np

import pgas as pg

n, steps, alpha = 48, 50, 0.2                 # alpha = dt * diffusivity / dx**2 (stable below 0.25)

T0 = np.zeros((n, n))
T0[n // 4: n // 2, n // 4: n // 2] = 100.0    # a hot square; the edges stay at 0

# --- with slices -----------------------------------------------------------
T = pg.from_numpy(T0)                         # Block over a 2-D grid of locales
U = pg.zeros((n, n))
for step in range(steps):
    U[1:-1, 1:-1] = T[1:-1, 1:-1] + alpha * (
        T[:-2, 1:-1] + T[2:, 1:-1] + T[1:-1, :-2] + T[1:-1, 2:] - 4 * T[1:-1, 1:-1])
    T, U = U, T                               # swap names: no copy
slices = T.to_numpy()

# --- with forall -----------------------------------------------------------
T = pg.from_numpy(T0)
U = pg.zeros((n, n))


def step_body(i, j):
    U[i, j] = T[i, j] + alpha * (T[i - 1, j] + T[i + 1, j] + T[i, j - 1] + T[i, j + 1] - 4 * T[i, j])
    T[i, j] = U[i, j]


interior = (range(1, n - 1), range(1, n - 1))
for step in range(steps):
    pg.forall(interior, step_body)            # traces the body, reuses the cached plans
loops = T.to_numpy()
heat = T.sum()                                # collective: every locale gets the total

# --- the same in NumPy -----------------------------------------------------
G = T0.copy()
for step in range(steps):
    H = G.copy()
    H[1:-1, 1:-1] = G[1:-1, 1:-1] + alpha * (
        G[:-2, 1:-1] + G[2:, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:] - 4 * G[1:-1, 1:-1])
    G = H

ok = np.allclose(slices, G) and np.allclose(loops, G)
if pg.here == 0:
    print(f"after {steps} steps: total heat {heat:.3f} (started at {T0.sum():.3f}), "
          f"centre {loops[3 * n // 8, 3 * n // 8]:.3f}")
    print("slices and forall match NumPy:", ok)
if not ok:
    raise SystemExit("heat.py: differs from NumPy")

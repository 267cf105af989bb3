"""mvt (PolyBench), folding and pascal (the paper's own): pgas versions and NumPy references."""

from __future__ import annotations

import numpy as np

import pgas as pg


# -- mvt -----------------------------------------------------------------------
def _mvt_init(n):
    i, j = np.indices((n, n))
    A = ((i * j) % n) / n
    k = np.arange(n)
    return A, (k % 5) / 5.0, ((k + 1) % 7) / 7.0, ((k + 3) % 9) / 9.0, ((k + 4) % 11) / 11.0


def mvt_setup(n, dist):
    A, x1, x2, y1, y2 = _mvt_init(n)
    return {"A": pg.from_numpy(A, dist=dist), "x1": pg.from_numpy(x1, dist=dist), "x2": pg.from_numpy(x2, dist=dist),
            "y1": pg.from_numpy(y1, dist=dist), "y2": pg.from_numpy(y2, dist=dist), "n": n}


def mvt_step(s, t):
    A, x1, x2, y1, y2 = s["A"], s["x1"], s["x2"], s["y1"], s["y2"]

    def body(i, j):
        x1[i] += A[i, j] * y1[j]
        x2[i] += A[j, i] * y2[j]

    pg.forall((range(s["n"]), range(s["n"])), body)


def mvt_ref(n, steps):
    A, x1, x2, y1, y2 = _mvt_init(n)
    for _ in range(steps):
        x1 = x1 + A @ y1
        x2 = x2 + A.T @ y2
    return {"x1": x1, "x2": x2}


# -- folding -------------------------------------------------------------------
FOLDS = 5


def _fold_init(n):
    return (np.arange(n) % 13) / 13.0


def folding_setup(n, dist):
    return {"A": pg.from_numpy(_fold_init(n), dist=dist), "init": _fold_init(n), "n": n}


def folding_step(s, t):
    A, m = s["A"], s["n"]
    if t:
        A[:] = s["init"]
    for _ in range(FOLDS):
        A[:m // 2] = A[0:m - 1:2] + A[1:m:2]
        m //= 2


def folding_ref(n, steps):
    A = _fold_init(n)
    m = n
    for _ in range(FOLDS):
        A[:m // 2] = A[0:m - 1:2] + A[1:m:2]
        m //= 2
    return {"A": A}


# -- pascal ------------------------------------------------------------------
ROWS = 2


def pascal_setup(n, dist):
    A = pg.zeros(n, dtype=np.int64, dist=dist)
    B = pg.zeros(n, dtype=np.int64, dist=dist)
    A[0] = B[0] = 1
    return {"A": A, "B": B, "n": n}


def pascal_step(s, t):
    A, B = s["A"], s["B"]
    for _ in range(ROWS):
        B[1:] = A[:-1] + A[1:]
        A[1:] = B[:-1] + B[1:]


def pascal_ref(n, steps):
    A = np.zeros(n, dtype=np.int64)
    B = np.zeros(n, dtype=np.int64)
    A[0] = B[0] = 1
    for _ in range(steps * ROWS):
        B[1:] = A[:-1] + A[1:]
        A[1:] = B[:-1] + B[1:]
    return {"A": A, "B": B}

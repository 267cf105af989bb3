"""Stencil kernels: jacobi1D, jacobi2D, stencil9, fdtd-2d (PolyBench / Chapel test
suite), each a pgas version and a NumPy reference computing the same values."""

from __future__ import annotations

import numpy as np

import pgas as pg


def _init1(n):
    return (np.arange(n) % 17 + 2.0) / n


def _init2(n, k=0):
    i, j = np.indices((n, n))
    return ((i * (j + 2 + k) + 3) % n) / n


# -- jacobi1D ------------------------------------------------------------------
def jacobi1d_setup(n, dist):
    return {"A": pg.from_numpy(_init1(n), dist=dist), "B": pg.zeros(n, dist=dist)}


def jacobi1d_step(s, t):
    A, B = s["A"], s["B"]
    B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
    A[1:-1] = B[1:-1]


def jacobi1d_ref(n, steps):
    A = _init1(n)
    B = np.zeros(n)
    for _ in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = B[1:-1]
    return {"A": A}


# -- jacobi2D ------------------------------------------------------------------
def jacobi2d_setup(n, dist):
    return {"A": pg.from_numpy(_init2(n), dist=dist), "B": pg.zeros((n, n), dist=dist)}


def jacobi2d_step(s, t):
    A, B = s["A"], s["B"]
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    A[1:-1, 1:-1] = B[1:-1, 1:-1]


def jacobi2d_ref(n, steps):
    A, B = _init2(n), np.zeros((n, n))
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = B[1:-1, 1:-1]
    return {"A": A}


# -- stencil9 ------------------------------------------------------------------
def stencil9_setup(n, dist):
    return {"A": pg.from_numpy(_init2(n), dist=dist), "B": pg.zeros((n, n), dist=dist)}


def _nine(A):
    return (A[:-2, :-2] + A[:-2, 1:-1] + A[:-2, 2:] + A[1:-1, :-2] + A[1:-1, 1:-1] + A[1:-1, 2:]
            + A[2:, :-2] + A[2:, 1:-1] + A[2:, 2:]) / 9.0


def stencil9_step(s, t):
    A, B = s["A"], s["B"]
    B[1:-1, 1:-1] = _nine(A)
    A[1:-1, 1:-1] = B[1:-1, 1:-1]


def stencil9_ref(n, steps):
    A, B = _init2(n), np.zeros((n, n))
    for _ in range(steps):
        B[1:-1, 1:-1] = _nine(A)
        A[1:-1, 1:-1] = B[1:-1, 1:-1]
    return {"A": A}


# -- fdtd-2d -------------------------------------------------------------------
def fdtd_setup(n, dist):
    return {"ex": pg.from_numpy(_init2(n, 1), dist=dist), "ey": pg.from_numpy(_init2(n, 2), dist=dist),
            "hz": pg.from_numpy(_init2(n, 3), dist=dist)}


def fdtd_step(s, t):
    ex, ey, hz = s["ex"], s["ey"], s["hz"]
    ey[0, :] = float(t)
    ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
    ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
    hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def fdtd_ref(n, steps):
    ex, ey, hz = _init2(n, 1), _init2(n, 2), _init2(n, 3)
    for t in range(steps):
        ey[0, :] = float(t)
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return {"ex": ex, "ey": ey, "hz": hz}

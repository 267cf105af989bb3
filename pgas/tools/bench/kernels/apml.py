"""fdtd-apml: FDTD with an anisotropic perfectly matched layer, after PolyBench 3.2
(PolyBench 4 dropped it): the ``Hz``/``Bza`` update
of a ``(cz+1, cym+1, cxm+1)`` grid, its ``ix = cxm`` face (reading ``Ry``), its
``iy = cym`` face (reading ``Ax``) and their corner line; ``clf`` and ``tmp``, scalars
overwritten per element in the C code, are element-wise temporaries here.  All
extents are ``n`` (``cz = cym = cxm = n``).
"""

from __future__ import annotations

import numpy as np

import pgas as pg

MUI, CH = 2341.0, 42.0


def _init(n):
    k = np.arange(n + 1, dtype=float)
    coef = {"czm": (k + 1) / n, "czp": (k + 2) / n, "cxmh": (k + 3) / n, "cxph": (k + 4) / n,
            "cymh": (k + 5) / n, "cyph": (k + 6) / n}
    i, j = np.indices((n + 1, n + 1)).astype(float)
    coef["Ry"] = (i * (j + 1) + 10) / n
    coef["Ax"] = (i * (j + 2) + 11) / n
    i, j, x = np.indices((n + 1, n + 1, n + 1)).astype(float)
    grid = {"Ex": (i * (j + 3) + x + 1) / n, "Ey": (i * (j + 4) + x + 2) / n,
            "Hz": (i * (j + 5) + x + 3) / n, "Bza": (i * (j + 6) + x + 4) / n}
    return coef, grid


def setup(n, dist):
    coef, grid = _init(n)
    s = {k: pg.from_numpy(v, dist=dist) for k, v in {**coef, **grid}.items()}
    s["n"] = n
    return s


def _update(s, iz, iy, ix, y, x, clf):
    """Hz and Bza at (iz, y, x) from ``clf``; ``iy``/``ix`` index the y/x coefficients."""
    Hz, Bza = s["Hz"], s["Bza"]
    tmp = (s["cymh"][y] / s["cyph"][iy]) * Bza[iz, y, x] - (CH / s["cyph"][iy]) * clf
    Hz[iz, y, x] = ((s["cxmh"][ix] / s["cxph"][ix]) * Hz[iz, y, x] + (MUI * s["czp"][iz] / s["cxph"][ix]) * tmp
                    - (MUI * s["czm"][iz] / s["cxph"][ix]) * Bza[iz, y, x])
    Bza[iz, y, x] = tmp


def step(s, t):
    n, Ex, Ey, Ax, Ry = s["n"], s["Ex"], s["Ey"], s["Ax"], s["Ry"]

    def interior(iz, iy, ix):
        clf = Ex[iz, iy, ix] - Ex[iz, iy + 1, ix] + Ey[iz, iy, ix + 1] - Ey[iz, iy, ix]
        _update(s, iz, iy, ix, iy, ix, clf)

    def x_face(iz, iy):
        clf = Ex[iz, iy, n] - Ex[iz, iy + 1, n] + Ry[iz, iy] - Ey[iz, iy, n]
        _update(s, iz, iy, n, iy, n, clf)

    def y_face(iz, ix):
        clf = Ex[iz, n, ix] - Ax[iz, ix] + Ey[iz, n, ix + 1] - Ey[iz, n, ix]
        _update(s, iz, n, ix, n, ix, clf)

    def corner(iz):
        clf = Ex[iz, n, n] - Ax[iz, n] + Ry[iz, n] - Ey[iz, n, n]
        _update(s, iz, n, n, n, n, clf)

    pg.forall((range(n), range(n), range(n)), interior)
    pg.forall((range(n), range(n)), x_face)
    pg.forall((range(n), range(n)), y_face)
    pg.forall(range(n), corner)


def reference(n, steps):
    coef, g = _init(n)
    c = coef
    Ex, Ey, Hz, Bza = g["Ex"], g["Ey"], g["Hz"], g["Bza"]
    for _ in range(steps):
        for iz in range(n):                            # the C loops, vectorised over ix
            for iy in range(n + 1):
                xs = np.arange(n + 1)
                if iy < n:
                    clf = Ex[iz, iy, :] - Ex[iz, iy + 1, :]
                    clf[:n] += Ey[iz, iy, 1:] - Ey[iz, iy, :n]
                    clf[n] += c["Ry"][iz, iy] - Ey[iz, iy, n]
                else:
                    clf = Ex[iz, n, :] - c["Ax"][iz, :]
                    clf[:n] += Ey[iz, n, 1:] - Ey[iz, n, :n]
                    clf[n] += c["Ry"][iz, n] - Ey[iz, n, n]
                tmp = (c["cymh"][iy] / c["cyph"][iy]) * Bza[iz, iy, :] - (CH / c["cyph"][iy]) * clf
                Hz[iz, iy, :] = ((c["cxmh"][xs] / c["cxph"][xs]) * Hz[iz, iy, :]
                                 + (MUI * c["czp"][iz] / c["cxph"][xs]) * tmp
                                 - (MUI * c["czm"][iz] / c["cxph"][xs]) * Bza[iz, iy, :])
                Bza[iz, iy, :] = tmp
    return {"Hz": Hz, "Bza": Bza}

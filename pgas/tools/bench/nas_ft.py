"""NAS FT (3-D FFT PDE solver, NPB 3.4) on Block complex arrays, verified by NPB's checksums.

The field ``u`` (stored ``[z, y, x]``) is Block-distributed in z slabs
(``pg.Block(grid=(P, 1, 1))``); the
transformed field ``w`` (stored ``[ky, kz, kx]``) in y slabs.  The forward
3-D FFT is NumPy's 2-D FFT of each slab (x and y), the global-view statement
``w[...] = u.transpose(1, 0, 2)`` (pgas plans the all-to-all transpose), and
NumPy's 1-D FFT along z; the inverse runs the same steps backwards, unscaled as
NPB's is.  The initial field is NPB's (``compute_initial_conditions``: the point
``(x, y, z)`` takes the ``randlc`` numbers ``2e + 1`` and ``2e + 2``, ``e = x + nx y +
nx ny z``, as its real and imaginary parts; each locale makes its own slab,
:mod:`pgas.tools.bench.nas_rand`).  Each of ``niter`` steps multiplies the
transform by NPB's ``exp(-4 alpha pi^2 (kx^2 + ky^2 + kz^2))``, transforms back
and takes NPB's checksum (the sum of 1024 fixed points over ``nx ny nz``), each
checked against NPB's value (relative error at most 1e-12).  Timed as NPB times:
initial field, forward FFT and the steps; Mop/s by NPB's formula.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

import pgas as pg
from pgas import comm
from pgas.tools.bench import nas_rand

ALPHA = 1.0e-6
EPSILON = 1.0e-12


@dataclass(frozen=True)
class FTClass:
    """One NPB FT class: grid, iterations and NPB's checksums per iteration."""

    name: str
    nx: int
    ny: int
    nz: int
    niter: int
    sums: tuple

    @property
    def ntotal(self) -> int:
        return self.nx * self.ny * self.nz

    def mops(self, seconds: float) -> float:
        n = float(self.ntotal)
        return 1e-6 * n * (14.8157 + 7.19641 * math.log(n) + (5.23518 + 7.21113 * math.log(n)) * self.niter) / seconds


CLASSES = {
    "S": FTClass("S", 64, 64, 64, 6, (
        complex(5.546087004964e+02, 4.845363331978e+02), complex(5.546385409189e+02, 4.865304269511e+02),
        complex(5.546148406171e+02, 4.883910722336e+02), complex(5.545423607415e+02, 4.901273169046e+02),
        complex(5.544255039624e+02, 4.917475857993e+02), complex(5.542683411902e+02, 4.932597244941e+02))),
    "W": FTClass("W", 128, 128, 32, 6, (
        complex(5.673612178944e+02, 5.293246849175e+02), complex(5.631436885271e+02, 5.282149986629e+02),
        complex(5.594024089970e+02, 5.270996558037e+02), complex(5.560698047020e+02, 5.260027904925e+02),
        complex(5.530898991250e+02, 5.249400845633e+02), complex(5.504159734538e+02, 5.239212247086e+02))),
    "A": FTClass("A", 256, 256, 128, 6, (
        complex(5.046735008193e+02, 5.114047905510e+02), complex(5.059412319734e+02, 5.098809666433e+02),
        complex(5.069376896287e+02, 5.098144042213e+02), complex(5.077892868474e+02, 5.101336130759e+02),
        complex(5.085233095391e+02, 5.104914655194e+02), complex(5.091487099959e+02, 5.107917842803e+02))),
}


def _first(A) -> list:
    """The global index of this locale's first element along each axis of ``A`` (0 if it owns none)."""
    return [int(o[0]) if len(o) else 0 for o in A.layout.owned(comm.here())]


def _freq(n: int, lo: int, count: int) -> np.ndarray:
    """NPB's signed frequencies ``mod(i + n/2, n) - n/2`` of global indices ``lo .. lo + count - 1``."""
    return (np.arange(lo, lo + count) + n // 2) % n - n // 2


class FT:
    """NPB FT's arrays for one class: ``u`` (z slabs), ``w`` and ``t`` (y slabs), the exponent factors."""

    def __init__(self, cls: FTClass) -> None:
        self.cls = cls
        nx, ny, nz = cls.nx, cls.ny, cls.nz
        slabs = pg.Block(grid=(pg.num_locales, 1, 1))          # whole planes on each locale
        self.u = pg.zeros((nz, ny, nx), dtype=np.complex128, dist=slabs, name="u")
        self.w = pg.zeros((ny, nz, nx), dtype=np.complex128, dist=slabs, name="w")
        self.t = pg.zeros((ny, nz, nx), dtype=np.complex128, dist=slabs, name="t")
        y0, z0, x0 = _first(self.w)
        ky, kz, kx = (_freq(n, lo, c) for n, lo, c in zip((ny, nz, nx), (y0, z0, x0), self.w.local.shape))
        k2 = (ky[:, None, None] ** 2 + kz[None, :, None] ** 2 + kx[None, None, :] ** 2).astype(np.float64)
        self.twiddle = np.exp(-4.0 * ALPHA * math.pi ** 2 * k2)

    def initial(self) -> None:
        """NPB's ``compute_initial_conditions`` into ``u``: each locale's slab from its own stretch."""
        cls, local = self.cls, self.u.local
        z0 = _first(self.u)[0]
        e0 = z0 * cls.nx * cls.ny
        r = nas_rand.stream(nas_rand.jump(nas_rand.SEED, 2 * e0), 2 * local.size)
        local[...] = (r[0::2] + 1j * r[1::2]).reshape(local.shape)

    def forward(self) -> None:
        """``w = FFT(u)``: x and y in each z slab, the transpose, then z in each y slab."""
        u = self.u.local
        u[...] = np.fft.fft2(u, axes=(1, 2))
        self.w[...] = self.u.transpose(1, 0, 2)
        w = self.w.local
        w[...] = np.fft.fft(w, axis=1)

    def inverse(self) -> None:
        """``u = FFT^-1(t)`` unscaled (NPB's): z in each y slab, the transpose, then y and x."""
        t = self.t.local
        t[...] = np.fft.ifft(t, axis=1, norm="forward")
        self.u[...] = self.t.transpose(1, 0, 2)
        u = self.u.local
        u[...] = np.fft.ifft2(u, axes=(1, 2), norm="forward")

    def checksum(self) -> complex:
        """Collective: NPB's checksum of ``u``: points ``(j, 3j, 5j)`` mod the sides, j = 1..1024, over N."""
        cls, local = self.cls, self.u.local
        z0 = _first(self.u)[0]
        j = np.arange(1, 1025)
        q, r, s = j % cls.nx, (3 * j) % cls.ny, (5 * j) % cls.nz
        mine = (s >= z0) & (s < z0 + local.shape[0])
        c = complex(local[s[mine] - z0, r[mine], q[mine]].sum()) if local.size else 0j
        tot = comm.allreduce(np.array([c.real, c.imag]), "sum")
        return complex(tot[0], tot[1]) / cls.ntotal

    def run(self) -> list:
        """Collective: NPB's timed part; the checksum of every iteration."""
        self.initial()
        self.forward()
        sums = []
        for _ in range(self.cls.niter):
            w = self.w.local
            w *= self.twiddle
            self.t.local[...] = w
            self.inverse()
            sums.append(self.checksum())
        return sums


def run_class(name: str, trials: int) -> dict:
    """Collective: NPB FT class ``name``: one untimed run, then ``trials`` timed runs (the best
    reported), every run's checksums verified."""
    cls = CLASSES[name]
    t0 = time.perf_counter()
    ft = FT(cls)
    setup = float(comm.allreduce(time.perf_counter() - t0, "max"))
    ft.run()
    times, errors, sums = [], [], []
    for _ in range(trials):
        comm.barrier()
        t = time.perf_counter()
        sums = ft.run()
        times.append(float(comm.allreduce(time.perf_counter() - t, "max")))
        errors.append(max(abs((s - ref) / ref) for s, ref in zip(sums, cls.sums)))
    ok = all(e <= EPSILON for e in errors)
    best = min(times)
    return {"kernel": "ft", "class": name, "size": [cls.nx, cls.ny, cls.nz], "iterations": cls.niter,
            "setup_seconds": setup, "seconds": best, "times": times, "mops": cls.mops(best),
            "checksums": [[s.real, s.imag] for s in sums], "relative_error": max(errors), "verified": ok,
            "check": f"max checksum error {max(errors):.1e}"}

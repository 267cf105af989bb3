"""NAS MG (multigrid V-cycle, NPB 3.4) on Block 3-D arrays with ghost cells, verified by NPB's residual norm.

Every grid level ``k`` (``2^k`` points a side, periodic) holds ``u`` and ``r`` as
Block-distributed arrays with one ghost cell a side (``pg.zeros(..., ghosts=(1, 1, 1))``);
NPB's ``comm3`` (periodic halos, edges and corners included) is
``A.update_ghosts(periodic=True, corners=True)``.  The operators are NPB's, each a
local NumPy expression over the locale's padded block (``A.local_with_ghosts``):

- ``resid``: ``r = v - A u`` (27 points: centre ``a0``, edges ``a2``, corners ``a3``);
- ``psinv``: ``u += C r`` (the smoother: centre ``c0``, faces ``c1``, edges ``c2``);
- ``rprj3``: restriction; the coarse point ``J`` is the weighted sum (1/2, 1/4, 1/8,
  1/16 for centre, faces, edges, corners) around the fine point ``2J + 1``.  Each
  locale computes it at the odd fine points it owns (a separable pass per axis) into a
  fine-grid array, and the global-view statement ``S[...] = T[1::2, 1::2, 1::2]``
  moves it to the coarse grid (no message where the levels' blocks line up);
- ``interp``: prolongation; the statement ``Z[1::2, 1::2, 1::2] = z`` puts the coarse
  values at the odd fine points of a ghosted fine array, and ``u`` adds the trilinear
  (1, 1/2, 1/4, 1/8) stencil of ``Z`` (a separable pass per axis);
- ``norm2u3``: ``sqrt(sum r^2 / N)`` and ``max |r|`` (one reduction each).

The right-hand side is NPB's ``zran3``: the ``randlc`` numbers in Fortran order
(the point ``(i1, i2, i3)`` takes number ``1 + i1 + n i2 + n^2 i3``), each locale
making its own block (:mod:`pgas.tools.bench.nas_rand`), then ``+1`` at the ten
largest and ``-1`` at the ten smallest, ``0`` elsewhere.  The run is NPB's: one
untimed V-cycle, then (timed) ``resid``, ``nit`` times ``mg3P`` and ``resid``,
and the norm, verified as ``|rnm2 - official| / official <= 1e-8``.  Mop/s =
``58 nit N / seconds / 10^6`` (NPB's count).  Arrays are stored ``[i3, i2, i1]``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

import pgas as pg
from pgas import comm
from pgas.exec import settings
from pgas.tools.bench import nas_rand


@dataclass(frozen=True)
class MGClass:
    """One NPB MG class: grid side, iterations and the official L2 norm of the residual."""

    name: str
    n: int
    nit: int
    rnm2: float

    @property
    def smoother(self) -> tuple:
        """NPB's smoother coefficients: S(a) for classes S, W, A, S(b) above."""
        if self.name in "SWA":
            return (-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0)
        return (-3.0 / 17.0, 1.0 / 33.0, -1.0 / 61.0, 0.0)

    def mops(self, seconds: float) -> float:
        return 58.0 * self.nit * float(self.n) ** 3 / seconds / 1e6


CLASSES = {
    "S": MGClass("S", 32, 4, 0.5307707005734e-04),
    "W": MGClass("W", 128, 4, 0.6467329375339e-05),
    "A": MGClass("A", 256, 4, 0.2433365309069e-05),
    "B": MGClass("B", 256, 20, 0.1800564401355e-05),
    "C": MGClass("C", 512, 20, 0.5706732285740e-06),
}
A_COEF = (-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0)
EPSILON = 1e-8


def _plane_sums(G):
    """NPB's partial sums over the (i2, i3) neighbours of a padded block, for every i1:
    the four face neighbours and the four edge (diagonal) neighbours."""
    s1 = G[1:-1, :-2, :] + G[1:-1, 2:, :] + G[:-2, 1:-1, :] + G[2:, 1:-1, :]
    s2 = G[:-2, :-2, :] + G[:-2, 2:, :] + G[2:, :-2, :] + G[2:, 2:, :]
    return s1, s2


def resid_local(U, V, a) -> np.ndarray:
    """NPB's ``resid`` on a padded block ``U`` and interior ``V``: ``v - A u`` (``a[1]`` is 0)."""
    u1, u2 = _plane_sums(U)
    return (V - a[0] * U[1:-1, 1:-1, 1:-1] - a[2] * (u2[:, :, 1:-1] + u1[:, :, :-2] + u1[:, :, 2:])
            - a[3] * (u2[:, :, :-2] + u2[:, :, 2:]))


def psinv_local(R, c) -> np.ndarray:
    """NPB's ``psinv`` increment on a padded block ``R`` (``c[3]`` is 0)."""
    r1, r2 = _plane_sums(R)
    return (c[0] * R[1:-1, 1:-1, 1:-1] + c[1] * (R[1:-1, 1:-1, :-2] + R[1:-1, 1:-1, 2:] + r1[:, :, 1:-1])
            + c[2] * (r2[:, :, 1:-1] + r1[:, :, :-2] + r1[:, :, 2:]))


def _odd(lo: int, size: int) -> tuple[int, int]:
    """The first interior index of a block starting at global ``lo`` whose global index is odd,
    and how many such indices the block of ``size`` holds."""
    first = (1 - lo) % 2
    return first, max(0, (size - first + 1) // 2)


def restrict_local(G, lo) -> np.ndarray:
    """NPB's ``rprj3`` weights around this padded block's odd global points (a separable
    (1/2, 1, 1/2) pass per axis, times 1/2): the values of the coarse points they map to."""
    out = G
    for ax in range(3):
        f, cnt = _odd(int(lo[ax]), G.shape[ax] - 2)
        parts = []
        for start in (f, f + 1, f + 2):
            take = [slice(None)] * 3
            take[ax] = slice(start, start + 2 * cnt - 1 if cnt else start, 2)
            parts.append(out[tuple(take)])
        out = 0.5 * parts[0] + parts[1] + 0.5 * parts[2]
    return 0.5 * out


def prolong_local(Z) -> np.ndarray:
    """NPB's ``interp`` increment from a padded block ``Z`` holding the coarse values at the
    odd fine points (zero elsewhere): the (1/2, 1, 1/2) stencil along each axis in turn."""
    out = Z
    for ax in range(3):
        lo, mid, hi = ([slice(None)] * 3 for _ in range(3))
        lo[ax], mid[ax], hi[ax] = slice(None, -2), slice(1, -1), slice(2, None)
        out = 0.5 * out[tuple(lo)] + out[tuple(mid)] + 0.5 * out[tuple(hi)]
    return out


_SRC = """
import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def resid(u, v, r, a0, a2, a3):
    # NPB's resid loop on padded blocks [i3, i2, i1]: r = v - A u in the interior
    n3, n2, n1 = u.shape
    u1 = np.empty(n1)
    u2 = np.empty(n1)
    for i3 in range(1, n3 - 1):
        for i2 in range(1, n2 - 1):
            for i1 in range(n1):
                u1[i1] = u[i3, i2 - 1, i1] + u[i3, i2 + 1, i1] + u[i3 - 1, i2, i1] + u[i3 + 1, i2, i1]
                u2[i1] = u[i3 - 1, i2 - 1, i1] + u[i3 - 1, i2 + 1, i1] + u[i3 + 1, i2 - 1, i1] + u[i3 + 1, i2 + 1, i1]
            for i1 in range(1, n1 - 1):
                r[i3, i2, i1] = (v[i3, i2, i1] - a0 * u[i3, i2, i1] - a2 * (u2[i1] + u1[i1 - 1] + u1[i1 + 1])
                                 - a3 * (u2[i1 - 1] + u2[i1 + 1]))


@njit(cache=True, nogil=True, error_model="numpy")
def psinv(r, u, c0, c1, c2):
    # NPB's psinv loop on padded blocks: u += C r in the interior
    n3, n2, n1 = r.shape
    r1 = np.empty(n1)
    r2 = np.empty(n1)
    for i3 in range(1, n3 - 1):
        for i2 in range(1, n2 - 1):
            for i1 in range(n1):
                r1[i1] = r[i3, i2 - 1, i1] + r[i3, i2 + 1, i1] + r[i3 - 1, i2, i1] + r[i3 + 1, i2, i1]
                r2[i1] = r[i3 - 1, i2 - 1, i1] + r[i3 - 1, i2 + 1, i1] + r[i3 + 1, i2 - 1, i1] + r[i3 + 1, i2 + 1, i1]
            for i1 in range(1, n1 - 1):
                u[i3, i2, i1] = (u[i3, i2, i1] + c0 * r[i3, i2, i1]
                                 + c1 * (r[i3, i2, i1 - 1] + r[i3, i2, i1 + 1] + r1[i1])
                                 + c2 * (r2[i1] + r1[i1 - 1] + r1[i1 + 1]))


@njit(cache=True, nogil=True, error_model="numpy")
def restrict(r, s, f3, f2, f1):
    # NPB's rprj3 weights around the padded block's points f + 1 + 2 j, into s[j]
    m3, m2, m1 = s.shape
    for j3 in range(m3):
        p3 = f3 + 1 + 2 * j3
        for j2 in range(m2):
            p2 = f2 + 1 + 2 * j2
            for j1 in range(m1):
                p1 = f1 + 1 + 2 * j1
                t = 0.0
                for d3 in range(-1, 2):
                    w3 = 1.0 if d3 == 0 else 0.5
                    for d2 in range(-1, 2):
                        w2 = w3 if d2 == 0 else 0.5 * w3
                        x = 0.5 * r[p3 + d3, p2 + d2, p1] + 0.25 * (r[p3 + d3, p2 + d2, p1 - 1]
                                                                   + r[p3 + d3, p2 + d2, p1 + 1])
                        t += w2 * x
                s[j3, j2, j1] = t


@njit(cache=True, nogil=True, error_model="numpy")
def prolong(z, u, o3, o2, o1):
    # NPB's interp: u += the trilinear stencil of z (coarse values at the odd points, zero
    # elsewhere); o is the parity of each axis's first interior point
    n3, n2, n1 = u.shape
    for i3 in range(1, n3 - 1):
        odd3 = (o3 + i3 - 1) % 2 == 1
        for i2 in range(1, n2 - 1):
            odd2 = (o2 + i2 - 1) % 2 == 1
            for i1 in range(1, n1 - 1):
                odd1 = (o1 + i1 - 1) % 2 == 1
                t = 0.0
                for a3 in range(2):
                    if odd3 and a3 == 1:
                        break
                    d3 = 0 if odd3 else 2 * a3 - 1
                    w3 = 1.0 if odd3 else 0.5
                    for a2 in range(2):
                        if odd2 and a2 == 1:
                            break
                        d2 = 0 if odd2 else 2 * a2 - 1
                        w2 = w3 if odd2 else 0.5 * w3
                        if odd1:
                            t += w2 * z[i3 + d3, i2 + d2, i1]
                        else:
                            t += 0.5 * w2 * (z[i3 + d3, i2 + d2, i1 - 1] + z[i3 + d3, i2 + d2, i1 + 1])
                u[i3, i2, i1] += t
"""
_compiled = []


def compiled():
    """The compiled loops (``resid``, ``psinv``, ``restrict``, ``prolong``) when numba is there
    and ``pg.config(fuse=...)`` is not False, else None (NumPy does them)."""
    if not _compiled:
        from pgas.exec import fuse, fusecode
        _compiled.append(fusecode.load_module(_SRC, "nas_mg") if fuse.load_numba() is not None else None)
    return None if settings.get("fuse") is False else _compiled[0]


class Level:
    """One grid level: ``u`` and ``r`` (ghosted), and the scratch arrays that carry values
    between this level and the next coarser one."""

    def __init__(self, k: int) -> None:
        n = 1 << k
        self.k, self.n = k, n
        self.u = pg.zeros((n, n, n), ghosts=(1, 1, 1), name=f"u{k}")
        self.r = pg.zeros((n, n, n), ghosts=(1, 1, 1), name=f"r{k}")
        owned = self.u.layout.owned(comm.here())
        self.lo = [int(o[0]) if len(o) else 0 for o in owned]
        self.fine = None                       # scratch on this grid for the transfers from / to level k - 1
        if k > 1:
            self.fine = pg.zeros((n, n, n), ghosts=(1, 1, 1), name=f"z{k}")
            self.odd = [_odd(lo, s) for lo, s in zip(self.lo, self.u.local.shape)]


def comm3(A) -> None:
    """NPB's ``comm3``: the periodic halo of ``A``, faces, edges and corners."""
    A.update_ghosts(periodic=True, corners=True)


class MG:
    """NPB MG's state for one class: the levels, ``v`` and the coefficients."""

    def __init__(self, cls: MGClass) -> None:
        self.cls = cls
        self.lt = cls.n.bit_length() - 1
        self.levels = {k: Level(k) for k in range(1, self.lt + 1)}
        self.v = pg.zeros((cls.n,) * 3, ghosts=(1, 1, 1), name="v")
        self.a, self.c = A_COEF, cls.smoother

    def resid(self, k: int, v) -> None:
        """``r_k = v - A u_k`` (``v`` is ``r_k`` itself below the top), then its halo."""
        L, k_ = self.levels[k], compiled()
        if k_ is None:
            L.r.local[...] = resid_local(L.u.local_with_ghosts, v.local, self.a)
        elif L.r.local.size:
            k_.resid(L.u.local_with_ghosts, v.local_with_ghosts, L.r.local_with_ghosts, self.a[0], self.a[2], self.a[3])
        comm3(L.r)

    def psinv(self, k: int) -> None:
        """``u_k += C r_k``, then its halo."""
        L, k_ = self.levels[k], compiled()
        if k_ is None:
            L.u.local[...] += psinv_local(L.r.local_with_ghosts, self.c)
        elif L.u.local.size:
            k_.psinv(L.r.local_with_ghosts, L.u.local_with_ghosts, *self.c[:3])
        comm3(L.u)

    def rprj3(self, k: int) -> None:
        """``r_{k-1} = P^T r_k``: computed at the odd fine points, then moved by a statement."""
        L, C = self.levels[k], self.levels[k - 1]
        (f0, n0), (f1, n1), (f2, n2) = L.odd
        T = L.fine.local
        odd = T[f0:f0 + 2 * n0:2, f1:f1 + 2 * n1:2, f2:f2 + 2 * n2:2]
        k_ = compiled()
        if k_ is None:
            odd[...] = restrict_local(L.r.local_with_ghosts, L.lo)
        elif odd.size:
            k_.restrict(L.r.local_with_ghosts, odd, f0, f1, f2)
        C.r[...] = L.fine[1::2, 1::2, 1::2]
        comm3(C.r)

    def interp(self, k: int) -> None:
        """``u_k += Q u_{k-1}``: the coarse values put at the odd fine points by a statement,
        their halo, then the trilinear stencil, then ``u_k``'s halo."""
        L, C = self.levels[k], self.levels[k - 1]
        L.fine.local[...] = 0.0
        L.fine[1::2, 1::2, 1::2] = C.u
        comm3(L.fine)
        k_ = compiled()
        if k_ is None:
            L.u.local[...] += prolong_local(L.fine.local_with_ghosts)
        elif L.u.local.size:
            k_.prolong(L.fine.local_with_ghosts, L.u.local_with_ghosts, *(lo % 2 for lo in L.lo))
        comm3(L.u)

    def mg3p(self) -> None:
        """NPB's V-cycle ``mg3P``."""
        for k in range(self.lt, 1, -1):
            self.rprj3(k)
        self.levels[1].u.local[...] = 0.0
        self.psinv(1)
        for k in range(2, self.lt):
            self.levels[k].u.local[...] = 0.0
            self.interp(k)
            self.resid(k, self.levels[k].r)
            self.psinv(k)
        self.interp(self.lt)
        self.resid(self.lt, self.v)
        self.psinv(self.lt)

    def norm2u3(self) -> tuple[float, float]:
        """Collective: NPB's ``rnm2`` (L2 norm over the points) and ``rnmu`` (max norm) of ``r``."""
        r = self.levels[self.lt].r.local
        s = float(comm.allreduce(float(np.sum(r * r)), "sum"))
        m = float(comm.allreduce(float(np.abs(r).max(initial=0.0)), "max"))
        return float(np.sqrt(s / float(self.cls.n) ** 3)), m

    def zran3(self) -> None:
        """NPB's ``zran3`` into ``v``, then its halo; ``u`` is zeroed on every level."""
        n, v = self.cls.n, self.v
        owned = v.layout.owned(comm.here())
        local = v.local
        if local.size:
            i3, i2, i1 = (np.asarray(o, dtype=np.int64) for o in owned)
            c1 = np.array([nas_rand.jump(nas_rand.SEED, 1 + int(i)) for i in i1], dtype=np.uint64)
            c2 = np.array([pow(nas_rand.A, n * int(i), nas_rand.MOD) for i in i2], dtype=np.uint64)
            c3 = np.array([pow(nas_rand.A, n * n * int(i), nas_rand.MOD) for i in i3], dtype=np.uint64)
            x = nas_rand.mulmod(nas_rand.mulmod(c3[:, None, None], c2[None, :, None]), c1[None, None, :])
            z = x.astype(np.float64) * 2.0 ** -46
            flat = (i3[:, None, None] * n + i2[None, :, None]) * n + i1[None, None, :]
            z, flat = z.reshape(-1), flat.reshape(-1)
            mm = min(10, z.size)
            hi, lo = np.argpartition(z, z.size - mm)[z.size - mm:], np.argpartition(z, mm - 1)[:mm]
            cand = (z[hi], flat[hi], z[lo], flat[lo])
        else:
            e = np.empty(0)
            cand = (e, e.astype(np.int64), e, e.astype(np.int64))
        parts = comm.allgather(cand)
        hv, hf = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        lv, lf = np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts])
        plus, minus = hf[np.argsort(hv)[-10:]], lf[np.argsort(lv)[:10]]
        local[...] = 0.0
        for points, value in ((minus, -1.0), (plus, 1.0)):
            for g in points.tolist():
                i = np.unravel_index(g, (n, n, n))
                li = [int(i[d]) - int(owned[d][0]) if len(owned[d]) else -1 for d in range(3)]
                if all(0 <= li[d] < local.shape[d] for d in range(3)):
                    local[tuple(li)] = value
        comm3(v)
        for L in self.levels.values():
            L.u.local_with_ghosts[...] = 0.0

    def run(self) -> float:
        """Collective: NPB's timed part (``resid``; ``nit`` x (``mg3P``, ``resid``); the norm): ``rnm2``."""
        top = self.lt
        self.resid(top, self.v)
        for _ in range(self.cls.nit):
            self.mg3p()
            self.resid(top, self.v)
        return self.norm2u3()[0]


def run_class(name: str, trials: int) -> dict:
    """Collective: NPB MG class ``name``: setup, one untimed V-cycle, then ``trials`` timed runs
    from NPB's initial state (the best reported), each verified."""
    cls = CLASSES[name]
    t0 = time.perf_counter()
    mg = MG(cls)
    mg.zran3()
    setup = float(comm.allreduce(time.perf_counter() - t0, "max"))
    mg.resid(mg.lt, mg.v)
    mg.mg3p()
    times, norms = [], []
    for _ in range(trials):
        mg.zran3()
        comm.barrier()
        t = time.perf_counter()
        norms.append(mg.run())
        times.append(float(comm.allreduce(time.perf_counter() - t, "max")))
    errors = [abs(x - cls.rnm2) / cls.rnm2 for x in norms]
    ok = all(e <= EPSILON for e in errors)
    best = min(times)
    return {"kernel": "mg", "class": name, "size": cls.n, "iterations": cls.nit, "setup_seconds": setup,
            "seconds": best, "times": times, "mops": cls.mops(best), "rnm2": norms[-1],
            "rnm2_official": cls.rnm2, "relative_error": max(errors), "verified": ok,
            "check": f"rnm2 {norms[-1]:.13e}, error {max(errors):.1e}"}

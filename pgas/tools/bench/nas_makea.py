"""The NAS Parallel Benchmarks CG matrix generator (``makea``) and a serial reference CG.

A port of NPB 3.x ``cg.c`` (``randlc``, ``sprnvc``, ``vecset``, ``makea``,
``sparse``, ``conj_grad``), pure NumPy, no MPI.  The generator reproduces the
official matrix exactly — same random numbers, same duplicate summation order
— so the official verification values of zeta hold.

``randlc`` is the NAS linear congruential generator ``x <- a * x mod 2^46``
(returning ``x / 2^46``); NAS computes it with doubles split in 23-bit halves,
exactly, so Python integers give the same numbers.

>>> seed = [314159265]
>>> round(randlc(seed, 1220703125), 10)
0.7945219112
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

AMULT = 1220703125
TRAN = 314159265
RCOND = 0.1
_M46 = (1 << 46) - 1
_R46 = 0.5 ** 46


@dataclass(frozen=True)
class CGClass:
    """One NAS CG problem class: order ``na``, ``nonzer``, iterations, ``shift`` and official zeta."""

    name: str
    na: int
    nonzer: int
    niter: int
    shift: float
    zeta: float

    def mops(self, seconds: float) -> float:
        """NAS's Mop/s figure for ``niter`` iterations in ``seconds``."""
        nz = self.nonzer * (self.nonzer + 1)
        flops = 2.0 * self.niter * self.na * (3.0 + nz + 25.0 * (5.0 + nz) + 3.0)
        return flops / seconds / 1e6 if seconds > 0 else 0.0


CLASSES = {c.name: c for c in (
    CGClass("S", 1400, 7, 15, 10.0, 8.5971775078648),
    CGClass("W", 7000, 8, 15, 12.0, 10.362595087124),
    CGClass("A", 14000, 11, 15, 20.0, 17.130235054029),
    CGClass("B", 75000, 13, 75, 60.0, 22.712745482631),
)}


def randlc(state: list, a: int = AMULT) -> float:
    """Advance the NAS generator held in ``state[0]`` (an int) and return the new value / 2^46."""
    state[0] = (a * state[0]) & _M46
    return state[0] * _R46


def _sprnvc(n: int, nz: int, nn1: int, state: list) -> tuple[list[float], list[int]]:
    """``nz`` distinct random positions in 1..n with random values (NAS ``sprnvc``)."""
    v, iv = [], []
    while len(v) < nz:
        vecelt = randlc(state)
        i = int(nn1 * randlc(state)) + 1
        if i > n or i in iv:
            continue
        v.append(vecelt)
        iv.append(i)
    return v, iv


def _vecset(v: list, iv: list, i: int, val: float) -> None:
    """Set the element at position ``i`` to ``val``, appending it if absent (NAS ``vecset``)."""
    hit = [k for k, pos in enumerate(iv) if pos == i]
    for k in hit:
        v[k] = val
    if not hit:
        v.append(val)
        iv.append(i)


def makea(cls: CGClass) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The class's sparse matrix in CSR form ``(rowstr, colidx, a)`` (0-based, columns sorted per row).

    As in NPB: one random number is drawn first (the ``zeta = randlc(tran, amult)`` of the
    main program), then each of the ``na`` outer products ``size * v v^T`` of a sparse random
    vector ``v`` is summed into the matrix, plus ``(rcond - shift)`` on the diagonal.
    """
    n = cls.na
    state = [TRAN]
    randlc(state)
    nn1 = 1 << max(1, math.ceil(math.log2(n)))
    cols, vals = [], []
    for iouter in range(n):
        v, iv = _sprnvc(n, cls.nonzer, nn1, state)
        _vecset(v, iv, iouter + 1, 0.5)
        cols.append(np.array(iv, dtype=np.int64) - 1)
        vals.append(np.array(v))
    return _sparse(n, cols, vals, cls.shift)


def _sparse(n: int, cols: list, vals: list, shift: float):
    """Sum the outer products in generation order (NAS ``sparse``): element (j, jcol) of outer
    product i is ``aelt[jcol] * (size_i * aelt[j])``; duplicates add in the order NAS adds them."""
    ratio = RCOND ** (1.0 / n)
    size, rows, cs, va = 1.0, [], [], []
    for i in range(n):
        c, e = cols[i], vals[i]
        scale = size * e                                    # one per row j = c[nza]
        block = e[None, :] * scale[:, None]                 # va[nza, nzrow]
        diag = (c[:, None] == c[None, :]) & (c[:, None] == i)
        block = np.where(diag, block + RCOND - shift, block)
        rows.append(np.repeat(c, len(c)))
        cs.append(np.tile(c, len(c)))
        va.append(block.ravel())
        size *= ratio
    rows, cs, va = np.concatenate(rows), np.concatenate(cs), np.concatenate(va)
    key = rows * n + cs
    uniq, inverse = np.unique(key, return_inverse=True)
    a = np.zeros(len(uniq))
    np.add.at(a, inverse, va)                               # sequential, in generation order
    rowstr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(rowstr, uniq // n + 1, 1)
    return np.cumsum(rowstr), (uniq % n).astype(np.int64), a


def csr_matvec(rowstr: np.ndarray, colidx: np.ndarray, a: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``A @ p`` for a CSR matrix (segment sums; NAS rows are never empty, others are handled)."""
    prod = a * p[colidx]
    nrows = len(rowstr) - 1
    if nrows and np.all(np.diff(rowstr) > 0):
        return np.add.reduceat(prod, rowstr[:-1])
    return np.bincount(np.repeat(np.arange(nrows), np.diff(rowstr)), weights=prod, minlength=nrows)


def conj_grad(matvec, dot, x, cgitmax: int = 25):
    """NAS ``conj_grad``: 25 unpreconditioned CG steps on ``A z = x`` from ``z = 0``;
    returns ``(z, ||x - A z||)``.  ``matvec`` and ``dot`` may be distributed."""
    z, d = _cg_steps(matvec, dot, x, cgitmax)
    return z, math.sqrt(dot(d, d))


def _cg_steps(matvec, dot, x, cgitmax: int):
    """:func:`conj_grad`'s steps: ``(z, x - A z)``."""
    z = np.zeros_like(x)
    r = x.copy()
    p = r.copy()
    rho = dot(r, r)
    for _ in range(cgitmax):
        q = matvec(p)
        alpha = rho / dot(p, q)
        z += alpha * p
        r -= alpha * q
        rho0, rho = rho, dot(r, r)
        p = r + (rho / rho0) * p
    return z, x - matvec(z)


def power_iterations(cls: CGClass, matvec, dot, n_local: int, niter: int, dots=None, steps=None):
    """The NAS outer loop from ``x = (1, ..., 1)``: ``niter`` inverse power steps; returns
    ``(zeta, rnorm)`` after the last.  Vectors are local parts of length ``n_local``.
    NAS runs it once with ``niter = 1`` untimed, then with ``cls.niter`` timed.
    ``dots(*pairs)``: several dot products at once (one reduction where they are
    distributed, as NPB reduces ``x.z`` and ``z.z`` together); each value must equal
    ``dot``'s (by default it is ``dot`` on each pair).  ``steps(x)``: :func:`conj_grad`'s
    steps ``(z, x - A z)`` scheduled otherwise (the same iterates; by default NAS's loop
    on ``matvec`` and ``dot``)."""
    dots = dots or (lambda *pairs: [dot(u, v) for u, v in pairs])
    steps = steps or (lambda x: _cg_steps(matvec, dot, x, 25))
    zeta, rnorm = 0.0, 0.0
    x = np.ones(n_local)
    for _ in range(niter):
        z, d = steps(x)
        dd, xz, zz = dots((d, d), (x, z), (z, z))
        rnorm = math.sqrt(dd)
        zeta = cls.shift + 1.0 / xz
        x = (1.0 / math.sqrt(zz)) * z
    return zeta, rnorm


def serial_cg(cls: CGClass) -> tuple[float, float]:
    """The whole benchmark on one process (warm-up step, then the timed loop): ``(zeta, rnorm)``."""
    rowstr, colidx, a = makea(cls)

    def matvec(p):
        return csr_matvec(rowstr, colidx, a, p)

    def dot(u, v):
        return float(u @ v)

    power_iterations(cls, matvec, dot, cls.na, 1)
    return power_iterations(cls, matvec, dot, cls.na, cls.niter)


def verified(cls: CGClass, zeta: float, epsilon: float = 1e-10) -> bool:
    """NAS's verdict: ``|zeta - official| / official <= epsilon``."""
    return abs(zeta - cls.zeta) / cls.zeta <= epsilon

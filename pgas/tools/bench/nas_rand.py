"""NAS's pseudorandom numbers (``randlc`` / ``vranlc``) as exact integer arithmetic.

NPB's generator is the linear congruence ``x_{k+1} = a x_k mod 2^46`` with
``a = 5^13``, each number returned as ``x_{k+1} 2^-46`` (``randlc`` computes it in
doubles split into 23-bit halves; every step is exact, so the integers here give the
same bits).  :func:`stream` returns any stretch of the sequence at once: the start is
found by a jump (``a^k mod 2^46`` by Python's ``pow``) and the rest by vectorised
products of 46-bit numbers split into 23-bit halves, so a locale makes its own part
of a global sequence without making the parts before it.
"""

from __future__ import annotations

import numpy as np

A = 5 ** 13                       # NPB's multiplier 1220703125
SEED = 314159265                  # NPB's seed
MOD = 1 << 46
_LO = np.uint64((1 << 23) - 1)
_SH = np.uint64(23)
_MASK = np.uint64(MOD - 1)
_CHUNK = 1 << 20
_powers: dict[int, np.ndarray] = {}


def mulmod(x, y):
    """``x * y mod 2^46`` elementwise for uint64 values below ``2^46`` (arrays or scalars).

    >>> int(mulmod(np.uint64(A), np.uint64(SEED))) == A * SEED % MOD
    True
    """
    x, y = np.asarray(x, dtype=np.uint64), np.asarray(y, dtype=np.uint64)
    xl, xh, yl, yh = x & _LO, x >> _SH, y & _LO, y >> _SH
    mid = ((xh * yl + xl * yh) & _LO) << _SH
    return (mid + xl * yl) & _MASK


def jump(x: int, k: int, a: int = A) -> int:
    """The ``k``-th number after ``x`` (``x a^k mod 2^46``) as an integer.

    >>> jump(SEED, 2) == SEED * A * A % MOD
    True
    """
    return x * pow(a, k, MOD) % MOD


def _table(a: int) -> np.ndarray:
    """``a^1 .. a^CHUNK mod 2^46`` (made once per multiplier by doubling)."""
    t = _powers.get(a)
    if t is None:
        t = np.array([a], dtype=np.uint64)
        while t.size < _CHUNK:
            t = np.concatenate([t, mulmod(t, np.uint64(pow(a, t.size, MOD)))])
        _powers[a] = t = t[:_CHUNK]
    return t


def stream(x: int, n: int, a: int = A) -> np.ndarray:
    """The ``n`` numbers that follow seed ``x`` (what ``n`` calls of ``randlc(&x, &a)``
    return), as doubles in (0, 1).

    >>> s = stream(SEED, 3)
    >>> bool(s[0] == SEED * A % MOD / 2.0 ** 46 and stream(jump(SEED, 2), 1)[0] == s[2])
    True
    """
    out = np.empty(n)
    t = _table(a)
    for lo in range(0, n, _CHUNK):
        m = min(_CHUNK, n - lo)
        out[lo:lo + m] = mulmod(np.uint64(jump(x, lo, a)), t[:m]).astype(np.float64)
    return out * 2.0 ** -46

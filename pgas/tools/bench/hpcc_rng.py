"""The HPC Challenge RandomAccess random stream (pure NumPy, no MPI).

The stream is the sequence ``a_n = x^n mod P(x)`` over GF(2), with
``P(x) = x^64 + x^2 + x + 1`` (``POLY = 7``): one step multiplies by ``x``,
i.e. ``a <- (a << 1) ^ (POLY if a's top bit is set else 0)`` on 64-bit words.
Its period is ``PERIOD``.  :func:`starts` is the standard ``HPCC_starts(n)``
jump (``a_n`` without stepping n times), so every locale, and every lane of a
vectorised generator, starts its own substream.

>>> [hex(int(v)) for v in RandomStream(0, 4, lanes=1).next_block()]
['0x2']
>>> int(starts(np.array([PERIOD], dtype=np.int64))[0])
1
"""

from __future__ import annotations

import numpy as np

POLY = np.uint64(7)
PERIOD = 1317624576693539401
_TOP = np.uint64(63)
_ONE = np.uint64(1)


def step(a: np.ndarray) -> np.ndarray:
    """One step of the stream for every element of ``a`` (uint64): ``a * x mod P``."""
    return (a << _ONE) ^ ((a >> _TOP) * POLY)


def _mulmod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Product of GF(2) polynomials ``a * b mod P`` element-wise (uint64 arrays)."""
    acc = np.zeros(np.broadcast_shapes(a.shape, b.shape), dtype=np.uint64)
    t = np.broadcast_to(a, acc.shape).copy()
    for j in range(64):
        acc ^= np.where((b >> np.uint64(j)) & _ONE == _ONE, t, np.uint64(0))
        t = step(t)
    return acc


def starts(n) -> np.ndarray:
    """``HPCC_starts(n)`` for each element of the int array ``n``: the stream value at position n
    (``starts(0) == 1``), by square-and-multiply of ``x`` modulo ``P``.  Positions are taken
    modulo ``PERIOD``, as HPCC does."""
    n = np.atleast_1d(np.asarray(np.asarray(n, dtype=object) % PERIOD, dtype=np.uint64))
    result = np.ones(n.shape, dtype=np.uint64)
    power = np.full(n.shape, 2, dtype=np.uint64)          # x^(2^k) for k = 0, 1, ...
    while n.any():
        odd = n & _ONE == _ONE
        if odd.any():
            result = np.where(odd, _mulmod(result, power), result)
        n = n >> _ONE
        if n.any():
            power = _mulmod(power, power)
    return result


def _mulmod_int(a: int, b: int) -> int:
    """:func:`_mulmod` of two Python ints (64-bit words)."""
    acc = 0
    while b:
        if b & 1:
            acc ^= a
        a = ((a << 1) & 0xFFFFFFFFFFFFFFFF) ^ (7 if a >> 63 else 0)
        b >>= 1
    return acc


def _starts_int(n: int) -> int:
    """:func:`starts` of one position, on Python ints (square and multiply)."""
    n %= PERIOD
    result, power = 1, 2
    while n:
        if n & 1:
            result = _mulmod_int(result, power)
        n >>= 1
        if n:
            power = _mulmod_int(power, power)
    return result


def lane_starts(first: int, stride: int, lanes: int) -> np.ndarray:
    """``starts(first + j * stride)`` for ``j < lanes`` (uint64): ``x^first * (x^stride)^j``,
    by doubling (lanes ``k .. 2k - 1`` are lanes ``0 .. k - 1`` times ``x^(k * stride)``), so
    a handful of vectorised products where :func:`starts` squares once per bit for every lane."""
    out = np.empty(lanes, dtype=np.uint64)
    if not lanes:
        return out
    out[0] = _starts_int(first)
    jump, filled = _starts_int(stride), 1                 # jump = x^(filled * stride)
    while filled < lanes:
        k = min(filled, lanes - filled)
        out[filled:filled + k] = _mulmod(out[:k], np.uint64(jump))
        jump, filled = _mulmod_int(jump, jump), filled + k
    return out


def hpcc_starts_reference(n: int) -> int:
    """A line-by-line transcription of HPCC's ``HPCC_starts`` on Python ints (for tests)."""
    mask = (1 << 64) - 1

    def stepi(v: int) -> int:
        return ((v << 1) & mask) ^ (7 if v >> 63 else 0)

    while n < 0:
        n += PERIOD
    while n > PERIOD:
        n -= PERIOD
    if n == 0:
        return 1
    m2, temp = [], 1
    for _ in range(64):
        m2.append(temp)
        temp = stepi(stepi(temp))
    i = 62
    while i >= 0 and not (n >> i) & 1:
        i -= 1
    ran = 2
    while i > 0:
        temp = 0
        for j in range(64):
            if (ran >> j) & 1:
                temp ^= m2[j]
        ran = temp
        i -= 1
        if (n >> i) & 1:
            ran = stepi(ran)
    return ran


class RandomStream:
    """The RandomAccess updates of one locale, in blocks of at most ``lanes`` values.

    The locale's ``count`` updates (positions ``first + 1 .. first + count`` of
    the global stream, ``first = 4 * (first table index of the locale)`` in HPCC)
    are cut into ``lanes`` runs of ``ceil(count / lanes)`` (the last ones
    shorter), each started at ``starts(first + j * length)`` (:func:`lane_starts`); each call to :meth:`next_block`
    advances every unfinished run by one step and returns one value per run.
    This is HPCC's own vectorisation: the set of updates is exactly the
    locale's part of the stream.
    """

    def __init__(self, first: int, count: int, lanes: int = 1024) -> None:
        if lanes < 1 or count < 0:
            raise ValueError(f"need lanes >= 1 and count >= 0, got {lanes} lanes, count {count}")
        length = -(-count // lanes) if count else 0
        offsets = np.arange(0, count, max(length, 1), dtype=np.int64)
        self.lengths = np.minimum(length, count - offsets)
        self.blocks = int(length)
        self.ran = lane_starts(first, length, len(offsets)) if count else np.empty(0, dtype=np.uint64)
        self.done = 0
        self._all = int(self.lengths.min()) if count else 0      # blocks in which every run takes part

    def next_block(self) -> np.ndarray:
        """The next value of every unfinished run (uint64 array of at most ``lanes`` values)."""
        if self.done >= self.blocks:
            raise StopIteration("the stream is exhausted")
        self.ran = step(self.ran)
        self.done += 1
        return self.ran if self.done <= self._all else self.ran[self.lengths >= self.done]

    def __iter__(self):
        while self.done < self.blocks:
            yield self.next_block()

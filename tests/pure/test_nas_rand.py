"""NAS's randlc as exact integers equals NPB's double-precision randlc, number for number."""

import numpy as np

from pgas.tools.bench import nas_rand


def randlc(x: float, a: float) -> tuple[float, float]:
    """NPB's ``randlc`` as written in is.c (23-bit halves in doubles): the new seed and the number."""
    r23, r46, t23, t46 = 0.5 ** 23, 0.5 ** 46, 2.0 ** 23, 2.0 ** 46
    a1 = float(int(r23 * a))
    a2 = a - t23 * a1
    x1 = float(int(r23 * x))
    x2 = x - t23 * x1
    t1 = a1 * x2 + a2 * x1
    z = t1 - t23 * float(int(r23 * t1))
    t3 = t23 * z + a2 * x2
    x = t3 - t46 * float(int(r46 * t3))
    return x, r46 * x


def test_stream_equals_npb_randlc():
    x, want = float(nas_rand.SEED), []
    for _ in range(3000):
        x, r = randlc(x, float(nas_rand.A))
        want.append(r)
    assert np.array_equal(nas_rand.stream(nas_rand.SEED, 3000), want)
    assert np.array_equal(nas_rand.stream(nas_rand.jump(nas_rand.SEED, 1234), 10), want[1234:1244])


def test_stream_crosses_its_chunks():
    n = nas_rand._CHUNK + 5
    s = nas_rand.stream(nas_rand.SEED, n)
    assert s[-1] == nas_rand.stream(nas_rand.jump(nas_rand.SEED, n - 1), 1)[0]

"""Review of session 21 (rev1), pure parts: the copy kernel's guard (pgas.exec.copies) and
np.round's power of ten, against NumPy."""

import numpy as np
import pytest

from pgas.array.numeric import _power_of_ten
from pgas.exec.copies import SMALL, Copies


def _numpy_power_of_ten(n):
    """NumPy's C power_of_ten (multiarray/calculation.c)."""
    if n < 9:
        return [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8][n]
    r = 1e9
    for _ in range(n - 9):
        r *= 10.0
    return r


def test_power_of_ten_is_numpys():
    """Was: steps of 1e9 (1e27 exactly, NumPy 9.999999999999999e+26): np.round(A, 27) differed."""
    assert [_power_of_ten(n) for n in range(400)] == [_numpy_power_of_ten(n) for n in range(400)]
    x = np.random.default_rng(0).random(200) * 1e-25
    f = _power_of_ten(27)
    np.testing.assert_array_equal(np.rint(x * f) / f, np.round(x, 27))


def _run(make, runs=2, change=None):
    """The moves by Copies (kernel forced) and by NumPy assignments in list order."""
    pytest.importorskip("numba")
    (pk, mk), (pn, mn) = make(), make()
    c = Copies(pk)
    c._compile()
    for r in range(runs):
        if change and r:
            change(mk), change(mn)
        c()
        for d, s in pn:
            d[...] = s
    return mk, mn


def test_zero_d_source_view_is_not_frozen():
    """Was: a 0-d ndarray source went into the kernel's constants at compile time, so later
    runs copied its first value."""
    def make():
        m, out = np.arange(10.0), np.zeros(9)
        return [(out[0:3], m[0:3]), (out[3:6], m[3:6]), (out[6:7], m[9:10].reshape(())), (out[7:9], m[1:3])], (m, out)

    def change(mem):
        mem[0][9] = 42.0
    got, want = _run(make, 2, change)
    np.testing.assert_array_equal(got[1], want[1])


def test_zero_d_small_destination_read_by_a_large_move():
    """Was: 0-d views counted as sharing nothing, so the kernel ran a small 0-d write before
    an earlier large move reading that element."""
    n = SMALL + 8

    def make():
        m = np.arange(3 * n, dtype=np.float64)
        return [(m[n:2 * n], m[0:n]), (m[5:6].reshape(()), -1.0), (m[2 * n:2 * n + 2], m[6:8]),
                (m[2 * n + 2:2 * n + 4], m[8:10])], (m,)
    got, want = _run(make, 1)
    np.testing.assert_array_equal(got[0], want[0])

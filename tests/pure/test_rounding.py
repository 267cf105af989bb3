"""np.round's power of ten (pgas.array.numeric) is NumPy's, bit for bit."""

import numpy as np

from pgas.array.numeric import _power_of_ten


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

"""The NAS CG generator and serial CG against the official verification values."""

import numpy as np
import pytest

from pgas.tools.bench.nas_makea import CLASSES, TRAN, csr_matvec, makea, randlc, serial_cg, verified


def test_randlc_is_the_46_bit_lcg():
    state = [TRAN]
    xs = [randlc(state) for _ in range(5)]
    x = TRAN
    for got in xs:
        x = (1220703125 * x) % 2 ** 46
        assert got == x / 2 ** 46


def test_makea_class_s_structure():
    rowstr, colidx, a = makea(CLASSES["S"])
    n = CLASSES["S"].na
    assert len(rowstr) == n + 1 and rowstr[0] == 0 and rowstr[-1] == len(a) == 78148
    for j in range(0, n, 97):
        cols = colidx[rowstr[j]:rowstr[j + 1]]
        assert np.all(np.diff(cols) > 0) and j in cols
    dense = np.zeros((n, n))
    rows = np.repeat(np.arange(n), np.diff(rowstr))
    dense[rows, colidx] = a
    assert np.allclose(dense, dense.T, rtol=0, atol=1e-15)


def test_csr_matvec_matches_dense():
    rowstr, colidx, a = makea(CLASSES["S"])
    n = CLASSES["S"].na
    dense = np.zeros((n, n))
    dense[np.repeat(np.arange(n), np.diff(rowstr)), colidx] = a
    p = np.random.default_rng(1).random(n)
    assert np.allclose(csr_matvec(rowstr, colidx, a, p), dense @ p, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", ["S", "W"])
def test_serial_cg_verifies(name):
    zeta, rnorm = serial_cg(CLASSES[name])
    assert verified(CLASSES[name], zeta), (zeta, CLASSES[name].zeta)
    assert rnorm < 1e-12


def test_wrong_zeta_fails_verification():
    assert not verified(CLASSES["S"], CLASSES["S"].zeta * (1 + 1e-9))


def test_csr_matvec_with_empty_rows():
    rowstr = np.array([0, 2, 2, 3])
    colidx = np.array([0, 2, 1])
    a = np.array([1.0, 2.0, 3.0])
    assert csr_matvec(rowstr, colidx, a, np.array([1.0, 10.0, 100.0])).tolist() == [201.0, 0.0, 30.0]
    assert csr_matvec(np.array([0]), colidx[:0], a[:0], np.ones(3)).shape == (0,)

"""forall bodies against Python loops: closures and captured constants, in-place
references, affine subscripts, reductions, conditionals and where=, fused or not."""

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg
from pgas import comm


@pytest.fixture
def _defaults():
    pg.config()
    yield
    pg.config()


def _exact(A, want):
    """A equals want exactly: dtype, values (NaN equal) and signs of zeros."""
    want = np.asarray(want)
    assert_matches(A, want, rtol=0.0)
    got = A.to_numpy()
    ok = got.dtype == want.dtype and np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
    if want.dtype.kind == "f":
        ok = ok and np.array_equal(np.signbit(got), np.signbit(want))
    collective_verdict(ok, lambda: f"got {got!r}, expected {want!r}")


@pytest.mark.usefixtures("_defaults")
def test_forall_closure_constant_and_domain_change():
    n = 9
    a = np.arange(n, dtype=np.float64)
    A = pg.from_numpy(a.copy())
    B = pg.zeros(n)
    b = np.zeros(n)
    for k in (1, 2, 0, 3):
        pg.forall(range(k, n), lambda i: B.__setitem__(i, A[i - k] * k))
        b[k:] = a[:n - k] * k
        _exact(B, b)
    C, c = pg.zeros((n, n)), np.zeros((n, n))
    for k in (0, 2, 1):
        pg.forall((range(n), lambda i: range(i + k, n)), lambda i, j: C.__setitem__((i, j), A[j] + k))
        for i in range(n):
            c[i, i + k:] = a[i + k:] + k
        _exact(C, c)


@pytest.mark.usefixtures("_defaults")
def test_forall_in_place_same_ref_and_reversed_ref():
    n = 11
    a = np.arange(n, dtype=np.float64)
    A = pg.from_numpy(a.copy(), dist=pg.BlockCyclic(2))
    pg.forall(range(n), lambda i: A.__setitem__(i, A[i] * 2.0 + A[n - 1 - i]))
    a = a * 2.0 + a[::-1]
    _exact(A, a)
    pg.forall(range(n), lambda i: A.__setitem__(i, A[i] - 1.0))
    a = a - 1.0
    _exact(A, a)


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("owner", ["write", "cost"])
def test_fused_forall_in_place_on_domains_with_parts_and_clips(owner):
    pytest.importorskip("numba")
    pg.config(fuse=True, owner=owner)
    n = 9
    rng = np.random.default_rng(3)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, n))
    A = pg.from_numpy(a.copy(), dist=pg.BlockCyclic(2))
    B = pg.from_numpy(b.copy(), dist=pg.Cyclic())
    want = a.copy()
    for k in (0, 2, 1):
        pg.forall((range(n), lambda i: range(i + k, n)),
                  lambda i, j: A.__setitem__((i, j), A[i, j] * 2.0 - B[j, i]))
        pg.forall((range(1, n), range(n)), lambda i, j: A.__setitem__((i, j), A[i, j] + A[i - 1, j]))
        pg.forall(range(n), lambda i: A.__setitem__((i, n - 1 - i), A[i, n - 1 - i] * 0.5))
        for i in range(n):
            for j in range(i + k, n):
                want[i, j] = want[i, j] * 2.0 - b[j, i]
        want[1:] = want[1:] + want[:-1].copy()
        for i in range(n):
            want[i, n - 1 - i] *= 0.5
        _exact(A, want)


@pytest.mark.usefixtures("_defaults")
def test_forall_scalar_from_reduction_captured():
    """A body dividing by a sum it captured gives NumPy's ``x / s`` bit for bit, for the ``s``
    that ``A.sum()`` returned.  That ``s`` is the same on every locale and close to NumPy's
    ``a.sum()``, not always equal to it: at several locales the locales' partial sums are
    added in another order than NumPy's pairwise summation (here 1 / 55 + ... + 10 / 55 is
    0.9999999999999999 at 4 locales with folded checking, 1.0 in NumPy).  At n=13 the first
    sum, 91, is exact at any locale count, and ``x * (1 / 91)`` differs from ``x / 91`` for
    five of the elements, so a body that multiplied by ``1 / s`` instead of dividing would fail."""
    for n in (10, 13):
        a = np.arange(1.0, n + 1)
        A = pg.from_numpy(a.copy(), dist=pg.Cyclic())
        for _ in range(3):
            s = A.sum()
            bits = np.asarray(s, dtype=np.float64).view(np.int64)
            collective_verdict(comm.allreduce(bits, "min") == comm.allreduce(bits, "max"), "sums differ over locales")
            collective_verdict(abs(s - a.sum()) <= 4 * np.spacing(a.sum()), lambda: f"sum {s!r}, NumPy {a.sum()!r}")
            pg.forall(range(n), lambda i: A.__setitem__(i, A[i] / s))
            a = a / s
            _exact(A, a)


@pytest.mark.usefixtures("_defaults")
def test_forall_python_conditional_on_captured_flag():
    n = 8
    a = np.arange(n, dtype=np.int64)
    A = pg.from_numpy(a.copy())
    B = pg.zeros(n, dtype=np.int64)
    for flag in (True, False, True):
        def body(i):
            if flag:
                B[i] = A[n - 1 - i] * 2
            else:
                B[i] = A[i] + 1
        pg.forall(range(n), body)
        _exact(B, a[::-1] * 2 if flag else a + 1)


DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3)]


def data(shape, dtype=float):
    """Small values of both signs (zeros included), deterministic."""
    return (np.arange(int(np.prod(shape))).reshape(shape) * 7 % 11 - 5).astype(dtype)


def dist_array(shape, dist, dtype=float):
    a = data(shape, dtype)
    return a, pg.from_numpy(a, dist=dist)


# -- forall -------------------------------------------------------------------
@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_forall_affine_coefficients(dist):
    a, A = dist_array((20,), dist)
    b, B = dist_array((20,), dist)
    pg.forall(range(9), lambda i: A.__setitem__(2 * i + 1, B[-i + 18] * 2))
    for i in range(9):
        a[2 * i + 1] = b[18 - i] * 2
    pg.forall(range(20), lambda i: A.__setitem__(19 - i, A[i]))       # reversal onto itself
    a[...] = a[::-1].copy()
    pg.forall(range(19, -1, -3), lambda i: A.__setitem__(i, A[i] * 2 + B[5]))
    a[19::-3] = a[19::-3] * 2 + b[5]
    pg.forall(range(3, 3), lambda i: A.__setitem__(i, 1.0))
    assert_matches(A, a)


@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_forall_diagonal_sums_and_several_assignments(dist):
    a, A = dist_array((8, 8), dist)
    b, B = dist_array((8,), dist)
    pg.forall(range(8), lambda i: A.__setitem__((i, i), B[i] + A[i, i]))
    a[np.arange(8), np.arange(8)] += b
    G = pg.zeros((4, 4), dist=dist)
    pg.forall((range(4), range(4)), lambda i, j: G.__setitem__((i, j), A[i + j, j] - A[j, i]))   # inspector read
    assert_matches(A, a)
    assert_matches(G, np.array([[a[i + j, j] - a[j, i] for j in range(4)] for i in range(4)]))
    c, C = dist_array((8,), dist)

    def body(i):
        B[i + 1] = C[i] * 2
        C[i] = B[i + 1] + B[i]
    pg.forall(range(7), body)
    b[1:] = c[:-1] * 2
    c[:-1] = b[1:] + b[:-1]
    assert_matches(B, b)
    assert_matches(C, c)


@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_forall_reductions(dist):
    a, A = dist_array((6, 6), dist)
    b, B = dist_array((6, 6), dist)
    D = pg.zeros((6, 6), dist=dist)
    def matmul(i, j, k):
        D[i, j] += A[i, k] * B[k, j]
    pg.forall((range(6), range(6), range(6)), matmul)
    assert_matches(D, a @ b)
    x, X = dist_array((10,), dist, np.int64)
    S = pg.zeros((3,), dtype=np.int64, dist=dist)

    def body(i, j):
        S[j] -= X[3 * i + j]
    pg.forall((range(3), range(3)), body)
    assert_matches(S, -x[:9].reshape(3, 3).sum(0))
    W = pg.full((3,), 100.0, dist=dist)
    pg.forall((range(3), range(3)), lambda i, j: np.minimum(W[j], X[3 * i + j] * 1.0, out=W[j]))
    assert_matches(W, np.minimum(100.0, x[:9].reshape(3, 3).min(0)))


@pytest.mark.parametrize("dist", DISTS, ids=str)
def test_forall_where_with_loop_variable(dist):
    a, A = dist_array((10,), dist)
    B = pg.zeros((10,), dist=dist)
    pg.forall(range(10), lambda i: B.__setitem__(i, pg.where(A[i] > 0, A[i], i * 1.5)))
    assert_matches(B, np.where(a > 0, a, np.arange(10) * 1.5))


def test_forall_reduction_into_fixed_element():
    a, A = dist_array((10,), pg.Cyclic())
    S = pg.zeros((2,), dist=pg.Cyclic())

    def body(i):
        S[0] += A[i]
    pg.forall(range(10), body)
    assert_matches(S, np.array([a.sum(), 0.0]))


def test_forall_write_with_combined_subscript():
    a, A = dist_array((9,), pg.Cyclic())
    b, B = dist_array((5, 5), pg.Cyclic())

    def body(i, j):
        A[i + j] += B[i, j]
    pg.forall((range(5), range(5)), body)
    for i in range(5):
        for j in range(5):
            a[i + j] += b[i, j]
    assert_matches(A, a)

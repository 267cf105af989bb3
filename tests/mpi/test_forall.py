"""pg.forall against NumPy loops: affine subscripts, several assignments, reductions,
the inspector fallback, loop variables as values, and tracing errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.array.expr import Affine, TraceError
from util import assert_matches, collective_verdict

P = pg.num_locales
DISTS = [pg.Cyclic(), pg.Block(), pg.BlockCyclic(2), pg.BlockCyclic(3)]


@pytest.fixture(autouse=True, params=[True, False], ids=["aggregated", "baseline"])
def mode(request):
    pg.config(aggregate=request.param)
    yield request.param
    pg.config()


def data(shape, seed=0, dtype=float):
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(dtype)


@pytest.mark.parametrize("dist", DISTS)
def test_stencil_and_strided_subscripts(dist):
    n = 11
    GA, GB = data((n, n), 1), data((n, n), 2)
    A, B = pg.from_numpy(GA, dist=dist), pg.from_numpy(GB, dist=pg.Cyclic())

    def body(i, j):
        B[i, j] = (A[i + 1, j] + A[i - 1, j] + A[i, j + 1] + A[i, j - 1]) / 4
        A[2 * i - 1, j - 1] = B[i, j] - A[n - 1 - i, 2 * j - 1]

    pg.forall((range(1, n // 2), range(1, n // 2 + 1)), body)
    for i in range(1, n // 2):
        for j in range(1, n // 2 + 1):
            GB[i, j] = (GA[i + 1, j] + GA[i - 1, j] + GA[i, j + 1] + GA[i, j - 1]) / 4
    old = GA.copy()
    for i in range(1, n // 2):
        for j in range(1, n // 2 + 1):
            GA[2 * i - 1, j - 1] = GB[i, j] - old[n - 1 - i, 2 * j - 1]
    assert_matches(B, GB)
    assert_matches(A, GA)


@pytest.mark.parametrize("dist", DISTS)
def test_steps_values_and_diagonals(dist):
    n = 12
    GA = data((n, n), 3)
    A = pg.from_numpy(GA, dist=dist)
    d = pg.zeros(n, dist=pg.Cyclic())
    v = pg.zeros(n, dtype=np.int64, dist=dist)
    pg.forall(range(n), lambda i: d.__setitem__(i, A[i, i]))               # A[i, i]
    pg.forall(range(n - 1, 0, -3), lambda i: v.__setitem__(i, 2 * i + 1))  # loop var as value

    def diag(i):
        A[i, i] = d[n - 1 - i] * 10

    pg.forall(range(n), diag)
    gd = np.diag(GA).copy()
    gv = np.zeros(n, np.int64)
    gv[n - 1:0:-3] = 2 * np.arange(n - 1, 0, -3) + 1
    GA[np.arange(n), np.arange(n)] = gd[::-1] * 10
    assert_matches(d, gd)
    assert_matches(v, gv)
    assert_matches(A, GA)


@pytest.mark.parametrize("dist", DISTS)
def test_non_separable_goes_to_the_inspector(dist):
    n = 9
    Ga = data(3 * n, 4)
    a = pg.from_numpy(Ga, dist=dist)
    B = pg.zeros((n, n), dist=pg.Cyclic())
    pg.forall((range(n), range(n)), lambda i, j: B.__setitem__((i, j), a[i + j] * 2 + a[2 * i + j + 0 * j]))
    I, J = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    assert_matches(B, Ga[I + J] * 2 + Ga[2 * I + J])
    text = pg.explain(lambda: pg.forall((range(n), range(n)), lambda i, j: B.__setitem__((i, j), a[i + j])))
    collective_verdict("inspector" in text, text)


@pytest.mark.parametrize("dist", DISTS[:3])
def test_reductions(dist):
    n = 7
    GA, GB, Gy = data((n, n), 5), data((n, n), 6), data(n, 7)
    A, B, y = pg.from_numpy(GA, dist=dist), pg.from_numpy(GB, dist=pg.Cyclic()), pg.from_numpy(Gy, dist=dist)
    D = pg.ones((n, n), dist=dist)
    x = pg.zeros(n, dist=pg.Cyclic())
    m = pg.full(n, 100.0, dist=dist)

    def body(i, j, k):
        D[i, j] += A[i, k] * B[k, j]

    pg.forall((range(n), range(n), range(n)), body)
    assert_matches(D, 1 + GA @ GB, rtol=1e-12)

    def mvt(i, j):
        x[i] += A[i, j] * y[j]
        x[j] -= A[i, j] * y[i]
        np.minimum(m[i], A[i, j], out=m[i])

    pg.forall((range(n), range(n)), mvt)
    assert_matches(x, GA @ Gy - GA.T @ Gy, rtol=1e-12)
    assert_matches(m, np.minimum(100.0, GA.min(axis=1)))


def test_tracing_errors_say_what_to_write():
    A = pg.zeros((6, 6), dist=pg.Cyclic())
    with pytest.raises(TraceError, match="subscripts must be integers"):
        pg.forall((range(3), range(3)), lambda i, j: A.__setitem__((i, j), A[i / 2, j]))
    with pytest.raises(TraceError, match="while"):
        def looping(i):
            while i < 2:
                A[i, 0] = 1
        pg.forall(range(6), looping)
    with pytest.raises(TraceError, match="Python integer"):
        pg.forall(range(3), lambda i: A.__setitem__((0, 0), sum(range(i))))
    with pytest.raises(TraceError, match=r"\+="):
        pg.forall((range(3), range(3)), lambda i, j: A.__setitem__((i, 0), A[i, j]))
    with pytest.raises(IndexError, match="reaches index 6"):
        pg.forall(range(6), lambda i: A.__setitem__((i, 0), A[i + 1, 0]))
    with pytest.raises(TraceError, match="only valid inside"):
        A[Affine([1]), 0] = 1


def test_non_separable_plain_write_quotes_the_subscript():
    F = pg.zeros(16, name="F")
    G = pg.from_numpy(data((4, 4), 3), dist=pg.Cyclic())

    def body(row, col):
        F[row * 4 + col] = G[row, col]

    with pytest.raises(ValueError, match=r"the write F\[4\*row \+ col\] to array 'F'"):
        pg.forall((range(4), range(4)), body)
    H = pg.zeros((6, 6))
    with pytest.raises(ValueError, match=r"the write \[2\*i - j \+ 3, j\] to float64 array of shape \(6, 6\)"):
        pg.forall((range(3), range(3)), lambda i, j: H.__setitem__((2 * i - j + 3, j), 1.0))

    def reduced(row, col):               # what the message advises, into zeros
        F[row * 4 + col] += G[row, col]

    pg.forall((range(4), range(4)), reduced)
    assert_matches(F, data((4, 4), 3).reshape(-1))


@settings(derandomize=True, database=None, deadline=None, max_examples=25)
@given(st.data())
def test_random_affine_1d(data_):
    draw = data_.draw
    n = draw(st.integers(1, 15))
    start, step = draw(st.integers(0, 3)), draw(st.sampled_from([1, 2, 3, -1, -2]))
    dom = range(start, start + step * n, step) if step > 0 else range(start + (-step) * n, start, step)
    a = draw(st.sampled_from([1, 2, -1, 3]))
    b = draw(st.sampled_from([1, -1, 2]))
    lo = min(min(a * i, b * i) for i in dom) if len(dom) else 0
    c = -lo + draw(st.integers(0, 2))
    size = max(max(a * i, b * i) for i in dom) + c + 3 if len(dom) else 4
    GX, GY = data(size, 1), data(size, 2)
    X = pg.from_numpy(GX, dist=draw(st.sampled_from(DISTS)))
    Y = pg.from_numpy(GY, dist=draw(st.sampled_from(DISTS)))
    pg.forall(dom, lambda i: X.__setitem__(a * i + c, Y[b * i + c] * 2 + X[a * i + c]))
    for i in dom:
        GX[a * i + c] = GY[b * i + c] * 2 + GX[a * i + c]
    assert_matches(X, GX)

"""pg.forall over non-rectangular domains (inner ranges depending on outer variables)
against nested Python loops, and the forall errors (``/=`` reductions,
nested forall, scalar conversions in a body).  The plans' message bound and
footprints are checked by the pure planner in tests/pure/test_domain_plans.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import assert_matches, points

import pgas as pg
from pgas.array.expr import TraceError
from pgas.exec.domain import resolve

DISTS = [pg.Cyclic(), pg.Block(), pg.BlockCyclic(2), pg.BlockCyclic(3)]


@pytest.fixture(autouse=True, params=[True, False], ids=["aggregated", "baseline"])
def mode(request):
    pg.config(aggregate=request.param)
    yield request.param
    pg.config()


def data(shape, seed=0):
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(float)



@settings(derandomize=True, database=None, deadline=None, max_examples=20)
@given(st.data())
def test_affine_triangles_match_nested_loops(data_):
    draw = data_.draw
    n = draw(st.integers(1, 9))
    a, b = draw(st.sampled_from([-1, 0, 1, 2])), draw(st.integers(-2, 3))
    c, d = draw(st.sampled_from([-1, 0, 1])), draw(st.integers(0, 4))
    step = draw(st.sampled_from([1, 1, 2]))

    def inner(i):
        return range(max(0, min(n, a * i + b)), max(0, min(n, c * i + d + n // 2)), step)

    dom = (range(n), inner)
    GX, GY = data((n, n), 1), data((n, n), 2)
    X = pg.from_numpy(GX, dist=draw(st.sampled_from(DISTS)))
    Y = pg.from_numpy(GY, dist=draw(st.sampled_from(DISTS)))
    F = pg.from_numpy(GX[:, 0].copy(), dist=draw(st.sampled_from(DISTS)))
    GF = GX[:, 0].copy()

    def body(i, j):
        X[i, j] = Y[j, i] * 2 + X[i, j]
        F[i] += Y[i, j]

    pg.forall(dom, body)
    for i, j in points(dom):
        GX[i, j] = GY[j, i] * 2 + GX[i, j]
    for i, j in points(dom):
        GF[i] += GY[i, j]
    assert_matches(X, GX)
    assert_matches(F, GF)


@settings(derandomize=True, database=None, deadline=None, max_examples=20)
@given(st.data())
def test_clipped_domains_match_nested_loops(data_):
    """Affine bounds (triangles, trapezoids, lower and upper, empty rows, strided,
    a triangle times a range) on every distribution, writes and reductions."""
    draw = data_.draw
    n = draw(st.integers(1, 10))
    a, b = draw(st.sampled_from([-1, 0, 1, 2])), draw(st.integers(0, n))
    c, d = draw(st.sampled_from([-1, 0, 1])), draw(st.integers(0, n + 1))
    step, ostep = draw(st.sampled_from([1, 1, 2])), draw(st.sampled_from([1, 1, 2]))
    lo = draw(st.integers(0, 3))

    def inner(i):
        return range(a * i + b, c * i + d, step)

    hi = lo
    while hi < n and all(0 <= j < n for j in inner(hi)):
        hi += ostep                                   # the rows whose range stays inside the arrays
    dom0 = (range(lo, min(hi, n), ostep), inner)
    three = draw(st.booleans())
    dom = dom0 + ((range(draw(st.integers(1, 3))),) if three else ())
    D = resolve(dom)
    dists = draw(st.lists(st.sampled_from(DISTS), min_size=3, max_size=3))
    GX, GY = data((n, n), 1), data((n, n), 2)
    X, Y = pg.from_numpy(GX, dist=dists[0]), pg.from_numpy(GY, dist=dists[1])
    GF = GX[:, 0].copy()
    F = pg.from_numpy(GF, dist=dists[2])

    if three:
        def body(i, j, k):
            X[i, j] += Y[j, i] * 2 + k
            F[i] += Y[i, j] * Y[k, j]
    else:
        def body(i, j):
            X[i, j] = Y[j, i] * 2 + X[i, j]
            F[i] += Y[i, j] * Y[0, j]

    pg.forall(dom, body)
    for p in points(dom):
        i, j = p[:2]
        GX[i, j] += GY[j, i] * 2 + (p[2] if three else 0)
    for p in points(dom):
        i, j = p[:2]
        GF[i] += GY[i, j] * GY[p[2] if three else 0, j]
    assert_matches(X, GX)
    assert_matches(F, GF)
    assert not D.clips or D.count == len(points(dom))


@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_triangle_times_range_reduction_and_divide(dist):
    n, m = 7, 4
    GA, GC = data((n, m), 3), data((n, n), 4)
    A, C = pg.from_numpy(GA, dist=dist), pg.from_numpy(GC, dist=dist)

    def body(i, j, k):
        C[i, j] += A[i, k] * A[j, k]

    pg.forall((range(n), lambda i: range(i + 1), range(m)), body)
    for i in range(n):
        for j in range(i + 1):
            for k in range(m):
                GC[i, j] += GA[i, k] * GA[j, k]
    assert_matches(C, GC)
    GF, GD = np.full(n, 1000.0), np.arange(1.0, n * n + 1).reshape(n, n)
    F, D = pg.from_numpy(GF, dist=dist), pg.from_numpy(GD, dist=dist)

    def divide(i, j):
        F[i] /= D[i, j]                   # a reduction over j (NumPy 2 names the ufunc "divide")

    pg.forall((range(n), lambda i: range(i, n)), divide)
    for i in range(n):
        for j in range(i, n):
            GF[i] /= GD[i, j]
    assert_matches(F, GF, rtol=1e-12)


def test_three_level_and_empty_domains():
    n = 6
    GX = data((n, n, n), 5)
    X = pg.from_numpy(GX, dist=pg.Cyclic())
    dom = (range(n), lambda i: range(i), lambda i, j: range(j, i))
    pg.forall(dom, lambda i, j, k: X.__setitem__((i, j, k), X[k, j, i] + 1))
    want = GX.copy()
    for i, j, k in points(dom):
        want[i, j, k] = GX[k, j, i] + 1
    assert_matches(X, want)
    pg.forall((range(n), lambda i: range(0)), lambda i, j: X.__setitem__((i, j, 0), 99.0))
    assert_matches(X, want)
    GY = data((n, n), 9)
    for dist in DISTS:                                # an outer range walked backwards
        Y, W = pg.from_numpy(GY, dist=dist), pg.from_numpy(GX[0, 0], dist=dist)
        pg.forall((range(n - 1, -1, -2), lambda i: range(i + 1, n)), lambda i, j: _acc(W, i, Y[j, i]))
        want_w = GX[0, 0].copy()
        for i in range(n - 1, -1, -2):
            want_w[i] += GY[i + 1:, i].sum()
        assert_matches(W, want_w)
    dom = (range(n), range(1, n), lambda i: range(i, n), lambda i, j: range(j - 1, j + 1))   # clipped, 2 outer
    assert resolve(dom).clips
    G4, H4 = data((n,) * 4, 8), data((n,) * 4, 9)
    for dist in DISTS:
        X4, Y4 = pg.from_numpy(G4, dist=dist), pg.from_numpy(H4, dist=dist)
        F = pg.zeros(n, dist=dist)

        def body(i, j, k, l):
            X4[i, j, k, l] = Y4[l, k, j, i] * 2 + 1
            F[l] += Y4[i, j, k, l]

        pg.forall(dom, body)
        want, wf = G4.copy(), np.zeros(n)
        for i, j, k, l in points(dom):
            want[i, j, k, l] = H4[l, k, j, i] * 2 + 1
            wf[l] += H4[i, j, k, l]
        assert_matches(X4, want)
        assert_matches(F, wf)


def test_explain_shows_domain():
    n = 8
    A = pg.zeros((n, n), dist=pg.Cyclic())
    B = pg.ones((n, n), dist=pg.Cyclic())
    text = pg.explain(lambda: pg.forall((range(n), lambda i: range(i + 1, n)),
                                        lambda i, j: A.__setitem__((i, j), B[j, i])), locales=16)
    assert "domain of 28 iterations: i in range(0, 7), j in range(1, 8), clipped by j >= i + 1" in text
    assert "all 16 locales" in text
    text = pg.explain(lambda: pg.forall((range(n), lambda i: range(max(0, i - 1), n)),
                                        lambda i, j: A.__setitem__((i, j), B[j, i])), locales=4)
    assert "rectangular parts" in text


def test_forall_errors_are_clear():
    n = 4
    X, F, Z = pg.zeros(n), pg.zeros(n), pg.zeros((n, n))
    with pytest.raises(TraceError, match="inside a pg.forall body"):
        pg.forall(range(n), lambda i: pg.forall(range(n), lambda j: F.__setitem__(j, X[j])))
    for bad in (lambda i: F.__setitem__(i, float(X[i])), lambda i: F.__setitem__(i, X[i].sum()),
                lambda i: F.__setitem__(i, len(X[i]))):
        with pytest.raises(TraceError, match="one symbolic element per iteration"):
            pg.forall(range(n), bad)
    with pytest.raises(TraceError, match="must be integers"):
        pg.forall(range(n), lambda i: F.__setitem__(i, X[(i - 2) / 2]))
    with pytest.raises(TypeError, match="first 1 to 1"):
        pg.forall((range(n), lambda i, j: range(i)), lambda i, j: None)
    with pytest.raises(TypeError, match="must be a range"):
        pg.forall((range(n), lambda i: [i]), lambda i, j: None)
    with pytest.raises(TypeError, match="outermost"):
        pg.forall((lambda: range(3), range(n)), lambda i, j: None)
    pg.forall(range(n), lambda i: F.__setitem__(i, abs(i - 2)))          # abs of a loop variable: a value
    assert_matches(F, np.abs(np.arange(n) - 2.0))
    with pytest.raises(IndexError, match="reaches index"):
        pg.forall((range(n), lambda i: range(i + 2)), lambda i, j: Z.__setitem__((i, j), 1.0))


@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_messages_built_in_chunks(dist, monkeypatch):
    """Messages with more footprints than planner.CHUNK are built chunk by chunk."""
    from pgas.plan import planner
    monkeypatch.setattr(planner, "CHUNK", 2)
    planner._plan_local.cache_clear()
    n = 13
    GX, GY = data((n, n), 6), data((n, n), 7)
    X, Y = pg.from_numpy(GX, dist=dist), pg.from_numpy(GY, dist=dist)
    pg.forall((range(n), lambda i: range(i, n)), lambda i, j: X.__setitem__((i, j), Y[j, i] + Y[i, 0] * Y[0, j]))
    for i in range(n):
        for j in range(i, n):
            GX[i, j] = GY[j, i] + GY[i, 0] * GY[0, j]
    assert_matches(X, GX)
    F = pg.zeros(n, dist=dist)
    pg.forall((range(n), lambda i: range(i + 1)), lambda i, j: _acc(F, i, Y[j, i]))
    want = np.array([GY[:i + 1, i].sum() for i in range(n)])
    assert_matches(F, want)
    planner._plan_local.cache_clear()


def _acc(F, i, value):
    F[i] += value

"""pg.forall bodies with Python conditionals (on loop variables and on array elements) and
with subscripts that are not affine (``A[i * i % n]``, ``A[idx[i]]``), against the same
body run as nested Python loops over NumPy arrays; and the errors for what still cannot
be traced, raised on every locale alike."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.array.expr import TraceError
from util import assert_matches, collective_verdict, raises_alike

DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]


def ints(shape, seed, lo=-5, hi=6, dtype=float):
    return np.random.default_rng(seed).integers(lo, hi, size=shape).astype(dtype)


def test_a_guard_on_the_loop_variable_narrows_the_domain():
    n = 12
    GA = ints(n, 1)
    A, B = pg.from_numpy(GA, dist=pg.Block()), pg.zeros(n, dist=pg.Cyclic())

    def body(i):
        if i > 0 and i < n - 1:
            B[i] = A[i - 1] + A[i + 1]          # out of bounds at i = 0 and n - 1 if they were not left out
        elif i == 0:
            B[i] = A[i + 1]
        else:
            B[i] = A[i - 1]

    pg.forall(range(n), body)
    want = np.empty(n)
    for i in range(n):
        want[i] = GA[i - 1] + GA[i + 1] if 0 < i < n - 1 else GA[i + 1] if i == 0 else GA[i - 1]
    assert_matches(B, want)
    text = pg.explain(lambda: pg.forall(range(n), body))
    collective_verdict("inspector" not in text, f"guards on loop variables are planned, not inspected:\n{text}")


@pytest.mark.parametrize("dist", DISTS)
def test_conditions_on_data_and_loop_variables_2d(dist):
    n = 9
    GA = ints((n, n), 2)
    A = pg.from_numpy(GA, dist=dist)
    B, F = pg.zeros((n, n), dist=pg.Cyclic()), pg.zeros(n, dist=dist)

    def body(i, j):
        if j <= i:                              # the lower triangle: a clipped domain
            if A[i, j] > 0 or not i != j:       # a mask, then the diagonal
                B[i, j] = A[i, j] * 2
            else:
                B[i, j] = -1.0
        if A[j, i] < 0:
            F[i] += A[j, i]                     # a reduction over j under a mask: adds zero elsewhere
        if i % 3 == 1:
            B[i, j] += 100.0

    pg.forall((range(n), range(n)), body)
    GB, GF = np.zeros((n, n)), np.zeros(n)
    for i in range(n):
        for j in range(n):
            if j <= i:
                GB[i, j] = GA[i, j] * 2 if GA[i, j] > 0 or not i != j else -1.0
            if GA[j, i] < 0:
                GF[i] += GA[j, i]
            if i % 3 == 1:
                GB[i, j] += 100.0
    assert_matches(B, GB)
    assert_matches(F, GF)


@pytest.mark.parametrize("dist", DISTS)
def test_non_affine_reads_writes_and_histograms(dist):
    n = 11
    GA, GK = ints(n, 3), np.random.default_rng(4).integers(0, n, size=n)
    A, K = pg.from_numpy(GA, dist=dist), pg.from_numpy(GK, dist=pg.Cyclic())
    B, C = pg.zeros(n, dist=dist), pg.zeros(n, dist=pg.Block())
    H, M = pg.zeros(n, dtype=np.int64, dist=dist), pg.full(n, 99.0, dist=dist)

    def body(i):
        B[i] = A[i * i % n] + A[K[i]] * i + A[abs(i - 5)]
        C[(3 * i + 1) % n] = A[i]               # a permutation: no element written twice
        H[K[i]] += 1
        np.minimum(M[K[i]], A[i], out=M[K[i]])
        if A[K[i]] > 0:
            H[(i * 2) % n] -= 2

    pg.forall(range(n), body)
    GB, GC, GH, GM = np.zeros(n), np.zeros(n), np.zeros(n, np.int64), np.full(n, 99.0)
    for i in range(n):
        GB[i] = GA[i * i % n] + GA[GK[i]] * i + GA[abs(i - 5)]
        GC[(3 * i + 1) % n] = GA[i]
        GH[GK[i]] += 1
        GM[GK[i]] = min(GM[GK[i]], GA[i])
        if GA[GK[i]] > 0:
            GH[(i * 2) % n] -= 2
    for got, want in ((B, GB), (C, GC), (H, GH), (M, GM)):
        assert_matches(got, want)
    text = pg.explain(lambda: pg.forall(range(n), body))
    collective_verdict("not affine" in text and "inspector fallback" in text, f"explain says why:\n{text}")


def test_a_data_dependent_guard_keeps_indices_in_bounds():
    n = 8
    GK = np.array([3, -1, 7, 0, -1, 2, 5, -1])
    GA = ints(n, 5)
    K, A, B = pg.from_numpy(GK), pg.from_numpy(GA, dist=pg.Cyclic()), pg.zeros(n)

    def body(i):
        if K[i] >= 0:
            B[i] = A[K[i]]                      # K[i] = -1 is never used as an index

    pg.forall(range(n), body)
    assert_matches(B, np.where(GK >= 0, GA[np.maximum(GK, 0)], 0.0))


def test_what_still_raises_raises_on_every_locale():
    n = 6
    A, F = pg.zeros(n), pg.zeros(n)
    K = pg.from_numpy(np.arange(n) + 3)           # out of bounds from index 3 on
    raises_alike(IndexError, lambda: pg.forall(range(n), lambda i: F.__setitem__(i, A[K[i]])), "index read")
    raises_alike(TraceError, lambda: pg.forall(range(n), lambda i: F.__setitem__(i, A[i / 2])), "float index")

    def product(i):
        F[i * i % n] *= 2.0

    raises_alike(TraceError, lambda: pg.forall(range(n), product), "a product through a non-affine write")

    def looping(i):
        while A[i] < 3:
            F[i] = 1.0

    raises_alike(TraceError, lambda: pg.forall(range(n), looping), "a while loop")
    raises_alike(TypeError, lambda: pg.forall(range(n), lambda i: F.__setitem__(i, float(i > 2))), "float()")


# -- random bodies against nested Python loops ----------------------------------
def _cond(draw, depth=0):
    kind = draw(st.sampled_from(["affine", "affine2", "mod", "data", "indirect"] + (["and", "or", "not"] if depth < 2
                                                                                  else [])))
    if kind in ("and", "or"):
        return (kind, _cond(draw, depth + 1), _cond(draw, depth + 1))
    if kind == "not":
        return ("not", _cond(draw, depth + 1))
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
    return (kind, op, draw(st.integers(-1, 6)))


def _value(draw):
    return draw(st.lists(st.sampled_from(["X[i, j]", "X[j, i]", "X[n-1-i, j]", "X[i*j % n, j]", "X[K[i, j], i]",
                                          "X[K[j, i], K[i, j]]", "i", "j*2", "i % 3", "7"]), min_size=1, max_size=3))


def _block(draw, depth=0):
    out = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["O", "S", "H"] + (["if"] if depth < 2 else [])))
        if kind == "if":
            out.append(("if", _cond(draw), _block(draw, depth + 1),
                        _block(draw, depth + 1) if draw(st.booleans()) else []))
        else:
            out.append((kind, _value(draw)))
    return out


_CMP = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
        "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def _run(block, i, j, n, X, K, O, S, H):
    def cond(c):
        if c[0] == "and":
            return cond(c[1]) and cond(c[2])
        if c[0] == "or":
            return cond(c[1]) or cond(c[2])
        if c[0] == "not":
            return not cond(c[1])
        kind, op, k = c
        left = {"affine": i, "affine2": i + j, "mod": (i * j) % 3, "data": X[i, j], "indirect": X[K[i, j], j]}[kind]
        return _CMP[op](left, k)

    def value(terms):
        leaves = {"X[i, j]": lambda: X[i, j], "X[j, i]": lambda: X[j, i], "X[n-1-i, j]": lambda: X[n - 1 - i, j],
                  "X[i*j % n, j]": lambda: X[i * j % n, j], "X[K[i, j], i]": lambda: X[K[i, j], i],
                  "X[K[j, i], K[i, j]]": lambda: X[K[j, i], K[i, j]], "i": lambda: i, "j*2": lambda: j * 2,
                  "i % 3": lambda: i % 3, "7": lambda: 7}
        out = leaves[terms[0]]()
        for t in terms[1:]:
            out = out + leaves[t]()
        return out

    for node in block:
        if node[0] == "if":
            if cond(node[1]):
                _run(node[2], i, j, n, X, K, O, S, H)
            else:
                _run(node[3], i, j, n, X, K, O, S, H)
        elif node[0] == "O":
            O[i, j] = value(node[1])
        elif node[0] == "S":
            S[i] += 0.0 + value(node[1])      # a reduction over j (0.0 +: `S[i] += i` alone is no ufunc call)
        else:
            H[K[i, j]] += 0.0 + value(node[1])    # an accumulation through an index array


@settings(derandomize=True, database=None, deadline=None, max_examples=25)
@given(st.data())
def test_random_bodies_match_nested_loops(data_):
    draw = data_.draw
    n = draw(st.integers(1, 6))
    body = _block(draw)
    seed = draw(st.integers(0, 99))
    GX, GK = ints((n, n), seed), np.random.default_rng(seed + 1).integers(0, n, size=(n, n))
    dists = [draw(st.sampled_from(DISTS)) for _ in range(5)]
    X, K = pg.from_numpy(GX, dist=dists[0]), pg.from_numpy(GK, dist=dists[1])
    O, S, H = pg.zeros((n, n), dist=dists[2]), pg.zeros(n, dist=dists[3]), pg.zeros(n, dist=dists[4])
    pg.forall((range(n), range(n)), lambda i, j: _run(body, i, j, n, X, K, O, S, H))
    GO, GS, GH = np.zeros((n, n)), np.zeros(n), np.zeros(n)
    for i in range(n):
        for j in range(n):
            _run(body, i, j, n, GX, GK, GO, GS, GH)
    for got, want in ((O, GO), (S, GS), (H, GH)):
        assert_matches(got, want)


@settings(derandomize=True, database=None, deadline=None, max_examples=25)
@given(st.data())
def test_random_guards_on_strided_ranges(data_):
    draw = data_.draw
    N = 12
    step = draw(st.sampled_from([1, 2, 3, -1, -2]))
    start = draw(st.integers(0, N - 1))
    stop = draw(st.integers(-1, N))
    dom = range(start, stop, step)
    off, a, b, c = (draw(st.integers(-3, 3)), draw(st.sampled_from([1, -1, 2, -3])), draw(st.integers(-4, 4)),
                    draw(st.integers(-6, 12)))
    op = draw(st.sampled_from(sorted(_CMP)))
    square = draw(st.booleans())
    GX = ints(N, draw(st.integers(0, 9)))
    X, Y = pg.from_numpy(GX, dist=draw(st.sampled_from(DISTS))), pg.zeros(N, dist=draw(st.sampled_from(DISTS)))

    def body(i, X, Y):
        if 0 <= i + off < N and _CMP[op](a * i + b, c):
            Y[i] = X[i + off] + i
        elif square:
            Y[i] = X[i * i % N]
        else:
            Y[i] = -1.0

    pg.forall(dom, lambda i: body(i, X, Y))
    GY = np.zeros(N)
    for i in dom:
        body(i, GX, GY)
    assert_matches(Y, GY)

"""Clipped domains: forall and statements whose reads fall outside the array, at box
points, over views, into reductions and with ghost cells, against NumPy."""

import numpy as np
import pytest
from util import assert_matches, collective_verdict, points

import pgas as pg


def _attempt(f):
    """Run f on every locale; return (result, None) or (None, 'Type: message')."""
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001 - the finding is the exception itself
        return None, f"{type(e).__name__}: {e}"


def data(shape, seed=0):
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(float)


def garbage_ghosts(A):
    """Fill this locale's ghost cells (not its interior) with values no element has."""
    p = A.local_with_ghosts
    inner = A.local.copy()
    p[...] = 1e6 + pg.here
    A.local[...] = inner


# ---------------------------------------------------------------------------
# 2. Clipped domains against nested Python loops
# ---------------------------------------------------------------------------
DISTS = [pg.Cyclic(), pg.Block(), pg.BlockCyclic(2)]


@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_clipped_read_outside_array_at_box_points(dist):
    """X[i, j] = Y[i, j - i] over j in range(i, n): every domain point reads inside Y,
    but box points with j < i would read Y[i, negative]."""
    n = 7
    GX, GY = data((n, n), 1), data((n, n), 2)
    X, Y = pg.from_numpy(GX, dist=dist), pg.from_numpy(GY, dist=dist)
    dom = (range(n), lambda i: range(i, n))
    _, err = _attempt(lambda: pg.forall(dom, lambda i, j: X.__setitem__((i, j), Y[i, j - i] + 1)))
    collective_verdict(err is None, f"raised {err}")
    for i, j in points(dom):
        GX[i, j] = GY[i, j - i] + 1
    assert_matches(X, GX)


@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_clipped_read_beyond_end_at_box_points(dist):
    """X[i, j] = Y[i, j + i] over j in range(0, n - i)."""
    n = 7
    GX, GY = data((n, n), 1), data((n, n), 2)
    X, Y = pg.from_numpy(GX, dist=dist), pg.from_numpy(GY, dist=dist)
    dom = (range(n), lambda i: range(0, n - i))
    _, err = _attempt(lambda: pg.forall(dom, lambda i, j: X.__setitem__((i, j), Y[i, j + i] * 2)))
    collective_verdict(err is None, f"raised {err}")
    for i, j in points(dom):
        GX[i, j] = GY[i, j + i] * 2
    assert_matches(X, GX)


INNERS = {
    "upper": lambda n: (range(n), lambda i: range(i + 1, n)),
    "lower_incl": lambda n: (range(n), lambda i: range(i + 1)),
    "2i-3": lambda n: (range(n), lambda i: range(max(0, 2 * i - 3), n)),
    "2i-3_raw": lambda n: (range(2, n), lambda i: range(2 * i - 3, n)),
    "n-i_step2": lambda n: (range(n), lambda i: range(0, n - i, 2)),
    "outer_neg": lambda n: (range(n - 1, -1, -1), lambda i: range(i, n)),
    "outer_neg_step2": lambda n: (range(n - 1, -1, -2), lambda i: range(0, i)),
    "inner_neg": lambda n: (range(n), lambda i: range(n - 1, i, -1)),
    "band": lambda n: (range(n), lambda i: range(max(0, i - 1), min(n, i + 2))),
    "empty_rows": lambda n: (range(n), lambda i: range(i + 2, i + 2 if i % 2 else n)),
    "three": lambda n: (range(n), lambda i: range(i), lambda i, j: range(j, i)),
}


@pytest.mark.parametrize("dist", DISTS, ids=repr)
@pytest.mark.parametrize("kind", list(INNERS))
def test_clipped_domain_writes_and_reductions(kind, dist):
    n = 6
    dom = INNERS[kind](n)
    GX, GY = data((n, n), 3), data((n, n), 4)
    GY[GY == 0] = 1.5
    GF = data((n,), 5)
    GM = data((n,), 6)
    GD = data((n,), 7) + 20
    X, Y = pg.from_numpy(GX, dist=dist), pg.from_numpy(GY, dist=dist)
    F, M, D = pg.from_numpy(GF, dist=dist), pg.from_numpy(GM, dist=dist), pg.from_numpy(GD, dist=dist)
    three = len(dom) == 3

    def body(i, j, *k):
        if not three:
            X[i, j] = Y[j, i] * 2 - X[i, j]
        F[i] *= Y[i, j] * 0.5
        np.minimum(M[i], Y[j, i], out=M[i])
        D[i] /= Y[i, j]

    _, err = _attempt(lambda: pg.forall(dom, body))
    collective_verdict(err is None, f"{kind}: raised {err}")
    pts = points(dom)
    # statement by statement, right side read in full first
    newX = GX.copy()
    for p in pts if not three else []:
        i, j = p[:2]
        newX[i, j] = GY[j, i] * 2 - GX[i, j]
    for p in pts:
        i, j = p[:2]
        GF[i] *= GY[i, j] * 0.5
        GM[i] = min(GM[i], GY[j, i])
        GD[i] /= GY[i, j]
    assert_matches(X, newX)
    assert_matches(F, GF)
    assert_matches(M, GM)
    assert_matches(D, GD)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.int8])
@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_clipped_integer_reductions(dist, dtype):
    n = 7
    rng = np.random.default_rng(9)
    GY = rng.integers(1, 5, size=(n, n)).astype(dtype)
    GF = rng.integers(0, 50, size=n).astype(dtype)
    GM = rng.integers(0, 50, size=n).astype(dtype)
    GP = rng.integers(1, 3, size=n).astype(dtype)
    GX = np.zeros((n, n), dtype)
    Y, F, M, Pp = (pg.from_numpy(a, dist=dist) for a in (GY, GF, GM, GP))
    X = pg.from_numpy(GX, dist=dist)
    dom = (range(n), lambda i: range(i + 1, n))

    def body(i, j):
        F[i] += Y[i, j] * Y[j, i]
        np.maximum(M[i], Y[i, j] * 10, out=M[i])
        Pp[i] *= Y[j, i]
        X[i, j] = Y[j, i] // Y[i, j]

    _, err = _attempt(lambda: pg.forall(dom, body))
    collective_verdict(err is None, f"raised {err}")
    with np.errstate(all="ignore"):
        for i, j in points(dom):
            GF[i] += GY[i, j] * GY[j, i]
            GM[i] = max(GM[i], GY[i, j] * dtype(10))
            GP[i] *= GY[j, i]
            GX[i, j] = GY[j, i] // GY[i, j]
    assert_matches(F, GF)
    assert_matches(M, GM)
    assert_matches(Pp, GP)
    assert_matches(X, GX)


@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_clipped_integer_division_by_zero_outside_domain(dist):
    """Z is zero exactly off the domain: no point of the domain divides by zero, so
    NumPy gives a result without warnings; pgas computes outside points too."""
    n = 6
    GY = np.arange(1, n * n + 1).reshape(n, n).astype(np.int64)
    GZ = np.triu(np.ones((n, n), np.int64), 1) * 3
    GX = np.zeros((n, n), np.int64)
    X, Y, Z = (pg.from_numpy(a, dist=dist) for a in (GX, GY, GZ))
    dom = (range(n), lambda i: range(i + 1, n))
    _, err = _attempt(lambda: pg.forall(dom, lambda i, j: X.__setitem__((i, j), Y[i, j] // Z[i, j] + Y[i, j] % Z[i, j])))
    collective_verdict(err is None, f"raised {err}")
    for i, j in points(dom):
        GX[i, j] = GY[i, j] // GZ[i, j] + GY[i, j] % GZ[i, j]
    assert_matches(X, GX)


@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_clipped_write_to_view(dist):
    n = 7
    GX, GY = data((n, n), 1), data((n, n), 2)
    X, Y = pg.from_numpy(GX, dist=dist), pg.from_numpy(GY, dist=dist)
    V = X[1:, ::-1]
    GV = GX[1:, ::-1]
    m = n - 1
    dom = (range(m), lambda i: range(i, n))
    pg.forall(dom, lambda i, j: V.__setitem__((i, j), Y[j, i] + V[i, j]))
    for i, j in points(dom):
        GV[i, j] = GY[j, i] + GV[i, j]
    assert_matches(X, GX)


@pytest.mark.parametrize("dist", DISTS, ids=repr)
@pytest.mark.parametrize("kind", ["upper", "2i-3_raw", "outer_neg", "band", "three"])
def test_clipped_reduce_over_outer_and_transposed_write(kind, dist):
    """Reductions that omit the OUTER variable (F[j] += ...), NaN through np.minimum,
    and a transposed write X[j, i] = ..."""
    n = 6
    dom = INNERS[kind](n)
    GY = data((n, n), 8)
    GY[2, 3] = np.nan
    GF, GM, GX = data((n,), 9), data((n,), 10), data((n, n), 11)
    Y = pg.from_numpy(GY, dist=dist)
    F, M = pg.from_numpy(GF, dist=dist), pg.from_numpy(GM, dist=dist)
    X = pg.from_numpy(GX, dist=pg.Cyclic())
    three = len(dom) == 3

    def body(i, j, *k):
        F[j] += Y[i, j] + 1
        np.minimum(M[j], Y[j, i], out=M[j])
        if not three:
            X[j, i] = Y[i, j] * 3

    _, err = _attempt(lambda: pg.forall(dom, body))
    collective_verdict(err is None, f"{kind}: raised {err}")
    for p in points(dom):
        i, j = p[:2]
        GF[j] += GY[i, j] + 1
        GM[j] = np.minimum(GM[j], GY[j, i])
        if not three:
            GX[j, i] = GY[i, j] * 3
    assert_matches(F, GF)
    assert_matches(M, GM)
    assert_matches(X, GX)


@pytest.mark.parametrize("dtype", [np.bool_, np.uint64, np.int8])
def test_clipped_logical_and_unsigned_min(dtype):
    n = 6
    rng = np.random.default_rng(12)
    GY = rng.integers(0, 3, size=(n, n)).astype(dtype)
    GM = np.full(n, 2, dtype) if dtype != np.bool_ else np.ones(n, bool)
    Y, M = pg.from_numpy(GY, dist=pg.Cyclic()), pg.from_numpy(GM.copy(), dist=pg.Block())
    dom = (range(n), lambda i: range(i + 1, n))
    _, err = _attempt(lambda: pg.forall(dom, lambda i, j: np.minimum(M[i], Y[i, j], out=M[i])))
    collective_verdict(err is None or "not supported" in err, f"raised {err}")
    if err is None:
        for i, j in points(dom):
            GM[i] = np.minimum(GM[i], GY[i, j])
        assert_matches(M, GM)


@pytest.mark.parametrize("protocol", [None, "auto"])
@pytest.mark.parametrize("kind", ["upper", "lower_incl", "band", "outer_neg"])
def test_clipped_forall_reads_ghosts(kind, protocol):
    """A clipped forall reading a ghosted Block array at +-1 after update_ghosts, with ghosts
    filled by garbage first; then after a write on one locale and a barrier."""
    if protocol:
        _, err = _attempt(lambda: pg.config(protocol=protocol))
        if err is not None:
            pytest.skip(err)
    try:
        n = 9
        GY = data((n, n), 13)
        Y = pg.from_numpy(GY, ghosts=(1, 1))
        garbage_ghosts(Y)
        Y.update_ghosts()
        inner = INNERS[kind](n)[1]
        if kind == "outer_neg":
            dom = (range(n - 1, 0, -1), lambda i: range(max(i, 1), n))
        else:
            dom = (range(1, n), lambda i: range(max(1, inner(i).start), max(1, inner(i).stop)))
        for _ in range(2):
            GX = np.zeros((n, n))
            X = pg.zeros((n, n))

            def body2(i, j):
                X[i, j] = Y[i - 1, j] * 2 + Y[i, j - 1] - Y[i - 1, j - 1]

            pg.forall(dom, body2)
            for i, j in points(dom):
                GX[i, j] = GY[i - 1, j] * 2 + GY[i, j - 1] - GY[i - 1, j - 1]
            assert_matches(X, GX)
            if pg.here == 0:
                Y.local[...] += 10
            GY[np.ix_(*Y.layout.owned(0))] += 10
            pg.barrier()
    finally:
        pg.config()

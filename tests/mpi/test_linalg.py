"""Linear algebra (matmul, norm) against NumPy on odd shapes and distributions."""

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg
from pgas.layout import grids

P = pg.num_locales


def _dists(nd):
    out = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]
    for i, g in enumerate(grids(P, nd)):             # one kind per grid, rotating
        out.append([pg.Block(g), pg.Cyclic(g), pg.BlockCyclic(3, g)][i % 3])
    return out


# ---------------------------------------------------------------------------
# 5. matmul / dot / outer / vdot
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("mkn", [(1, 1, 1), (2, 5, 3), (3, 0, 2), (7, 3, 5)])
@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.bool_])
def test_matmul_of_odd_shapes_and_distributions(mkn, dtype):
    m, k, n = mkn
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a, b = rng.integers(0, 3, (m, k)).astype(dtype), rng.integers(0, 3, (k, n)).astype(dtype)
    x, y = rng.integers(0, 3, k).astype(dtype), rng.integers(0, 3, m).astype(dtype)
    ds = _dists(2)
    for d1, d2 in ((ds[0], ds[-1]), (ds[1], ds[2])):
        A, B = pg.from_numpy(a, dist=d1), pg.from_numpy(b, dist=d2)
        X, Y = pg.from_numpy(x, dist=pg.Cyclic()), pg.from_numpy(y, dist=pg.BlockCyclic(2))
        tol = dict(rtol=1e-12) if dtype == np.float64 else {}
        assert_matches(A @ B, a @ b, **tol)
        assert_matches(A @ X, a @ x, **tol)
        assert_matches(Y @ A, y @ a, **tol)
        assert_matches(A.T[::-1] @ A[:, ::-1], a.T[::-1] @ a[:, ::-1], **tol)
        assert_matches(A @ b, a @ b, **tol)
        assert_matches(pg.outer(X, Y), np.outer(x, y))
        got, want = X @ X, x @ x
        collective_verdict(np.asarray(got).dtype == np.asarray(want).dtype and np.allclose(got, want), f"{got} {want}")
        got, want = pg.vdot(A, A), np.vdot(a, a)
        collective_verdict(np.asarray(got).dtype == np.asarray(want).dtype and np.allclose(got, want), f"{got} {want}")


DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3)]


@pytest.mark.parametrize("dist", DISTS)
def test_norm_inf_of_empty_vector(dist):
    # NumPy 2.4: np.linalg.norm(np.array([]), np.inf) == 0.0; pgas raises ValueError (zero-size maximum).
    A = pg.from_numpy(np.array([]), dist=dist)
    got = np.linalg.norm(A, np.inf)
    collective_verdict(got == np.linalg.norm(np.array([]), np.inf), f"got {got!r}")


def _same_value(got, want, rtol=1e-10):
    g = got.to_numpy() if isinstance(got, pg.DistArray) else got
    ok = np.shape(g) == np.shape(want) and np.asarray(g).dtype == np.asarray(want).dtype \
        and bool(np.allclose(g, want, rtol=rtol, atol=1e-12))
    collective_verdict(ok, lambda: f"got {g!r} ({np.asarray(g).dtype}), want {want!r} ({np.asarray(want).dtype})")


VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 0, 3, 0.5]
MATRIX_ORDS = [None, "fro", 1, -1, np.inf, -np.inf]


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128])
def test_norm_along_axes(dtype):
    rng = np.random.default_rng(7)
    g = rng.integers(-5, 6, (5, 7)).astype(dtype)
    if dtype == np.complex128:
        g = g + 1j * rng.integers(-3, 3, (5, 7))
    g3 = rng.integers(-5, 6, (3, 4, 5)).astype(dtype)
    for dist in (_dists(2) if dtype == np.float64 else _dists(2)[1:2]):
        A, v = pg.from_numpy(g, dist=dist), pg.from_numpy(g[1], dist=pg.Cyclic())
        A3 = pg.from_numpy(g3, dist=pg.BlockCyclic(2))
        for o in VECTOR_ORDS:
            _same_value(np.linalg.norm(v, o), np.linalg.norm(g[1], o))
            for ax in (0, 1, -1):
                for kd in (False, True):
                    _same_value(np.linalg.norm(A, o, axis=ax, keepdims=kd), np.linalg.norm(g, o, axis=ax, keepdims=kd))
            _same_value(np.linalg.norm(A3, o, axis=1), np.linalg.norm(g3, o, axis=1))
        for o in MATRIX_ORDS:
            for ax in (None, (0, 1), (1, 0)):
                _same_value(np.linalg.norm(A, o, axis=ax), np.linalg.norm(g, o, axis=ax))
            _same_value(np.linalg.norm(A, o, axis=(0, 1), keepdims=True), np.linalg.norm(g, o, axis=(0, 1), keepdims=True))
            for ax in ((1, 2), (2, 0)):
                _same_value(np.linalg.norm(A3, o, axis=ax), np.linalg.norm(g3, o, axis=ax))
        _same_value(np.linalg.norm(A3), np.linalg.norm(g3))
        _same_value(np.linalg.norm(A[1:, ::2] + 1, axis=0), np.linalg.norm(g[1:, ::2] + 1, axis=0))


def test_norm_errors_are_numpys():
    g = np.arange(12.0).reshape(3, 4)
    A = pg.from_numpy(g, dist=pg.Cyclic())
    A3 = pg.zeros((2, 3, 4))
    cases = [(A, dict(axis="x")), (A, dict(axis=(0, 1.0))), (A, dict(axis=(0, 0))), (A, dict(axis=(0, 1, 1))), (A, dict(axis=2)),
             (A, dict(ord="fro", axis=1)), (A, dict(ord=3)), (A, dict(ord="bad")), (A3, dict(ord=1))]
    for X, kw in cases:
        with pytest.raises(Exception) as numpys:
            np.linalg.norm(np.zeros(X.shape), **kw)
        with pytest.raises(numpys.type):
            np.linalg.norm(X, **kw)
    for o in (2, -2, "nuc"):            # singular values: not computed
        with pytest.raises(NotImplementedError, match="singular values"):
            np.linalg.norm(A, o)
    _same_value(np.linalg.norm(A, axis=1.0), np.linalg.norm(g, axis=1.0))

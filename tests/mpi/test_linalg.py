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

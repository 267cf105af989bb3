"""Strip-mined statements (pg.config(strips=..., buffer_limit=...)) against NumPy,
with current and stale ghosts, and the settings' errors."""

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg

# ---------------------------------------------------------------------------
# 2. np.var / np.std with where=
# ---------------------------------------------------------------------------
DISTS = {"block": pg.Block(), "cyclic": pg.Cyclic(), "bc": pg.BlockCyclic(block=(2,))}


# ---------------------------------------------------------------------------
# 3. Strip counts: pinned, forced by the buffer limit, or the model's
# ---------------------------------------------------------------------------
@pytest.fixture
def restore_config():
    yield
    pg.config(strips="auto", buffer_limit=64 << 20)


@pytest.mark.parametrize("strips,limit", [(1, 64 << 20), (3, 64 << 20), (7, 200), ("auto", 64), (2, 64)])
def test_strip_mined_statements_match_numpy(strips, limit, restore_config):
    pg.config(strips=strips, buffer_limit=limit)
    G = np.random.default_rng(0).integers(-9, 10, (12, 10)).astype(float)
    W = np.zeros_like(G)
    W[1:-1, 1:-1] = G[:-2, 1:-1] + G[2:, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:]
    for dist in DISTS.values():
        A = pg.from_numpy(G, dist=dist)
        B = pg.zeros((12, 10), dist=dist)
        B[1:-1, 1:-1] = A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
        assert_matches(B, W)
        C = pg.zeros((10, 12), dist=dist)
        C[...] = A.T
        assert_matches(C, G.T)
        v = pg.zeros(12, dist=dist)
        D = pg.zeros((12, 12), dist=dist)
        E = pg.zeros((12, 10), dist=dist)
        F = pg.zeros((12, 10), dist=dist)

        def body(i, j):
            v[i] += A[i, j] * C[j, i]

        def mm(i, j, k):
            D[i, j] += A[i, k] * C[k, j]

        def grouped(i, j):
            E[i, j] = A[11 - i, j] * 2
            F[i, j] = E[i, 9 - j] + A[i, j]
        pg.forall((range(12), range(10)), body)
        pg.forall((range(12), range(12), range(10)), mm)
        pg.forall((range(12), range(10)), grouped)
        assert_matches(v, (G * G).sum(1))
        assert_matches(D, G @ G.T)
        assert_matches(F, (G[::-1] * 2)[:, ::-1] + G)
        A[1:-1, 1:-1] = A[:-2, 1:-1] + A[2:, 1:-1]          # reads and writes the same array
        W2 = G.copy()
        W2[1:-1, 1:-1] = G[:-2, 1:-1] + G[2:, 1:-1]
        assert_matches(A, W2)


@pytest.mark.parametrize("strips", [2, 5])
def test_pinned_strips_on_ghosted_arrays_with_current_and_stale_ghosts(strips, restore_config):
    pg.config(strips=strips, buffer_limit=256)
    G = np.random.default_rng(1).integers(-9, 10, (12, 10)).astype(float)
    A = pg.from_numpy(G, ghosts=(1, 1))
    B = pg.zeros((12, 10), ghosts=(1, 1))
    g = G.copy()
    for step in range(3):
        if step != 1:
            A.update_ghosts()
        B[1:-1, 1:-1] = A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
        w = np.zeros_like(g)
        w[1:-1, 1:-1] = g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:]
        assert_matches(B, w)
        A[...] = B * 0.5 + 1
        g = w * 0.5 + 1


def test_bad_strip_settings_raise_alike_and_explain_says_the_count(restore_config):
    for bad in (0, -1, 1.5, True, "many", None):
        with pytest.raises(ValueError):
            pg.config(strips=bad)
    with pytest.raises(ValueError):
        pg.config(buffer_limit=0)
    A = pg.from_numpy(np.arange(64.0).reshape(8, 8), dist=pg.Cyclic())
    B = pg.zeros((8, 8), dist=pg.Cyclic())
    pg.config(strips=3)
    text = pg.explain(lambda: B.__setitem__((slice(1, None), slice(None)), A[:-1, :]), locales=4, locale=1)
    pg.config(strips="auto", buffer_limit=8)
    text2 = pg.explain(lambda: B.__setitem__((slice(1, None), slice(None)), A[:-1, :]), locales=4, locale=1)
    ok = "pinned by pg.config(strips=3)" in text and "buffer limit of 8 bytes" in text2
    collective_verdict(ok, text + "\n----\n" + text2)

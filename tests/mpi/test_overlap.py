"""The interior of a locale's pieces computed while the halo is in flight:
results equal NumPy's on every distribution, fused or not, whole or strip-mined,
for pieces with no interior, pieces that are all interior, and in-place statements.
(tests/pure/test_network_overlap.py runs the same on MPICH's network path, where
a fetch really arrives only at its flush.)"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import a_dist, assert_matches, collective_verdict

import pgas as pg
from pgas.tools.bench.polybench import fdtd_init, fdtd_steps, jacobi_init, jacobi_steps
from pgas.exec import interior

P = pg.num_locales
DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3)]
FUSE = [False, True]


@pytest.fixture(autouse=True, params=["auto", "before", "in flight"])
def _defaults(request, monkeypatch):
    """Each test with the interior computed as it comes (``auto``), always before waiting
    for the peers, and always while the fetches are in flight."""
    monkeypatch.setattr(interior, "MODE", request.param)
    pg.config()
    yield
    pg.config()


def _interior() -> int:
    return interior.stats["tasks"]


@pytest.mark.parametrize("fuse", FUSE)
@pytest.mark.parametrize("limit", [None, 256], ids=["whole", "strips"])
def test_jacobi_interior_overlapped(fuse, limit):
    """PolyBench's jacobi-2d on row blocks: each locale's interior rows are computed
    while its halo rows are fetched (counted), and every step equals NumPy's."""
    pg.config(fuse=fuse, **({} if limit is None else {"buffer_limit": limit}))
    n = 4 * P + 3
    GA, GB = jacobi_init(n)
    A, B = pg.from_numpy(GA, dist=pg.Block()), pg.from_numpy(GB, dist=pg.Block())
    before = _interior()
    jacobi_steps(A, B, 3)
    jacobi_steps(GA, GB, 3)
    assert_matches(A, GA, rtol=0)
    assert_matches(B, GB, rtol=0)
    got = _interior() - before
    collective_verdict(P == 1 or got > 0, f"no interior task was computed early ({got})")


@pytest.mark.parametrize("fuse", FUSE)
@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_fdtd_matches_numpy(fuse, dist):
    """fdtd-2d's three statements per step (one in place, reading two other arrays)."""
    pg.config(fuse=fuse)
    init = fdtd_init(3 * P + 2, 7, 4)
    arrays = [pg.from_numpy(G, dist=dist) for G in init[:3]]
    fdtd_steps(*arrays, init[3], 4)
    fdtd_steps(*init, 4)
    for a, g in zip(arrays, init[:3]):
        assert_matches(a, g, rtol=0)


@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_no_interior_and_all_interior(dist):
    """One row per locale read one row away (no piece has an interior), and a
    statement with remote reads whose other tasks are all local."""
    n = P
    G = np.arange(n * 5, dtype=np.float64).reshape(n, 5) + 1
    A, B = pg.from_numpy(G, dist=pg.Block()), pg.from_numpy(G * 3, dist=pg.Block())
    C = pg.zeros((n, 5), dist=pg.Block())
    C[1:, :] = A[:-1, :] * 2 + B[1:, :]                  # every row reads its upper neighbour's
    want = np.zeros((n, 5))
    want[1:, :] = G[:-1, :] * 2 + G[1:, :] * 3
    assert_matches(C, want, rtol=0)
    m = 4 * P + 1
    H = np.arange(m * 6, dtype=np.float64).reshape(m, 6)
    X, Y = pg.from_numpy(H, dist=dist), pg.from_numpy(-H, dist=pg.Block())
    X[:, 1:] = X[:, 1:] + Y[:, :-1] * 0.5 + X[:, 1:] * X[:, 1:]        # local on Block, remote otherwise
    H[:, 1:] = H[:, 1:] + -H[:, :-1] * 0.5 + H[:, 1:] * H[:, 1:]
    assert_matches(X, H, rtol=0)


@pytest.mark.parametrize("fuse", FUSE)
def test_reads_before_writes_with_overlap(fuse):
    """A statement that reads the array it writes, shifted (not in place): the interior
    computed early must not be stored before the halo of the old values is read."""
    pg.config(fuse=fuse)
    n = 3 * P + 4
    G = np.arange(n * 4, dtype=np.float64).reshape(n, 4) ** 1.5
    for dist in DISTS:
        A = pg.from_numpy(G, dist=dist)
        A[1:, :] = A[:-1, :] + A[1:, :] * 0.25
        A[:-2, :] = A[2:, :] - A[:-2, :]
        want = G.copy()
        want[1:, :] = want[:-1, :] + want[1:, :] * 0.25
        want[:-2, :] = want[2:, :] - want[:-2, :]
        assert_matches(A, want, rtol=0)


@settings(max_examples=20)
@given(st.data())
def test_random_stencils_match_numpy(data):
    """Shifted 2-D stencils on random shapes, offsets and distributions, with and
    without kernels, whole or strip-mined, in place or into another array."""
    n = data.draw(st.integers(1, 3 * P + 4), label="n")
    m = data.draw(st.integers(1, 6), label="m")
    di, dj = data.draw(st.integers(0, min(2, n - 1)), label="di"), data.draw(st.integers(0, min(2, m - 1)), label="dj")
    da, db = data.draw(a_dist(2), label="da"), data.draw(a_dist(2), label="db")
    inplace = data.draw(st.booleans(), label="inplace")
    pg.config(fuse=data.draw(st.sampled_from(FUSE), label="fuse"),
              **data.draw(st.sampled_from([{}, {"buffer_limit": 48}, {"buffer_limit": 160}]), label="limit"))
    rng = np.random.default_rng(n * 7 + m)
    GA, GB = rng.standard_normal((n, m)), rng.standard_normal((n, m))
    A, B = pg.from_numpy(GA, dist=da), pg.from_numpy(GB, dist=db)
    s0, s1 = (slice(di, None), slice(dj, None)), (slice(None, n - di), slice(None, m - dj))
    if inplace:                                         # B read only where it is written: stored by kernels
        B[s0] = B[s0] + 0.5 * (A[s1] - A[s0])
        GB[s0] = GB[s0] + 0.5 * (GA[s1] - GA[s0])
        assert_matches(B, GB, rtol=0)
    else:                                               # B read shifted: values held until all is read
        B[s0] = 0.5 * (A[s1] - A[s0]) + B[s1] * A[s0]
        GB[s0] = 0.5 * (GA[s1] - GA[s0]) + GB[s1] * GA[s0]
        assert_matches(B, GB, rtol=0)

"""The small integer, unsigned and complex64 dtypes through every path (statements, irregular
updates, atomics, reductions, forall), with NumPy's promotion; float16 refused alike."""

import itertools

import numpy as np
import pytest

import pgas as pg
from util import assert_matches, collective_verdict

P = pg.num_locales
NEW = [np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64, np.complex64]


@pytest.mark.parametrize("dtype", NEW)
@pytest.mark.parametrize("dist", [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)])
def test_new_dtype_paths(dtype, dist):
    dt = np.dtype(dtype)
    G = (np.arange(24) % 7).reshape(4, 6).astype(dt)
    A = pg.from_numpy(G, dist=dist)
    assert_matches(A, G)
    B = pg.zeros((4, 6), dtype=dt, dist=pg.Cyclic())
    B[1:, ::-1] = A[:-1, :] * 2
    want = np.zeros_like(G)
    want[1:, ::-1] = G[:-1, :] * 2
    assert_matches(B, want)
    collective_verdict(A.sum() == G.sum() and A.sum().dtype == G.sum().dtype)
    assert_matches(A.sum(axis=0), G.sum(axis=0))
    assert_matches(A.cumsum(axis=1), G.cumsum(axis=1))
    if dt.kind != "c":
        collective_verdict(A.max() == G.max() and A.argmin() == G.argmin())
    x = pg.zeros(8, dtype=dt, dist=dist)
    x.update(np.arange(8), 1, "add")
    assert_matches(x, np.full(8, P, dt))
    collective_verdict(np.array_equal(x.gather(np.arange(8)[::-1]), np.full(8, P, dt)))
    pg.barrier()
    if pg.here == 0:
        x.update_one(3, 2, "add")
        if dt.kind in "iu":
            collective_verdict_local = x.fetch_add(5, 1) == P and x.compare_exchange(6, P, 9) == P
            assert collective_verdict_local
    pg.barrier()
    want = np.full(8, P, dt)
    want[3] += 2
    if dt.kind in "iu":
        want[5] += 1
        want[6] = 9
    assert_matches(x, want)
    S = pg.zeros(6, dtype=dt)

    def body(i, j):
        S[j] += A[i, j]

    pg.forall((range(4), range(6)), body)
    assert_matches(S, G.sum(axis=0).astype(dt))


def test_promotion_like_numpy():
    kinds = [np.int8, np.uint8, np.int16, np.uint32, np.int64, np.uint64, np.float32, np.complex64]
    for a, b in itertools.combinations(kinds, 2):
        G, H = np.arange(1, 6).astype(a), np.arange(2, 7).astype(b)
        A, B = pg.from_numpy(G, dist=pg.Cyclic()), pg.from_numpy(H)
        assert_matches(A + B, G + H, rtol=1e-6)          # different layouts: a statement
        assert_matches(A * pg.from_numpy(H, dist=pg.Cyclic()), G * H, rtol=1e-6)
        assert_matches(A + 1, G + 1)                      # Python scalars are weak
    with pytest.raises(OverflowError):
        pg.zeros(4, dtype=np.uint8).update(np.arange(4), 300, "add")


def test_float16_refused_alike():
    with pytest.raises(TypeError, match="MPI has no float16"):
        pg.zeros(3, dtype=np.float16)
    with pytest.raises(TypeError, match="float16"):
        pg.from_numpy(np.zeros(3, np.float16))
    with pytest.raises(TypeError, match="float16"):
        pg.ones(3).astype(np.float16)

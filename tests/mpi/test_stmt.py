"""Slice statements against NumPy on any number of locales: views, broadcasting,
ufuncs, where, in-place operators, overlap, dtypes, both execution modes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.layout import grids
from util import assert_matches, collective_verdict, a_dist

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=30)



def dists(ndim):
    out = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2), pg.BlockCyclic(3)]
    for g in grids(P, ndim):
        out += [pg.Cyclic(g), pg.BlockCyclic(2, g), pg.Block(g)]
    return out


def data(shape, seed=0, dtype=float):
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(dtype)


def same(got, want):
    collective_verdict(np.array_equal(np.asarray(got), np.asarray(want)), lambda: f"got {got!r}, expected {want!r}")


@pytest.fixture(autouse=True)
def _defaults():
    pg.config()
    yield
    pg.config()


@pytest.mark.parametrize("aggregate", [True, False])
@pytest.mark.parametrize("k", range(4))
def test_mixed_distributions(aggregate, k):
    pg.config(aggregate=aggregate)
    ds = dists(2)
    da, db, dc = ds[k], ds[-1 - k], ds[(2 * k + 1) % len(ds)]
    GA, GB, GC = data((9, 10), 1), data((9, 10), 2), data((9, 11), 3)
    A, B, C = pg.from_numpy(GA, dist=da), pg.from_numpy(GB, dist=db), pg.from_numpy(GC, dist=dc)
    A[1:-1, ::2] = B[2:, ::2] * 0.5 + C[:-2, 1::2]
    GA[1:-1, ::2] = GB[2:, ::2] * 0.5 + GC[:-2, 1::2]
    assert_matches(A, GA)
    A[::-1, 3] -= B[:, 9] ** 2
    GA[::-1, 3] -= GB[:, 9] ** 2
    assert_matches(A, GA)


@pytest.mark.parametrize("dist", dists(1))
def test_overlapping_reads_and_writes(dist):
    G = data(13)
    A = pg.from_numpy(G, dist=dist)
    A[1:] = A[:-1]
    G[1:] = G[:-1].copy()
    assert_matches(A, G)
    A[:-2] = A[2:] + A[1:-1]
    G[:-2] = G[2:] + G[1:-1]
    assert_matches(A, G)
    A[::-1] = A
    G[::-1] = G.copy()
    assert_matches(A, G)
    A[1::2] += A[::2][:6]
    G[1::2] += G[::2][:6]
    assert_matches(A, G)


@pytest.mark.parametrize("dist", dists(2)[:6])
def test_index_kinds_and_broadcasting(dist):
    G, H = data((6, 7), 1), data((7,), 2)
    A, B = pg.from_numpy(G, dist=dist), pg.from_numpy(H, dist=pg.Cyclic())
    A[...] = B                                  # row broadcast
    G[...] = H
    assert_matches(A, G)
    A[:, 2] = A[:, None, 3][:, 0] * 2           # None, then int
    G[:, 2] = G[:, None, 3][:, 0] * 2
    assert_matches(A, G)
    A[1:4] = B[None, ::-1] + A[0:1, :]          # None in a view, broadcast over rows
    G[1:4] = H[None, ::-1] + G[0:1, :]
    assert_matches(A, G)
    A[..., -1] = 7.5                            # scalar
    G[..., -1] = 7.5
    assert_matches(A, G)
    A[2, ...] = np.arange(7.0)                  # replicated NumPy array
    G[2, ...] = np.arange(7.0)
    assert_matches(A, G)
    A[:, ::3] = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]])
    G[:, ::3] = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]])
    assert_matches(A, G)


def test_views_of_views_compose():
    G = data((10, 12), 4)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    V = A[1:, ::2][::-2, 1:][1:3]
    W = G[1:, ::2][::-2, 1:][1:3]
    assert V.shape == W.shape
    same(V.to_numpy(), W)
    V[...] = V * 10
    W[...] = W * 10
    assert_matches(A, G)
    V[0] = 5
    W[0] = 5
    assert_matches(A, G)
    same(V[1, 2], W[1, 2])


def test_ufuncs_where_comparisons_and_scalar_reads():
    G, H = data((8, 8), 5), data((8, 8), 6)
    A, B = pg.from_numpy(G, dist=pg.Cyclic()), pg.from_numpy(H, dist=pg.BlockCyclic(3))
    A[1:] = np.minimum(A[1:], B[:-1])
    G[1:] = np.minimum(G[1:], H[:-1])
    assert_matches(A, G)
    A[:, 1:] = np.maximum(A[:, :-1], 0.5 * B[:, 1:])
    G[:, 1:] = np.maximum(G[:, :-1], 0.5 * H[:, 1:])
    assert_matches(A, G)
    A[2:5] = pg.where(B[2:5] > A[2:5], B[:3] + 1, np.abs(A[5:]))
    G[2:5] = np.where(H[2:5] > G[2:5], H[:3] + 1, np.abs(G[5:]))
    assert_matches(A, G)
    k = 2
    G[k, k] = A[k, k] = 4.0
    A[k + 1:, k] = A[k + 1:, k] / A[k, k]
    G[k + 1:, k] = G[k + 1:, k] / G[k, k]
    assert_matches(A, G)
    np.sqrt(np.abs(B[1:]), out=A[:-1])
    G[:-1] = np.sqrt(np.abs(H[1:]))
    assert_matches(A, G)


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "//=", "|=", "^=", "&="])
def test_inplace_operators_on_ints(op):
    G, H = data((11,), 7, np.int64), data((11,), 8, np.int64)
    H[H == 0] = 3
    A, B = pg.from_numpy(G, dist=pg.BlockCyclic(2)), pg.from_numpy(H, dist=pg.Cyclic())
    ns = {"A": A, "B": B, "G": G, "H": H}
    exec(f"A[1:] {op} B[:-1]\nG[1:] {op} H[:-1]", ns)
    assert_matches(A, G)
    exec(f"A {op} B\nG {op} H", ns)                # whole arrays of different layouts
    assert_matches(A, G)


def test_true_divide_inplace_and_dtypes():
    G = data((9,), 1)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    B = pg.from_numpy(data((9,), 2, np.int32), dist=pg.Block())
    A[2:] /= B[:-2] + 20
    G[2:] /= data((9,), 2, np.int32)[:-2] + 20
    assert_matches(A, G)
    C = B[1:] + np.float32(1.5)                  # int32 + float32 -> float64, as NumPy
    want = data((9,), 2, np.int32)[1:] + np.float32(1.5)
    collective_verdict(C.dtype == want.dtype, f"{C.dtype} != {want.dtype}")
    same(C.to_numpy(), want)
    B[:] = A * 2.7                              # cast into the target as NumPy assignment does
    Gi = data((9,), 2, np.int32)
    Gi[:] = G * 2.7
    assert_matches(B, Gi)
    with pytest.raises(TypeError):
        B[1:] += A[:-1]                         # same_kind rule of NumPy's in-place operators


def test_unassigned_expression_materialises_before_operands_change():
    G = data((10, 6), 3)
    A = pg.from_numpy(G, dist=pg.Cyclic((P, 1)) if P > 1 else pg.Cyclic())
    S = A[1:] + A[:-1]
    T = A[::2] * 2
    A[:] = 0
    G2 = G[1:] + G[:-1]
    same(S.to_numpy(), G2)
    same(T.to_numpy(), G[::2] * 2)
    B = S.eval()
    collective_verdict(isinstance(B, pg.DistArray) and B.dist.kind == "cyclic", repr(B))
    same(float(S.sum()), G2.sum())


def test_errors_are_raised_everywhere():
    A = pg.zeros((5, 4), dist=pg.Cyclic())
    with pytest.raises(ValueError, match="broadcast"):
        A[1:] = A[:, 1:]
    with pytest.raises(IndexError):
        A[5:, 9, 1]
    with pytest.raises(IndexError):
        A[[1, 7]] = 1                   # an index array (advanced indexing) out of bounds
    with pytest.raises(IndexError, match="out of bounds"):
        A[7, :]


@SETTINGS
@given(st.data())
def test_random_statements_match_numpy(data_):
    draw = data_.draw
    ndim = draw(st.integers(1, 2))
    tshape = [draw(st.integers(1, 9)) for _ in range(ndim)]
    tkey, lens = [], []
    for n in tshape:
        step = draw(st.sampled_from([1, 1, 2, -1, 3, -2]))
        start = draw(st.integers(0, n - 1))
        stop = draw(st.sampled_from([None, draw(st.integers(-1, n))]))
        sl = slice(start, stop if stop != -1 else None, step)
        tkey.append(sl)
        lens.append(len(range(*sl.indices(n))))
    GT = data(tuple(tshape), 0)
    T = pg.from_numpy(GT, dist=draw(a_dist(ndim)))
    operands = []
    for k in range(draw(st.integers(1, 3))):
        key, shape = [], []
        for L in lens:
            step = draw(st.sampled_from([1, 2, -1, -3]))
            extra = draw(st.integers(0, 3))
            n = abs(step) * max(L - 1, 0) + 1 + extra
            off = draw(st.integers(0, extra))
            start = off if step > 0 else n - 1 - off
            stop = start + step * L
            key.append(slice(start, stop if stop >= 0 else None, step))
            shape.append(n)
        G = data(tuple(shape), k + 1)
        if draw(st.booleans()) and ndim == 2:      # broadcast one operand along a dim
            key[0] = slice(0, 1)
        operands.append((pg.from_numpy(G, dist=draw(a_dist(ndim))), G, tuple(key)))
    aggregate = draw(st.booleans())
    pg.config(aggregate=aggregate, owner=draw(st.sampled_from(["cost", "write"])))
    op = draw(st.sampled_from(["=", "+="]))
    rhs = operands[0][0][operands[0][2]]
    want = operands[0][1][operands[0][2]]
    for A, G, key in operands[1:]:
        rhs = rhs * 0.5 + A[key]
        want = want * 0.5 + G[key]
    if op == "=":
        T[tuple(tkey)] = rhs
        GT[tuple(tkey)] = want
    else:
        T[tuple(tkey)] += rhs
        GT[tuple(tkey)] += want
    assert_matches(T, GT)

"""Views and basic keys (ints, slices, tuples, newaxis, transposes) read and written
through, views of views, against NumPy."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from util import assert_matches, collective_verdict
from util import check_exactly as _check
from util import mixed_dists as _dists

import pgas as pg
from pgas.layout import grids

P = pg.num_locales


# ---------------------------------------------------------------------------
# 3. Views of views, negative steps, writes through them; shape functions
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("k", range(3 + len(grids(P, 2))))
def test_views_of_views_and_writes_through_them(k):
    d = _dists(2)[k]
    a = np.arange(42.0).reshape(6, 7)
    A = pg.from_numpy(a, dist=d)
    _check(A[::-1, 1:][1::2, ::-3].to_numpy(), a[::-1, 1:][1::2, ::-3], "view of view")
    _check(A[::-1].T[2:, ::-2].to_numpy(), a[::-1].T[2:, ::-2], "view of transpose")
    for op in (lambda X: X[::-1, 1:][1::2, ::-3].__setitem__(Ellipsis, -1.0),
               lambda X: X.__setitem__((slice(None, None, -2), slice(None, None, -3)), X[1::2, ::3] * 10),
               lambda X: X.__setitem__((slice(1, None), slice(None)), X[:-1, :] + 1),
               lambda X: X.__setitem__((slice(None), slice(None, None, -1)), X.copy() if isinstance(X, np.ndarray) else X)):
        B, w = pg.from_numpy(a.copy(), dist=d), a.copy()
        op(B)
        op(w)
        assert_matches(B, w)
    B, w = pg.from_numpy(a[:6, :6].copy(), dist=d), a[:6, :6].copy()
    B[...] = B.T
    w[...] = w.T.copy()
    assert_matches(B, w)
    _check(pg.transpose(A).to_numpy(), a.T)
    _check(pg.reshape(A, (3, 2, 7)).to_numpy(), a.reshape(3, 2, 7))
    _check(pg.reshape(A[::-1, ::2], (-1,)).to_numpy(), a[::-1, ::2].reshape(-1))
    _check(pg.ravel(A.T).to_numpy(), np.ravel(a.T))
    _check(pg.concatenate([A, A[::-1]], axis=0).to_numpy(), np.concatenate([a, a[::-1]]))
    _check(pg.concatenate([A, A[:, :2]], axis=1).to_numpy(), np.concatenate([a, a[:, :2]], axis=1))
    _check(pg.concatenate([A[:0], A]).to_numpy(), np.concatenate([a[:0], a]))
    i32 = np.ones((1, 7), np.int32)
    _check(pg.concatenate([A, pg.from_numpy(i32, dist=d)]).to_numpy(), np.concatenate([a, i32]))
    _check(pg.stack([A, A * 2], axis=-1).to_numpy(), np.stack([a, a * 2], axis=-1))
    _check(pg.hstack([A, A[:, :1]]).to_numpy(), np.hstack([a, a[:, :1]]))
    _check(pg.flip(A, axis=1).to_numpy(), np.flip(a, axis=1))
    _check(pg.moveaxis(A, 0, 1).to_numpy(), np.moveaxis(a, 0, 1))


@pytest.fixture
def _defaults():
    pg.config()
    yield
    pg.config()


_SL = st.builds(slice, st.one_of(st.none(), st.integers(-9, 9)), st.one_of(st.none(), st.integers(-9, 9)),
                st.one_of(st.none(), st.sampled_from([-3, -2, -1, 1, 2, 3])))


@pytest.mark.usefixtures("_defaults")
@hsettings(max_examples=15, deadline=None)
@given(k1=st.tuples(_SL, _SL), k2=st.tuples(_SL, _SL), transpose=st.booleans())
def test_one_pass_slice_views_like_numpy(k1, k2, transpose):
    # negative steps, empty slices, slices past the end, views of (transposed) views
    a = np.arange(6 * 5, dtype=np.float64).reshape(6, 5)
    A = pg.from_numpy(a)
    V, v = (A.T, a.T) if transpose else (A[:, :], a[:, :])
    want = v[k1][k2]
    got = V[k1][k2]
    collective_verdict(got.shape == want.shape, lambda: f"shape {got.shape} != {want.shape}")
    if want.size:
        collective_verdict(np.array_equal(got.to_numpy(), want), "values differ")
        B = pg.zeros(want.shape)
        B[:, :] = got * 2 - 1
        assert_matches(B, want * 2 - 1, rtol=0.0)


@pytest.mark.usefixtures("_defaults")
def test_tuple_keys_starting_with_a_slice():
    a = np.arange(4 * 5 * 3, dtype=np.int64).reshape(4, 5, 3)
    A = pg.from_numpy(a.copy())
    keys = [(slice(None), 1), (slice(1, None), Ellipsis), (slice(None), None, 2), (slice(None, None, -1), np.int64(-1)),
            (slice(None), [0, 2]), (slice(1, 3), slice(None), 0), (slice(None), Ellipsis, None),
            (slice(None, None, 2), np.array([True, False, True, False, True]))]
    for key in keys:
        got, want = A[key], a[key]
        collective_verdict(np.shape(got) == want.shape, lambda: f"{key}: shape {np.shape(got)} != {want.shape}")
        collective_verdict(np.array_equal(got.to_numpy(), want), lambda: f"{key}: values differ")
    b = a.copy()
    for key, val in [((slice(None), 1), 7), ((slice(1, None), Ellipsis), -1), ((slice(None), [0, 2], 1), 9),
                     ((slice(None, None, -2), 0, None), 5)]:
        A[key] = val
        b[key] = val
        assert_matches(A, b)
    assert A[(slice(None), 1, 2)].to_numpy().tolist() == b[:, 1, 2].tolist()


@pytest.mark.usefixtures("_defaults")
def test_tuple_slice_keys_on_views_with_fewer_or_new_axes():
    a = np.arange(5 * 6, dtype=np.float64).reshape(5, 6)
    A = pg.from_numpy(a.copy(), dist=pg.Cyclic())
    cases = [(lambda x: x[:, 2], (slice(1, None, 2),)), (lambda x: x[3], (slice(None, None, -1),)),
             (lambda x: x[None, ::-2], (slice(None), slice(2, None), slice(5, 0, -2))),
             (lambda x: x.T[1:], (slice(None, None, -1), slice(10, 20))), (lambda x: x[:, None, 1], (slice(1, 4), slice(None)))]
    for pick, key in cases:
        want = pick(a)[key]
        got = pick(A)[key]
        collective_verdict(got.shape == want.shape, lambda: f"{key}: shape {got.shape} != {want.shape}")
        if want.size:
            collective_verdict(np.array_equal(got.to_numpy(), want), lambda: f"{key}: values differ")
    b = a.copy()
    V, v = A[:, ::-1], b[:, ::-1]
    V[(slice(None, 4, 2), slice(1, 4))] = V[(slice(1, None, 2), slice(2, 5))] * 3
    v[:4:2, 1:4] = v[1::2, 2:5] * 3
    assert_matches(A, b, rtol=0.0)


@pytest.mark.parametrize("key", [(0, slice(None)), (-1, slice(1, 3)), (slice(None, None, -2), 2),
                                 (True, slice(None)), (np.int64(-2), slice(None)), (slice(3, 1), 0)])
def test_int_and_slice_keys_write_and_augment_as_numpy(key):
    G = np.arange(30.0).reshape(5, 6)
    A = pg.from_numpy(G, dist=pg.BlockCyclic(2))
    G[key] = 7.0
    A[key] = 7.0
    assert_matches(A, G)
    G[key] += np.arange(G[key].shape[-1]) if G[key].size else 0
    A[key] += np.arange(G[key].shape[-1]) if G[key].size else 0
    assert_matches(A, G)
    V, GV = A[1:, ::-1], G[1:, ::-1]
    GV[-1, 1:3] *= 2
    V[-1, 1:3] *= 2
    assert_matches(A, G)
    with pytest.raises(IndexError):
        A[5, :]
    with pytest.raises(IndexError):
        V[-5, 1:]


DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]


@pytest.mark.parametrize("dist", DISTS)
def test_empty_slice_of_a_new_axis_writes_nothing(dist):
    # A[None][0:0] = v raised PlanError ("the write ignores loop variable(s) [0]"); NumPy writes nothing
    G = np.arange(6.0)
    A = pg.from_numpy(G, dist=dist)
    A[None][0:0] = 1.0
    A[None, 1:][0:0, :] = A[None, :-1][0:0, :] * 2.0
    V = A[:, None][:, 0:0]
    V += 1.0
    np.add(V, 1.0, out=V)
    assert_matches(A, G)
    G2 = np.arange(12).reshape(3, 4)
    B = pg.from_numpy(G2, dist=dist)
    B[:, None][1:, 0:0, ::2] = 7
    B[None][0:0] = B[None]
    assert_matches(B, G2)

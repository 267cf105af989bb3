"""Shape changes against NumPy: transposes, flips and squeezes as views, reshape and joins.

Also: axis=None refused where NumPy refuses it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_axis_reduce import global_array, layouts
from util import assert_matches, collective_verdict

import pgas as pg

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=20)


@SETTINGS
@given(layouts(max_ndim=4, max_extent=5), st.data())
def test_transpose_views_in_statements(layout, data):
    shape, dist = layout
    G = global_array(shape, np.float64, 1)
    A = pg.from_numpy(G, dist=dist)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    V = A.transpose(perm)
    collective_verdict(isinstance(V, pg.array.view.View) and V.shape == G.transpose(perm).shape)
    want = G.transpose(perm) + 1
    B = pg.zeros(want.shape, dist=data.draw(st.sampled_from([pg.Block(), pg.Cyclic()])))
    B[...] = V + 1
    assert_matches(B, want)
    assert_matches(A.T.eval(), G.T)
    assert_matches(np.transpose(A).eval(), G.T)
    i, j = data.draw(st.integers(-len(shape), len(shape) - 1)), data.draw(st.integers(-len(shape), len(shape) - 1))
    assert_matches(pg.swapaxes(A, i, j).eval(), np.swapaxes(G, i, j))
    assert_matches(pg.moveaxis(A, i, j).eval(), np.moveaxis(G, i, j))
    ax = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    assert_matches(pg.flip(A, ax).eval(), np.flip(G, ax))
    # write through a transposed view
    H = global_array(G.T.shape, np.float64, 2)
    A.T[...] = pg.from_numpy(H)
    assert_matches(A, H.T)


@SETTINGS
@given(layouts(max_ndim=3, max_extent=6), st.data())
def test_reshape_ravel(layout, data):
    shape, dist = layout
    G = global_array(shape, np.int64, 3)
    A = pg.from_numpy(G, dist=dist)
    size = G.size
    divisors = [d for d in range(1, size + 1) if size % d == 0] or [1]
    d = data.draw(st.sampled_from(divisors))
    new = data.draw(st.sampled_from([(d, -1), (-1,), (size // d if size else 0, d), (d, 1, -1)])) if size else (0, 3)
    assert_matches(A.reshape(new), G.reshape(new))
    assert_matches(pg.reshape(A, new), np.reshape(G, new))
    assert_matches(A.ravel(), G.ravel())
    assert_matches(A.flatten(), G.flatten())
    if len(shape) > 1 and min(shape) > 0:
        assert_matches(A[::-1, 1:].reshape(-1), G[::-1, 1:].reshape(-1))
        assert_matches(A.T.ravel(), G.T.ravel())


def test_squeeze_expand_dims():
    G = np.arange(12.0).reshape(3, 1, 4)
    for dist in (pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)):
        A = pg.from_numpy(G, dist=dist)
        assert_matches(A.squeeze().eval(), G.squeeze())
        assert_matches(pg.squeeze(A, 1).eval(), np.squeeze(G, 1))
        assert_matches(pg.expand_dims(A, 0).eval(), np.expand_dims(G, 0))
        assert_matches(pg.expand_dims(A.squeeze(), (1, -1)).eval(), np.expand_dims(G.squeeze(), (1, -1)))
        B = pg.zeros((3, 4), dist=dist)
        B[...] = A.squeeze() * 2
        assert_matches(B, G.squeeze() * 2)
        with pytest.raises(ValueError, match="size not equal to one"):
            A.squeeze(0)
    one = pg.from_numpy(np.array([[5.0]]))
    collective_verdict(one.squeeze() == 5.0)


@pytest.mark.parametrize("dist", [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)])
def test_joins(dist):
    G = np.arange(12).reshape(3, 4)
    H = np.arange(8.0).reshape(2, 4) * -1
    A, B = pg.from_numpy(G, dist=dist), pg.from_numpy(H, dist=dist)
    assert_matches(pg.concatenate([A, B]), np.concatenate([G, H]))
    assert_matches(pg.concatenate([A, A[:, ::-1]], axis=1), np.concatenate([G, G[:, ::-1]], axis=1))
    assert_matches(pg.concatenate([A, B], axis=None), np.concatenate([G, H], axis=None))
    assert_matches(pg.stack([A, A + 1], axis=1), np.stack([G, G + 1], axis=1))
    assert_matches(pg.vstack([A, B]), np.vstack([G, H]))
    assert_matches(pg.hstack([A, A.T[:3, :]]), np.hstack([G, G.T[:3, :]]))
    a, b = pg.from_numpy(np.arange(3.0), dist=dist), pg.from_numpy(np.arange(4.0), dist=dist)
    assert_matches(pg.hstack([a, b]), np.hstack([np.arange(3.0), np.arange(4.0)]))
    assert_matches(pg.vstack([a, a]), np.vstack([np.arange(3.0)] * 2))
    assert_matches(pg.concatenate([A, H]), np.concatenate([G, H]))      # NumPy inputs: replicated
    assert_matches(pg.vstack([np.arange(4), A]), np.vstack([np.arange(4), G]))
    out = pg.zeros((5, 4), dtype=np.float64)
    r = pg.concatenate([A, B], out=out)
    collective_verdict(r is out)
    assert_matches(out, np.concatenate([G, H]))
    with pytest.raises(ValueError, match="must match"):
        pg.concatenate([A, B], axis=1)
    with pytest.raises(TypeError, match="cast"):
        pg.concatenate([A, B], out=pg.zeros((5, 4), dtype=np.int64))


def test_shape_errors_alike():
    A = pg.zeros((3, 4))
    with pytest.raises(ValueError, match="cannot reshape"):
        A.reshape(5, -1)
    with pytest.raises(ValueError, match="one unknown"):
        A.reshape(-1, -1)
    with pytest.raises(NotImplementedError, match="order"):
        A.reshape(12, order="F")
    with pytest.raises(ValueError, match="axes don't match"):
        A.transpose(0)
    with pytest.raises(np.exceptions.AxisError):
        pg.swapaxes(A, 0, 2)


@pytest.mark.parametrize("fn", ["stack", "expand_dims"])
def test_axis_none_is_rejected_like_numpy(fn):
    # NumPy raises TypeError for np.stack([a, a], axis=None) and np.expand_dims(a, None);
    # pgas silently treats None as axis 0.
    A = pg.from_numpy(np.ones((3, 2)))
    with pytest.raises(TypeError):
        np.stack([A, A], axis=None) if fn == "stack" else np.expand_dims(A, None)


def test_reshapes_whose_reads_arrive_in_order():
    """A reshape whose reads arrive in (owner, offset) order (Block to Block) has its index
    plan grouped without the hash pass (``counting.inspect``'s short path, from
    ``INCREASING_MIN`` positions); other layouts and views take the hash pass: the same
    values as NumPy either way, at the default threshold and with every plan tried."""
    from pgas.array import counting
    G = np.arange(96 * 128, dtype=np.float64).reshape(96, 128)
    before = counting.INCREASING_MIN
    try:
        for counting.INCREASING_MIN in (before, 1):
            for dist in (pg.Block(), pg.Cyclic(), pg.BlockCyclic(5)):
                A = pg.from_numpy(G, dist=dist)
                for new in ((128, 96), (1, 1, 96, 128), (-1,), (12, 8, 128)):
                    assert_matches(A.reshape(new), G.reshape(new))
                assert_matches(A[::-1, ::2].reshape(-1), G[::-1, ::2].reshape(-1))
                assert_matches(A.T.reshape(64, -1), G.T.reshape(64, -1))
    finally:
        counting.INCREASING_MIN = before

"""Ghost cells: padded storage in the window, update_ghosts, accumulate_ghosts, and every
existing path seeing only the interior, against NumPy on 1-4 locales."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.layout import grids
from util import assert_matches, collective_verdict

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=20)


def data(shape, seed=0, dtype=float):
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(dtype)


def padded_indices(A, r):
    """Per dimension, the global indices (unwrapped) of locale r's padded block."""
    own = A.layout.owned(r)
    return [np.arange(o[0] - g, o[-1] + 1 + g) for o, g in zip(own, A.ghosts)]


def expected_block(A, G, periodic, corners, before):
    """What locale here's padded block must hold after update_ghosts."""
    want = before.copy()
    idx = padded_indices(A, pg.here)
    for pos in itertools.product(*[range(len(i)) for i in idx]):
        gidx = [i[p] for i, p in zip(idx, pos)]
        outside = [not (g <= p < len(i) - g) for i, p, g in zip(idx, pos, A.ghosts)]
        if not any(outside) or (not corners and sum(outside) > 1):
            continue
        ok = all(per or 0 <= x < n for x, n, per in zip(gidx, A.shape, periodic))
        if ok:
            want[pos] = G[tuple(x % n for x, n in zip(gidx, A.shape))]
    return want


@st.composite
def a_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, {1: 9, 2: 7, 3: 5}[ndim]), min_size=ndim, max_size=ndim)))
    grid = draw(st.sampled_from([None] + grids(P, ndim)))
    ghosts = tuple(draw(st.lists(st.integers(0, 2), min_size=ndim, max_size=ndim)))
    periodic = tuple(draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim)))
    return shape, grid, ghosts, periodic, draw(st.booleans())


@given(a_case())
@SETTINGS
def test_update_ghosts_fills_every_ghost_cell(case):
    shape, grid, ghosts, periodic, corners = case
    G = data(shape, 1)
    A = pg.from_numpy(G, dist=pg.Block(grid), ghosts=ghosts)
    assert_matches(A, G)
    before = A.local_with_ghosts.copy()
    with pg.comm_diagnostics() as d:
        A.update_ghosts(periodic=periodic, corners=corners)
    got = A.local_with_ghosts
    if A.local.size:
        want = expected_block(A, G, periodic, corners, before)
        collective_verdict(np.array_equal(got, want), lambda: f"padded block\n{got}\nexpected\n{want}")
    else:
        collective_verdict(True)
    collective_verdict(int(d.matrix.max(initial=0)) <= 1, lambda: f"messages per pair:\n{d.matrix}")
    assert_matches(A, G)                                  # the interior is untouched


@given(a_case())
@SETTINGS
def test_accumulate_ghosts_adds_into_owners(case):
    shape, grid, ghosts, periodic, corners = case
    G = data(shape, 2)
    A = pg.from_numpy(G, dist=pg.Block(grid), ghosts=ghosts)
    pad = A.local_with_ghosts
    inner = tuple(slice(g, g + n) for g, n in zip(A.ghosts, A.local.shape))
    saved = A.local.copy()
    pad[...] = 1.0                                        # every ghost cell contributes 1
    A.local[...] = saved
    A.accumulate_ghosts(periodic=periodic, corners=corners)
    want = G.copy()
    for r in range(P):
        L = A.layout
        if not all(L.local_shape(r)):
            continue
        idx = padded_indices(A, r)
        for pos in itertools.product(*[range(len(i)) for i in idx]):
            outside = [not (g <= p < len(i) - g) for i, p, g in zip(idx, pos, A.ghosts)]
            if not any(outside) or (not corners and sum(outside) > 1):
                continue
            gidx = [i[p] for i, p in zip(idx, pos)]
            if all(per or 0 <= x < n for x, n, per in zip(gidx, shape, periodic)):
                want[tuple(x % n for x, n in zip(gidx, shape))] += 1
    assert_matches(A, want)
    ghost_mask = np.ones(pad.shape, bool)
    ghost_mask[inner] = False
    if A.local.size:
        sent = expected_block(A, np.zeros(shape), periodic, corners, np.ones(pad.shape)) == 0
        collective_verdict(np.all(pad[ghost_mask & sent] == 0), "sent ghost cells were not zeroed")
    else:
        collective_verdict(True)


@pytest.mark.parametrize("ghosts", [(1, 1), (2, 0), (0, 3)])
def test_existing_paths_see_the_interior(ghosts):
    G = data((9, 7), 3)
    A = pg.from_numpy(G, ghosts=ghosts)
    A.local_with_ghosts[...] = 1e6                       # garbage in the ghost cells ...
    A.local[...] = G[A.layout.owned_key(pg.here)]        # ... none of it may leak
    B = pg.zeros((9, 7), ghosts=ghosts)
    C = pg.from_numpy(G * 2, dist=pg.Cyclic())
    B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
    ref = np.zeros_like(G)
    ref[1:-1, 1:-1] = 0.25 * (G[:-2, 1:-1] + G[2:, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:])
    assert_matches(B, ref)
    assert_matches(A + C, G * 3)                         # mixed with a dense array: a statement
    assert_matches(A * 2 - 1, G * 2 - 1)
    collective_verdict(A.sum() == G.sum() and A.max() == G.max(), "reductions read ghost cells")
    collective_verdict(np.array_equal(A.to_numpy(), G), "to_numpy")
    collective_verdict(A[4, 3] == G[4, 3] and A.get((8, 6)) == G[8, 6])
    A[2, 5] = -3.0
    G[2, 5] = -3.0
    assert_matches(A, G)
    assert_matches(pg.cshift(A, 2, 1), np.roll(G, -2, 1))
    outs = pg.pshift(A, [(1, 0), (-1, 1, 7.0)])
    collective_verdict(outs[0].ghosts == A.ghosts, "pshift outputs keep the ghost layout")
    assert_matches(outs[0], np.roll(G, -1, 0))
    D = pg.asarray(A, dist=pg.Cyclic())
    assert_matches(D, G)
    idx = np.array([0, 13, 62, 5 + 7 * pg.here]) % 63               # irregular ops: storage offsets
    got = A.gather((idx // 7, idx % 7))
    collective_verdict(np.array_equal(got, G[idx // 7, idx % 7]), f"gather {got}")
    A.update((np.array([1]), np.array([1])), np.array([1.0]))      # every locale adds 1 to A[1, 1]
    G[1, 1] += P
    assert_matches(A, G)


def test_ghost_errors_and_dense_paths():
    with pytest.raises(ValueError, match="Block"):
        pg.zeros((8, 8), dist=pg.Cyclic(), ghosts=1)
    with pytest.raises(ValueError, match="one non-negative integer per dimension"):
        pg.zeros((8, 8), ghosts=(1, 1, 1))
    with pytest.raises(ValueError, match="one non-negative integer per dimension"):
        pg.zeros((8, 8), ghosts=(-1, 1))
    A = pg.from_numpy(data(10, 4), ghosts=1)
    with pytest.raises(ValueError, match="periodic"):
        A.update_ghosts(periodic=(True, False))
    with pytest.raises(NotImplementedError, match="ghost cells"):
        pg.sort(A)
    assert_matches(pg.sort(pg.asarray(A, dist=pg.Block())), np.sort(data(10, 4)))
    collective_verdict(pg.zeros(5, ghosts=0).ghosts == (0,) and pg.zeros(5).local_with_ghosts.shape == pg.zeros(5).local.shape)


def test_jacobi_with_ghosts_matches_numpy():
    """The ghost-cell way to write a periodic 5-point stencil: NumPy on views of the padded block."""
    n = 12
    G = data((n, n), 5)
    A = pg.from_numpy(G, ghosts=(1, 1))
    for _ in range(3):
        A.update_ghosts(periodic=True, corners=False)
        p = A.local_with_ghosts
        new = 0.25 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])
        A.local[...] = new
        G = 0.25 * (np.roll(G, 1, 0) + np.roll(G, -1, 0) + np.roll(G, 1, 1) + np.roll(G, -1, 1))
    assert_matches(A, G, rtol=1e-12)

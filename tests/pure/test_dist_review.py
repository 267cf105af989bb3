"""Review tests of pgas.layout (no MPI): the scalar fast path against the vectorised maps,
degenerate grids, and the default grid's squareness."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgas.layout import Block, BlockCyclic, Cyclic, DistributionError, default_grid, grids

SETTINGS = settings(max_examples=200, deadline=None)



@st.composite
def bound(draw):
    p = draw(st.integers(1, 9))
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(0, 7), min_size=ndim, max_size=ndim)))
    grid = draw(st.sampled_from([None] + grids(p, ndim)))
    dist = draw(st.sampled_from([Block(grid), Cyclic(grid), BlockCyclic(draw(st.integers(1, 9)), grid),
                                 BlockCyclic(tuple(draw(st.integers(1, 9)) for _ in shape), grid)]))
    return dist.bind(shape, p)


@SETTINGS
@given(bound())
def test_locate_agrees_with_vectorised_maps_for_every_index(L):
    """The scalar fast path (plain ints, negative ones too) and owners/local_flat name the
    same place, and each locale's flat offsets fill 0..size-1 exactly once."""
    if 0 in L.shape:
        assert L.locate((0,) * L.ndim) is None
        return
    idx = tuple(g.ravel() for g in np.meshgrid(*[np.arange(n) for n in L.shape], indexing="ij"))
    owners = L.owners(idx)
    flat = L.local_flat(idx)
    for k in range(len(owners)):
        g = tuple(int(a[k]) for a in idx)
        neg = tuple(x - n for x, n in zip(g, L.shape))
        assert L.locate(g) == L.locate(neg) == (int(owners[k]), int(flat[k]))
        assert L.locate(tuple(np.int32(x) for x in g)) == (int(owners[k]), int(flat[k]))
    for r in range(L.num_locales):
        mine = np.sort(flat[owners == r])
        assert np.array_equal(mine, np.arange(math.prod(L.local_shape(r))))
    assert L.locate(tuple(n for n in L.shape)) is None
    assert L.locate(tuple(-n - 1 for n in L.shape)) is None
    assert L.locate((True,) * L.ndim) is None


@pytest.mark.parametrize("ndim", [2, 3, 4])
@pytest.mark.parametrize("p", [1, 2, 3, 4, 6, 8, 12, 16, 24, 36, 48, 64, 96, 128])
def test_default_grid_is_as_square_as_any_grid(p, ndim):
    best = min(max(g) / min(g) for g in grids(p, ndim))
    g = default_grid(p, ndim)
    assert math.prod(g) == p and list(g) == sorted(g, reverse=True)
    assert max(g) / min(g) == pytest.approx(best)


@pytest.mark.parametrize("p,want", [(72, (9, 8)), (180, (15, 12)), (240, (16, 15))])
def test_default_grid_squareness_beyond_greedy(p, want):
    assert default_grid(p, 2) == want


@pytest.mark.parametrize("shape,p,grid", [((2, 9), 4, (4, 1)), ((9, 2), 4, (1, 4)), ((1, 3, 5), 3, (3, 1, 1)),
                                          ((3,), 8, None), ((0, 5), 2, None)])
def test_degenerate_grids_own_everything_once(shape, p, grid):
    for dist in (Block(grid), Cyclic(grid), BlockCyclic(11, grid)):
        L = dist.bind(shape, p)
        sizes = [math.prod(L.local_shape(r)) for r in range(p)]
        assert sum(sizes) == math.prod(shape)
        seen = set()
        for r in range(p):
            for g in itertools.product(*L.owned(r)):
                assert L.owner(g) == r and g not in seen
                seen.add(g)


def test_non_integer_grid_is_rejected():
    with pytest.raises(DistributionError):
        Block(grid=(2.5,))

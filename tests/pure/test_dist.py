"""Pure tests of pgas.layout (no MPI): index maps, layouts, grids and errors, checked
against brute force with hypothesis."""

import doctest
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas.layout.dimmap
import pgas.layout.distribution
from pgas.layout import (
    Block,
    BlockCyclic,
    Cyclic,
    DimMap,
    DistributionError,
    default_grid,
    grids,
    square_grid,
)

SETTINGS = settings(max_examples=150, deadline=None)


@st.composite
def dimmaps(draw):
    """An extent 0..60, a locale count 1..9 and a block size up to (and past) the extent."""
    n = draw(st.integers(0, 60))
    p = draw(st.integers(1, 9))
    b = draw(st.one_of(st.integers(1, 8), st.integers(1, n + 10), st.just(max(1, math.ceil(n / p)))))
    return DimMap(n, p, b)


@given(dimmaps())
@SETTINGS
def test_dimmap_every_index_owned_exactly_once(m):
    owned = np.concatenate([m.owned(q) for q in range(m.p)] + [np.empty(0, int)])
    assert sorted(owned.tolist()) == list(range(m.n))
    assert sum(m.local_size(q) for q in range(m.p)) == m.n


@given(dimmaps())
@SETTINGS
def test_dimmap_local_global_round_trip(m):
    for g in range(m.n):
        q, l = int(m.owner(g)), int(m.local_index(g))
        assert 0 <= q < m.p and 0 <= l < m.local_size(q)
        assert m.global_index(q, l) == g
    for q in range(m.p):
        locals_ = np.arange(m.local_size(q))
        assert np.array_equal(m.local_index(m.global_index(q, locals_)), locals_)
        assert np.all(m.owner(m.global_index(q, locals_)) == q)


@given(dimmaps())
@SETTINGS
def test_dimmap_owned_ranges_equal_brute_force(m):
    g = np.arange(m.n)
    for q in range(m.p):
        brute = set(g[m.owner(g) == q].tolist())
        ranges = m.owned_ranges(q)
        listed = [i for r in ranges for i in r]
        assert len(listed) == len(set(listed)), "owned ranges overlap"
        assert set(listed) == brute
        assert all(r.step > 0 and len(r) > 0 for r in ranges)
        assert list(m.owned(q)) == sorted(brute, key=lambda i: m.local_index(i))
        assert list(m.block_starts(q)) == [s for s in range(0, m.n, m.b) if m.owner(s) == q]


@given(dimmaps(), st.integers(0, 70), st.integers(0, 70))
@SETTINGS
def test_dimmap_block_edges_are_owner_changes(m, lo, hi):
    edges = m.block_edges(lo, hi)
    assert all(lo < e < hi and e % m.b == 0 for e in edges)
    assert edges == [g for g in range(lo + 1, hi) if g % m.b == 0]



@st.composite
def layouts(draw):
    """A distribution over 1..9 locales bound to a 1- to 4-d shape (extents may be 0
    or smaller than the grid), with the default grid or a given one."""
    ndim = draw(st.integers(1, 4))
    p = draw(st.integers(1, 9))
    shape = tuple(draw(st.lists(st.integers(0, 7 if ndim > 2 else 13), min_size=ndim, max_size=ndim)))
    grid = draw(st.sampled_from([None] + grids(p, ndim)))
    kind = draw(st.sampled_from(["block", "cyclic", "blockcyclic", "blockcyclic-per-dim"]))
    if kind == "block":
        dist = Block(grid)
    elif kind == "cyclic":
        dist = Cyclic(grid)
    elif kind == "blockcyclic":
        dist = BlockCyclic(draw(st.integers(1, 15)), grid)
    else:
        dist = BlockCyclic(tuple(draw(st.integers(1, 15)) for _ in range(ndim)), grid)
    return dist.bind(shape, p), p, grid


@given(layouts())
@SETTINGS
def test_layout_every_index_owned_exactly_once(args):
    lay, p, grid = args
    assert lay.num_locales == p and math.prod(lay.grid) == p
    if grid is not None:
        assert lay.grid == grid
    else:
        assert lay.grid == default_grid(p, len(lay.shape))
    owner = np.full(lay.shape, -1)
    for r in range(p):
        box = np.ix_(*lay.owned(r))
        assert np.all(owner[box] == -1), f"locale {r} owns an element already owned"
        owner[box] = r
        assert tuple(len(o) for o in lay.owned(r)) == lay.local_shape(r)
    assert np.all(owner >= 0)
    assert sum(math.prod(lay.local_shape(r)) for r in range(p)) == math.prod(lay.shape)
    for idx in itertools.islice(np.ndindex(*lay.shape), 200):
        assert lay.owner(idx) == owner[idx]


@given(layouts())
@SETTINGS
def test_layout_local_global_round_trip_and_flat_offsets(args):
    lay, p, _ = args
    for r in range(p):
        shape = lay.local_shape(r)
        for loc in itertools.islice(np.ndindex(*shape), 100):
            g = lay.global_index(r, loc)
            assert lay.owner(g) == r
            assert lay.local_index(g) == loc
    if math.prod(lay.shape):
        idx = np.unravel_index(np.arange(math.prod(lay.shape)), lay.shape)
        owners, flat = lay.owners(idx), lay.local_flat(idx)
        for k, g in enumerate(zip(*idx)):
            r = lay.owner(g)
            assert owners[k] == r
            assert flat[k] == np.ravel_multi_index(lay.local_index(g), lay.local_shape(r))


@given(layouts())
@SETTINGS
def test_layout_owned_ranges_equal_brute_force(args):
    lay, p, _ = args
    for r in range(p):
        from_ranges = tuple(sorted(i for rng in rs for i in rng) for rs in lay.owned_ranges(r))
        assert from_ranges == tuple(sorted(o.tolist()) for o in lay.owned(r))


@given(st.integers(1, 64), st.integers(1, 4))
def test_default_grid_product_and_shape(p, ndim):
    g = default_grid(p, ndim)
    assert len(g) == ndim and math.prod(g) == p
    assert list(g) == sorted(g, reverse=True)
    best = min(max(c) for c in grids(p, ndim))
    assert max(g) == best, f"default grid {g} for {p} locales is not as square as possible"


def test_empty_locales_and_zero_extents():
    lay = Block().bind((2,), 4)
    assert [lay.local_shape(r) for r in range(4)] == [(1,), (1,), (0,), (0,)]
    lay = Cyclic().bind((0, 5), 4)
    assert all(math.prod(lay.local_shape(r)) == 0 for r in range(4))
    assert BlockCyclic(100).bind((7,), 3).local_shape(0) == (7,)


@pytest.mark.parametrize("dist, shape, p, words", [
    (Block(grid=(2, 2)), (4, 4), 3, ["(2, 2)", "3"]),
    (Cyclic(grid=(4, 1)), (8, 8), 2, ["(4, 1)", "2"]),
    (Block(grid=(2,)), (4, 4), 2, ["(2,)", "(4, 4)"]),
    (BlockCyclic(2, grid=(1, 1, 1)), (3, 3), 1, ["(1, 1, 1)", "(3, 3)"]),
    (BlockCyclic((2, 3)), (4,), 1, ["(2, 3)", "(4,)"]),
    (Block(), (2, 2, 2, 2, 2), 1, ["(2, 2, 2, 2, 2)"]),
    (Block(), (), 1, ["()"]),
    (Cyclic(), (3, -1), 1, ["(3, -1)"]),
])
def test_bind_errors_name_the_shape_or_grid(dist, shape, p, words):
    with pytest.raises(DistributionError) as info:
        dist.bind(shape, p)
    for w in words:
        assert w in str(info.value)


@pytest.mark.parametrize("make", [lambda: BlockCyclic(0), lambda: BlockCyclic(-3), lambda: BlockCyclic((2, 0)),
                                  lambda: BlockCyclic(1.5), lambda: Block(grid=(0, 2)), lambda: Cyclic(grid=())])
def test_bad_recipes_raise(make):
    with pytest.raises(DistributionError):
        make()


@pytest.mark.parametrize("args", [(-1, 2, 1), (5, 0, 1), (5, 2, 0)])
def test_dimmap_rejects_bad_arguments(args):
    with pytest.raises(ValueError):
        DimMap(*args)


@pytest.mark.parametrize("module", [pgas.layout.dimmap, pgas.layout.distribution])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0


SETTINGS_grids = settings(max_examples=200, deadline=None)


@st.composite
def bound(draw):
    p = draw(st.integers(1, 9))
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(0, 7), min_size=ndim, max_size=ndim)))
    grid = draw(st.sampled_from([None] + grids(p, ndim)))
    dist = draw(st.sampled_from([Block(grid), Cyclic(grid), BlockCyclic(draw(st.integers(1, 9)), grid),
                                 BlockCyclic(tuple(draw(st.integers(1, 9)) for _ in shape), grid)]))
    return dist.bind(shape, p)


@SETTINGS_grids
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


@pytest.mark.parametrize("shape,p,fixed,want", [((64, 64), 4, None, (2, 2)), ((1024, 16), 4, None, (4, 1)),
                                                ((16, 1024), 4, None, (1, 4)), ((8, 8, 8), 8, None, (2, 2, 2)),
                                                ((64, 64, 64), 4, (None, None, 1), (2, 2, 1)),
                                                ((30, 20), 6, None, (3, 2)), ((5,), 3, None, (3,))])
def test_square_grid_makes_blocks_most_nearly_square(shape, p, fixed, want):
    assert square_grid(shape, p, fixed) == want
    grid = "square" if fixed is None else fixed
    for dist in (Block(grid), Cyclic(grid)):
        assert dist.bind(shape, p).grid == want


def test_square_grid_has_fewest_face_elements():
    for shape, p in [((48, 12), 4), ((6, 100, 10), 8), ((7, 7), 6)]:
        def faces(g):
            local = [-(-n // x) for n, x in zip(shape, g)]
            return sum(math.prod(local[:d] + local[d + 1:]) for d, x in enumerate(g) if x > 1)
        assert faces(square_grid(shape, p)) == min(faces(g) for g in grids(p, len(shape)))


def test_grid_choices_rejected():
    with pytest.raises(DistributionError, match="square"):
        Block(grid="cube")
    with pytest.raises(DistributionError, match="no grid"):
        Block(grid=(None, 3)).bind((8, 8), 4)
    assert repr(Block(grid="square")) == "Block(grid='square')"

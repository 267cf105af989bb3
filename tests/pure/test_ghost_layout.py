"""Pure checks of ghost-cell layouts (no MPI): storage offsets agree everywhere, and the
ghost exchange's sources and readers match on both sides for any grid and width."""


import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pgas.exec.ghostplan import exchange_plan
from pgas.layout import Block
from pgas.layout.distribution import grids


@st.composite
def a_layout(draw):
    ndim = draw(st.integers(1, 3))
    P = draw(st.sampled_from([1, 2, 3, 4, 6, 8, 9]))
    grid = draw(st.sampled_from(grids(P, ndim)))
    shape = tuple(draw(st.lists(st.integers(1, 10), min_size=ndim, max_size=ndim)))
    ghosts = tuple(draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim)))
    return Block(grid).bind(shape, P).with_ghosts(ghosts)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(a_layout())
def test_storage_offsets_agree(L):
    idx = np.indices(L.shape).reshape(L.ndim, -1)
    flat = L.local_flat(tuple(idx))
    for k in range(idx.shape[1]):
        g = tuple(int(x) for x in idx[:, k])
        owner, off = L.locate(g)
        assert owner == L.owner(g) and off == flat[k]
        local = L.local_index(g)
        pad = np.zeros(L.storage_shape(owner), dtype=bool)
        pos = tuple(l + w for l, w in zip(local, L.ghosts or (0,) * L.ndim))
        pad[pos] = True
        assert np.flatnonzero(pad.reshape(-1))[0] == off


@settings(max_examples=25, deadline=None, derandomize=True)
@given(a_layout(), st.booleans(), st.booleans())
def test_exchange_sources_and_readers_match(L, periodic, corners):
    if not L.ghosts:
        return
    P = L.num_locales
    per = (periodic,) * L.ndim
    plans = [exchange_plan(L, r, per, corners) for r in range(P)]
    for r, (by_source, readers) in enumerate(plans):
        sources = {q for q in by_source if q != r}
        for q in sources:
            assert r in plans[q][1], f"{r} reads from {q}, which does not list it as a reader"
        for q in readers:
            assert r in plans[q][0], f"{q} is listed as reading {r} but does not"


def test_with_ghosts_key_and_errors():
    L = Block().bind((8, 8), 4)
    G = L.with_ghosts((1, 2))
    assert G.key != L.key and G.storage_shape(0) == (6, 8) and G.storage_base(0) == 8 + 2
    assert L.with_ghosts((0, 0)) == L and L.storage_base(3) == 0

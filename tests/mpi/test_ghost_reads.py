"""Statements reading ghost cells instead of fetching: after update_ghosts, stencils give
NumPy's answer with fewer messages; after any write (pgas, A.local, a kept view under
PGAS_CHECK) they fetch again or raise, never read stale cells.  1-4 locales."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.exec import settings as engine_settings

from util import assert_matches, collective_verdict, unchecked

StaleGhosts = pg.StaleGhosts

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=15)


def data(shape, seed=0):
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(float)


def stencil(B, A, offsets, g):
    """``B[interior] = sum of A shifted by each offset`` (statement on B and A), the interior
    being the points whose every neighbour lies inside the array, and the NumPy answer."""
    n = A.shape
    reach = [max([abs(o[d]) for o in offsets] + [0]) for d in range(len(n))]
    inner = tuple(slice(r, k - r) for r, k in zip(reach, n))
    if any(k - 2 * r <= 0 for r, k in zip(reach, n)):
        return None

    def shifted(X, o):
        return X[tuple(slice(r + d, k - r + d) for r, d, k in zip(reach, o, n))]

    value = shifted(A, offsets[0])
    for o in offsets[1:]:
        value = value + shifted(A, o)
    B[inner] = value
    want = np.zeros(n)
    want[inner] = sum(shifted(g, o) for o in offsets)
    return want


def run_stencil(B, A, offsets, g):
    """Run the stencil and return its message count, taken with checking off: under
    PGAS_CHECK=1 each ghost read is also fetched, to verify it (the suite runs checked)."""
    with unchecked(), pg.comm_diagnostics() as d:
        want = stencil(B, A, offsets, g)
    if want is not None:
        assert_matches(B, want)
    return d.messages


def garbage_ghosts(A):
    """Fill this locale's ghost cells (not its interior) with values no element has."""
    p = A.local_with_ghosts
    inner = A.local.copy()
    p[...] = 1e6 + pg.here
    A.local[...] = inner


@st.composite
def stencils(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(3, 9)) for _ in range(ndim))
    g = tuple(draw(st.integers(1, 2)) for _ in range(ndim))
    offs = draw(st.lists(st.tuples(*[st.integers(-2, 2)] * ndim), min_size=1, max_size=4, unique=True))
    return shape, g, offs, draw(st.booleans()), draw(st.booleans()), draw(st.booleans())


def servable(offs, g, corners):
    return all(all(abs(x) <= w for x, w in zip(o, g)) and (corners or sum(1 for x in o if x) <= 1)
               for o in offs)


@SETTINGS
@given(stencils())
def test_stencil_reads_ghosts_against_numpy(case):
    shape, g, offs, periodic, corners, ghosted_out = case
    G = data(shape, 1)
    A = pg.from_numpy(G, ghosts=g)
    B = pg.zeros(shape, ghosts=g if ghosted_out else 0)
    garbage_ghosts(A)
    before = run_stencil(B, A, offs, G)                  # no update yet: fetches
    A.update_ghosts(periodic=periodic, corners=corners)
    after = run_stencil(B, A, offs, G)
    collective_verdict(after <= before, f"{after} messages after update_ghosts, {before} before")
    if servable(offs, g, corners):
        collective_verdict(after == 0, f"{after} messages though every footprint lies in the ghosts")
    again = run_stencil(B, A, offs, G)                   # still current: reading B's result wrote B only
    collective_verdict(again == after, f"{again} != {after}")


FIVE = [(-1, 0), (1, 0), (0, -1), (0, 1), (0, 0)]


def setup(shape=(8, 10), g=(1, 1)):
    G = data(shape, 2)
    A = pg.from_numpy(G, ghosts=g)
    B = pg.zeros(shape)
    A.update_ghosts()
    return G, A, B


def fresh(A, G):
    """NumPy's copy of A, after every locale wrote its part of G with A.local."""
    A.local[...] = G[np.ix_(*A.layout.owned(pg.here))]
    A.update_ghosts()


def test_messages_drop_and_come_back():
    G, A, B = setup()
    m = run_stencil(B, A, FIVE, G)
    collective_verdict(m == 0, f"{m} messages with current ghost cells")
    A[1:-1, 1:-1] = A[1:-1, 1:-1] * 2 + 1                # a pgas write: ghosts stale
    G[1:-1, 1:-1] = G[1:-1, 1:-1] * 2 + 1
    m = run_stencil(B, A, FIVE, G)
    collective_verdict(P == 1 or m > 0, "no messages after a write to A")
    A.update_ghosts()
    m = run_stencil(B, A, FIVE, G)
    collective_verdict(m == 0, f"{m} messages after update_ghosts again")


@pytest.mark.parametrize("how", ["local", "local_with_ghosts", "setitem", "put_barrier", "scatter",
                                 "update", "accumulate", "invalidate", "fill_statement", "put_self"])
def test_every_write_stops_ghost_reads(how):
    """After each kind of write, on one locale or all, the stencil gives NumPy's answer."""
    G, A, B = setup()
    run_stencil(B, A, FIVE, G)
    writer = 0
    if how == "local":                                   # only locale 0 writes its block
        if pg.here == writer:
            A.local[...] += 100
        G[np.ix_(*A.layout.owned(writer))] += 100
    elif how == "local_with_ghosts":                     # a view taken: counts as a write
        if pg.here == writer:
            garbage_ghosts(A)                            # its own ghost cells overwritten
    elif how == "setitem":
        A[3, 4] = 77.0
        G[3, 4] = 77.0
    elif how == "put_barrier":                           # one-sided, seen after pg.barrier()
        idx = (G.shape[0] - 1 - pg.here % G.shape[0], pg.here % G.shape[1])
        A.put(idx, 1000.0 + pg.here)
        pg.barrier()
        for r in range(P):
            G[G.shape[0] - 1 - r % G.shape[0], r % G.shape[1]] = 1000.0 + r
    elif how == "scatter":
        mine = pg.here == 0
        A.scatter(np.array([[4, 4]] if mine else np.empty((0, 2), int)), np.full(int(mine), 55.0))
        G[4, 4] = 55.0
    elif how == "update":
        A.update(np.array([[4, 5]]), np.array([1.0]))
        G[4, 5] += P
    elif how == "accumulate":
        A.accumulate_ghosts()                            # adds the ghost copies back, zeroes ghosts
        G = accumulated(G, A.ghosts)
    elif how == "invalidate":
        p = A.local_with_ghosts                          # kept from before update_ghosts
        A.update_ghosts()
        if pg.here == writer:
            p[tuple(slice(g, -g) for g in A.ghosts)] -= 3
            A.invalidate_ghosts()
        G[np.ix_(*A.layout.owned(writer))] -= 3
    elif how == "fill_statement":
        A[:] = 7.0
        G[:] = 7.0
    elif how == "put_self":                              # a one-sided write to its own element
        own = [o[0] for o in A.layout.owned(pg.here)] if A.local.size else None
        if own is not None:
            A.put(tuple(own), -1.0 - pg.here)
        for r in range(P):
            o = A.layout.owned(r)
            if all(len(x) for x in o):
                G[tuple(x[0] for x in o)] = -1.0 - r
    run_stencil(B, A, FIVE, G)
    assert_matches(A, G)


def accumulated(G, g):
    """NumPy's answer of accumulate_ghosts (non-periodic, corners) after update_ghosts:
    every element plus one copy per locale whose ghost cells mirror it."""
    out = G.copy()
    A = pg.zeros(G.shape, ghosts=g)                      # for the layout only
    for r in range(P):
        own = A.layout.owned(r)
        if not all(len(o) for o in own):
            continue
        rng = [range(max(o[0] - w, 0), min(o[-1] + 1 + w, n)) for o, w, n in zip(own, g, G.shape)]
        for idx in itertools.product(*rng):
            if not all(o[0] <= i <= o[-1] for i, o in zip(idx, own)):
                out[idx] += G[idx]
    return out


@pytest.mark.parametrize("periodic", [False, True])
def test_wrapping_access_fetches(periodic):
    """A circular shift written as two statements wraps around the global edge: the wrapped
    part is served from ghost cells only where a periodic update filled them (NumPy's
    answer either way, with garbage in every ghost cell no update filled)."""
    G = data((11,), 3)
    A = pg.from_numpy(G, ghosts=2)
    garbage_ghosts(A)
    A.update_ghosts(periodic=periodic)
    B = pg.zeros(11)
    B[:-2] = A[2:]
    B[-2:] = A[:2]
    assert_matches(B, np.roll(G, -2))
    C = pg.zeros(11)
    C[2:] = A[:-2]
    C[:2] = A[-2:]
    assert_matches(C, np.roll(G, 2))


def test_corners_not_updated_diagonal_fetches():
    G = data((8, 9), 4)
    A = pg.from_numpy(G, ghosts=(1, 1))
    garbage_ghosts(A)
    A.update_ghosts(corners=False)
    B = pg.zeros((8, 9))
    diag = [(-1, -1), (1, 1), (-1, 1), (1, -1)]
    m = run_stencil(B, A, diag, G)
    grid = A.layout.grid
    collective_verdict(sum(1 for p in grid if p > 1) < 2 or m > 0, "no messages for unfilled corners")
    m = run_stencil(B, A, FIVE, G)                       # faces were filled
    collective_verdict(m == 0, f"{m} messages for a 5-point stencil")


def test_explain_says_served_from_ghosts():
    G, A, B = setup()
    f = lambda: stencil(B, A, FIVE, G)                   # noqa: E731
    here = pg.explain(f, locale=pg.here)
    has_fetch = "<- locale" in here
    collective_verdict(not has_fetch or "served from ghost cells, current" in here, here)
    collective_verdict(not has_fetch or ", so 0 messages" in here, here)
    A[:] = A + 1
    here = pg.explain(f, locale=pg.here)
    collective_verdict(not has_fetch or ("but fetched" in here and "so 0 messages" not in here), here)
    other = pg.explain(f, locale=(pg.here + 1) % P)      # another locale's plan: its footprints
    collective_verdict(P == 1 or "ghost width" in other or "<- locale" not in other, other)


def test_check_catches_a_stale_kept_view():
    """A NumPy view of A.local kept from before update_ghosts and written after it cannot be
    seen; under pg.config(check=True) every ghost read is verified by a real fetch, and the
    difference raises StaleGhosts on every locale (no hang).  Then all is usable again."""
    G, A, B = setup()
    kept = A.local if pg.here == 0 else None             # a user's view, kept from before the update
    A.update_ghosts()
    if kept is not None:
        kept += 1000.0                                   # undetectable write through the kept view
    G[np.ix_(*A.layout.owned(0))] += 1000.0
    was = engine_settings.get("check")
    pg.config(check=True)
    try:
        if P > 1:
            with pytest.raises(StaleGhosts, match="kept from before update_ghosts"):
                stencil(B, A, FIVE, G)
        A.update_ghosts()
        with pg.comm_diagnostics():
            want = stencil(B, A, FIVE, G)                # verified, correct, no error
        assert_matches(B, want)
    finally:
        pg.config(check=was)
    A.update_ghosts()
    m = run_stencil(B, A, FIVE, G)
    collective_verdict(m == 0, f"{m}")


@pytest.mark.parametrize("n,g", [(13, 1), (7, 2), (3, 3)])
def test_arange_with_ghosts(n, g):
    A = pg.arange(2, 2 + 3 * n, 3, dtype=float, ghosts=g)
    want = np.arange(2, 2 + 3 * n, 3, dtype=float)
    assert_matches(A, want)
    collective_verdict(A.ghosts == (g,) and A.dtype == want.dtype, f"{A.ghosts} {A.dtype}")
    A.update_ghosts(periodic=True)
    p = A.local_with_ghosts
    own = A.layout.owned(pg.here)[0]
    ok = not own.size or np.array_equal(p, want[np.arange(own[0] - g, own[-1] + 1 + g) % n])
    collective_verdict(ok, f"padded block {p}")
    A.update_ghosts()
    B = pg.zeros(n, dtype=A.dtype)
    m = run_stencil(B, A, [(-1,), (1,)], want)
    collective_verdict(m == 0, f"{m} messages")

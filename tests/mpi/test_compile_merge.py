"""A compiled step's merged exchanges (pgas.exec.merged): replays with the halo transfers of
consecutive statements merged are bit-identical to the statements run one by one, also
where merging is not allowed (a statement writes a region that a later one's messages
carry: the later one sees the new values); the runs are named by ``pg.explain``; one
message per peer pair where statements share a halo."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from test_compile import _fdtd, _jacobi
from util import collective_verdict

import pgas as pg
from pgas.array.step import replay
from pgas.comm import check
from pgas.exec import merged

N = 14
DISTS = {"block": pg.Block, "cyclic": pg.Cyclic}


@pytest.fixture(autouse=True)
def _defaults():
    pg.config(protocol="auto")        # the persistent path, which merging applies to
    yield
    replay.MERGE = True
    pg.config()


def _arrays(seed: int, k: int, dist: str):
    rng = np.random.default_rng(seed)
    return [pg.from_numpy(rng.random((N, N)), dist=DISTS[dist]()) for _ in range(k)]


def _same(got, want, what: str) -> None:
    g = [a.to_numpy() for a in got]
    w = [a.to_numpy() for a in want]
    collective_verdict(all(np.array_equal(x, y) for x, y in zip(g, w)),
                       lambda: f"{what}: merged replays and statements one by one differ")


def _merging() -> bool:
    """Whether replays run by the persistent path here (strict checking runs each statement the usual way)."""
    return not check.enabled


def _shared(A, B, C, c):
    """Two statements reading A's halo, then one reading two arrays' halos: one exchange."""
    B[1:-1, :] = A[:-2, :] + A[2:, :]
    C[1:-1, :] = c * (A[:-2, :] - A[2:, :])
    A[1:-1, 1:-1] = A[1:-1, 1:-1] + 0.5 * (B[2:, 1:-1] + C[:-2, 1:-1])


def _unsafe(A, B, C, c):
    """A statement writes the rows of A that the next reads across the blocks' borders:
    the next one's messages must carry the new values (no merging there)."""
    B[1:-1, :] = A[:-2, :] + A[2:, :]
    A[:, :] = c * B[:, :] - A[:, :]
    C[1:-1, :] = A[:-2, :] - A[2:, :]
    A[N // 2, :] = c                                  # a row at a block border
    B[1:-1, :] = B[1:-1, :] + A[:-2, :] * A[2:, :]


CASES = {"fdtd": (_fdtd, 3), "jacobi": (_jacobi, 2), "shared": (_shared, 3), "unsafe": (_unsafe, 3)}


@pytest.mark.parametrize("dist", sorted(DISTS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_merged_replays_bit_identical(case, dist):
    fn, k = CASES[case]
    got, off, want = _arrays(1, k, dist), _arrays(1, k, dist), _arrays(1, k, dist)
    step = pg.compile(fn)
    unmerged = pg.compile(fn)
    runs = merged.stats["runs"]
    for t in range(6):
        c = 0.25 + 0.125 * (t % 3)
        replay.MERGE = True
        step(*got, c)
        replay.MERGE = False
        unmerged(*off, c)
        fn(*want, c)
    replay.MERGE = True
    _same(got, want, case)
    _same(off, want, case + " (unmerged)")
    assert step.stats["records"] == 1 and step.stats["replays"] == 5
    if _merging() and case == "shared" and pg.num_locales > 1:
        assert merged.stats["runs"] > runs, pg.explain(step)
        assert "statements 1-2: one exchange" in pg.explain(step)


def test_explain_names_the_runs_and_why_they_end():
    A, B, C = _arrays(2, 3, "block")
    step = pg.compile(_unsafe)
    for _ in range(3):
        step(A, B, C, 0.5)
    text = pg.explain(step)
    if _merging():
        if pg.num_locales > 1:
            # statement 2 reads B where 1 writes it, but on its own locale (no message): it joins;
            # statement 3's messages carry A, which 2 writes; 5's the row of A that 4 writes
            assert "statements 1-2: " in text, text
            assert "statements 3-4: " in text and "statement 3 reads" in text and "where statement 2 writes it" in text
            assert "statement 5: " in text and "statement 5 reads" in text and "where statement 4 writes it" in text
        else:
            assert "statements 1-5: their own exchanges: nothing to merge" in text, text
    replay.MERGE = False
    assert "merging is off" in pg.explain(step)


def _per_call(step, args) -> np.ndarray:
    with pg.comm_diagnostics() as d:
        step(*args)
    return d.matrix


@pytest.mark.parametrize("dist", sorted(DISTS))
def test_one_message_per_peer_pair_where_statements_share_a_halo(dist):
    A, B, C = _arrays(3, 3, dist)
    step = pg.compile(_shared)
    for _ in range(3):
        step(A, B, C, 0.5)
    m = _per_call(step, (A, B, C, 0.5))
    text = pg.explain(step)
    replay.MERGE = False
    step(A, B, C, 0.5)
    m0 = _per_call(step, (A, B, C, 0.5))
    if pg.num_locales == 1:
        assert m.sum() == 0 and m0.sum() == 0
    elif _merging():
        assert "statements 1-2: one exchange" in text, text
        # statements 1-2 share one message per pair (A's halo twice); 3 reads B and C, which
        # they write: a second exchange, B's and C's halos in one message where one peer sends both
        assert m.max() == 2 and m0.max() >= 3, (m, m0)
        assert ((m > 0) == (m0 > 0)).all()                 # the same pairs, fewer messages
        assert m.sum() < m0.sum()


def test_fdtd_one_message_per_peer_pair_and_round():
    ex, ey, hz = _arrays(4, 3, "block")
    step = pg.compile(_fdtd)
    for t in range(3):
        step(ex, ey, hz, float(t))
    runs = merged.stats["runs"]
    m = _per_call(step, (ex, ey, hz, 1.0))
    rounds = merged.stats["runs"] - runs
    text = pg.explain(step)
    replay.MERGE = False
    m0 = _per_call(step, (ex, ey, hz, 1.0))
    assert m.max() <= 1 and (m == m0).all(), (m, m0)
    if _merging():
        # ey and ex read hz (rows and columns), hz reads ey and ex, which they write: two runs;
        # the first merges where both ey and ex move hz's halo (a 2 x 2 grid; on a row of
        # locales only ey does, and there is nothing to merge)
        assert "a new run starts here: statement 4 reads" in text or pg.num_locales == 1, text
        grid = pg.num_locales == 4
        assert ("statements 1-3: one exchange" in text) == grid and rounds == int(grid), text


_SLICES = [(slice(1, None), slice(None)), (slice(None, -1), slice(None)), (slice(1, -1), slice(1, -1)),
           (slice(None), slice(None)), (slice(N // 2, N // 2 + 1), slice(None)), (slice(None), slice(1, None))]
_READS = [[(slice(None, -1), slice(None)), (slice(1, None), slice(None))],
          [(slice(1, None), slice(None)), (slice(None, -1), slice(None))],
          [(slice(2, None), slice(1, -1)), (slice(None, -2), slice(1, -1)), (slice(1, -1), slice(2, None))],
          [(slice(None), slice(None))],
          [(slice(N // 2 - 1, N // 2), slice(None)), (slice(N // 2 + 1, N // 2 + 2), slice(None))],
          [(slice(None), slice(None, -1))]]

_stmt = st.tuples(st.integers(0, 2), st.integers(0, len(_SLICES) - 1), st.integers(0, 2), st.integers(0, 2),
                  st.integers(0, 2), st.booleans())


def _program(stmts):
    def fn(A, B, C, p):
        arrays = (A, B, C)
        for tgt, s, r1, r2, shift, fill in stmts:
            if fill:
                arrays[tgt][_SLICES[s]] = p
                continue
            reads = _READS[s]
            arrays[tgt][_SLICES[s]] = p * arrays[r1][reads[shift % len(reads)]] - arrays[r2][reads[(shift + 1) % len(reads)]]
    return fn


@hsettings(max_examples=15, derandomize=True, database=None, deadline=None)
@given(stmts=st.lists(_stmt, min_size=2, max_size=6), k=st.sampled_from([2, 3]), dist=st.sampled_from(sorted(DISTS)))
def test_random_steps_merged_bit_identical(stmts, k, dist):
    stmts = [(t % k, s, a % k, b % k, sh, f) for t, s, a, b, sh, f in stmts]
    fn = _program(stmts)
    step = pg.compile(fn)
    got, want = _arrays(5, k, dist), _arrays(5, k, dist)
    got += [got[0]] * (3 - k)                          # (2 arrays: the third argument is the first)
    want += [want[0]] * (3 - k)
    for p in (0.5, 0.5, 1.5, 0.75, 0.5, -1.0):
        step(*got, p)
        fn(*want, p)
    _same(got, want, f"statements {stmts} on {k} arrays, {dist}")

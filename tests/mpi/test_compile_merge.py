"""A compiled step's merged exchanges (pgas.exec.merged): replays with the halo transfers of
consecutive statements merged are bit-identical to the statements run one by one, also
where merging is not allowed (a statement writes a region that a later one's messages
carry: the later one sees the new values); the runs are named by ``pg.explain``; one
message per peer pair where statements share a halo; a run repeated by what its last run
kept (``pgas.exec.merged.Kept``: nothing looked up) gives the same bits, and steps aside
when the settings, the kernels, a binding or an argument array change."""

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


@pytest.mark.parametrize("fuse", ["auto", True])
@pytest.mark.parametrize("dist", sorted(DISTS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_merged_replays_bit_identical(case, dist, fuse):
    """(fuse=True: kernels made at once, so the merged runs repeat by what they keep, while the
    unmerged step runs the same compiled forms on other arrays in between)"""
    pg.config(protocol="auto", fuse=fuse)
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


def _program(stmts, const: bool = False):
    """The step of ``stmts``; ``const``: the statements that read scale by a constant, not the
    parameter (their kernel calls are kept: merged runs repeat with nothing looked up)."""
    def fn(A, B, C, p):
        arrays = (A, B, C)
        c = 0.75 if const else p
        for tgt, s, r1, r2, shift, fill in stmts:
            if fill:
                arrays[tgt][_SLICES[s]] = p
                continue
            reads = _READS[s]
            arrays[tgt][_SLICES[s]] = c * arrays[r1][reads[shift % len(reads)]] - arrays[r2][reads[(shift + 1) % len(reads)]]
    return fn


@hsettings(max_examples=15, derandomize=True, database=None, deadline=None)
@given(stmts=st.lists(_stmt, min_size=2, max_size=6), k=st.sampled_from([2, 3]), dist=st.sampled_from(sorted(DISTS)),
       const=st.booleans())
@pytest.mark.parametrize("fuse", ["auto", True])
def test_random_steps_merged_bit_identical(stmts, k, dist, const, fuse):
    pg.config(protocol="auto", fuse=fuse)     # (fuse=True: every kernel made at once, so runs are kept)
    stmts = [(t % k, s, a % k, b % k, sh, f) for t, s, a, b, sh, f in stmts]
    fn = _program(stmts, const)
    step = pg.compile(fn)
    got, want = _arrays(5, k, dist), _arrays(5, k, dist)
    got += [got[0]] * (3 - k)                          # (2 arrays: the third argument is the first)
    want += [want[0]] * (3 - k)
    for p in (0.5, 0.5, 1.5, 0.75, 0.5, -1.0):
        step(*got, p)
        fn(*want, p)
    _same(got, want, f"statements {stmts} on {k} arrays, {dist}")


def _halo(A, B, C, c):
    """Two statements reading A's halo (one exchange), a fill of the parameter, then one
    reading B's and C's halos, which the first two write (a second exchange): no statement
    that reads has a parameter, so every one keeps its kernel calls."""
    B[1:-1, :] = A[:-2, :] + A[2:, :]
    C[1:-1, :] = 0.5 * (A[:-2, :] - A[2:, :])
    A[0, :] = c
    A[1:-1, 1:-1] = A[1:-1, 1:-1] + 0.25 * (B[2:, 1:-1] + C[:-2, 1:-1])


def _held(step) -> list:
    """Per run of a merging replay (a merged run or a statement), whether it holds its repeat."""
    prog = next(iter(step.programs.values()))
    return [u[3] is not None for u in prog.units]


def test_kept_merged_runs_repeat_bit_identical_and_step_aside():
    """A merged run whose statements keep their kernel calls (or a fill's views) repeats by
    them and its exchange with nothing looked up, bit-identical to the statements run one by
    one; it steps aside to the usual way, with the same values, when the settings, the
    kernels, the thread count, a statement's binding or its compiled form change, and is
    held again after; an argument array replaced by another binds the new one (the old one
    is left as it was)."""
    from pgas.exec import fuse, persistent, threads
    pg.config(fuse=True, protocol="auto")
    got, want = _arrays(7, 3, "block"), _arrays(7, 3, "block")
    step = pg.compile(_halo)
    c = [0.5]

    def run(k=3):
        for _ in range(k):
            c[0] = 1.0 - c[0] / 2
            step(*got, c[0])
            _halo(*want, c[0])
        _same(got, want, "halo by kept merged runs")
    run()
    prog = next(iter(step.programs.values()))
    if check.enabled or pg.num_locales == 1:       # strict checking: the usual way; one locale: nothing merges
        assert not prog.merging or check.enabled
        return
    assert prog.merging and _held(step) == [True] * len(prog.units), pg.explain(step)
    assert "statements 1-3: one exchange" in pg.explain(step)
    assert "repeated with nothing looked up" in pg.explain(step)
    repeats, made, fast = merged.stats["repeats"], merged.stats["kept"], step.stats["fast"]
    run(2)
    assert merged.stats["repeats"] - repeats == 2 * len(prog.units) and merged.stats["kept"] == made
    assert step.stats["fast"] - fast == 2 * 4
    # B replaced by another array of the same layout: the runs bind it, the old B is left alone
    old = got[1].to_numpy()
    fresh = _arrays(8, 1, "block")[0]
    plain = pg.from_numpy(fresh.to_numpy(), dist=pg.Block())
    made = merged.stats["kept"]
    for _ in range(3):
        step(got[0], fresh, got[2], 0.25)
        _halo(want[0], plain, want[2], 0.25)
    _same([got[0], fresh, got[2]], [want[0], plain, want[2]], "halo with B replaced")
    collective_verdict(np.array_equal(got[1].to_numpy(), old), lambda: "the replaced array was written")
    assert merged.stats["kept"] > made and _held(step) == [True] * len(prog.units)
    got[1], want[1] = fresh, plain
    others = [pg.from_numpy(np.ones((N, N)), dist=pg.Block()) for _ in range(3 * persistent.BINDINGS)]
    changes = [lambda: pg.config(fuse=True, protocol="auto"),       # the settings' version
               fuse.reset,                                           # kernels forgotten
               lambda: threads.apply((threads.limit() or 1) + 1),   # another thread count
               lambda: [_halo(*others[3 * j:3 * j + 3], 0.5) for j in range(persistent.BINDINGS)],
               persistent.clear]                                    # bindings evicted; compiled forms freed
    limit = threads.limit()
    try:
        for change in changes:
            made = merged.stats["kept"]
            change()
            run(1)
            run(3)
            assert _held(step) == [True] * len(prog.units) and merged.stats["kept"] > made
    finally:
        if limit is not None:
            threads.apply(limit)


def test_kept_merged_runs_once_kernels_are_made_later():
    """Under ``fuse="auto"`` kernels are made after their programs have put enough elements
    through NumPy: a merged run is held once every statement's binding keeps its calls, and
    from then on every replay repeats it (fdtd-2d at 4 locales merges ey's, ex's and the
    fill's messages; the other statements repeat alone)."""
    from pgas.exec import fuse, settings
    pg.config(protocol="auto", fuse="auto")
    if check.enabled or fuse.load_numba() is None or settings.get("fuse") != "auto":
        pytest.skip("strict checking, or no kernels, runs every statement the usual way")
    rng = np.random.default_rng(9)
    data = [rng.random((48, 48)) for _ in range(3)]
    got = [pg.from_numpy(d) for d in data]
    want = [pg.from_numpy(d) for d in data]
    step = pg.compile(_fdtd)
    for t in range(120):
        step(*got, float(t))
    for t in range(120):
        _fdtd(*want, float(t))
    _same(got, want, "fdtd with kernels made on the way")
    step(*got, 0.25)                               # (a kernel the plain runs made: held from this call)
    _fdtd(*want, 0.25)
    prog = next(iter(step.programs.values()))
    repeats = merged.stats["repeats"]
    for t in range(5):
        step(*got, 0.5 * t)
        _fdtd(*want, 0.5 * t)
    _same(got, want, "fdtd by kept merged runs")
    if prog.merging:
        assert _held(step) == [True] * len(prog.units)
        assert merged.stats["repeats"] - repeats == 5 * len(prog.units)


def _two_halos(A, B, C):
    B[1:, :] = A[:-1, :] + 1.0
    C[1:, :] = A[:-1, :] * 0.5


def test_merged_run_within_a_small_budget(monkeypatch):
    """With room for about one statement's buffers (KEEP_BYTES), building one member of a merged
    run does not free another's, which the run's exchange reads: the replays give the statements'
    values one by one (a merged exchange read a freed member's buffers at 3 locales)."""
    from pgas.exec import persistent
    pg.config(protocol="auto", fuse=True)
    rng = np.random.default_rng(3)
    data = [rng.random((8, 64)) for _ in range(3)]
    got = [pg.from_numpy(a) for a in data]
    want = [pg.from_numpy(a) for a in data]
    persistent.clear()
    monkeypatch.setattr(persistent, "KEEP_BYTES", 1500)   # a row is 512 bytes
    try:
        step = pg.compile(_two_halos)
        for _ in range(4):
            step(*got)
        for _ in range(4):
            _two_halos(*want)
        _same(got, want, "merged runs within a small budget")
    finally:
        persistent.clear()


def _halos_then_local(A, B, C, D):
    B[1:, :] = A[:-1, :] + 1.0
    C[1:, :] = A[:-1, :] * 0.5
    D[2:, :] = A[:-2, :] - 1.0
    C[:, 1:] = C[:, 1:] * 0.5
    A[:, 1:] = A[:, 1:] * 0.5 + B[:, 1:] * 0.25


def _shift_into(A, D):
    D[1:, :] = A[:-1, :] * 2.0
    D[:-2, :] = D[2:, :] + A[:-2, :]


@pytest.mark.parametrize("merge, keep", [(True, 2700), (False, 1100)])
def test_locales_that_free_compiled_forms_differently(monkeypatch, merge, keep):
    """The bytes a compiled form holds differ by locale (7 rows over 3 locales: uneven
    blocks), so a budget (KEEP_BYTES) frees forms on some locales only, also between the
    step's calls (plain statements built in between): within one replay a locale runs a
    statement or a merged run by its kept repeat while another builds and runs it the usual
    way; both send the same messages of the same plan, and the values are those of the
    statements run one by one (no hang, no mismatch)."""
    from pgas import comm
    from pgas.exec import persistent
    pg.config(fuse=True)
    replay.MERGE = merge
    got, want = _seven_row_copies()
    persistent.clear()
    monkeypatch.setattr(persistent, "KEEP_BYTES", keep)     # a row is 512 bytes
    repeats = merged.stats["repeats"]
    try:
        step = pg.compile(_halos_then_local)
        for t in range(8):
            step(*got[:4])
            if t % 3 == 1:
                _shift_into(got[0], got[4])
        _plain_with_shifts(want, 8)
        _same(got, want, "locales that free compiled forms differently")
        ran = comm.allgather((step.stats["fast"], merged.stats["repeats"] - repeats))
        if pg.num_locales == 3 and not check.enabled:     # (the case made for: the paths differ)
            collective_verdict(len(set(ran)) > 1, f"every locale took the same paths: {ran}")
    finally:
        persistent.clear()


def _seven_row_copies():
    """Five random 7 x 64 arrays (uneven blocks over 3 locales) twice over: a step's and the
    plain function's."""
    rng = np.random.default_rng(7)
    data = [rng.random((7, 64)) for _ in range(5)]
    return [pg.from_numpy(a) for a in data], [pg.from_numpy(a) for a in data]


def _plain_with_shifts(arrays, calls: int) -> None:
    """``_halos_then_local`` called plainly ``calls`` times on ``arrays``, with a shift between
    as the compiled runs have it."""
    for t in range(calls):
        _halos_then_local(*arrays[:4])
        if t % 3 == 1:
            _shift_into(arrays[0], arrays[4])


def test_merging_turned_on_after_repeats_freed_on_some_locales(monkeypatch):
    """A step that held repeats with merging off, replayed with merging on: the runs are made
    (one reduction) on every locale, also where one locale replays by its repeats and another
    runs the statements the usual way, its repeat freed there alone (a hang: the locale that
    ran the usual way reduced alone)."""
    from pgas.exec import persistent
    pg.config(fuse=True)
    got, want = _seven_row_copies()
    persistent.clear()
    monkeypatch.setattr(persistent, "KEEP_BYTES", 1100)     # (7 rows over 3 locales: freed on some only)
    replay.MERGE = False
    try:
        step = pg.compile(_halos_then_local)
        for t in range(6):
            replay.MERGE = t >= 4
            step(*got[:4])
            if t % 3 == 1:
                _shift_into(got[0], got[4])
        _plain_with_shifts(want, 6)
        _same(got, want, "merging turned on after repeats freed on some locales")
    finally:
        persistent.clear()

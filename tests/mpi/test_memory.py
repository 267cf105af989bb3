"""Peak resident memory: constructors and the first run of a statement make no temporary of
the data's size.

Each case's peak resident memory per locale (reset before it through
``/proc/self/clear_refs``, as ``pgas bench memory`` measures) stays within the locale's data
plus a fixed bound (less the pages of other locales' windows it maps by reading them through
shared memory: ``pgas.tools.bench.memory.own``), on arrays of 64 MiB (random numbers: 32 MiB; a full-size temporary at 1 or 2 locales is 32 MiB
or more, twice the bound); a full copy measured the same way exceeds it, so the measurement
sees what it guards.  The values are NumPy's, also for statements evaluated box by box
(forced on small arrays by shrinking the box)."""

import numpy as np
import pytest
from util import assert_matches, check_exactly, collective_verdict

import pgas as pg
from pgas import comm
from pgas.exec import tasks
from pgas.tools.bench import memory

pytestmark = pytest.mark.skipif(not memory.supported(), reason="needs Linux's /proc/self/clear_refs")

SHAPE = (4096, 2048)                 # float64: 64 MiB
MIB = 1 << 20
BOUND = 16 * MIB                     # boxes of 2 MiB, a few at a time, and slack


def _within(case, got, data, made=0, before=0):
    """Collective: the peak (``got``: what ``memory.measure`` gave; less the pages of other
    locales' windows mapped, ``memory.own``, beyond the ``made`` bytes of new windows) stays
    within this locale's data plus :data:`BOUND` on every locale."""
    _, grown, shared = got
    peak = memory.own(grown, shared, made) + before
    collective_verdict(peak - data <= BOUND, f"{case}: peak {peak / MIB:.1f} MiB for "
                                             f"{data / MIB:.1f} MiB of data (bound: data + {BOUND / MIB:.0f} MiB)")


def _nbytes(*arrays):
    return sum(a.local.nbytes for a in arrays)


CONSTRUCTORS = {
    "zeros": (lambda: pg.zeros(SHAPE), lambda: np.zeros(SHAPE)),
    "ones": (lambda: pg.ones(SHAPE, dist=pg.Cyclic()), lambda: np.ones(SHAPE)),
    "full": (lambda: pg.full(SHAPE, 2.5), lambda: np.full(SHAPE, 2.5)),
    "full of a row": (lambda: pg.full(SHAPE, np.arange(SHAPE[1], dtype=float)),
                      lambda: np.full(SHAPE, np.arange(SHAPE[1], dtype=float))),
    "arange": (lambda: pg.arange(SHAPE[0] * SHAPE[1], dtype=np.float64),
               lambda: np.arange(SHAPE[0] * SHAPE[1], dtype=np.float64)),
    "random": (lambda: pg.random.default_rng(3).random((2048, 2048)), None),   # 32 MiB: drawing is slow
    "random on Cyclic": (lambda: pg.random.default_rng(3).random((2048, 2048), dist=pg.Cyclic()), None),
}


@pytest.mark.parametrize("case", list(CONSTRUCTORS))
def test_constructor_peak_is_data_plus_bound(case):
    make, want = CONSTRUCTORS[case]
    got = memory.measure(make)
    a = got[0]
    _within(case, got, _nbytes(a), _nbytes(a))
    if case == "arange":                             # the values, on the elements each locale owns
        assert_matches(a, want())
    elif want is not None:                           # (the random values: tests/mpi/test_random.py)
        w = want()
        collective_verdict(np.array_equal(a.local, w[a.layout.owned_key(comm.here())]), f"{case}: values differ")


def test_from_numpy_and_like_peak_is_data_plus_bound():
    g = np.random.default_rng(0).random(SHAPE)
    got = memory.measure(lambda: pg.from_numpy(g, dist=pg.BlockCyclic(7)))
    a = got[0]
    _within("from_numpy", got, _nbytes(a), _nbytes(a))
    collective_verdict(np.array_equal(a.local, g[a.layout.owned_key(comm.here())]), "from_numpy: values differ")
    got = memory.measure(lambda: pg.full_like(a, 4.0))
    _within("full_like", got, _nbytes(got[0]), _nbytes(got[0]))


def test_first_run_of_a_stencil_peak_is_data_plus_bound():
    g = np.random.default_rng(1).random(SHAPE)
    A, B = pg.from_numpy(g), pg.zeros(SHAPE)
    got = memory.measure(lambda: B.__setitem__((slice(1, -1), slice(1, -1)), 0.25 * (        # fuse="auto":
        A[1:-1, :-2] + A[1:-1, 2:] + A[:-2, 1:-1] + A[2:, 1:-1])))                            # the NumPy path
    _within("jacobi, first run", got, _nbytes(A, B), 0, _nbytes(A, B))
    want = np.zeros(SHAPE)
    want[1:-1, 1:-1] = 0.25 * (g[1:-1, :-2] + g[1:-1, 2:] + g[:-2, 1:-1] + g[2:, 1:-1])
    collective_verdict(np.array_equal(B.local, want[B.layout.owned_key(comm.here())]), "jacobi: values differ")


def test_a_full_copy_exceeds_the_bound():
    A = pg.ones(SHAPE)               # (a copy of 64 MiB: beyond what malloc serves from memory already resident)
    _, grown, shared = memory.measure(lambda: A.to_numpy())
    least = comm.allreduce(np.int64(memory.own(grown, shared) - BOUND), "min")
    collective_verdict(least > 0, f"a global copy of {A.size * A.dtype.itemsize / MIB:.1f} MiB grew the peak by {grown / MIB:.1f} MiB")


@pytest.fixture
def small_boxes(monkeypatch):
    """Statements take the box-by-box NumPy path on small arrays (boxes of 5 elements)."""
    monkeypatch.setattr(tasks, "STRIP", 5)
    monkeypatch.setattr(tasks, "LARGE", 7)
    pg.config(fuse=False)
    yield
    pg.config()


@pytest.mark.parametrize("dist", [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3)], ids=repr)
def test_statements_by_boxes_give_numpy_values(small_boxes, dist):
    rng = np.random.default_rng(2)
    g, h = rng.random((13, 11)), rng.random((13, 11))
    A, B = pg.from_numpy(g, dist=dist), pg.from_numpy(h, dist=dist)
    I32 = pg.zeros((13, 11), dtype=np.int32, dist=dist)
    B[1:-1, 1:-1] = 0.25 * (A[1:-1, :-2] + A[1:-1, 2:] + A[:-2, 1:-1] + A[2:, 1:-1])   # stored box by box
    h[1:-1, 1:-1] = 0.25 * (g[1:-1, :-2] + g[1:-1, 2:] + g[:-2, 1:-1] + g[2:, 1:-1])
    check_exactly(B, h, "stencil")
    A[1:-1, 1:-1] = A[:-2, 1:-1] * 2 + A[2:, 1:-1]                                    # reads what it writes
    g[1:-1, 1:-1] = g[:-2, 1:-1] * 2 + g[2:, 1:-1]
    check_exactly(A, g, "aliased")
    row = np.arange(11.0)
    B[...] = np.sqrt(A) - row                                                         # a replicated operand
    h[...] = np.sqrt(g) - row
    check_exactly(B, h, "replicated operand")
    I32[...] = A * 100 + 0.5                                                          # cast on storing
    check_exactly(I32, (g * 100 + 0.5).astype(np.int32), "int32 target")
    B[::2] += A[::2] * A[::2]
    h[::2] += g[::2] * g[::2]
    check_exactly(B, h, "in-place add")


def test_random_values_dealt_in_rounds_are_the_reference(monkeypatch):
    monkeypatch.setattr(pg.random, "ROUND", 1)        # one chunk per exchange: several rounds here
    got = pg.random.default_rng(5).standard_normal((300, 211), dist=pg.Cyclic())
    assert_matches(got, pg.random.reference(5, 0, (300, 211), "standard_normal"))

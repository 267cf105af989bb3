"""A compiled step's chains (pgas.exec.chain): consecutive statements that each run one
row kernel with no message, replayed as one compiled call interleaved by rows, give
NumPy's values bit for bit, whatever the statements read and write (shifted reads of
what an earlier statement wrote, overwrites of what it reads, one array passed twice,
strided and transposed views, 1-D and 3-D arrays); the chains are named by
``pg.explain``, dropped when the arrays change, and a pending expression still sees the
values from before the step."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from test_compile import _fdtd
from util import collective_verdict

import pgas as pg
from pgas.array.step import replay
from pgas.comm import check
from pgas.exec import chain, workers

pytest.importorskip("numba")

N = 12
P = pg.num_locales


@pytest.fixture(autouse=True)
def _chains_at_once(monkeypatch):
    """Chains made on the first replay by kept repeats, each statement advancing by one
    row at a time (small arrays would otherwise run whole, one statement after another)."""
    monkeypatch.setattr(replay, "CHAIN_AFTER", 1)
    monkeypatch.setattr(chain, "CHUNK_BYTES", 1)
    pg.config(protocol="auto", fuse=True, threads=1)
    yield
    pg.config()


def _jacobi(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def _both(data, dist=None):
    """The arrays as NumPy copies and as DistArrays (``dist``: the default, or rows only)."""
    kw = {} if dist is None else {"dist": dist}
    return [d.copy() for d in data], [pg.from_numpy(d, **kw) for d in data]


def _same(got, want, what) -> None:
    g = [a.to_numpy() for a in got]
    collective_verdict(all(np.array_equal(x, y, equal_nan=True) for x, y in zip(g, want)),
                       lambda: f"{what}: chained replay differs from NumPy "
                               f"{[int((x != y).sum()) for x, y in zip(g, want)]}")


def _replay(fn, got, want, calls: int = 5, extra=()):
    step = pg.compile(fn)
    for _ in range(calls):
        step(*got, *extra)
        fn(*want, *extra)
    return step


def test_jacobi_chained_at_one_locale():
    rng = np.random.default_rng(1)
    want, got = _both([rng.random((N, N)) for _ in range(2)])
    before = chain.stats["runs"]
    step = _replay(_jacobi, got, want, 6)
    _same(got, want, "jacobi")
    if P == 1:
        text = pg.explain(step)
        collective_verdict(chain.stats["runs"] > before and "statements 1-2: one call" in text
                           and "statement 2 waits on 1 (lag 1)" in text, text)


def test_fdtd_chained_at_one_locale():
    rng = np.random.default_rng(2)
    want, got = _both([rng.random((N, N + 3)) for _ in range(3)])
    before = chain.stats["runs"]
    step = pg.compile(_fdtd)
    for t in range(6):
        step(*got, float(t))
        _fdtd(*want, float(t))
    _same(got, want, "fdtd")
    if P == 1:
        text = pg.explain(step)
        collective_verdict(chain.stats["runs"] > before and "statements 2-4: one call" in text, text)


def _local(A, B, C):
    B[:, :] = A[:, :] * 2.0 + C[:, :]
    C[:, :] = B[:, :] - A[:, :] * 0.5
    A[:, :] = C[:, :] * B[:, :]


def test_statements_without_messages_chain_at_every_locale_count():
    """Elementwise statements over arrays of one layout send nothing: they chain on every
    locale, also when the arrays change between calls (the chain is made again); not
    under strict collective checking, which runs every statement the usual way."""
    rng = np.random.default_rng(3)
    want, got = _both([rng.random((N + 1, N)) for _ in range(3)])
    before = chain.stats["runs"]
    step = _replay(_local, got, want, 5)
    want2, got2 = _both([rng.random((N + 1, N)) for _ in range(3)])
    for _ in range(4):
        step(*got2)
        _local(*want2)
    _same(got + got2, want + want2, "elementwise")
    mine = chain.stats["runs"] - before
    collective_verdict(mine >= 4 or check.enabled or min(a.to_numpy().size for a in got) == 0,
                       f"{mine} chained runs")   # (strict checking: every statement the usual way)


def _scaled(A, B, C, c, d):
    B[1:-1] = A[1:-1] * c
    C[1:-1] = B[1:-1] + d
    A[1:-1] = C[1:-1] * c - B[1:-1]


def test_statements_with_scalar_arguments_chain_while_their_values_stay():
    """A statement with a scalar argument replays by the kernel calls it kept while the call
    passes the values they were made with (chained with its neighbours), and the usual way
    when another value comes (then never chained again): NumPy's values throughout."""
    rng = np.random.default_rng(5)
    want, got = _both([rng.random((N + 1, N)) for _ in range(3)])
    before = chain.stats["runs"]
    step = pg.compile(_scaled)
    for c, d in [(0.5, 0.25)] * 4 + [(0.5, 0.75), (0.5, 0.75), (1.5, 0.75), (0.5, 0.25)]:
        step(*got, c, d)
        _scaled(*want, c, d)
    _same(got, want, "scalar arguments")
    if not check.enabled:                          # (strict checking: every statement the usual way)
        mine = chain.stats["runs"] - before
        collective_verdict(mine >= 2 and step.stats["fast"] == 3 * 7, f"{mine} chained runs, {step.stats}")


def test_pending_expression_sees_the_values_before_the_step():
    rng = np.random.default_rng(4)
    want, got = _both([rng.random((N, N)) for _ in range(2)])
    step = _replay(_jacobi, got, want, 4)
    pending = got[0] + got[1]                 # (evaluated lazily: before the step writes A or B)
    expect = want[0] + want[1]
    step(*got)
    _jacobi(*want)
    _same(got + [pending], want + [expect], "pending expression")


# -- random statement sequences ------------------------------------------------------------
# per statement: target array, two read arrays, their regions, a constant, the target region
_REGIONS = ["1:-1, 1:-1", ":-2, 1:-1", "2:, 1:-1", "1:-1, :-2", "1:-1, 2:", "1:-1, :", "T", "1:-1:2, 1:-1",
            "1:-1, 1:-1:2"]
_TARGETS = _REGIONS[:5]                       # shifted against each other: overwrites in either order
_stmt = st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2), st.integers(0, len(_REGIONS) - 1),
                  st.integers(0, len(_REGIONS) - 1), st.sampled_from([0.5, -2.0, 3.0]),
                  st.integers(0, len(_TARGETS) - 1))


def _shape(region: str) -> tuple:
    """The shape of ``region`` of an N x N array."""
    return np.zeros((N, N))[1:-1, 1:-1].T.shape if region == "T" else eval(f"np.zeros((N, N))[{region}]").shape


def _text(name: str, region: str) -> str:
    return f"{name}[1:-1, 1:-1].T" if region == "T" else f"{name}[{region}]"


def _program(stmts):
    """The step as a function made from source text (statements with literal regions and
    constants, as a user writes them)."""
    lines = ["def fn(A, B, C):"]
    for tgt, r1, r2, g1, g2, c, w in stmts:
        t, a, b = _text("ABC"[tgt], _TARGETS[w]), _text("ABC"[r1], _REGIONS[g1]), _text("ABC"[r2], _REGIONS[g2])
        shape = _shape(_TARGETS[w])
        if _shape(_REGIONS[g1]) == shape and _shape(_REGIONS[g2]) == shape:
            lines.append(f"    {t} = {c} * {a} - {b}")
        elif _shape(_REGIONS[g1]) == shape:
            lines.append(f"    {t} = {a} * {c}")
        else:
            lines.append(f"    {t} = {t} + {c}")
    space: dict = {}
    exec("\n".join(lines), space)
    return space["fn"]


@hsettings(max_examples=8, derandomize=True, database=None, deadline=None)
@given(stmts=st.lists(_stmt, min_size=2, max_size=5), alias=st.booleans())
def test_random_chains_bit_identical(stmts, alias):
    rng = np.random.default_rng(5)
    want, got = _both([rng.random((N, N)) for _ in range(3)])
    if alias:                                 # one array passed twice
        want[2], got[2] = want[0], got[0]
    fn = _program(tuple(stmts))
    before = chain.stats["runs"]
    _replay(fn, got, want, 4)
    _same(got, want, f"statements {stmts}, alias {alias}")
    _CHAINED.append(chain.stats["runs"] > before)


_CHAINED: list = []


def test_random_chains_ran():
    """At one locale (every statement's views in one buffer, no message) the random steps
    above ran as chains (not each statement by its own kernel)."""
    if P == 1 and _CHAINED:
        assert sum(_CHAINED) >= len(_CHAINED) // 2, _CHAINED


def _cube(X, Y):
    Y[1:-1, :, 1:] = X[:-2, :, 1:] + X[2:, :, :-1] * 0.5
    X[1:-1, :, 1:] = Y[1:-1, :, 1:] - Y[2:, :, 1:]
    Y[0] = X[-1] * 2.0


def _line(x, y):
    y[1:-1] = x[:-2] + x[2:]
    x[2:-2] = y[1:-3] * 0.5 - y[3:-1]
    y[::2] = x[::2] + 1.0


def _overwrite(A, B):
    A[1:-1, 1:-1] = B[1:-1, 1:-1] * 2.0
    A[2:, 1:-1] = B[:-2, 1:-1] + 1.0          # (rows the first statement writes after this one's)
    A[:-2, 1:-1] = B[2:, 1:-1] - 1.0


@pytest.mark.parametrize("fn, shape", [(_cube, (7, 5, 6)), (_line, (40,)), (_overwrite, (N, N))])
def test_other_dimensions_chain_bit_identical(fn, shape):
    rng = np.random.default_rng(6)
    want, got = _both([rng.random(shape) for _ in range(2)])
    _replay(fn, got, want, 5)
    _same(got, want, fn.__name__)


def test_threads_run_statement_by_statement(monkeypatch):
    """With several threads a locale's kernels are split: no chain is made, the values
    are NumPy's."""
    monkeypatch.setattr(workers, "SPLIT_MIN", 16)
    pg.config(protocol="auto", fuse=True, threads=2)
    rng = np.random.default_rng(7)
    want, got = _both([rng.random((N, N)) for _ in range(2)])
    step = _replay(_jacobi, got, want, 5)
    _same(got, want, "jacobi at 2 threads")
    text = pg.explain(step)
    collective_verdict("one call" not in text, text)


def test_chains_off_after_they_were_made(monkeypatch):
    """``CHAIN_AFTER = None`` (never) stops a step's chains made before it was set: the
    statements run by their own kernels, and ``pg.explain`` says so truthfully."""
    rng = np.random.default_rng(8)
    want, got = _both([rng.random((N, N)) for _ in range(2)])
    step = _replay(_jacobi, got, want, 3)
    monkeypatch.setattr(replay, "CHAIN_AFTER", None)
    before = chain.stats["runs"]
    for _ in range(3):
        step(*got)
        _jacobi(*want)
    _same(got, want, "jacobi, chains off")
    collective_verdict(chain.stats["runs"] == before, f"{chain.stats['runs'] - before} chained runs with chains off")


def _sweeps(A, B, C):
    B[:, :] = A[:, :] * 0.5 + C[:, :]
    C[:, :] = B[:, :] - A[:, :]
    A[:, :] = C[:, :] * 2.0 + B[:, :]
    B[:, :] = A[:, :] - 1.0
    C[:, :] = B[:, :] * A[:, :] - C[:, :]


def test_dependences_held_within_a_bound(monkeypatch):
    """A chain keeps one entry per row of a later statement for each earlier one it depends
    on: a long chain over large arrays would hold many times their memory (16 elementwise
    statements over 512 x 512 arrays: 250 MB).  A chain ends before the statement that
    would take its entries past ``MAX_NEED``; the next chain starts there."""
    monkeypatch.setattr(chain, "MAX_NEED", 3 * N * (N + 1), raising=False)
    rng = np.random.default_rng(9)
    want, got = _both([rng.random((N + 1, N)) for _ in range(3)])
    step = _replay(_sweeps, got, want, 5)
    _same(got, want, "sweeps")
    held = [ch.args[2].size for p in step.programs.values() if p.chains for _, ch, _ in p.chains[1].values()]
    collective_verdict(all(h <= chain.MAX_NEED for h in held) and (held or P > 1),
                       f"chains' entries {held}, at most {chain.MAX_NEED}")

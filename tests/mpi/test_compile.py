"""Compiled steps (``pg.compile``, pgas.array.step): replayed calls bit-identical to the
same statements run one by one, under the persistent path (protocol "auto") and the
harness's generic one; a changed global, closure or default value records again; every
fallback named by ``pg.explain``; errors inside a replay raised alike on every locale; one
collective-checking fold per replayed call."""

import functools
import random
import time
import types
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from util import collective_verdict, raised_everywhere, raises_alike

import pgas as pg
from pgas.comm import check

N = 13
PROTOCOLS = ["auto", "packed"]


@pytest.fixture(autouse=True)
def _defaults():
    yield
    pg.config()


def _arrays(seed: int, k: int = 3, dtype=np.float64):
    rng = np.random.default_rng(seed)
    data = [rng.random((N, N)).astype(dtype) for _ in range(k)]
    return data, [pg.from_numpy(d) for d in data]


def _same(got, want, what: str) -> None:
    g = [a.to_numpy() for a in got]
    w = [a.to_numpy() for a in want]
    collective_verdict(all(np.array_equal(x, y, equal_nan=True) and x.dtype == y.dtype for x, y in zip(g, w)),
                       lambda: f"{what}: compiled and plain runs differ")


def _fdtd(ex, ey, hz, t):
    ey[0, :] = t
    ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
    ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
    hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def _jacobi(A, B, c):
    B[1:-1, 1:-1] = c * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    A[1:-1, 1:-1] = c * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("fuse", [False, True])
def test_stencils_replay_bit_identical(protocol, fuse):
    pg.config(protocol=protocol, fuse=fuse)
    _, got = _arrays(1)
    _, want = _arrays(1)
    step = pg.compile(_fdtd)
    for t in range(6):
        step(*got, float(t))
        _fdtd(*want, float(t))
    _same(got, want, "fdtd")
    assert step.stats["records"] == 1 and step.stats["replays"] == 5
    if protocol == "auto" and not check.enabled:          # (strict checking: every statement the usual way)
        assert step.stats["fast"] == 5 * 4 and step.stats["slow"] == 0
    _, got = _arrays(2, 2)
    _, want = _arrays(2, 2)
    jac = pg.compile(_jacobi)
    for t in range(5):
        jac(*got, 0.2 + 0.01 * (t % 2))              # a new value every call, and the same again
        _jacobi(*want, 0.2 + 0.01 * (t % 2))
    _same(got, want, "jacobi")
    jac(got[1], got[0], 0.2)                          # the arrays swapped: the same layouts
    _jacobi(want[1], want[0], 0.2)
    _same(got, want, "jacobi, swapped")
    assert jac.stats["records"] == 1
    assert "2 statements recorded" in pg.explain(jac)



@pytest.mark.parametrize("fuse", [False, True])
def test_step_keeps_no_argument_array_alive(fuse):
    """``del A`` frees the arrays a compiled step was recorded with and last called with, as
    NumPy users expect: their windows are released on every locale (the step held them,
    and the storage its kept kernel calls, merged runs and chains name, until a call with
    other arrays, or for ever after the last); the next arrays (pooled windows) replay with
    the plain run's values."""
    import gc
    import weakref

    from pgas.comm import window
    pg.config(protocol="auto", fuse=fuse)
    step = pg.compile(_jacobi)
    for it in range(3):
        _, got = _arrays(3 + it, 2)
        _, want = _arrays(3 + it, 2)
        for t in range(10):                           # replays by kept repeats, then chains
            step(*got, 0.2)
            _jacobi(*want, 0.2)
        _same(got, want, f"jacobi, arrays {it}")
        refs = [weakref.ref(a) for a in got]
        wins = [a._win.id for a in got]
        del got
        gc.collect()
        collective_verdict(all(r() is None for r in refs) and all(w in window._released for w in wins),
                           lambda: f"arrays {it}: alive {[r() is not None for r in refs]}, "
                                   f"released {[w in window._released for w in wins]}")
    assert step.stats["records"] == 1
    if not check.enabled:                             # (strict checking: every statement the usual way)
        assert step.stats["fast"] > 0


def _jacobi_fixed(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def _kept(step):
    """Per recorded statement, whether the step holds its repeat by kept kernel calls."""
    prog = next(iter(step.programs.values()))
    return None if prog.kept is None else [k is not None for k in prog.kept[1]]


def test_kept_kernel_calls_replay_and_step_aside():
    """A step whose statements' kernel calls are kept replays by them (nothing looked up per
    statement), bit-identical to plain runs; it steps aside to the usual way, with the same
    values, when the settings, the kernels, the thread count, a statement's binding or its
    compiled form change, and holds the calls again after."""
    from pgas.exec import fuse, persistent, threads
    pg.config(fuse=True, protocol="auto")         # (the suite's default protocol, packed, is the generic path)
    _, got = _arrays(11, 2)
    _, want = _arrays(11, 2)
    step = pg.compile(_jacobi_fixed)

    def run(k=3):
        for _ in range(k):
            step(*got)
            _jacobi_fixed(*want)
        _same(got, want, "jacobi by kept kernel calls")
    run()
    if check.enabled:                              # strict checking: every statement the usual way
        assert _kept(step) is None
        return
    assert _kept(step) == [True, True]
    calls, fast = persistent.stats["calls"], step.stats["fast"]
    step(*got)
    step(*got)
    _jacobi_fixed(*want)
    _jacobi_fixed(*want)
    _same(got, want, "jacobi by kept kernel calls, twice")
    assert persistent.stats["calls"] - calls == step.stats["fast"] - fast + 4 == 8   # (4 by the plain repeats)
    others = [pg.from_numpy(np.ones((N, N))) for _ in range(2 * persistent.BINDINGS)]
    changes = [lambda: pg.config(fuse=True, protocol="auto"),       # the settings' version
               fuse.reset,                                           # kernels forgotten
               lambda: threads.apply((threads.limit() or 1) + 1),   # another thread count
               lambda: [_jacobi_fixed(others[2 * j], others[2 * j + 1]) for j in range(persistent.BINDINGS)],
               persistent.clear]                                    # bindings evicted; compiled forms freed
    limit = threads.limit()
    try:
        for change in changes:
            change()
            run(1)
            run(3)
            assert _kept(step) == [True, True]
    finally:
        if limit is not None:
            threads.apply(limit)
    step(got[1], got[0])                           # the arrays swapped: bound again
    _jacobi_fixed(want[1], want[0])
    _same(got, want, "jacobi swapped")
    _, got = _arrays(13)
    _, want = _arrays(13)
    fdtd = pg.compile(_fdtd)                       # a fill of a parameter, then three stencils
    for t in range(5):
        fdtd(*got, float(t))
        _fdtd(*want, float(t))
    _same(got, want, "fdtd by kept kernel calls and fill views")
    if not next(iter(fdtd.programs.values())).merging:      # (merged exchanges run their own way)
        assert _kept(fdtd) == [True] * 4


def test_kept_kernel_calls_once_kernels_are_made_later():
    """Under ``fuse="auto"`` a statement's kernel is made only after its program has put
    enough elements through NumPy, so a step may first hold a repeat for one statement and
    not yet for another (jacobi's two sweeps share one compiled form, each on its own
    binding).  The later one's repeat is held as soon as its binding keeps kernel calls:
    from then on no statement of the step runs the usual way."""
    from pgas.exec import fuse, persistent, settings
    pg.config(protocol="auto", fuse="auto")
    if check.enabled or fuse.load_numba() is None or settings.get("fuse") != "auto":
        pytest.skip("strict checking, or no kernels, runs every statement the usual way")
    rng = np.random.default_rng(5)
    data = [rng.random((64, 64)) for _ in range(2)]
    got = [pg.from_numpy(d) for d in data]
    want = [pg.from_numpy(d) for d in data]
    step = pg.compile(_jacobi_fixed)
    for _ in range(120):                           # (the plain runs after: they would make the kernels)
        step(*got)
    for _ in range(120):
        _jacobi_fixed(*want)
    _same(got, want, "jacobi with kernels made on the way")
    reruns = persistent.stats["reruns"]
    for _ in range(5):
        step(*got)
        _jacobi_fixed(*want)
    _same(got, want, "jacobi by kept kernel calls")
    if not next(iter(step.programs.values())).merging:
        assert _kept(step) == [True, True]
    # only the plain runs went the usual way (counted alike on every locale)
    assert persistent.stats["reruns"] - reruns == 5 * 2


def _shift_two(A, B, c):
    B[1:, :] = c * A[:-1, :]                       # a parameter: runs the usual way in a replay
    A[2:, :] = B[:-2, :] + 1.0                     # kept kernel calls


def _two_copies(seed: int):
    """Two random 8 x 64 arrays twice over (a step's and the plain function's), with compiled
    kernels and persistent transfers on and the kept compiled forms forgotten."""
    from pgas.exec import persistent
    pg.config(fuse=True, protocol="auto")
    rng = np.random.default_rng(seed)
    data = [rng.random((8, 64)) for _ in range(2)]
    got = [pg.from_numpy(a) for a in data]
    want = [pg.from_numpy(a) for a in data]
    persistent.clear()
    return got, want


def test_kept_kernel_calls_after_an_eviction_within_the_step(monkeypatch):
    """A statement run the usual way within a replay by kept kernel calls may build its compiled
    form again and so free a later statement's (beyond KEEP_BYTES): that statement then runs the
    usual way too, with the same values, instead of by the calls of a freed binding."""
    from pgas.exec import persistent
    got, want = _two_copies(7)
    monkeypatch.setattr(persistent, "KEEP_BYTES", 1280)     # a row is 512 bytes: one statement's form at a time
    step = pg.compile(_shift_two)
    for t in range(6):
        step(*got, 0.25 * t)
    for t in range(6):                              # (after: they share compiled forms, which evict each other)
        _shift_two(*want, 0.25 * t)
    _same(got, want, "kept kernel calls after an eviction within the step")


def _local_then_shift(A, B):
    B[:, 1:] = A[:, 1:] + 1.0                      # no message
    A[2:, :] = B[:-2, :] + 1.0                     # messages (at 2 locales and more)


def test_kept_kernel_calls_with_a_pending_expression_that_evicts(monkeypatch):
    """A pending expression reading what a replayed step writes is evaluated before the step
    writes it; its own compiled form may free the step's (beyond KEEP_BYTES): the step then runs
    its statements the usual way, with the same values, not by the calls of a freed binding
    (a crash, or a hang where locales free differently)."""
    from pgas.exec import persistent
    got, want = _two_copies(3)
    monkeypatch.setattr(persistent, "KEEP_BYTES", 2000)     # the step's forms, not with the expression's too
    step = pg.compile(_local_then_shift)
    try:
        for _ in range(3):
            step(*got)
        pending = []
        for _ in range(2):
            pending.append(got[1][:-3, :] + got[0][3:, :])  # (evaluated lazily: when the step writes B)
            step(*got)
        for _ in range(3):
            _local_then_shift(*want)
        expect = want[1][:-3, :] + want[0][3:, :]
        _local_then_shift(*want)
        expect = [expect, want[1][:-3, :] + want[0][3:, :]]
        _local_then_shift(*want)
        _same(got + [p.eval() for p in pending], want + [e.eval() for e in expect],
              "kept kernel calls with a pending expression evaluated within the step")
    finally:
        persistent.clear()


def _fill_rows(X, v):
    X[0, :] = v                                    # a fill of a parameter (kept fill views)
    X[1:, :] = X[1:, :] + X[:-1, :]


def test_kept_fill_of_a_value_that_does_not_convert():
    """A parameter that does not convert to the filled array's dtype raises as a plain run does,
    and the processor's flags its conversion set are no floating-point error of the step's
    (no RuntimeWarning)."""
    pg.config(fuse=True, protocol="auto")
    _, (got,) = _arrays(5, 1, np.int64)
    _, (want,) = _arrays(5, 1, np.int64)
    step = pg.compile(_fill_rows)
    for v in (1.0, 2.0, 3.0):                      # (a float parameter: converted to the int64 target)
        step(got, v)
        _fill_rows(want, v)
    for v in (float("nan"), float("inf")):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            raises_alike(ValueError if v != v else OverflowError, lambda v=v: step(got, v), f"a fill of {v}")
        collective_verdict(not seen, lambda v=v, seen=seen: f"a fill of {v} warned {[str(w.message) for w in seen]}")
        step(got, 4.0)
        _fill_rows(want, 4.0)
    _same([got], [want], "fills after values that do not convert")


def test_kept_kernel_calls_report_errors_as_numpy():
    """A floating-point error met by a kept kernel call is reported as NumPy reports it: a
    RuntimeWarning by default, nothing when ignored, FloatingPointError on every locale
    alike under "raise"."""
    pg.config(fuse=True, protocol="auto")
    _, (A, B) = _arrays(12, 2)
    step = pg.compile(_jacobi_fixed)
    for _ in range(3):
        step(A, B)

    def signs():                                   # rows of inf and -inf: inf + -inf on every locale
        A[::2, :] = np.inf
        A[1::2, :] = -np.inf
    signs()
    with pytest.warns(RuntimeWarning, match="invalid"):
        step(A, B)
    collective_verdict(np.isnan(B.to_numpy()[1:-1, 1:-1]).all(), "inf + -inf is NaN")
    signs()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        step(A, B)
    signs()
    with np.errstate(invalid="raise"):
        raises_alike(FloatingPointError, lambda: step(A, B), "inf + -inf in a kept kernel call")


# -- random statement sequences ------------------------------------------------------
_SLICES = [(slice(1, None), slice(None, -1)), (slice(None, -1), slice(1, None)), (slice(1, -1), slice(1, -1)),
           (slice(None), slice(None)), (slice(0, 1), slice(None))]
_READS = [[(slice(1, None), slice(None, -1)), (slice(None, -1), slice(1, None))],
          [(slice(None, -1), slice(1, None)), (slice(1, None), slice(None, -1))],
          [(slice(1, -1), slice(1, -1)), (slice(2, None), slice(None, -2)), (slice(None, -2), slice(2, None))],
          [(slice(None), slice(None))],
          [(slice(0, 1), slice(None)), (slice(N - 1, N), slice(None))]]   # per target slice, reads of its shape

_stmt = st.tuples(st.integers(0, 2), st.integers(0, len(_SLICES) - 1), st.integers(0, 2), st.integers(0, 2),
                  st.integers(0, 4), st.sampled_from(["param", "literal", "fill", "both"]))


def _program(stmts):
    """A step function of the statements drawn (each: target array, slice, two read arrays
    and shifts, how a scalar appears)."""
    def fn(A, B, C, p, q):
        arrays = (A, B, C)
        for tgt, s, r1, r2, shift, how in stmts:
            ts = _SLICES[s]
            reads = _READS[s]
            x = arrays[r1][reads[shift % len(reads)]]
            y = arrays[r2][reads[(shift + 1) % len(reads)]]
            if how == "param":
                arrays[tgt][ts] = p * x - y
            elif how == "literal":
                arrays[tgt][ts] = 0.25 * x + y
            elif how == "fill":
                arrays[tgt][ts] = q
            else:
                arrays[tgt][ts] = (x + q) * p
    return fn


@pytest.mark.parametrize("protocol", PROTOCOLS)
@hsettings(max_examples=12, derandomize=True, database=None, deadline=None)
@given(stmts=st.lists(_stmt, min_size=1, max_size=5), alias=st.booleans())
def test_random_steps_bit_identical(protocol, stmts, alias):
    pg.config(protocol=protocol)
    fn = _program(stmts)
    step = pg.compile(fn)
    _, got = _arrays(3)
    _, want = _arrays(3)
    if alias:                                          # one array passed twice
        got[2], want[2] = got[0], want[0]
    for k, (p, q) in enumerate([(0.5, 1.0), (0.5, 1.0), (1.5, -2.0), (0.75, 3.0)]):
        step(*got, p, q)
        fn(*want, p, q)
    _same(got, want, f"statements {stmts}, alias {alias}")
    assert step.stats["records"] == 1, pg.explain(step)


# -- never a stale value ----------------------------------------------------------------
COEF = 0.5
TABLE = np.array([1.0, 2.0])


def _uses_globals(A, B):
    B[:, :] = COEF * A[:, :] + TABLE[0]


def test_changed_global_records_again():
    global COEF
    _, (A, B) = _arrays(4, 2)
    step = pg.compile(_uses_globals)
    step(A, B)
    step(A, B)
    a = A.to_numpy()
    COEF = 2.0
    try:
        step(A, B)
        collective_verdict(np.array_equal(B.to_numpy(), 2.0 * a + 1.0), "a changed global")
        TABLE[0] = 5.0                                 # changed in place: its fingerprint differs
        step(A, B)
        collective_verdict(np.array_equal(B.to_numpy(), 2.0 * a + 5.0), "a NumPy array changed in place")
        assert step.stats["records"] == 3 and step.stats["replays"] == 1 and step.stats["plain"] == 0
    finally:
        COEF = 0.5
        TABLE[0] = 1.0


def test_changed_closure_and_array_records_again():
    _, (A, B, C) = _arrays(5)
    c, target = 3.0, B

    def fn(X):
        target[:, :] = c * X[:, :]

    step = pg.compile(fn)
    step(A)
    step(A)
    c = 4.0
    step(A)
    collective_verdict(np.array_equal(B.to_numpy(), 4.0 * A.to_numpy()), "a changed closure value")
    target = C                                         # another array in the cell: recorded again
    step(A)
    collective_verdict(np.array_equal(C.to_numpy(), 4.0 * A.to_numpy()), "a changed closure array")
    assert step.stats["records"] == 3 and step.stats["replays"] == 1 and step.stats["plain"] == 0


# -- fallbacks ---------------------------------------------------------------------------
class _Config:
    k = 2.0


CONFIG = _Config()


def _branch(A, t):
    if t > 0:
        A[:, :] = 1.0


def _reduces(A, t):
    A[:, :] = A.sum()


def _foralls(A, t):
    pg.forall((range(N), range(N)), lambda i, j: A.__setitem__((i, j), 1.0))


def _returns(A, t):
    A[:, :] = t
    return A


def _python_arith(A, t):
    A[:, :] = 2 * t


def _object_global(A, t):
    A[:, :] = CONFIG.k


def _element_write(A, t):
    A[:, :] = 1.0
    A[0, 0] = 2.0


def _local_write(A, t):
    A.local[...] = 3.0


def _creates(A, t):
    A[:, :] = pg.zeros(A.shape)


def _one_sided(A, t):
    A[:, :] = 2.0
    A.get((0, 0))


@pytest.mark.parametrize("fn, reason", [(_branch, "uses the value of its scalar argument 't'"),
                                        (_reduces, "communicates|outside a statement"), (_foralls, "pg.forall"),
                                        (_returns, "returns a value"), (_python_arith, "uses the value"),
                                        (_object_global, "'CONFIG' holds a _Config"),
                                        (_element_write, "an element write|communicates|outside a statement"),
                                        (_local_write, "outside a statement"), (_one_sided, "A.get|communicates|outside a statement"),
                                        (_creates, "communicates (|outside a statement")])
def test_fallbacks_named_and_run_plainly(fn, reason):
    step = pg.compile(fn)
    _, (A,) = _arrays(6, 1)
    _, (W,) = _arrays(6, 1)
    for t in (1.0, 2.0):
        got, want = step(A, t), fn(W, t)
    assert (got is None) == (want is None)
    _same([A], [W], fn.__name__)
    text = pg.explain(step)
    assert "runs its function plainly" in text and any(r in text for r in reason.split("|")), text
    assert step.stats["plain"] == 2 and step.stats["records"] == 1 and step.stats["replays"] == 0


def test_unsupported_argument_runs_plainly():
    _, (A, B) = _arrays(7, 2)
    step = pg.compile(lambda X, Y: Y.__setitem__(slice(None), X))
    step(A[1:], B[1:])
    assert "argument 0 is a View" in pg.explain(step)


# -- errors and checking --------------------------------------------------------------
def _scale(A, B, c):
    B[:, :] = A * c


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_errors_in_replay_raised_alike(protocol):
    pg.config(protocol=protocol)
    _, (A, B) = _arrays(8, 2)
    A[:, :] = 1e300
    step = pg.compile(_scale)
    step(A, B, 1.0)
    step(A, B, 1.0)
    with np.errstate(all="raise"):
        raises_alike(FloatingPointError, lambda: step(A, B, 1e300), "an overflow in a replayed step")
    I = pg.from_numpy(np.zeros((N, N), np.int8))
    fill = pg.compile(lambda X, v: X.__setitem__((0, slice(None)), v))
    fill(I, 1)
    fill(I, 2)
    fill(I, 2)                                        # (by its kept fill views, with protocol="auto")
    raises_alike(OverflowError, lambda: fill(I, 1000), "a parameter that does not fit the target")
    collective_verdict(np.all(I.to_numpy()[0] == 2), "the fill before the error")


def _folded_fdtd(seed: int):
    """fdtd-2d's step compiled over arrays drawn from ``seed``, under the default (folded)
    collective checking, which only two or more locales have (skipped at one)."""
    pg.barrier()
    pg.config(check="auto", protocol="auto")
    if not check.folding:
        pytest.skip("collective checking folds only at two or more locales")
    _, got = _arrays(seed)
    return pg.compile(_fdtd), got


def test_one_fold_per_replayed_call(monkeypatch):
    step, got = _folded_fdtd(9)
    step(*got, 0.0)
    step(*got, 1.0)
    folds = []
    orig, orig_repeat = check.fold, check.fold_repeat
    monkeypatch.setattr(check, "fold", lambda *a, **k: (folds.append(a[1]), orig(*a, **k)))
    monkeypatch.setattr(check, "fold_repeat", lambda tag, *a: (folds.append(tag[1]), orig_repeat(tag, *a)))
    step(*got, 2.0)
    step(*got, 2.0)
    monkeypatch.undo()
    assert folds == ["compiled step"] * 2, folds


def test_replayed_scalar_that_differs_raises_alike():
    """A replay folds its call's entry kept from the last replay with the same values: a
    scalar that differs on one locale after replays with equal values (0.0 and -0.0: equal,
    not the same value) is still found, on every locale alike."""
    step, got = _folded_fdtd(10)
    for _ in range(3):
        step(*got, 0.0)

    def job():
        step(*got, -0.0 if pg.here == 0 else 0.0)
        got[0].sum()

    text = raised_everywhere(job)
    collective_verdict("compiled step" in text, text)
    step(*got, 0.0)
    got[0].sum()                                      # (in step again)


def _fill_one(A, t):
    A[:, :] = 1.0


def _fill_param(A, t):
    A[:, :] = t


def test_replays_that_differ_mismatch():
    pg.barrier()                              # the library's communicator is made: folding needs it
    pg.config(check="auto")
    if not check.folding:
        pytest.skip("collective checking folds only at two or more locales")
    A = pg.zeros((N, N))
    one, param = pg.compile(_fill_one), pg.compile(_fill_param)
    for _ in range(2):
        one(A, 1.0)
        param(A, 1.0)
    pg.barrier()
    for job in (lambda: (one if pg.here == 0 else param)(A, 1.0),     # another step
                lambda: param(A, 1.0 + (pg.here == 0))):                # another value
        try:
            job()
            A.sum()
            got = None
        except pg.CollectiveMismatch as e:
            got = str(e)
        collective_verdict(got is not None, "a replay that differs between locales was not caught")
        pg.barrier()


@pg.compile
def _inner(X, c):
    X[1:, :] = X[:-1, :] * c


def _outer(X, Y, c):
    _inner(X, c)                                       # recorded into the outer step
    Y[:, :] = X[:, :] + COEF


def test_nested_step_recorded_inline():
    global COEF
    _, (X, Y) = _arrays(10, 2)
    _, (V, W) = _arrays(10, 2)
    step = pg.compile(_outer)
    plain = _outer.__globals__["_inner"].fn
    for c in (0.5, 1.5, 1.5):
        step(X, Y, c)
        plain(V, c)
        W[:, :] = V[:, :] + COEF
    COEF = 1.25
    try:
        step(X, Y, 2.0)
        plain(V, 2.0)
        W[:, :] = V[:, :] + COEF
    finally:
        COEF = 0.5
    _same([X, Y], [V, W], "a step calling a compiled step")
    assert step.stats["records"] == 2 and step.stats["plain"] == 0 and "2 statements recorded" in pg.explain(step), pg.explain(step)


_G = []


def _writes_global(X):
    _G[0][1:, :] = X[:-1, :] + 1.0


def test_argument_aliasing_a_global_runs_plainly():
    global _G
    _, (A, G) = _arrays(11, 2)
    _, (V, W) = _arrays(11, 2)
    old = _G
    _G = [G]
    try:
        step = pg.compile(_writes_global)
        assert "holds a list" in (step(A) or pg.explain(step))   # a list of objects: not watched
        _G = (G,)
        step = pg.compile(_writes_global)
        step(A)
        step(A)
        step(G)                                        # G as the argument: reads and writes alias
        W[1:, :] = V[:-1, :] + 1.0
        W[1:, :] = V[:-1, :] + 1.0
        W[1:, :] = W[:-1, :] + 1.0
        _same([A, G], [V, W], "an argument that is the global array written")
        assert step.stats["replays"] == 1 and step.stats["plain"] == 1, step.stats
    finally:
        _G = old


# -- values a recording keeps: every way fn can read one is watched or refused --------------
ZERO = 0.0


def _divide(A, B, p):
    B[:, :] = A[:, :] / p * np.copysign(1.0, ZERO)


def test_signed_zero_is_another_value():
    global ZERO
    _, (A, B) = _arrays(12, 2)
    _, (V, W) = _arrays(12, 2)
    step = pg.compile(_divide)
    try:
        for p, z in [(0.0, 0.0), (0.0, 0.0), (-0.0, 0.0), (-0.0, -0.0), (0.0, -0.0)]:
            ZERO = z                                  # 0.0 == -0.0, yet A / 0.0 is inf and A / -0.0 is -inf
            with np.errstate(divide="ignore"):
                step(A, B, p)
                _divide(V, W, p)
            _same([B], [W], f"p = {p}, ZERO = {z}")
    finally:
        ZERO = 0.0
    assert step.stats["records"] == 2 and step.stats["replays"] == 3, step.stats


PARAMS = types.ModuleType("params")
PARAMS.alpha = 1.0
PARAMS.sub = types.ModuleType("params.sub")
PARAMS.sub.beta = 2.0


class _Coefs:
    k = 1.0


class _MoreCoefs(_Coefs):
    pass


def _attributes(A, B):
    B[:, :] = A[:, :] * PARAMS.alpha + PARAMS.sub.beta * np.sin(A[:, :]) + _MoreCoefs.k + np.pi


def test_module_and_class_attributes_record_again():
    _, (A, B) = _arrays(13, 2)
    _, (V, W) = _arrays(13, 2)
    step = pg.compile(_attributes)
    changes = [lambda: None, lambda: setattr(PARAMS, "alpha", 3.0), lambda: setattr(PARAMS.sub, "beta", 4.0),
               lambda: setattr(_MoreCoefs, "k", 5.0), lambda: setattr(_Coefs, "k", 6.0), lambda: None]
    try:
        for change in changes:
            change()
            step(A, B)
            _attributes(V, W)
            _same([B], [W], "a module or class attribute changed")
    finally:
        PARAMS.alpha, PARAMS.sub.beta, _Coefs.k = 1.0, 2.0, 1.0
        del _MoreCoefs.k
    assert step.stats["records"] == 5 and step.stats["replays"] == 1 and step.stats["plain"] == 0, step.stats


def _defaults(A, B, c=2.0, *, d=(1.0,), e=[3.0]):          # noqa: B006 (a mutable default, mutated on purpose)
    B[:, :] = A[:, :] * c + d[0] + e[0]


def test_changed_defaults_record_again():
    _, (A, B) = _arrays(14, 2)
    _, (V, W) = _arrays(14, 2)
    step = pg.compile(_defaults)
    old = _defaults.__defaults__, dict(_defaults.__kwdefaults__)
    changes = [lambda: None, lambda: setattr(_defaults, "__defaults__", (5.0,)),
               lambda: _defaults.__kwdefaults__.update(d=(7.0,)), lambda: _defaults.__kwdefaults__["e"].__setitem__(0, 9.0),
               lambda: None]
    try:
        for change in changes:
            change()
            step(A, B)
            _defaults(V, W)
            _same([B], [W], "a default changed")
    finally:
        _defaults.__defaults__, _defaults.__kwdefaults__ = old[0], old[1]
        _defaults.__kwdefaults__["e"][0] = 3.0
    assert step.stats["records"] == 4 and step.stats["replays"] == 1, step.stats


def _h5(X):
    return X * ZERO + PARAMS.alpha


def _h4(X):
    return _h5(X)


def _h3(X):
    return _h4(X)


def _h2(X):
    return _h3(X)


def _h1(X):
    return _h2(X)


def _deep(A, B):
    B[:, :] = _h1(A[:, :])


def test_globals_of_deeply_nested_helpers_watched():
    global ZERO
    _, (A, B) = _arrays(15, 2)
    step = pg.compile(_deep)
    step(A, B)
    try:
        ZERO = 2.0
        step(A, B)
        collective_verdict(np.array_equal(B.to_numpy(), A.to_numpy() * 2.0 + 1.0), "a global of a nested helper")
        PARAMS.alpha = 3.0
        step(A, B)
        collective_verdict(np.array_equal(B.to_numpy(), A.to_numpy() * 2.0 + 3.0), "a module attribute in a nested helper")
    finally:
        ZERO, PARAMS.alpha = 0.0, 1.0
    assert step.stats["records"] == 3, step.stats


RNG = np.random.default_rng(0)


def _by_globals(A, t):
    A[:, :] = globals()["ZERO"] + 1.0


def _by_getattr(A, t):
    A[:, :] = getattr(PARAMS, "alpha")                    # noqa: B009 (a read by name, on purpose)


def _imports_inside(A, t):
    from math import pi
    A[:, :] = pi


def _random_module(A, t):
    A[:, :] = random.random()


def _random_bound(A, t):
    A[:, :] = _rand()


def _clock(A, t):
    A[:, :] = time.perf_counter() * 0.0              # (the same on every locale)


def _generator(A, t):
    A[:, :] = RNG.random()


def _bytes(A, t):
    A[:, :] = float(BUF[0])


def _np_random(A, t):
    A[:, :] = np.random.rand() * np.float64(2.0)


def _masked(A, t):
    A[:, :] = MASKED.sum()


def _objects(A, t):
    A[:, :] = OBJECTS[0]


BUF = bytearray(b"\x01")
MASKED = np.ma.array([1.0, 2.0], mask=[False, True])
OBJECTS = np.array([1.0, None], dtype=object)
_rand = random.random


@pytest.mark.parametrize("fn, reason", [(_by_globals, "by name or imports (globals)"),
                                        (_by_getattr, "by name or imports (getattr)"),
                                        (_imports_inside, "by name or imports (import)"),
                                        (_random_module, "the module random"),
                                        (_random_bound, "a function bound to a Random"),
                                        (_clock, "the module time"), (_generator, "is a Generator"),
                                        (_bytes, "'BUF' holds a bytearray"),
                                        (_np_random, "'np.random' is the module numpy.random"),
                                        (_masked, "'MASKED' holds a MaskedArray"),
                                        (_objects, "'OBJECTS' holds a ndarray")])
def test_unwatchable_reads_run_plainly(fn, reason):
    step = pg.compile(fn)
    _, (A,) = _arrays(16, 1)
    for t in (1.0, 2.0):
        random.seed(int(t))                            # the same values on every locale
        np.random.seed(int(t))
        step(A, t)
    text = pg.explain(step)
    assert "runs its function plainly" in text and reason in text, text
    assert step.stats["plain"] == 2 and step.stats["replays"] == 0, step.stats


COUNT = 0
HISTORY: list = []


def _counts(A, t):
    global COUNT
    COUNT += 1
    A[:, :] = A[:, :] + 1.0


def _appends(A, t):
    HISTORY.append(t)
    A[:, :] = A[:, :] + 1.0


TALLY = np.zeros(2)


def _tallies(A, t):
    TALLY[0] += 1.0
    A[:, :] = A[:, :] + 1.0


def test_python_side_effects_run_plainly():
    global COUNT
    _, (A,) = _arrays(17, 1)
    step = pg.compile(_counts)
    for t in (1.0, 2.0, 3.0):
        step(A, t)
    assert COUNT == 3 and "assigns COUNT" in pg.explain(step), pg.explain(step)
    step = pg.compile(_appends)
    for t in (1.0, 2.0, 3.0):
        step(A, t)
    assert HISTORY == [1.0, 2.0, 3.0] and "changes 'HISTORY'" in pg.explain(step), (HISTORY, pg.explain(step))
    step = pg.compile(_tallies)
    for t in (1.0, 2.0, 3.0):
        step(A, t)
    assert TALLY[0] == 3.0 and "changes 'TALLY'" in pg.explain(step), (TALLY, pg.explain(step))
    n = [0]

    def bumps(X):
        nonlocal n
        n = [n[0] + 1]
        X[:, :] = X[:, :] + 1.0

    step = pg.compile(bumps)
    for _ in range(3):
        step(A)
    assert n == [3] and "assigns n" in pg.explain(step), pg.explain(step)
    want = _arrays(17, 1)[0][0]
    for _ in range(12):
        want = want + 1.0
    collective_verdict(np.array_equal(A.to_numpy(), want), "side-effect steps")
    COUNT = 0
    HISTORY.clear()
    TALLY[0] = 0.0


def test_argument_that_is_also_a_closure_array_runs_plainly():
    _, (A, B, C) = _arrays(18)
    _, (V, W, X) = _arrays(18)

    def writer(target):
        def fn(Y):
            target[:, :] = Y[:, :] * 2.0
        return fn

    step = pg.compile(writer(B))
    plain = writer(W)
    step(B)
    plain(W)
    step(C)                                            # fn writes B (its closure), not the argument
    plain(X)
    _same([A, B, C], [V, W, X], "an argument that is also the closure's array")
    assert "both argument 0 and a global or closure variable" in pg.explain(step), pg.explain(step)


def _scaled(A, B, c):
    B[:, :] = A[:, :] * c + ZERO


class _Scaler:
    def __init__(self) -> None:
        self.k = 1.0

    def __call__(self, A, B):
        B[:, :] = A[:, :] * self.k


def test_partials_compiled_steps_and_callables_watched():
    global ZERO
    _, (A, B) = _arrays(19, 2)
    part = functools.partial(_scaled, c=2.0)
    steps = [pg.compile(part), pg.compile(pg.compile(functools.partial(_scaled, c=2.0)))]
    try:
        for step in steps:
            ZERO = 0.0
            step(A, B)
            ZERO = 5.0                                 # a global of the function inside
            step(A, B)
            collective_verdict(np.array_equal(B.to_numpy(), A.to_numpy() * 2.0 + 5.0), "a partial's global")
        part.keywords["c"] = 3.0                       # a partial's keyword changed in place
        steps[0](A, B)
        collective_verdict(np.array_equal(B.to_numpy(), A.to_numpy() * 3.0 + 5.0), "a partial's keyword")
    finally:
        ZERO = 0.0
    assert [s.stats["records"] for s in steps] == [3, 2], [s.stats for s in steps]
    scaler = _Scaler()
    step = pg.compile(scaler)
    step(A, B)
    scaler.k = 6.0
    step(A, B)
    collective_verdict(np.array_equal(B.to_numpy(), A.to_numpy() * 6.0), "a callable object's attribute")
    assert "holds a _Scaler" in pg.explain(step), pg.explain(step)


def _twice(X):
    return X * 2.0


def _thrice(X):
    return X * 3.0


def _calls_helper(A, B):
    B[:, :] = _twice(A[:, :])


def test_swapped_code_and_computed_module_attributes():
    _, (A, B) = _arrays(20, 2)
    step = pg.compile(_calls_helper)
    step(A, B)
    code = _twice.__code__
    try:
        _twice.__code__ = _thrice.__code__             # the same function object, another body
        step(A, B)
        collective_verdict(np.array_equal(B.to_numpy(), A.to_numpy() * 3.0), "a helper's code swapped")
    finally:
        _twice.__code__ = code
    assert step.stats["records"] == 2, step.stats
    dyn = types.ModuleType("dyn")
    dyn.__getattr__ = lambda name: 2.0 if name == "val" else getattr(types, "no such attribute")
    step = pg.compile(lambda X, Y: Y.__setitem__((slice(None), slice(None)), X[:, :] * dyn.val))
    step(A, B)
    assert "computes attributes on each read" in pg.explain(step), pg.explain(step)


INNER = (slice(1, -1), slice(1, -1))


def _inner_points(A, B):
    B[INNER] = A[INNER] * 2.0


def test_global_index_tuples_watched():
    global INNER
    _, (A, B) = _arrays(21, 2)
    _, (V, W) = _arrays(21, 2)
    step = pg.compile(_inner_points)
    try:
        for inner in [INNER, INNER, (slice(2, None), Ellipsis), (slice(2, None), Ellipsis)]:
            INNER = inner
            step(A, B)
            _inner_points(V, W)
            _same([B], [W], f"INNER = {inner}")
    finally:
        INNER = (slice(1, -1), slice(1, -1))
    assert step.stats["records"] == 2 and step.stats["replays"] == 2, pg.explain(step)


def _tiny_jacobi(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


@pytest.mark.parametrize("fn, k", [(_tiny_jacobi, 2), (_fdtd, 3)])
def test_small_tasks_replay_by_kept_kernel_calls(fn, k):
    """A step over arrays far below the kernels' size threshold (a few rows per locale):
    its replays run every task by a kernel, jacobi's statements by their kept kernel calls
    (no task laid out again), and the values are the plain run's bit for bit."""
    pytest.importorskip("numba")
    from pgas.exec import fuse, persistent
    pg.config(protocol="auto")
    data, got = _arrays(41, k)
    want = [pg.from_numpy(d) for d in data]
    extra = (0.25,) if fn is _fdtd else ()
    step = pg.compile(fn)
    for _ in range(4):
        step(*got, *extra)
        fn(*want, *extra)
    numpy, calls = fuse.stats["numpy"], persistent.stats["calls"]
    for _ in range(2):
        step(*got, *extra)
    numpy, calls = fuse.stats["numpy"] - numpy, persistent.stats["calls"] - calls
    for _ in range(2):
        fn(*want, *extra)
    _same(got, want, fn.__name__)
    collective_verdict(numpy == 0 and (fn is _fdtd or calls == 4),
                       f"{numpy} tasks by NumPy, {calls} statements by kept kernel calls in 2 replays")

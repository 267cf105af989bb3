"""Fused kernels (pgas.exec.fuse) against the NumPy path and NumPy itself: random
expression trees over every supported dtype (edge values included: integer
extremes, zero divisors, NaN, infinities, signed zeros), bit for bit; forall
bodies; the fallback without numba; the setting."""

import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas import comm
from pgas.exec import fuse
from util import assert_matches, collective_verdict

pytest.importorskip("numba")

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=25)
DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float32, np.float64]
BINARY = [np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.remainder, np.minimum,
          np.maximum, np.less, np.equal, np.not_equal, np.greater_equal, np.logical_and, np.logical_xor,
          np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.power, np.arctan2]    # the last two: NumPy path
UNARY = [np.negative, np.absolute, np.square, np.sqrt, np.invert, np.logical_not, np.positive, np.exp]
DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2), pg.BlockCyclic(3)]
N = 23


@pytest.fixture(autouse=True)
def _defaults():
    pg.config()
    yield
    pg.config()


def values(dtype, seed):
    """N + 2 values of ``dtype``: small ones, zeros, and the dtype's edge values."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    out = rng.integers(-5, 6, N + 2).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        edges = [info.min, info.max, 0, 1, info.max // 2 + 1] + ([-1, info.min + 1] if dt.kind == "i" else [])
    elif dt.kind == "f":
        edges = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(dt).max, np.finfo(dt).tiny, 0.1]
    else:
        edges = [True, False]
    pos = rng.choice(N + 2, size=len(edges), replace=False)
    out[pos] = np.array(edges, dtype=object).astype(dt)
    return out


@st.composite
def trees(draw, depth=3):
    """A random expression tree: ('x'|'y'|('const', v)|(func, args...))."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(["x", "y", "x", "y", ("const", 2), ("const", -1), ("const", 0.5),
                                     ("const", np.float32(1.5)), ("const", True)]))
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return (draw(st.sampled_from(UNARY)), draw(trees(depth - 1)))
    if kind == 1:
        return (pg.where, draw(trees(depth - 1)), draw(trees(depth - 1)), draw(trees(depth - 1)))
    return (draw(st.sampled_from(BINARY)), draw(trees(depth - 1)), draw(trees(depth - 1)))


def build(tree, x, y, where):
    if tree == "x":
        return x
    if tree == "y":
        return y
    if tree[0] == "const":
        return tree[1]
    func = where if tree[0] is pg.where else tree[0]
    return func(*[build(t, x, y, where) for t in tree[1:]])


def numpy_value(tree, gx, gy):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            want = np.asarray(build(tree, gx, gy, np.where))
        except (TypeError, ValueError, OverflowError, ZeroDivisionError):
            return None
    return want if want.ndim == 1 and want.dtype.kind in "biuf" and want.dtype != np.float16 else None


def run_statement(tree, X, Y, dtype, dist, mode):
    pg.config(fuse=mode)
    T = pg.zeros(N, dtype=dtype, dist=dist)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        T[:] = build(tree, X[1:N + 1], Y[:N], pg.where)       # shifted views: remote reads on several locales
    return T


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).reshape(a.shape + (a.itemsize,))


def same_bits(T, want):
    """Collective: T's elements equal ``want`` bit for bit (dtype included)."""
    got = T.to_numpy()
    collective_verdict(got.dtype == want.dtype and np.array_equal(bits(got), bits(want)),
                       lambda: f"dtype {got.dtype} vs {want.dtype}: got {got!r}, expected {want!r}")


@SETTINGS
@given(st.data())
def test_random_trees_are_bit_identical_to_numpy_in_both_modes(data):
    draw = data.draw
    tree = draw(trees())
    dx, dy = draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES))
    gx, gy = values(dx, 1), values(dy, 2)
    want = numpy_value(tree, gx[1:N + 1], gy[:N])
    if want is None or want.shape != (N,):
        return                                   # NumPy refuses it, or a scalar tree: nothing to compare
    X = pg.from_numpy(gx, dist=draw(st.sampled_from(DISTS)))
    Y = pg.from_numpy(gy, dist=draw(st.sampled_from(DISTS)))
    dist = draw(st.sampled_from(DISTS))
    for mode in (True, False):
        same_bits(run_statement(tree, X, Y, want.dtype, dist, mode), want)


def test_kernels_run_and_are_cached():
    gx, gy = np.arange(2 * N, dtype=np.float64), np.linspace(-1, 1, 2 * N)
    X, Y = pg.from_numpy(gx), pg.from_numpy(gy, dist=pg.Cyclic())
    fuse.stats.update(fused=0, numpy=0)
    pg.config(fuse=True)
    T = pg.zeros(2 * N - 1)
    for _ in range(2):
        T[:] = (X[1:] - Y[:-1] * 3.0) / 7.0 + np.sqrt(np.abs(Y[1:]))
    want = (gx[1:] - gy[:-1] * 3.0) / 7.0 + np.sqrt(np.abs(gy[1:]))
    same_bits(T, want)
    tasks = comm.allreduce(fuse.stats["fused"], "sum")
    collective_verdict(tasks >= 2, f"only {tasks} tasks fused")
    collective_verdict(fuse.stats["numpy"] == 0, f"{fuse.stats} (NumPy path taken)")
    key = len(fuse._kernels)
    T[:] = (X[1:] - Y[:-1] * 3.0) / 7.0 + np.sqrt(np.abs(Y[1:]))
    collective_verdict(len(fuse._kernels) == key, "a kernel was made again")


def test_auto_mode_keeps_tiny_tasks_on_numpy():
    fuse.stats.update(fused=0, numpy=0)
    X = pg.arange(8.0)
    T = pg.zeros(7)
    T[:] = X[1:] * 2.0 + X[:-1]
    collective_verdict(fuse.stats["fused"] == 0, f"{fuse.stats}")
    assert_matches(T, np.arange(1.0, 8.0) * 2 + np.arange(7.0))


def test_auto_mode_fuses_a_small_statement_run_often():
    """A statement whose every task is small is fused once its program has put
    FUSE_MIN elements through NumPy on that locale (a loop of small steps; strong
    scaling over many locales), never before; the values stay NumPy's."""
    n = 4097
    gx = np.linspace(-3.0, 3.0, n)
    X, T = pg.from_numpy(gx), pg.zeros(n - 1)
    want = gx[1:] * 2.0 - gx[:-1] / 3.0
    local = T.local.size
    runs = -(-fuse.FUSE_MIN // max(1, local)) + fuse.FUSE_AFTER + 2      # the same on every locale: collective
    fuse.stats.update(fused=0, numpy=0)
    first = None
    for r in range(max(runs, -(-fuse.FUSE_MIN // ((n - 1) // P)) + fuse.FUSE_AFTER + 2)):
        T[:] = X[1:] * 2.0 - X[:-1] / 3.0
        if first is None and fuse.stats["fused"]:
            first = r
    collective_verdict(first is not None, f"never fused: {fuse.stats}")
    collective_verdict(first is None or (first + 1) * local >= fuse.FUSE_MIN, f"fused after only {first} runs")
    same_bits(T, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_comparisons_with_nan_are_quiet(dtype):
    """NumPy's ordered comparisons are quiet on NaN (no "invalid" warning); a kernel's
    vectorised ones raised "invalid" there (x86 CMPLTPD), so NaNs are replaced before the
    comparison.  Values NumPy's bit for bit, NaN, infinities and signed zeros included."""
    import warnings as w
    pg.config(fuse=True)
    n = 4099
    rng = np.random.default_rng(7)
    gx, gy = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    gx[::97], gy[5::89], gx[3::71], gy[7::53], gy[11::61] = np.nan, np.nan, 0.0, -0.0, -np.inf
    X, Y = pg.from_numpy(gx), pg.from_numpy(gy, dist=pg.Cyclic())
    T = pg.zeros(n - 1, dtype=bool)
    for f in (np.less, np.less_equal, np.greater, np.greater_equal):
        with w.catch_warnings(record=True) as got, np.errstate(all="warn"):
            w.simplefilter("always")
            T[:] = f(X[1:], Y[:-1]) | f(Y[1:], 0.5)
        mine = [str(x.message) for x in got if issubclass(x.category, RuntimeWarning)]
        collective_verdict(not mine, f"{f.__name__}: warnings {mine}")
        same_bits(T, f(gx[1:], gy[:-1]) | f(gy[1:], 0.5))


def test_auto_mode_keeps_no_replicated_operand_alive():
    """A statement with a replicated NumPy operand is lowered afresh on every run (a new
    program each time); counting its small tasks' elements must not hold those programs,
    and so their NumPy operands, after the statement (up to PROGRAM_CACHE of them)."""
    import gc
    import weakref
    n = 1000
    X, T = pg.from_numpy(np.arange(n, dtype=np.float64)), pg.zeros(n - 1)
    refs = []
    for i in range(8):
        rep = np.full(n - 1, float(i))
        refs.append(weakref.ref(rep))
        T[:] = X[1:] * 2.0 + rep
        del rep
    gc.collect()
    alive = sum(r() is not None for r in refs)
    collective_verdict(alive == 0, f"{alive} of {len(refs)} replicated operands still alive")
    same_bits(T, np.arange(1.0, n) * 2.0 + 7.0)


#: A statement of small tasks, the error, and the RuntimeWarning NumPy gives for it.
SMALL_ERRORS = {
    "int floor_divide by zero": (np.int64, 3, 0, lambda X, D: X // D + D, "divide by zero encountered in floor_divide"),
    "int remainder by zero": (np.int64, 3, 0, lambda X, D: X % D + D, "divide by zero encountered in remainder"),
    "int8 MIN // -1": (np.int8, 1, -1, lambda X, D: (X * 64) // D + D, "overflow encountered in floor_divide"),
    "sqrt of a negative": (np.float64, 2.0, -1.0, lambda X, D: np.sqrt(D) + X, "invalid value encountered in sqrt"),
    "comparison with NaN": (np.float64, 2.0, np.nan, lambda X, D: (D < X) & (D >= 0.0), None),
}


#: Why a hot program's small tasks do not warn as NumPy in some cases: what a kernel reports.
KERNEL_FLAGS = ("a kernel reports a floating-point flag as NumPy's error of another ufunc (sqrt's 'invalid' as "
                "'subtract'); under fuse='auto' a program's small tasks run by kernels once it is hot, so this "
                "reaches statements of small tasks (those of a program dividing integers stay on NumPy, which "
                "warns of a division by zero where a kernel cannot)")


@pytest.mark.parametrize("case", [c if c != "sqrt of a negative" else
                                  pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=KERNEL_FLAGS))
                                  for c in sorted(SMALL_ERRORS)])
def test_auto_mode_small_tasks_warn_as_numpy(case, monkeypatch):
    """A statement whose every task is small, run until it is hot under fuse="auto", then
    run on data with an error: the locale holding it warns what NumPy warns (and no
    locale warns where NumPy does not), the values stay NumPy's."""
    import warnings as w

    from pgas import comm
    monkeypatch.setattr(fuse, "FUSE_MIN", 2048)       # every task small, at any locale count
    dtype, normal, bad, f, message = SMALL_ERRORS[case]
    n = 1024
    gd = np.full(n, normal, dtype=dtype)
    gx = np.full(n, 2, dtype=dtype)
    X, D, T = pg.from_numpy(gx), pg.from_numpy(gd), None
    with np.errstate(all="ignore"):
        T = pg.zeros(n, dtype=np.asarray(f(gx, gd)).dtype)
        for _ in range(2 * fuse.FUSE_MIN // (n // P) + fuse.FUSE_AFTER + 2):
            T[:] = f(X[:], D[:])
    gd[5] = bad
    D[5] = bad
    with w.catch_warnings(record=True) as got, np.errstate(all="warn", under="ignore"):
        w.simplefilter("always")
        T[:] = f(X[:], D[:])
    mine = sorted({str(x.message) for x in got if issubclass(x.category, RuntimeWarning)})
    seen = comm.allreduce(np.int32(message in mine), "sum")
    other = [m for m in mine if m != message]
    collective_verdict((message is None or seen >= 1) and not other, f"warnings {mine}, NumPy's: {message}")
    with np.errstate(all="ignore"):
        same_bits(T, np.asarray(f(gx, gd)))


@pytest.mark.parametrize("dist", DISTS)
def test_forall_bodies_fused(dist):
    n = 13
    GA = np.random.default_rng(3).standard_normal((n, n))
    for mode in (True, False):
        pg.config(fuse=mode)
        A, B = pg.from_numpy(GA, dist=dist), pg.zeros((n, n), dist=pg.Cyclic())
        pg.forall((range(1, n - 1), range(1, n - 1)),
                  lambda i, j: B.__setitem__((i, j), 0.25 * (A[i + 1, j] + A[i - 1, j] + A[i, j + 1] + A[i, j - 1])
                                             - A[i, j] / 3.0))
        want = np.zeros((n, n))
        want[1:-1, 1:-1] = 0.25 * (GA[2:, 1:-1] + GA[:-2, 1:-1] + GA[1:-1, 2:] + GA[1:-1, :-2]) - GA[1:-1, 1:-1] / 3.0
        same_bits(B, want)


def test_without_numba_every_task_takes_the_numpy_path(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)       # import numba now raises ImportError
    fuse.reset()
    try:
        pg.config(fuse=True)
        gx = np.arange(3 * N, dtype=np.int32)
        X = pg.from_numpy(gx, dist=pg.Cyclic())
        T = pg.zeros(3 * N - 2, dtype=np.int32)
        T[:] = X[2:] // 3 - X[:-2] * 7
        assert_matches(T, gx[2:] // 3 - gx[:-2] * 7)
        collective_verdict(fuse.stats["fused"] == 0 and fuse.stats["numpy"] > 0, f"{fuse.stats}")
    finally:
        monkeypatch.undo()
        fuse.reset()


def test_fuse_setting_is_checked():
    with pytest.raises(ValueError, match="fuse must be"):
        pg.config(fuse="always")
    assert pg.config(fuse=False)["fuse"] is False
    assert pg.config(fuse="auto")["fuse"] == "auto"
    assert pg.config()["fuse"] == "auto"

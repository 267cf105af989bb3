"""Threads within a locale (:mod:`pgas.exec.workers`, ``pg.config(threads=N)``): fused
stencils, whole-array reductions, gathers and updates give the same values, bit for bit,
at 1, 2 and 4 threads (and NumPy's); a split kernel's floating-point errors are reported
as at one thread.  The split threshold is lowered so that small arrays are split."""

import warnings

import numpy as np
import pytest

import pgas as pg
from pgas.array.reductions import threaded
from pgas.exec import fuse, workers
from util import assert_matches, collective_verdict

pytest.importorskip("numba")

P = pg.num_locales
ME = pg.here
THREADS = (1, 2, 4)


@pytest.fixture(autouse=True)
def _small_splits(monkeypatch):
    monkeypatch.setattr(workers, "SPLIT_MIN", 256)
    pg.config(fuse=True)
    yield
    pg.config()


def _each_thread_count(fn):
    """``{threads: fn()}`` for each count of :data:`THREADS`, and whether the runs at more
    than one thread split work on this locale."""
    got, before = {}, workers.stats["split"]
    for t in THREADS:
        pg.config(threads=t)
        got[t] = fn()
    return got, workers.stats["split"] > before


def _jacobi(n, dtype, steps=3):
    a = (np.arange(n * n) % 97 / 7.0).astype(dtype).reshape(n, n)
    A = pg.from_numpy(a)
    B = pg.zeros((n, n), dtype=dtype)
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
        A[1:-1, 1:-1] = B[1:-1, 1:-1] * 1.0
    return A


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_stencil_is_the_same_at_every_thread_count(dtype):
    n = 96
    got, split = _each_thread_count(lambda: _jacobi(n, dtype).to_numpy())
    want = (np.arange(n * n) % 97 / 7.0).astype(dtype).reshape(n, n)
    for _ in range(3):
        b = np.zeros_like(want)
        b[1:-1, 1:-1] = 0.2 * (want[1:-1, 1:-1] + want[:-2, 1:-1] + want[2:, 1:-1] + want[1:-1, :-2] + want[1:-1, 2:])
        want[1:-1, 1:-1] = b[1:-1, 1:-1] * 1.0
    collective_verdict(all(np.array_equal(got[t], want) for t in THREADS),
                       lambda: f"threads {[t for t in THREADS if not np.array_equal(got[t], want)]} differ from NumPy")
    collective_verdict(split, "no kernel was split at 2 or 4 threads")


def test_one_dimensional_and_in_place_kernels_split_alike():
    n = 5000
    x = np.linspace(-3, 3, n)

    def run():
        A = pg.from_numpy(x)
        B = pg.zeros(n)
        B[...] = A * A - 2.0 * A + 1.0
        B[1:] = B[1:] + A[:-1]
        return B.to_numpy()
    got, split = _each_thread_count(run)
    want = x * x - 2.0 * x + 1.0
    want[1:] = want[1:] + x[:-1]
    collective_verdict(all(np.array_equal(got[t], want) for t in THREADS), "1-D kernels differ")
    collective_verdict(split, "no 1-D kernel was split")


def test_one_dimensional_strided_kernels_split_alike():
    """A 1-D kernel over a strided view (every other element read, written, or both) is cut
    into blocks of its elements, each view's offset moved on by its own stride."""
    n = 6000
    x = np.arange(3 * n, dtype=np.float64) % 101

    def run():
        X = pg.from_numpy(x)
        A = pg.zeros(n)
        A[:] = X[::3] * 2.0
        C = pg.zeros(3 * n)
        C[1::3] = A + 1.0
        C[::3] = X[2::3] - A
        return np.concatenate([A.to_numpy(), C.to_numpy()])
    got, split = _each_thread_count(run)
    a = x[::3] * 2.0
    c = np.zeros(3 * n)
    c[1::3] = a + 1.0
    c[::3] = x[2::3] - a
    want = np.concatenate([a, c])
    collective_verdict(all(np.array_equal(got[t], want) for t in THREADS),
                       lambda: f"threads {[t for t in THREADS if not np.array_equal(got[t], want)]} differ from NumPy")
    collective_verdict(split, "no strided 1-D kernel was split")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("op", ["sum", "min", "max", "prod"])
def test_reductions_are_bit_identical_across_thread_counts(dtype, op):
    n = 4099
    rng = np.random.default_rng(5)
    if np.dtype(dtype).kind == "f":
        a = (rng.standard_normal(n) * rng.choice([1.0, 1e9, 1e-9], n)).astype(dtype)
    else:
        a = rng.integers(0, 2 if dtype is np.bool_ else 1000, n).astype(dtype)
    if op == "prod" and np.dtype(dtype).kind == "f":
        a = (1 + a / 1e10).astype(dtype)
    A = pg.from_numpy(a)
    got, _ = _each_thread_count(lambda: getattr(A, op)())
    collective_verdict(all(np.asarray(got[t]).tobytes() == np.asarray(got[1]).tobytes() for t in THREADS),
                       lambda: f"{op}: {[got[t] for t in THREADS]}")
    if P == 1:                                 # one locale: NumPy's own reduction of the whole array
        want = getattr(np, op)(a)
        collective_verdict(np.asarray(got[2]).tobytes() == np.asarray(want).tobytes(), f"{got[2]!r} != {want!r}")


@pytest.mark.parametrize("shape", [(1000,), (100003,), (300, 301), (3, 5, 7001)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_split_float_sum_is_numpys_pairwise_sum(shape, dtype):
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * rng.choice([1.0, 1e10], shape)).astype(dtype)
    for ways in (2, 3, 4, 8):
        got = threaded.local(np.sum, "sum", x, {}, ways)
        assert type(got) is type(np.sum(x)) and got == np.sum(x), (ways, got, np.sum(x))
    assert threaded.local(np.sum, "sum", np.full(4000, -0.0), {}, 4).tobytes() == np.sum(np.full(4000, -0.0)).tobytes()


def test_the_pairwise_cuts_are_numpys():
    assert threaded.cuts(1000, 1) == [(0, 496), (496, 1000)]
    assert threaded.cuts(100, 3) == [(0, 100)]
    leaves = threaded.cuts(100003, 3)
    assert len(leaves) == 8 and leaves[0][0] == 0 and leaves[-1][1] == 100003
    assert all(a[1] == b[0] for a, b in zip(leaves, leaves[1:]))


def test_gathers_and_updates_are_the_same_at_every_thread_count():
    n = 6000
    rng = np.random.default_rng(11 + ME)
    idx = rng.integers(0, n, 5000)
    vals = rng.standard_normal(5000)

    splits = {}

    def run():
        A = pg.from_numpy(np.arange(n, dtype=np.float64) / 3.0, dist=pg.Cyclic())
        before = workers.stats["split"]
        A.update(idx, vals, "add")
        A.update(idx[:2000], vals[:2000] * 1e8, "add")
        splits["update"] = splits.get("update", 0) + workers.stats["split"] - before
        plan = A.index_plan(idx)
        before = workers.stats["split"]
        got = [A.gather(plan) for _ in range(3)]
        splits["gather"] = splits.get("gather", 0) + workers.stats["split"] - before
        return A.to_numpy(), got[-1]
    got, _ = _each_thread_count(run)
    want = np.arange(n, dtype=np.float64) / 3.0
    everyone = pg.comm.allgather((idx, vals))
    for i, v in everyone:
        np.add.at(want, i, v)
    for i, v in everyone:
        np.add.at(want, i[:2000], v[:2000] * 1e8)
    # (an update combines a locale's repeats first, then adds them: NumPy's order differs in rounding)
    collective_verdict(np.allclose(got[1][0], want, rtol=1e-12), "update differs from NumPy's")
    collective_verdict(all(np.array_equal(got[t][0], got[1][0]) for t in THREADS), "update differs by thread count")
    collective_verdict(all(np.array_equal(got[t][1], got[t][0][idx]) for t in THREADS), "gather differs")
    collective_verdict(splits["update"] > 0 and splits["gather"] > 0, f"splits: {splits}")


def test_a_split_kernels_floating_point_errors_are_reported():
    n = 64
    a = np.ones((n, n))
    a[-1, -1] = 0.0                                 # in the last block: a pool thread's
    A = pg.from_numpy(a)
    saw = {}
    for t in THREADS:
        pg.config(threads=t)
        with warnings.catch_warnings(record=True) as seen, np.errstate(divide="warn"):
            warnings.simplefilter("always")
            B = 1.0 / A
        saw[t] = any("divide by zero" in str(w.message) for w in seen)
        with np.errstate(divide="ignore"):
            assert_matches(B, 1.0 / a, rtol=0)
    collective_verdict(saw[2] == saw[4] == saw[1], f"divide warnings by thread count: {saw}")
    collective_verdict(pg.comm.allreduce(np.int32(saw[1]), "max") == 1, "no locale warned")


def test_the_kernel_path_is_the_same_at_one_thread():
    pg.config(threads=1)
    before = dict(workers.stats)
    _jacobi(64, np.float64)
    assert workers.stats == before and fuse.stats["fused"] > 0


def test_a_compiled_updates_floating_point_errors_are_reported():
    """A compiled update (``fuse=True``) that overflows warns as NumPy's ``ufunc.at`` does
    (``fuse=False``), at every thread count: each locale's repeated indices are combined
    (``1e308 + 1e308``) before they are sent."""
    n = 6000
    idx = np.repeat(np.arange(0, n, 2), 2)
    saw = {}
    for fuse_mode in (False, True):
        pg.config(fuse=fuse_mode)
        for t in THREADS:
            pg.config(threads=t)
            A = pg.from_numpy(np.full(n, 1e308), dist=pg.Cyclic())
            with warnings.catch_warnings(record=True) as seen, np.errstate(over="warn"):
                warnings.simplefilter("always")
                A.update(idx, np.full(len(idx), 1e308), "add")
            saw[fuse_mode, t] = any("overflow" in str(w.message) for w in seen)
            collective_verdict(np.isinf(A.to_numpy()[::2]).all(), "the overflowed elements are not inf")
    collective_verdict(all(saw.values()), f"overflow warned (fuse, threads): {saw}")

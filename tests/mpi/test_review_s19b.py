"""Hostile review (s19b) of the lowering memo (pgas.array.lowering) and of the fused row
kernels with the in-place store rule (pgas.exec.fuserows, fuse.in_place): statements
repeated with something changed between runs, and in-place statements on aliased
views, each compared with NumPy exactly (values, dtypes, signs of zeros)."""

import numpy as np
import pytest

import pgas as pg
from util import assert_matches, collective_verdict


@pytest.fixture(autouse=True)
def _defaults():
    pg.config()
    yield
    pg.config()


def _exact(A, want):
    """A equals want exactly: dtype, values (NaN equal) and signs of zeros."""
    want = np.asarray(want)
    assert_matches(A, want, rtol=0.0)
    got = A.to_numpy()
    ok = got.dtype == want.dtype and np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
    if want.dtype.kind == "f":
        ok = ok and np.array_equal(np.signbit(got), np.signbit(want))
    collective_verdict(ok, lambda: f"got {got!r}, expected {want!r}")


def test_reduction_scalar_changes_between_iterations():
    # s = A.sum() is an np.float64 that changes each iteration: the memo keys it by bits.
    a = np.arange(1.0, 9.0)
    A = pg.from_numpy(a.copy())
    for _ in range(4):
        s = A.sum()
        A[:] = A / s + 1.0
        a[:] = a / a.sum() + 1.0
    _exact(A, a)


def test_forall_closure_constant_and_domain_change():
    n = 9
    a = np.arange(n, dtype=np.float64)
    A = pg.from_numpy(a.copy())
    B = pg.zeros(n)
    b = np.zeros(n)
    for k in (1, 2, 0, 3):
        pg.forall(range(k, n), lambda i: B.__setitem__(i, A[i - k] * k))
        b[k:] = a[:n - k] * k
        _exact(B, b)
    C, c = pg.zeros((n, n)), np.zeros((n, n))
    for k in (0, 2, 1):
        pg.forall((range(n), lambda i: range(i + k, n)), lambda i, j: C.__setitem__((i, j), A[j] + k))
        for i in range(n):
            c[i, i + k:] = a[i + k:] + k
        _exact(C, c)


def test_transposes_and_swapaxes_same_shape():
    a = np.arange(16.0).reshape(4, 4)
    A = pg.from_numpy(a)
    T = pg.zeros((4, 4))
    for src, ref in [(A.T, a.T), (A, a), (np.transpose(A), a.T), (A[::-1], a[::-1]), (A[:, ::-1].T, a[:, ::-1].T),
                     (pg.swapaxes(A, 0, 1)[::-1], a.T[::-1]), (A, a)]:
        T[...] = src + 0.0
        _exact(T, ref + 0.0)


def test_views_of_views_and_newaxis():
    a = np.arange(24.0).reshape(4, 6)
    A = pg.from_numpy(a)
    T, t = pg.zeros((4, 6)), np.zeros((4, 6))
    cases = [(A[1:][:, None, 2], a[1:][:, None, 2]), (A[:, ::2][1:, :], a[:, ::2][1:, :]),
             (A[::-1][1:, ::-2], a[::-1][1:, ::-2]), (A[3, None, ::-2], a[3, None, ::-2])]
    for v, w in cases:
        T[:3, :3] = v * 2.0
        t[:3, :3] = w * 2.0
        _exact(T, t)


def test_freed_and_reallocated_arrays_with_other_layouts():
    # the same statement over fresh arrays of other distributions/ghosts each time
    for it, (dist, gh) in enumerate([(pg.Block(), None), (pg.Cyclic(), None), (pg.Block(), (1,)),
                                     (pg.BlockCyclic(2), None), (pg.Block(), (2,))]):
        a = np.arange(10.0) * (it + 1)
        A = pg.from_numpy(a, dist=dist, ghosts=gh) if gh else pg.from_numpy(a, dist=dist)
        B = pg.zeros(10, dist=pg.Cyclic() if it % 2 else pg.Block())
        B[1:-1] = A[2:] - A[:-2]
        want = np.zeros(10)
        want[1:-1] = a[2:] - a[:-2]
        _exact(B, want)
        del A, B


@pytest.mark.parametrize("const", [3, np.int64(3), True, np.int8(3), 3.0, np.float32(3.0)])
def test_int8_constants_of_each_type(const):
    a = np.arange(-5, 5, dtype=np.int8) * 13
    A = pg.from_numpy(a.copy())
    for _ in range(2):
        R = A * const
        _exact(R, a * const)
        A[:] = A + const if not isinstance(const, (float, np.floating)) else A
        a[:] = a + const if not isinstance(const, (float, np.floating)) else a
        _exact(A, a)


def test_float32_weak_and_strong_scalars_bit_identical():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(33).astype(np.float32)
    for c in (0.1, np.float64(0.1), np.float32(0.1), 0.1):
        A = pg.from_numpy(a.copy())
        A[:] = A * c + A
        _exact(A, (a * c + a).astype(np.float32))


def test_signed_zero_constants_back_to_back():
    a = np.zeros(7)
    A = pg.from_numpy(a)
    for c in (0.0, -0.0, 0.0, np.float64(-0.0), -0.0):
        R = A * c
        _exact(R, a * c)


@pytest.mark.parametrize("key", ["shift_up", "shift_down", "reverse", "stride2"])
def test_in_place_operators_on_overlapping_views(key):
    # NumPy buffers overlapping in-place ufuncs: a[1:] += a[:-1] reads the old a[:-1].
    a = np.arange(1.0, 14.0)
    A = pg.from_numpy(a.copy())
    for _ in range(2):
        if key == "shift_up":
            A[1:] += A[:-1]
            a[1:] += a[:-1]
        elif key == "shift_down":
            A[:-1] *= A[1:]
            a[:-1] *= a[1:]
        elif key == "reverse":
            A[:] -= A[::-1]
            a[:] -= a[::-1]
        else:
            A[::2] = A[1::2] * 2.0 + A[:-1:2] if len(a[::2]) == len(a[1::2]) else A[::2]
            a[::2] = a[1::2] * 2.0 + a[:-1:2] if len(a[::2]) == len(a[1::2]) else a[::2]
            A[1:-1:2] = A[2::2] + A[1:-1:2]
            a[1:-1:2] = a[2::2] + a[1:-1:2]
        _exact(A, a)


@pytest.mark.parametrize("owner", ["write", "cost"])
def test_in_place_same_mapping_with_owner_policies(owner):
    pg.config(owner=owner)
    n = 12
    a = np.arange(n * n, dtype=np.float64).reshape(n, n)
    b = np.arange(n * n, dtype=np.float64)[::-1].reshape(n, n).copy()
    A = pg.from_numpy(a.copy(), dist=pg.Block())
    B = pg.from_numpy(b, dist=pg.Cyclic())
    for _ in range(3):
        A[:, 1:] = A[:, 1:] * 0.5 + B[:, :-1].T.T
        a[:, 1:] = a[:, 1:] * 0.5 + b[:, :-1]
        _exact(A, a)
        A[1:, :] = A[1:, :] - B.T[1:, :]
        a[1:, :] = a[1:, :] - b.T[1:, :]
        _exact(A, a)


def test_in_place_reads_other_view_of_written_array():
    # the written array read through the written mapping AND through its transpose
    n = 8
    a = np.arange(n * n, dtype=np.float64).reshape(n, n)
    A = pg.from_numpy(a.copy(), dist=pg.BlockCyclic(3))
    for _ in range(2):
        A[...] = A + A.T * 2.0
        a[...] = a + a.T * 2.0
        _exact(A, a)
        A[:, ::-1] = A[:, ::-1] * 3.0 + A[:, ::-1]
        a[:, ::-1] = a[:, ::-1] * 3.0 + a[:, ::-1]
        _exact(A, a)


def test_forall_in_place_same_ref_and_reversed_ref():
    n = 11
    a = np.arange(n, dtype=np.float64)
    A = pg.from_numpy(a.copy(), dist=pg.BlockCyclic(2))
    pg.forall(range(n), lambda i: A.__setitem__(i, A[i] * 2.0 + A[n - 1 - i]))
    a = a * 2.0 + a[::-1]
    _exact(A, a)
    pg.forall(range(n), lambda i: A.__setitem__(i, A[i] - 1.0))
    a = a - 1.0
    _exact(A, a)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.float32])
def test_row_kernel_overflow_and_rounding(dtype):
    n = 37
    a = (np.arange(n) * 7 % 256 - 128).astype(dtype) if dtype != np.uint8 else (np.arange(n) * 7 % 256).astype(dtype)
    A = pg.from_numpy(a.copy(), dist=pg.BlockCyclic(4))
    B = pg.from_numpy(a[::-1].copy(), dist=pg.Block())
    with np.errstate(all="ignore"):
        for _ in range(2):
            A[:] = A * A + B * 3
            a[:] = a * a + a[::-1].copy() * 3 if False else a * a + np.asarray(B.to_numpy()) * 3
            _exact(A, a)


def test_broadcast_length_one_operands_2d():
    a = np.arange(30.0).reshape(5, 6)
    A = pg.from_numpy(a.copy())
    R = pg.from_numpy(np.arange(6.0)[None, :].copy())
    C = pg.from_numpy(np.arange(5.0)[:, None].copy())
    for _ in range(2):
        A[...] = A * R + C
        a[...] = a * np.arange(6.0)[None, :] + np.arange(5.0)[:, None]
        _exact(A, a)
        A[...] = A - A[0:1, :]     # reads a row of the written array broadcast
        a[...] = a - a[0:1, :]
        _exact(A, a)
        A[...] = A + A[:, -1:]
        a[...] = a + a[:, -1:]
        _exact(A, a)


def test_replicated_numpy_operand_mutated_between_runs():
    a = np.arange(8.0)
    A = pg.from_numpy(a)
    w = np.ones(8)
    T = pg.zeros(8)
    for k in range(3):
        w[:] = k - 1.0
        T[:] = A * w
        _exact(T, a * w)


def test_ghosted_in_place_then_ghost_read():
    n = 16
    a = np.arange(n, dtype=np.float64)
    A = pg.from_numpy(a.copy(), ghosts=(1,))
    B = pg.zeros(n)
    b = np.zeros(n)
    for _ in range(3):
        pg.update_ghosts(A) if hasattr(pg, "update_ghosts") else A.update_ghosts()
        A[1:-1] = A[1:-1] * 2.0          # in place, own elements only
        a[1:-1] = a[1:-1] * 2.0
        B[1:-1] = A[:-2] + A[2:]         # neighbours' (possibly ghost) elements
        b[1:-1] = a[:-2] + a[2:]
        _exact(B, b)
    _exact(A, a)


def test_where_and_out_kwargs_repeated():
    a = np.linspace(-2, 2, 9)
    A = pg.from_numpy(a)
    O = pg.zeros(9)
    for t in (0.5, -0.5, 0.5):
        R = pg.where(A > t, A, -A)
        _exact(R, np.where(a > t, a, -a))
        np.multiply(A, t, out=O)
        _exact(O, a * t)


DISTS = {"block": pg.Block(), "cyclic": pg.Cyclic(), "bc3": pg.BlockCyclic(3)}

# In-place candidates: (pgas statement, NumPy statement) on 2-D A (written), B (read).
INPLACE = {
    "same-view": (lambda A, B: A.__setitem__((slice(1, None), slice(2, None)), A[1:, 2:] * 3.0 - B[1:, 2:]),
                  lambda a, b: a.__setitem__((slice(1, None), slice(2, None)), a[1:, 2:] * 3.0 - b[1:, 2:])),
    "same-view-T.T": (lambda A, B: A.__setitem__((slice(None), slice(1, None)), A.T.T[:, 1:] + A[:, 1:] * B[:, :-1]),
                      lambda a, b: a.__setitem__((slice(None), slice(1, None)), a[:, 1:] + a[:, 1:] * b[:, :-1])),
    "rows-shift": (lambda A, B: A.__setitem__(slice(1, None), A[1:] + A[:-1]),
                   lambda a, b: a.__setitem__(slice(1, None), a[1:] + a[:-1])),
    "cols-shift": (lambda A, B: A.__setitem__((slice(None), slice(None, -1)), A[:, :-1] - A[:, 1:]),
                   lambda a, b: a.__setitem__((slice(None), slice(None, -1)), a[:, :-1] - a[:, 1:])),
    "reversed-write": (lambda A, B: A.__setitem__((slice(None), slice(None, None, -1)), A[:, ::-1] * 2.0 + B),
                       lambda a, b: a.__setitem__((slice(None), slice(None, None, -1)), a[:, ::-1] * 2.0 + b)),
    "transpose-read": (lambda A, B: A.__setitem__((slice(0, 7), slice(0, 7)), A[:7, :7] + A[:7, :7].T),
                       lambda a, b: a.__setitem__((slice(0, 7), slice(0, 7)), a[:7, :7] + a[:7, :7].T)),
    "strided-write": (lambda A, B: A.__setitem__((slice(None), slice(None, None, 2)), A[:, ::2] * A[:, ::2] + 1.0),
                      lambda a, b: a.__setitem__((slice(None), slice(None, None, 2)), a[:, ::2] * a[:, ::2] + 1.0)),
    "row-broadcast": (lambda A, B: A.__setitem__(slice(1, None), A[1:] - A[0:1] * 0.5),
                      lambda a, b: a.__setitem__(slice(1, None), a[1:] - a[0:1] * 0.5)),
    "col-broadcast": (lambda A, B: A.__setitem__((slice(None), slice(1, None)), A[:, 1:] - A[:, :1]),
                      lambda a, b: a.__setitem__((slice(None), slice(1, None)), a[:, 1:] - a[:, :1])),
    "interleaved": (lambda A, B: A.__setitem__((slice(None), slice(1, None, 2)), A[:, 1::2] + A[:, 0:-1:2]),
                    lambda a, b: a.__setitem__((slice(None), slice(1, None, 2)), a[:, 1::2] + a[:, 0:-1:2])),
    "column-only": (lambda A, B: A.__setitem__((slice(None), 3), A[:, 3] * 2.0 + B[:, 4]),
                    lambda a, b: a.__setitem__((slice(None), 3), a[:, 3] * 2.0 + b[:, 4])),
}


@pytest.mark.parametrize("case", sorted(INPLACE))
@pytest.mark.parametrize("owner", ["write", "cost"])
def test_fused_in_place_against_numpy(case, owner):
    pytest.importorskip("numba")
    pg.config(fuse=True, owner=owner)
    f, g = INPLACE[case]
    rng = np.random.default_rng(len(case))
    a = rng.standard_normal((10, 9))
    b = rng.standard_normal((10, 9))
    for an, bn in [("block", "cyclic"), ("bc3", "block")] if owner == "write" else [("cyclic", "bc3")]:
        A = pg.from_numpy(a.copy(), dist=DISTS[an])
        B = pg.from_numpy(b.copy(), dist=DISTS[bn])
        want = a.copy()
        for _ in range(2):
            f(A, B)
            g(want, b)
        _exact(A, want)


@pytest.mark.parametrize("owner", ["write", "cost"])
def test_fused_forall_in_place_on_domains_with_parts_and_clips(owner):
    pytest.importorskip("numba")
    pg.config(fuse=True, owner=owner)
    n = 9
    rng = np.random.default_rng(3)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, n))
    A = pg.from_numpy(a.copy(), dist=pg.BlockCyclic(2))
    B = pg.from_numpy(b.copy(), dist=pg.Cyclic())
    want = a.copy()
    for k in (0, 2, 1):
        pg.forall((range(n), lambda i: range(i + k, n)),
                  lambda i, j: A.__setitem__((i, j), A[i, j] * 2.0 - B[j, i]))
        pg.forall((range(1, n), range(n)), lambda i, j: A.__setitem__((i, j), A[i, j] + A[i - 1, j]))
        pg.forall(range(n), lambda i: A.__setitem__((i, n - 1 - i), A[i, n - 1 - i] * 0.5))
        for i in range(n):
            for j in range(i + k, n):
                want[i, j] = want[i, j] * 2.0 - b[j, i]
        want[1:] = want[1:] + want[:-1].copy()
        for i in range(n):
            want[i, n - 1 - i] *= 0.5
        _exact(A, want)


def test_forall_scalar_from_reduction_captured():
    n = 10
    a = np.arange(1.0, n + 1)
    A = pg.from_numpy(a.copy(), dist=pg.Cyclic())
    for _ in range(3):
        s = A.sum()
        pg.forall(range(n), lambda i: A.__setitem__(i, A[i] / s))
        a = a / a.sum()
        _exact(A, a)


def test_forall_python_conditional_on_captured_flag():
    n = 8
    a = np.arange(n, dtype=np.int64)
    A = pg.from_numpy(a.copy())
    B = pg.zeros(n, dtype=np.int64)
    for flag in (True, False, True):
        def body(i):
            if flag:
                B[i] = A[n - 1 - i] * 2
            else:
                B[i] = A[i] + 1
        pg.forall(range(n), body)
        _exact(B, a[::-1] * 2 if flag else a + 1)


@pytest.mark.parametrize("fuse", [True, False])
def test_out_argument_overlapping_the_inputs(fuse):
    # NumPy makes overlapping ufunc inputs behave as if copied first.
    if fuse:
        pytest.importorskip("numba")
    pg.config(fuse=fuse)
    n = 8
    a = np.arange(n * n, dtype=np.float64).reshape(n, n) - 20.0
    A = pg.from_numpy(a.copy(), dist=pg.BlockCyclic(3))
    steps = [
        (lambda X: np.add(X[1:], X[:-1], out=X[1:]), lambda x: np.add(x[1:], x[:-1], out=x[1:])),
        (lambda X: np.negative(X[::-1], out=X), lambda x: np.negative(x[::-1], out=x)),
        (lambda X: np.subtract(X[:, :1], X, out=X), lambda x: np.subtract(x[:, :1], x, out=x)),
        (lambda X: np.add(X, X.T, out=X), lambda x: np.add(x, x.T, out=x)),
        (lambda X: np.multiply(X[:, 1:], 0.5, out=X[:, 1:]), lambda x: np.multiply(x[:, 1:], 0.5, out=x[:, 1:])),
        (lambda X: np.maximum(X[2:, ::-1], X[:-2, :], out=X[2:]), lambda x: np.maximum(x[2:, ::-1], x[:-2, :], out=x[2:])),
    ]
    for f, g in steps:
        f(A)
        g(a)
        _exact(A, a)

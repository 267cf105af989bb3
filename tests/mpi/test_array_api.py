"""``pgas.array_api``, the array API standard's namespace, against NumPy on the global arrays:
creation, the standard's type promotion (no rule across kinds), the device, inspection, and a few
functions of each category (element-wise, reductions, linear algebra, manipulation, searching, set,
sorting, utility).  The standard's own suite runs in ``tests/pure/test_array_api_suite.py``."""

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg

xp = pg.array_api
RNG = np.random.default_rng(7)
G = RNG.standard_normal((6, 5))
H = RNG.standard_normal((6, 5))


def same(got, want, rtol=1e-12):
    """Collective: a namespace result equals NumPy's (a DistArray, or a 0-d array on every locale)."""
    if isinstance(got, pg.DistArray):
        assert_matches(got, np.asarray(want), rtol=rtol)
    else:
        got = np.asarray(got)
        want = np.asarray(want)
        collective_verdict(got.shape == want.shape and got.dtype == want.dtype
                           and np.allclose(got, want, rtol=rtol, equal_nan=True), f"{got!r} != {want!r}")


def test_namespace_and_device():
    A = xp.asarray(G)
    assert isinstance(A, pg.DistArray)
    assert A.__array_namespace__() is xp and xp.__array_api_version__ == "2023.12"
    assert A.device == xp.LOCALES and xp.to_device(A, A.device) is A
    with pytest.raises(ValueError, match="2023.12"):
        A.__array_namespace__(api_version="2021.12")
    with pytest.raises(ValueError, match="device"):
        xp.zeros(3, device="gpu")
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == xp.float64
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                                 "uint64"}


def test_creation():
    same(xp.zeros((3, 4), dtype=xp.int32), np.zeros((3, 4), np.int32))
    same(xp.full((5,), 2.5), np.full(5, 2.5))
    same(xp.full((2, 2), True), np.full((2, 2), True))
    same(xp.arange(1, 10, 3), np.arange(1, 10, 3))
    same(xp.linspace(0, 1, 7), np.linspace(0, 1, 7))
    same(xp.eye(4, 3, k=1), np.eye(4, 3, k=1))
    same(xp.ones_like(xp.asarray(G)), np.ones_like(G))
    same(xp.tril(xp.asarray(G), k=-1), np.tril(G, k=-1))
    z = xp.zeros(())                        # 0-d: a NumPy array, the same on every locale
    assert isinstance(z, np.ndarray) and z.shape == ()


def test_promotion():
    assert xp.result_type(xp.int8, xp.uint8) == xp.int16
    assert xp.result_type(xp.float32, xp.complex64, xp.float64) == xp.complex128
    for a, b in [(xp.int64, xp.float64), (xp.bool, xp.int8), (xp.uint64, xp.int64)]:
        assert xp.result_type(a, b) == np.promote_types(a, b)       # across kinds: NumPy's (the library's choice)
        assert not xp.can_cast(a, b)
    assert xp.can_cast(xp.int8, xp.int32) and not xp.can_cast(xp.int32, xp.float64)
    assert xp.isdtype(xp.uint8, "integral") and not xp.isdtype(xp.float32, ("integral", "complex floating"))
    assert xp.finfo(xp.complex64).dtype == xp.float32 and isinstance(xp.finfo(xp.float64).eps, float)
    assert xp.iinfo(xp.int8).max == 127
    A, B = xp.asarray(G), xp.asarray(G.astype(np.int64))
    same(xp.add(A, B), G + G.astype(np.int64))            # mixed kinds: NumPy's float64
    same(xp.add(xp.asarray(np.int8([1, 2])), xp.asarray(np.uint8([3, 250]))), np.int16([4, 252]))
    same(xp.multiply(xp.asarray(np.float32([1.5, 2])), 2), np.float32([3, 4]))   # a Python scalar: weak


def test_elementwise():
    A, B = xp.asarray(G), xp.asarray(H)
    same(xp.atan2(A, B), np.arctan2(G, H))
    same(xp.pow(xp.abs(A), 0.5), np.abs(G) ** 0.5)
    same(xp.less(A, B), G < H)
    same(xp.add(A, xp.asarray(H[0])), G + H[0])        # broadcast (distributed: a lazy expression)
    same(xp.add(A, xp.asarray(2.0)), G + 2.0)          # a 0-d operand
    same(xp.clip(A, -0.5, 0.5), np.clip(G, -0.5, 0.5))
    same(xp.round(A), np.round(G))


def test_reductions_and_statistics():
    A = xp.asarray(G)
    same(xp.sum(A), G.sum())
    same(xp.mean(A, axis=0), G.mean(axis=0))
    same(xp.max(A, axis=1, keepdims=True), G.max(axis=1, keepdims=True))
    same(xp.var(A, correction=1), G.var(ddof=1))
    same(xp.std(A, axis=(0, 1)), G.std())
    I8 = xp.asarray(np.int8([100, 100, 100]))
    same(xp.sum(I8), np.int64(300))                    # the default integer type accumulates
    same(xp.all(xp.greater(A, -10)), np.bool_(True))
    same(xp.any(xp.greater(A, 0), axis=0), (G > 0).any(axis=0))
    same(xp.cumulative_sum(A, axis=1), np.cumulative_sum(G, axis=1))


def test_linear_algebra():
    A, B = xp.asarray(G), xp.asarray(H)
    same(xp.matmul(A, xp.matrix_transpose(B)), G @ H.T, rtol=1e-10)
    same(xp.vecdot(A, B), np.vecdot(G, H), rtol=1e-10)
    same(xp.tensordot(A, B, axes=2), np.tensordot(G, H, axes=2), rtol=1e-10)
    same(xp.linalg.matmul(A, xp.matrix_transpose(B)), G @ H.T, rtol=1e-10)


def test_manipulation_searching_sets_sorting():
    A = xp.asarray(G)
    same(xp.reshape(A, (5, 6)), G.reshape(5, 6))
    same(xp.permute_dims(A, (1, 0)), G.T)
    same(xp.concat([A, A], axis=1), np.concat([G, G], axis=1))
    same(xp.expand_dims(A, axis=0), G[None])
    same(xp.roll(A, 2, axis=0), np.roll(G, 2, axis=0))
    same(xp.argmax(A), np.argmax(G))
    same(xp.argmin(A, axis=1), np.argmin(G, axis=1))
    same(xp.where(xp.greater(A, 0), A, 0.0), np.where(G > 0, G, 0.0))
    V = np.array([3, 1, 2, 3, 1, 3])
    vals, counts = xp.unique_counts(xp.asarray(V))
    same(vals, [1, 2, 3])
    same(counts, [2, 1, 3])
    same(xp.sort(xp.asarray(V), descending=True), [3, 3, 3, 2, 1, 1])
    same(xp.argsort(xp.asarray(V), descending=True), [0, 3, 5, 2, 1, 4])
    same(xp.nonzero(xp.asarray(V - 1))[0], np.nonzero(V - 1)[0])
    same(xp.concat([xp.reshape(A, (-1,)), xp.asarray(V)]), np.concat([G.reshape(-1), V]))

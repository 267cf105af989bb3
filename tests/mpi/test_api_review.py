"""Reviewer r2: NumPy-facing API against NumPy (each test is a silent wrong answer found in review, now fixed)."""

import numpy as np
import pytest

import pgas as pg
from util import assert_matches, collective_verdict

DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3)]


@pytest.mark.parametrize("dist", DISTS)
def test_slice_write_of_numpy_integer_scalar_out_of_range_raises(dist):
    # NumPy: B[:] = np.int64(2**40) into int32 raises OverflowError (as B[1] = ... does in pgas);
    # pgas silently stores 0 (wrapped) on every element.
    B = pg.zeros(4, dtype=np.int32, dist=dist)
    with pytest.raises(OverflowError):
        B[:] = np.int64(2**40)


@pytest.mark.parametrize("dist", DISTS)
def test_slice_write_of_numpy_int16_scalar_into_int8_raises(dist):
    # NumPy raises OverflowError; pgas stores 44 (300 wrapped) silently.
    B = pg.zeros(4, dtype=np.int8, dist=dist)
    with pytest.raises(OverflowError):
        B[:] = np.int16(300)


@pytest.mark.parametrize("dist", DISTS)
def test_arange_of_numpy_small_int_scalars_has_numpy_dtype(dist):
    # np.arange(np.int8(1), np.int8(100), np.int8(7)) is int64 in NumPy 2; pgas makes int8.
    args = (np.int8(1), np.int8(100), np.int8(7))
    assert_matches(pg.arange(*args, dist=dist), np.arange(*args))


@pytest.mark.parametrize("dist", DISTS)
def test_arange_of_int8_start_does_not_wrap(dist):
    # pgas: pg.arange(np.int8(120), 130) -> [120 ... 127, -128, -127] (int8, wrapped), silently.
    # NumPy 2.4 raises ValueError here; either raise, or give 120..129.
    try:
        A = pg.arange(np.int8(120), 130, dist=dist)
    except (ValueError, OverflowError, TypeError):
        return
    got = A.to_numpy()
    collective_verdict(bool(np.array_equal(got.astype(np.int64), np.arange(120, 130))), f"got {got!r}")



@pytest.mark.parametrize("dist", DISTS)
def test_numpy_scalars_in_range_are_stored(dist):
    B = pg.zeros(4, dtype=np.int32, dist=dist)
    B[:] = np.int64(7)
    B[1:] = np.int8(-3)
    F = pg.zeros(3, dist=dist)
    F[:] = np.float32(2.5)
    assert_matches(B, np.array([7, -3, -3, -3], np.int32))
    assert_matches(F, np.full(3, 2.5))




@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("shape,axis,keepdims", [((3, 0), 0, False), ((3, 0), -2, True), ((0, 3), -1, True),
                                                  ((0, 3), 1, False)])
def test_argmax_along_axis_with_empty_result(dist, op, shape, axis, keepdims):
    # NumPy: np.argmax(zeros((3, 0)), axis=0) is an empty int64 array (nothing to reduce is empty
    # only along the other axis); pgas raises "attempt to get argmax of an empty sequence".
    G = np.zeros(shape)
    A = pg.from_numpy(G, dist=dist)
    assert_matches(getattr(np, op)(A, axis=axis, keepdims=keepdims), getattr(np, op)(G, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dist", DISTS)
def test_norm_inf_of_empty_vector(dist):
    # NumPy 2.4: np.linalg.norm(np.array([]), np.inf) == 0.0; pgas raises ValueError (zero-size maximum).
    A = pg.from_numpy(np.array([]), dist=dist)
    got = np.linalg.norm(A, np.inf)
    collective_verdict(got == np.linalg.norm(np.array([]), np.inf), f"got {got!r}")


@pytest.mark.parametrize("fn", ["stack", "expand_dims"])
def test_axis_none_is_rejected_like_numpy(fn):
    # NumPy raises TypeError for np.stack([a, a], axis=None) and np.expand_dims(a, None);
    # pgas silently treats None as axis 0.
    A = pg.from_numpy(np.ones((3, 2)))
    with pytest.raises(TypeError):
        np.stack([A, A], axis=None) if fn == "stack" else np.expand_dims(A, None)


@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_var_with_small_integer_dtype(dist, dtype):
    # Was: NumPy computes var in the given dtype (wrapping); pgas gave a different value silently
    # (e.g. np.var(u8 array, dtype=np.uint8): pgas 1, NumPy 2 at 1 locale, Block).
    rng = np.random.default_rng(1)
    rng.integers(-128, 127, (5, 6))
    G = rng.integers(0, 255, (5, 6)).astype(np.uint8)
    A = pg.from_numpy(G, dist=dist)
    # pgas refuses an integer dtype= for var/std (a clear error on every locale) rather than
    # copying NumPy's truncated mean; a floating dtype gives NumPy's value.
    for fn in (np.var, np.std):
        with pytest.raises(TypeError, match="floating dtype"):
            fn(A, dtype=dtype)
    got, want = np.var(A, dtype=np.float32), np.var(G, dtype=np.float32)
    collective_verdict(got.dtype == want.dtype and np.isclose(got, want, rtol=1e-6), f"got {got!r}, want {want!r}")
    assert_matches(np.std(A, axis=0, dtype=np.float64), np.std(G, axis=0, dtype=np.float64))

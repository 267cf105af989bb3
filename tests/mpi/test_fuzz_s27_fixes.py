"""Defects found by fuzzing statements against NumPy (session s27, tests/mpi/test_fuzz_s27.py),
each with the NumPy behaviour the fix restores."""

import warnings

import numpy as np
import pytest

import pgas as pg
from util import assert_matches, collective_verdict

DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]


@pytest.mark.parametrize("dist", DISTS)
def test_empty_slice_of_a_new_axis_writes_nothing(dist):
    # A[None][0:0] = v raised PlanError ("the write ignores loop variable(s) [0]"); NumPy writes nothing
    G = np.arange(6.0)
    A = pg.from_numpy(G, dist=dist)
    A[None][0:0] = 1.0
    A[None, 1:][0:0, :] = A[None, :-1][0:0, :] * 2.0
    V = A[:, None][:, 0:0]
    V += 1.0
    np.add(V, 1.0, out=V)
    assert_matches(A, G)
    G2 = np.arange(12).reshape(3, 4)
    B = pg.from_numpy(G2, dist=dist)
    B[:, None][1:, 0:0, ::2] = 7
    B[None][0:0] = B[None]
    assert_matches(B, G2)


def _numpy_or_error(call):
    """``call()``'s result, or the type of the exception it raised."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return call()
    except (TypeError, ValueError, OverflowError) as e:
        return type(e)


#: NumPy scalars whose conversion into an integer array depends on the array's dtype:
#: NumPy's element assignment (which slice assignment shares) raises for a float or
#: complex scalar out of a signed target's range (or NaN), and wraps an integer scalar
#: into an unsigned one.
SCALARS = [np.float64(300.0), np.float64("nan"), np.float32("inf"), np.float16(65504), np.complex128(300),
           np.float64(-1.5), np.int64(-1), np.int64(300), np.uint64(2**64 - 1), np.int8(-128), np.int16(300),
           np.int64(2**40), np.float64(2.7), np.bool_(True)]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32, np.bool_, np.float32])
@pytest.mark.parametrize("key", [slice(None), slice(1, None, 2), slice(0, 0)])
def test_numpy_scalar_written_to_a_slice_is_converted_as_numpy_does(dtype, key):
    # np.float64(300.0) into int8 stored 44 and a NaN into int64 stored INT_MIN (NumPy raises);
    # np.int64(-1) into uint8 raised OverflowError (NumPy stores 255)
    for v in SCALARS:
        def numpy_write():
            g = np.zeros(5, dtype)
            g[key] = v
            return g
        want = _numpy_or_error(numpy_write)
        A = pg.zeros(5, dtype=dtype, dist=pg.Cyclic())
        got = _numpy_or_error(lambda: A.__setitem__(key, v) or A.to_numpy())
        if isinstance(want, type) or isinstance(got, type):
            collective_verdict(got is want, f"{np.dtype(dtype)}[{key}] = {v!r}: got {got}, NumPy {want}")
        else:
            collective_verdict(np.array_equal(got, want, equal_nan=True),
                               f"{np.dtype(dtype)}[{key}] = {v!r}: got {got!r}, NumPy {want!r}")


@pytest.mark.parametrize("dist", DISTS)
def test_float_scalar_out_of_range_into_int_raises_on_every_locale(dist):
    A = pg.arange(6, dtype=np.int8, dist=dist)
    for v, err in [(np.float64(300.0), OverflowError), (np.float32("nan"), ValueError)]:
        try:
            A[1:] = v
            raised = None
        except Exception as e:              # noqa: BLE001
            raised = type(e)
        collective_verdict(raised is err, f"A[1:] = {v!r}: raised {raised}, NumPy {err.__name__}")
    assert_matches(A, np.arange(6, dtype=np.int8))


@pytest.mark.parametrize("dist", DISTS)
def test_integer_scalar_wraps_into_unsigned_slice(dist):
    A = pg.zeros(7, dtype=np.uint8, dist=dist)
    A[::2] = np.int64(-1)
    A[1::2] = np.int16(300)
    want = np.zeros(7, np.uint8)
    want[::2] = np.int64(-1)
    want[1::2] = np.int16(300)
    assert_matches(A, want)


@pytest.mark.parametrize("op", ["argmin", "argmax"])
@pytest.mark.parametrize("shape, axis", [((0, 0), 0), ((0, 0), -1), ((0, 0, 0), 1), ((3, 0, 0), 2)])
def test_arg_reduction_over_an_empty_axis_raises_even_for_an_empty_result(op, shape, axis):
    # pgas returned an empty index array; NumPy raises ValueError whenever the reduced axis is empty
    A = pg.zeros(shape, dist=pg.Cyclic())
    with pytest.raises(ValueError):
        getattr(np, op)(np.zeros(shape), axis=axis)
    try:
        getattr(np, op)(A, axis=axis)
        raised = None
    except ValueError as e:
        raised = e
    collective_verdict(raised is not None, f"{op}(axis={axis}) of shape {shape} ran; NumPy raises ValueError")
    for ok_shape, ok_axis in [((3, 0), 0), ((0, 4), 1), ((2, 0, 3), 0)]:  # a non-empty axis: an empty result
        B = pg.zeros(ok_shape, dist=pg.Cyclic())
        got = getattr(np, op)(B, axis=ok_axis).to_numpy()
        want = getattr(np, op)(np.zeros(ok_shape), axis=ok_axis)
        collective_verdict(got.shape == want.shape and got.dtype == want.dtype, f"{got!r} vs {want!r}")


@pytest.mark.parametrize("dist", DISTS)
def test_reduction_into_a_wider_out_computes_in_out_dtype(dist):
    # NumPy resolves a reduction's loop with out's dtype: np.prod(int64, axis=0, out=float64)
    # multiplies in float64 and a float32 sum, mean or cumsum into float64 adds in float64;
    # pgas computed in the input's dtype and then cast (int64 products wrapped to 0, the
    # float32 sum lost the 1)
    gi = np.array([[2**40, 3], [2**40, 5], [7, 2**62]], np.int64)
    gf = np.array([[1e8, 1], [1, 2], [-1e8, 3]], np.float32)
    cases = [(gi, lambda X, o: np.prod(X, axis=0, out=o), (2,)),
             (gi, lambda X, o: X.prod(axis=0, out=o), (2,)),
             (gi, lambda X, o: np.cumprod(X, axis=0, out=o), (3, 2)),
             (gf, lambda X, o: np.sum(X, axis=0, out=o), (2,)),
             (gf, lambda X, o: np.mean(X, axis=0, out=o), (2,)),
             (gf, lambda X, o: np.cumsum(X, axis=0, out=o), (3, 2))]
    for k, (g, f, shape) in enumerate(cases):
        want = np.zeros(shape, np.float64)
        f(g, want)
        A = pg.from_numpy(g, dist=dist)
        out = pg.zeros(shape, dtype=np.float64, dist=pg.Block())
        f(A, out)
        got = out.to_numpy()
        collective_verdict(np.array_equal(got, want), f"case {k}: got {got!r}, NumPy {want!r}")


def test_reduction_into_a_narrower_or_same_out_is_unchanged():
    g = np.arange(-6, 6, dtype=np.int32).reshape(4, 3) * 50
    A = pg.from_numpy(g, dist=pg.Cyclic())
    for odt, fn in [(np.int8, np.sum), (np.int64, np.sum), (np.int8, np.prod), (np.int32, np.cumsum)]:
        shape = (4, 3) if fn is np.cumsum else (3,)
        want = np.zeros(shape, odt)
        fn(g, axis=0, out=want)
        out = pg.zeros(shape, dtype=odt)
        fn(A, axis=0, out=out)
        got = out.to_numpy()
        collective_verdict(np.array_equal(got, want), f"{fn.__name__} -> {np.dtype(odt)}: got {got!r}, NumPy {want!r}")


@pytest.mark.parametrize("casting", ["unsafe", "same_kind"])
@pytest.mark.parametrize("masked", [False, True])
def test_copyto_converts_a_scalar_as_numpy_copyto(casting, masked):
    # np.copyto(A_int64, np.uint64(2**64 - 1), where=m) stored INT_MIN (pg.where promoted to
    # float64) where NumPy stores -1, and np.copyto(A_int8, 300, where=m) stored 44 where
    # NumPy raises OverflowError; a NumPy float NaN copied unsafe into ints raised
    g0 = np.arange(5)
    for dt in [np.int8, np.uint8, np.int64, np.float32]:
        for v in [np.float64(300.0), np.float64("nan"), np.int64(-1), np.int16(300), np.uint64(2**64 - 1), 300, -1,
                  2.5, 1e40]:
            def numpy_copy():
                g = g0.astype(dt)
                np.copyto(g, v, casting=casting, **({"where": g0 % 2 == 1} if masked else {}))
                return g
            want = _numpy_or_error(numpy_copy)
            A = pg.from_numpy(g0.astype(dt), dist=pg.Cyclic())
            kw = {"where": pg.from_numpy(g0 % 2 == 1)} if masked else {}
            got = _numpy_or_error(lambda: np.copyto(A, v, casting=casting, **kw) or A.to_numpy())
            what = f"copyto({np.dtype(dt)}, {v!r}, casting={casting}, masked={masked})"
            if isinstance(want, type) or isinstance(got, type):
                same = isinstance(want, type) and isinstance(got, type) and (
                    got is want or issubclass(got, TypeError) and issubclass(want, TypeError))   # (UFuncTypeError)
                collective_verdict(same, f"{what}: got {got}, NumPy {want}")
            else:
                collective_verdict(np.array_equal(got, want, equal_nan=True), f"{what}: got {got!r}, NumPy {want!r}")

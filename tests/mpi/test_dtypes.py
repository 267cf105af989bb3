"""The small integer, unsigned and complex64 dtypes through every path (statements, irregular
updates, atomics, reductions, forall), with NumPy's promotion; float16 refused alike.

Also: scalars written to slices converted (or refused) as NumPy converts them, direct
operators' result dtypes and values, result dtypes of reductions and ufuncs, astype's refusals."""

import itertools
import warnings

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg

P = pg.num_locales
NEW = [np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64, np.complex64]


@pytest.mark.parametrize("dtype", NEW)
@pytest.mark.parametrize("dist", [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)])
def test_new_dtype_paths(dtype, dist):
    dt = np.dtype(dtype)
    G = (np.arange(24) % 7).reshape(4, 6).astype(dt)
    A = pg.from_numpy(G, dist=dist)
    assert_matches(A, G)
    B = pg.zeros((4, 6), dtype=dt, dist=pg.Cyclic())
    B[1:, ::-1] = A[:-1, :] * 2
    want = np.zeros_like(G)
    want[1:, ::-1] = G[:-1, :] * 2
    assert_matches(B, want)
    collective_verdict(A.sum() == G.sum() and A.sum().dtype == G.sum().dtype)
    assert_matches(A.sum(axis=0), G.sum(axis=0))
    assert_matches(A.cumsum(axis=1), G.cumsum(axis=1))
    if dt.kind != "c":
        collective_verdict(A.max() == G.max() and A.argmin() == G.argmin())
    x = pg.zeros(8, dtype=dt, dist=dist)
    x.update(np.arange(8), 1, "add")
    assert_matches(x, np.full(8, P, dt))
    collective_verdict(np.array_equal(x.gather(np.arange(8)[::-1]), np.full(8, P, dt)))
    pg.barrier()
    if pg.here == 0:
        x.update_one(3, 2, "add")
        if dt.kind in "iu":
            collective_verdict_local = x.fetch_add(5, 1) == P and x.compare_exchange(6, P, 9) == P
            assert collective_verdict_local
    pg.barrier()
    want = np.full(8, P, dt)
    want[3] += 2
    if dt.kind in "iu":
        want[5] += 1
        want[6] = 9
    assert_matches(x, want)
    S = pg.zeros(6, dtype=dt)

    def body(i, j):
        S[j] += A[i, j]

    pg.forall((range(4), range(6)), body)
    assert_matches(S, G.sum(axis=0).astype(dt))


def test_promotion_like_numpy():
    kinds = [np.int8, np.uint8, np.int16, np.uint32, np.int64, np.uint64, np.float32, np.complex64]
    for a, b in itertools.combinations(kinds, 2):
        G, H = np.arange(1, 6).astype(a), np.arange(2, 7).astype(b)
        A, B = pg.from_numpy(G, dist=pg.Cyclic()), pg.from_numpy(H)
        assert_matches(A + B, G + H, rtol=1e-6)          # different layouts: a statement
        assert_matches(A * pg.from_numpy(H, dist=pg.Cyclic()), G * H, rtol=1e-6)
        assert_matches(A + 1, G + 1)                      # Python scalars are weak
    with pytest.raises(OverflowError):
        pg.zeros(4, dtype=np.uint8).update(np.arange(4), 300, "add")


def test_float16_refused_alike():
    with pytest.raises(TypeError, match="MPI has no float16"):
        pg.zeros(3, dtype=np.float16)
    with pytest.raises(TypeError, match="float16"):
        pg.from_numpy(np.zeros(3, np.float16))
    with pytest.raises(TypeError, match="float16"):
        pg.ones(3).astype(np.float16)


@pytest.fixture
def _defaults():
    pg.config()
    yield
    pg.config()


def _outcome(f):
    """('ok', dtype, values) or ('err', exception type name)."""
    try:
        r = f()
        v = r.to_numpy() if hasattr(r, "to_numpy") else np.asarray(r)
        return ("ok", v.dtype.str, v)
    except (TypeError, ValueError, OverflowError, ZeroDivisionError, FloatingPointError) as e:
        return ("err", type(e).__name__)


def _same_outcome(x, y):
    if x[0] != y[0] or x[1] != y[1]:
        return False
    return x[0] == "err" or np.array_equal(x[2], y[2], equal_nan=x[2].dtype.kind in "fc")


_OPS = [lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y]


_SCALARS = [2, -1, 0, 300, 2.5, 1e40, 3j, True, np.float32(1.5), np.int8(5), np.float64(2.0), np.int64(7), 2**63]


def _check_ops(a, A):
    bad = []
    with np.errstate(all="ignore"):
        for k, op in enumerate(_OPS):
            pairs = [(lambda: op(A[1:], A[:-1]), lambda: op(a[1:], a[:-1])),
                     (lambda: op(A[1:] + 1, A[:-1] * 2), lambda: op(a[1:] + 1, a[:-1] * 2))]
            for s in _SCALARS:
                pairs += [(lambda: op(A[1:], s), lambda: op(a[1:], s)),
                          (lambda: op(s, A[1:]), lambda: op(s, a[1:])),
                          (lambda: op(A[1:] - A[:-1], s), lambda: op(a[1:] - a[:-1], s)),
                          (lambda: op(s, A[::-1] * A[:]), lambda: op(s, a[::-1] * a[:]))]
            for n, (f, g) in enumerate(pairs):
                got, want = _outcome(f), _outcome(g)
                if not _same_outcome(got, want):
                    bad.append((k, n, got, want))
    collective_verdict(not bad, lambda: f"{len(bad)} differ from NumPy; first: {bad[0]}")


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.float32, np.bool_, np.complex64])
def test_direct_operators_dtypes_and_values_like_numpy(dtype):
    # NEP 50 weak Python scalars vs NumPy scalars, overflow, true division of ints,
    # bool arithmetic, reflected operators, complex scalars; views and expressions.
    a = (np.arange(9) % 5 - (0 if dtype in (np.uint8, np.bool_) else 2)).astype(dtype)
    pg.config(fuse=False)
    _check_ops(a, pg.from_numpy(a.copy()))


@pytest.mark.usefixtures("_defaults")
def test_direct_operators_fused_int8_float32():
    pg.config(fuse=True)
    for dtype in (np.int8, np.float32):
        a = (np.arange(9) % 5 - 2).astype(dtype)
        A = pg.from_numpy(a.copy())
        B = pg.zeros(8, dtype=dtype)
        b = np.zeros(8, dtype=dtype)
        with np.errstate(all="ignore"):
            for s in (3, 2.5, np.float32(1.5), np.int8(5)):
                B[:] = 2 - A[1:] * s + A[:-1] / 3
                b[:] = 2 - a[1:] * s + a[:-1] / 3
                assert_matches(B, b, rtol=0.0)


DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]


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


DISTS_api = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3)]


@pytest.mark.parametrize("dist", DISTS_api)
def test_slice_write_of_numpy_integer_scalar_out_of_range_raises(dist):
    # NumPy: B[:] = np.int64(2**40) into int32 raises OverflowError (as B[1] = ... does in pgas);
    # pgas silently stores 0 (wrapped) on every element.
    B = pg.zeros(4, dtype=np.int32, dist=dist)
    with pytest.raises(OverflowError):
        B[:] = np.int64(2**40)


@pytest.mark.parametrize("dist", DISTS_api)
def test_slice_write_of_numpy_int16_scalar_into_int8_raises(dist):
    # NumPy raises OverflowError; pgas stores 44 (300 wrapped) silently.
    B = pg.zeros(4, dtype=np.int8, dist=dist)
    with pytest.raises(OverflowError):
        B[:] = np.int16(300)


@pytest.mark.parametrize("dist", DISTS_api)
def test_numpy_scalars_in_range_are_stored(dist):
    B = pg.zeros(4, dtype=np.int32, dist=dist)
    B[:] = np.int64(7)
    B[1:] = np.int8(-3)
    F = pg.zeros(3, dist=dist)
    F[:] = np.float32(2.5)
    assert_matches(B, np.array([7, -3, -3, -3], np.int32))
    assert_matches(F, np.full(3, 2.5))


DTYPES = [bool, np.int32, np.int64, np.float32, np.float64, np.complex128]


def global_array(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(-40, 40, size=shape)
    dtype = np.dtype(dtype)
    if dtype == np.complex128:
        return (g + 1j * rng.integers(-9, 9, size=shape)).astype(dtype)
    if dtype == bool:
        return g > 0
    return g.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduction_and_ufunc_result_dtypes_follow_numpy(dtype):
    G = global_array((3, 2, 5), dtype, 6)
    A = pg.from_numpy(G, dist=pg.BlockCyclic(7, grid=(P, 1, 1)))  # blocks past the extent: one busy locale
    bad = []
    for name in ("sum", "prod", "min", "max", "mean"):
        r, e = getattr(A, name)(), getattr(G, name)()
        if np.asarray(r).dtype != np.asarray(e).dtype or not np.allclose(r, e, rtol=1e-5):
            bad.append(f"{name}: {r!r} vs {e!r}")
    for label, f in [("+1", lambda x: x + 1), ("*2.5", lambda x: x * 2.5), ("/2", lambda x: x / 2),
                     ("==", lambda x: x == x), ("abs", np.abs), ("+int32", lambda x: x + np.int32(1))]:
        r, e = f(A), f(G)
        if r.dtype != e.dtype or not np.allclose(r.to_numpy(), e):
            bad.append(f"ufunc {label}: {r.dtype} vs {e.dtype}")
    collective_verdict(not bad, lambda: "; ".join(bad))


@pytest.mark.parametrize("dtype", [np.float16, np.longdouble])
def test_astype_rejects_unsupported_dtypes_like_constructors(dtype):
    A = pg.arange(3)
    try:
        A.astype(dtype)
        raised = False
    except TypeError:
        raised = True
    collective_verdict(raised, f"astype({np.dtype(dtype)}) made an array")

"""NumPy semantics at every entry point: linear algebra on any distributions, truth
values and scalar conversions, one write-conversion rule, one dtype policy, full()
on every grid, from_numpy's data check.  Every result is compared with NumPy on the
global arrays; every error is raised alike on every locale."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas import comm
from util import assert_matches, collective_verdict

DISTS = {"Block": lambda: pg.Block(), "Cyclic": lambda: pg.Cyclic(), "BC2": lambda: pg.BlockCyclic(2),
         "BC3": lambda: pg.BlockCyclic(3)}


def _mat(shape, seed, dtype=float):
    g = np.random.default_rng(seed)
    return g.integers(-4, 5, size=shape).astype(dtype)


def _same(got, want, rtol=1e-12):
    """Collective: a scalar result equals NumPy's on every locale."""
    ok = np.shape(got) == np.shape(want) and np.result_type(got) == np.result_type(want) and \
        bool(np.allclose(got, want, rtol=rtol, equal_nan=True))
    collective_verdict(ok, lambda: f"got {got!r} ({np.result_type(got)}), expected {want!r} ({np.result_type(want)})")


@settings(max_examples=12)
@given(m=st.integers(1, 9), k=st.integers(0, 8), n=st.integers(1, 9),
       da=st.sampled_from(sorted(DISTS)), db=st.sampled_from(sorted(DISTS)),
       dtype=st.sampled_from([np.float64, np.int32, np.int64, np.complex128, bool]))
def test_matmul_2d_any_distributions(m, k, n, da, db, dtype):
    GA, GB = _mat((m, k), 1, dtype), _mat((k, n), 2, dtype)
    A = pg.from_numpy(GA, dist=DISTS[da]())
    B = pg.from_numpy(GB, dist=DISTS[db]())
    want = GA @ GB
    C = A @ B
    assert_matches(C, want)
    assert dataclasses.replace(C.dist, grid=None) == dataclasses.replace(A.dist, grid=None)
    assert_matches(pg.matmul(A, GB), want)          # a replicated NumPy operand


@settings(max_examples=10)
@given(m=st.integers(1, 11), k=st.integers(1, 11), da=st.sampled_from(sorted(DISTS)),
       dx=st.sampled_from(sorted(DISTS)), dtype=st.sampled_from([np.float64, np.int32, bool]))
def test_matvec_vecmat_dot(m, k, da, dx, dtype):
    GA, gx, gy, gz = _mat((m, k), 3, dtype), _mat(k, 4, dtype), _mat(m, 5, dtype), _mat(k, 6, dtype)
    A = pg.from_numpy(GA, dist=DISTS[da]())
    x = pg.from_numpy(gx, dist=DISTS[dx]())
    y = pg.from_numpy(gy, dist=DISTS[dx]())
    z = pg.from_numpy(gz, dist=DISTS[da]())
    assert_matches(A @ x, GA @ gx)
    assert_matches(y @ A, gy @ GA)
    _same(x @ z, gx @ gz)
    _same(np.vdot(x, z), np.vdot(gx, gz))


def test_views_and_expressions_multiply():
    G = np.arange(30.0).reshape(5, 6)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    B = pg.from_numpy(G.T.copy(), dist=pg.BlockCyclic(2))
    assert_matches(A[1:, ::2] @ B[::2, :4], G[1:, ::2] @ G.T[::2, :4])
    assert_matches((A + 1) @ B, (G + 1) @ G.T)
    assert_matches(np.outer(A[0], A[:, 1]), np.outer(G[0], G[:, 1]))
    assert_matches(np.multiply.outer(A[0], A[:, 1]), np.multiply.outer(G[0], G[:, 1]))
    assert_matches(np.einsum("ij,jk->ik", A, B), G @ G.T)
    _same(np.tensordot(A, A), np.tensordot(G, G))
    assert_matches(np.tensordot(A, B, axes=1), G @ G.T)
    assert_matches(np.dot(A, B), G @ G.T)
    _same(np.dot(A[0], B[:, 1]), np.dot(G[0], G.T[:, 1]))
    _same(np.inner(A[0], A[1]), np.inner(G[0], G[1]))


def test_complex_dots_and_norms():
    g = np.arange(7.0) + 1j * np.arange(7.0)[::-1]
    x = pg.from_numpy(g, dist=pg.Cyclic())
    y = pg.from_numpy(g[::-1].copy())
    _same(np.vdot(x, y), np.vdot(g, g[::-1]))
    _same(x @ y, g @ g[::-1])
    _same(np.vecdot(x, y), np.vecdot(g, g[::-1]))
    _same(np.linalg.norm(x), np.linalg.norm(g))
    G = np.arange(12.0).reshape(3, 4) - 5
    M = pg.from_numpy(G, dist=pg.BlockCyclic(2))
    _same(np.linalg.norm(M), np.linalg.norm(G))
    _same(pg.norm(M, "fro"), np.linalg.norm(G, "fro"))
    v = pg.from_numpy(np.arange(5) - 2)
    for ord in (None, 2, 1, np.inf, -np.inf):
        _same(np.linalg.norm(v, ord), np.linalg.norm(np.arange(5) - 2, ord))
    with pytest.raises(NotImplementedError, match="norm"):
        np.linalg.norm(M, 2)


def test_matmul_errors_alike():
    A = pg.zeros((4, 3))
    B = pg.zeros((4, 2))
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        A @ B
    with pytest.raises(NotImplementedError, match="batched"):
        pg.zeros((2, 2, 2)) @ pg.zeros((2, 2))
    assert_matches(np.vecdot(A, A), np.zeros(4))
    with pytest.raises(TypeError, match="out="):
        np.matmul(A, A.copy(), out=A)


def test_bool_and_scalar_conversions():
    A = pg.from_numpy(np.arange(6.0))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(A > 1)
    with pytest.raises(ValueError, match="ambiguous"):
        if A:
            pass
    assert bool(pg.from_numpy(np.array([3.0]))) is True
    assert bool(pg.zeros(1)) is False
    for conv in (float, int, complex):
        with pytest.raises(TypeError, match="0-dimensional"):
            conv(A)
    with pytest.raises(TypeError):
        [0, 1][A]
    with pytest.raises(TypeError):
        float(A[1:])
    with pytest.raises(TypeError):
        bool(A[1:] > 0)


def test_out_of_range_scalars_raise_on_every_write_path():
    A = pg.zeros(6, dtype=np.int32, dist=pg.Cyclic())
    B = pg.zeros(6)
    with pytest.raises(OverflowError):
        A[:] = 2**40
    with pytest.raises(OverflowError):
        A[1:4] = [1, 2**40, 3]
    with pytest.raises(TypeError):
        B[:] = 1j
    with pytest.raises(OverflowError):
        A[3] = 2**40
    with pytest.raises(OverflowError):
        A.put(slice(1, 3), 2**40)
    with pytest.raises(OverflowError):
        A.put(0, 2**40)
    mine = [0] if pg.here == 0 else []
    with pytest.raises((OverflowError, pg.LocaleError)):
        A.scatter(mine, [2**40] * len(mine))
    A[:] = 2.7                        # NumPy's assignment truncates a Python float
    B[::2] = True
    pg.barrier()
    assert_matches(A, np.full(6, 2, np.int32))
    assert_matches(B, np.array([1.0, 0, 1, 0, 1, 0]))


def test_one_dtype_policy():
    F32 = pg.zeros(4, dtype=np.float32)
    Bo = pg.zeros(4, dtype=bool)
    assert_matches(F32 * 1j, np.zeros(4, np.float32) * 1j)       # complex64 has an MPI type
    with pytest.raises(TypeError, match="float16"):
        Bo + np.float16(1)
    with pytest.raises(TypeError, match="float16"):
        (Bo[1:] + np.float16(1)).to_numpy()
    assert_matches(F32 * 2.5, np.full(4, 0, np.float32))


def test_integer_power_error_on_one_locale_only():
    g = np.arange(8) - 1                      # one negative exponent, owned by locale 0
    E = pg.from_numpy(g)
    with pytest.raises(ValueError, match="negative integer powers"):
        np.power(pg.full(8, 2), E)


@pytest.mark.parametrize("shape", [(3, 4), (4,), (2, 3, 4)])
def test_full_broadcasts_on_every_grid(shape):
    for dist in (pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)):
        assert_matches(pg.full(shape, np.arange(4.0), dist=dist), np.broadcast_to(np.arange(4.0), shape))
    with pytest.raises(ValueError, match="cannot broadcast"):
        pg.full(shape, np.arange(5.0))
    with pytest.raises(OverflowError):
        pg.full(shape, 2**40, dtype=np.int32)


def test_from_numpy_checks_the_locales_passed_the_same_data():
    g = np.arange(10.0)
    g[3] = pg.here                         # differs on every locale but locale 0 when there are several
    if pg.num_locales > 1:
        with pytest.raises(ValueError, match="different data"):
            pg.from_numpy(g)
        with pytest.raises(ValueError, match="different arrays"):
            pg.from_numpy(np.zeros(3 + (pg.here > 0)))
        with pytest.raises(ValueError, match="different arrays"):
            pg.from_numpy(np.zeros(3, dtype=np.float32 if pg.here else np.float64))
    assert_matches(pg.from_numpy(np.arange(10.0)), np.arange(10.0))


def test_numpy_functions_dispatch():
    G = np.arange(12.0).reshape(3, 4)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    B = pg.from_numpy(G, dist=pg.BlockCyclic(2))
    _same(np.sum(A), np.sum(G))
    _same(np.mean(A[1:]), np.mean(G[1:]))
    _same(np.amax(A), np.amax(G))
    _same(np.add.reduce(A, axis=None), np.add.reduce(G, axis=None))
    _same(np.maximum.reduce(A[0]), np.maximum.reduce(G[0]))
    assert np.shape(A) == (3, 4) and np.ndim(A) == 2 and np.size(A) == 12
    assert_matches(np.copy(A), G)
    assert_matches(np.where(A > 5, A, -A), np.where(G > 5, G, -G))
    assert np.allclose(A, B) and np.array_equal(A, B + 0) and not np.array_equal(A, B + 1)
    assert np.allclose(A, G) and not np.allclose(A, G + 1)
    assert np.any(A > 10) and not np.all(A > 10)
    assert_matches(np.cumsum(A), np.cumsum(G))
    _same(np.median(A), np.median(G))
    with pytest.raises(TypeError, match=r"np.histogram is not supported on pgas arrays: use A.to_numpy"):
        np.histogram(A)
    assert_matches(np.add.accumulate(A), np.add.accumulate(G))
    with pytest.raises(TypeError, match=r"np.subtract.accumulate is not supported"):
        np.subtract.accumulate(A)
    with pytest.raises(TypeError, match=r"np.subtract.at is not supported.*A.update"):
        np.subtract.at(A, [0], 1)
    with pytest.raises(TypeError, match=r"where= is not supported.*pg.where"):
        np.add(A, 1, where=A > 1)
    with pytest.raises(TypeError, match="compute each output separately"):
        np.divmod(A, B)
    q, r = np.divmod(A, 5)
    assert_matches(q, G // 5)
    assert_matches(r, G % 5)
    comm.barrier()


def test_inside_forall_np_where_traces_and_reductions_raise():
    G = np.arange(8.0) - 3
    A = pg.from_numpy(G)
    B = pg.zeros(8)

    def body(i):
        B[i] = np.where(A[i] > 0, A[i], -A[i])

    pg.forall(range(8), body)
    assert_matches(B, np.abs(G))

    def bad(i):
        B[i] = np.sum(A[i])

    with pytest.raises(TypeError, match="cannot be traced inside pg.forall"):
        pg.forall(range(8), bad)


def test_lazy_operands_reach_the_same_entry_points():
    G = np.arange(12.0).reshape(3, 4)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    _same(np.add.reduce(A[1:], axis=None), np.add.reduce(G[1:], axis=None))
    _same(np.logical_or.reduce(A[0] > 2), np.logical_or.reduce(G[0] > 2))
    _same(np.linalg.norm(A[:, 1] + 1), np.linalg.norm(G[:, 1] + 1))
    assert np.allclose(A[1:] * 2, G[1:] * 2)
    _same(np.median(A[1:]), np.median(G[1:]))
    with pytest.raises(TypeError, match="not supported on pgas arrays"):
        np.histogram(A[1:])
    with pytest.raises(TypeError, match="Python scalar"):
        float(A[1:] + 1)


@pytest.mark.parametrize("dist", sorted(DISTS))
def test_daily_ndarray_attributes_and_methods(dist):
    """The ndarray attributes and methods a NumPy user reaches for, on arrays and views."""
    G = _mat((5, 6), 21) - 0.5
    A = pg.from_numpy(G, dist=DISTS[dist]())
    H = _mat((6, 4), 22)
    B = pg.from_numpy(H, dist=pg.Cyclic())
    for X, g in ((A, G), (A[1:, ::2], G[1:, ::2])):
        assert (X.shape, X.ndim, X.size, X.dtype, X.itemsize, X.nbytes) == \
            (g.shape, g.ndim, g.size, g.dtype, g.itemsize, g.nbytes)
        assert X.T.shape == g.T.shape and X.mT.shape == g.mT.shape
        assert_matches(X.mT.eval(), g.mT)
        assert_matches(X.round(), g.round())
        assert_matches(X.clip(-1, 2), g.clip(-1, 2))
        assert_matches(X.conj(), g.conj())
        assert_matches(X.conjugate(), g.conjugate())
        _same(X.trace(), g.trace())
        _same(X.item(3), g.item(3))
        _same(X.item(1, 2), g.item(1, 2))
        assert X.tolist() == g.tolist()
        with pytest.raises(TypeError, match="A.ravel"):
            X.flat
    assert_matches(A.dot(B), G.dot(H))
    assert_matches(A.dot(B[:, 0]), G.dot(H[:, 0]))
    assert_matches(A.dot(2.0), G.dot(2.0))
    c = np.array([1 + 2j, 3 - 1j, -2j])
    C = pg.from_numpy(c, dist=DISTS[dist]())
    assert_matches(C.conj(), c.conj())
    _same(C.item(1), c.item(1))
    x = pg.from_numpy(np.arange(7.0), dist=DISTS[dist]())
    _same(x.searchsorted(2.5), np.arange(7.0).searchsorted(2.5))
    _same(pg.from_numpy(np.array([[4.5]])).item(), 4.5)
    with pytest.raises(ValueError, match="size 1"):
        A.item()
    with pytest.raises(IndexError):
        A.item(30)
    with pytest.raises(ValueError, match="ndim < 2"):
        x.mT

"""NumPy's advanced indexing on distributed arrays (pgas.array.fancy) against NumPy:
index arrays and lists mixed with slices, integers, None and ..., NumPy boolean masks,
distributed masks and distributed integer indices; assignment through them with
repeated indices (the last value wins, as in NumPy) and ``+=`` (not accumulated);
errors raised on every locale alike.

Also: every key kind read and written, values NumPy refuses raised everywhere, pending
expressions and ghost reads around fancy writes, read-only views."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import assert_matches, collective_verdict

import pgas as pg
from pgas import comm
from pgas.layout import grids

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=15)
DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]


@st.composite
def cases(draw):
    """A global array, a distribution (any grid), and a replicated advanced key."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim)))
    grid = draw(st.sampled_from([None] + grids(P, ndim)))
    dist = draw(st.sampled_from([pg.Block(grid=grid), pg.Cyclic(grid=grid), pg.BlockCyclic(2, grid=grid)]))
    G = np.random.default_rng(draw(st.integers(0, 99))).integers(-50, 50, size=shape).astype(float)
    key = []
    arrays = draw(st.integers(1, ndim))          # how many axes get an index array
    axes = draw(st.permutations(range(ndim)))[:arrays]
    ishape = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=2)))
    for d in range(ndim):
        if d in axes:
            key.append(draw(st.lists(st.integers(-shape[d], shape[d] - 1), min_size=int(np.prod(ishape)),
                                     max_size=int(np.prod(ishape)))))
            key[-1] = np.array(key[-1], dtype=np.int64).reshape(ishape)
        else:
            key.append(draw(st.sampled_from([slice(None), slice(None, None, -1), slice(1, None), 0])))
    if draw(st.booleans()) and ndim > 1:
        key = [np.asarray(G > draw(st.integers(-50, 50)))] if draw(st.booleans()) else key
    return G, dist, tuple(key)


@SETTINGS
@given(cases())
def test_get_matches_numpy(case):
    G, dist, key = case
    A = pg.from_numpy(G, dist=dist)
    want = G[key]
    if want.ndim == 0:
        return
    R = A[key]
    assert_matches(R, want)


@SETTINGS
@given(cases(), st.booleans())
def test_set_with_repeats_matches_numpy(case, scalar):
    G, dist, key = case
    A = pg.from_numpy(G, dist=dist)
    H = G.copy()
    n = H[key].shape
    if not n:
        return
    value = 7.5 if scalar else np.arange(np.prod(n), dtype=float).reshape(n)
    A[key] = value
    H[key] = value
    assert_matches(A, H)
    A[key] += 1                          # A[key] = A[key] + 1: repeats are not accumulated
    H[key] += 1
    assert_matches(A, H)


@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_distributed_masks(dist):
    G = np.arange(30.).reshape(5, 6) - 11
    A = pg.from_numpy(G, dist=dist)
    M = pg.from_numpy(G % 4 == 1, dist=pg.Cyclic())            # another distribution than A's
    assert_matches(A[M], G[G % 4 == 1])
    assert_matches(A[A > 3], G[G > 3])
    assert_matches(A.T[A.T < 0], G.T[G.T < 0])                   # a view and a mask expression
    assert_matches(A[A > 100], G[G > 100])                       # nothing selected
    H = G.copy()
    A[A < 0] = 0.5
    H[H < 0] = 0.5
    A[M] = np.arange(np.count_nonzero(G % 4 == 1)) * 10.0
    H[G % 4 == 1] = np.arange(np.count_nonzero(G % 4 == 1)) * 10.0
    assert_matches(A, H)
    with pytest.raises(ValueError, match="cannot assign 2 input values"):
        A[M] = [1.0, 2.0]
    with pytest.raises(IndexError, match="did not match"):
        A[pg.from_numpy(np.ones(30, bool), dist=dist)]


@pytest.mark.parametrize("dist", DISTS, ids=repr)
def test_distributed_integer_index(dist):
    x = np.arange(11.) * 3
    X = pg.from_numpy(x, dist=dist)
    idx = np.array([[10, -1, 0], [4, 4, 2]])
    I = pg.from_numpy(idx, dist=pg.Cyclic())
    R = X[I]
    assert R.shape == idx.shape and R.dist == I.dist
    assert_matches(R, x[idx])
    assert_matches(X[::-2][pg.from_numpy(np.array([0, 5, 1]), dist=dist)], x[::-2][[0, 5, 1]])
    X[I] = np.arange(6.).reshape(2, 3)                           # 4 repeated: the last value wins
    x[idx] = np.arange(6.).reshape(2, 3)
    assert_matches(X, x)
    X[I] = pg.from_numpy(-np.arange(6.).reshape(2, 3), dist=dist)
    x[idx] = -np.arange(6.).reshape(2, 3)
    assert_matches(X, x)
    with pytest.raises(IndexError, match="out of bounds"):
        X[pg.from_numpy(np.array([0, 11]), dist=dist)]
    with pytest.raises(NotImplementedError, match="1-D arrays only"):
        pg.zeros((3, 3))[pg.from_numpy(np.array([0, 1]))]


def test_errors_on_every_locale():
    A = pg.from_numpy(np.arange(12.).reshape(3, 4))
    for key, err in [([0, 3], IndexError), ((slice(None), [4]), IndexError), ([[0, 1], [0]], ValueError),
                     (np.ones(5, bool), IndexError), ((pg.zeros(3, dtype=int), 0), NotImplementedError)]:
        with pytest.raises(err):
            A[key]
    with pytest.raises(ValueError):
        A[[0, 1]] = np.ones(3)                      # does not broadcast to (2, 4)
    collective_verdict(True)


def test_forall_still_refuses_index_arrays():
    A = pg.zeros(6)
    with pytest.raises(Exception, match="subscript .* must be an int or affine"):
        pg.forall(range(6), lambda i: A.__setitem__(i, A[[0, 1]][0]))


DISTS_keys = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2), pg.BlockCyclic(3)]


G1 = np.arange(7) * 10


G2 = np.arange(20.).reshape(4, 5)


G3 = np.arange(60).reshape(3, 4, 5)


def outcome(fn):
    """``("ok", value)`` or ``("err", exception type name)``."""
    try:
        return "ok", fn()
    except Exception as e:                       # noqa: BLE001 - compared with NumPy's
        return "err", type(e).__name__


def same_as_numpy(got_fn, want_fn, tag):
    """Collective: ``got_fn()`` (a DistArray or NumPy result) equals ``want_fn()``, or both raise
    the same exception type; every locale must agree on the outcome."""
    want = outcome(want_fn)
    got = outcome(lambda: (lambda r: r.to_numpy() if hasattr(r, "to_numpy") else np.asarray(r))(got_fn()))
    if want[0] == "err" or got[0] == "err":
        ok, why = got == want, f"{tag}: got {got}, NumPy {want}"
    else:
        g, w = got[1], np.asarray(want[1])
        ok = g.shape == w.shape and g.dtype == w.dtype and np.array_equal(g, w, equal_nan=g.dtype.kind in "fc")
        why = f"{tag}: got {g!r}, NumPy {w!r}"
    kinds = comm.allgather(got[0] if got[0] == "ok" else got[1])
    collective_verdict(len(set(kinds)) == 1, f"{tag}: locales disagree: {kinds}")
    collective_verdict(ok, why)


GET_KEYS = [
    (G1, [0, -1, 3, 3]), (G1, []), (G1, np.array([[0, 1], [6, -7]])), (G1, [7]), (G1, [-8]),
    (G1, G1 > 20), (G1, np.ones(6, bool)), (G1, [True, False] * 3 + [True]), (G1, np.array(True)),
    (G1, np.array(False)), (G1, np.array([1, 2], np.uint8)), (G1, np.array([1, -2], np.int8)),
    (G1, np.array([1.0])), (G1, (None, [1, 2])), (G1, ([1, 2], None)), (G1, [3]),
    (G2, [1, 2]), (G2, (slice(None), [4, 0, 0])), (G2, ([0, 3], [4, -1])),
    (G2, (np.array([[0], [3]]), np.array([1, 2, 3]))), (G2, (1, [1, 2])), (G2, ([1, 2], -1)),
    (G2, G2 % 3 == 0), (G2, np.array([True, False, True, True])),
    (G2, (slice(None), np.array([True, False, True, True, False]))), (G2, (..., [1, 2])),
    (G2, ([1, 2], ...)), (G2, (slice(None, None, -2), [1, 2])), (G2, (slice(None), [])),
    (G2, (np.zeros((0, 2), int),)),
    (G3, ([0, 2], slice(None), [1, 4])), (G3, (0, slice(1, 3), [1, 4])), (G3, (slice(None), [0, 2], [1, 4])),
    (G3, ([0, 2], None, slice(None), [1, 4])), (G3, G3[:, :, 0] % 2 == 0), (G3, (slice(None), G3[0] % 3 == 0)),
    (G3, ([0, 1, 2], np.array([True, False, True, False]), slice(None))), (G3, np.zeros((3, 4), bool)),
]


VIEWS = [(G2, lambda a: a.T, ([0, 4], [1, 3])), (G2, lambda a: a[::-1, ::2], (slice(None), [0, -1])),
         (G1, lambda a: a[1::3], [0, 1, -1]), (G2, lambda a: a.T, G2.T > 7),
         (G2, lambda a: a[None, :, ::2], ([0, 0], slice(None), [1, 2])), (G1, lambda a: a[:, None], ([1, 2], [0, 0])),
         (G2, lambda a: a[2], [0, 2, -1]), (G2, lambda a: a[:, -2], [0, -1]),
         (G2, lambda a: a[::-1, ::-1].T[1:], (slice(None), [0, 1]))]


@pytest.mark.parametrize("dist", DISTS_keys[:3], ids=["block", "cyclic", "bc2"])
def test_get_every_key_kind_matches_numpy(dist):
    for k, (G, key) in enumerate(GET_KEYS):
        A = pg.from_numpy(G, dist=dist)
        same_as_numpy(lambda: A[key], lambda: G[key], f"key {k}: {key!r}")
    for k, (G, view, key) in enumerate(VIEWS):
        A = pg.from_numpy(G, dist=dist)
        same_as_numpy(lambda: view(A)[key], lambda: view(G)[key], f"view {k}: {key!r}")


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.float32, np.complex128])
def test_get_and_set_dtypes(dtype):
    G = (np.arange(12).reshape(3, 4) % 3 + 1j * (dtype is np.complex128)).astype(dtype)\
        if dtype is np.complex128 else (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    for dist in (pg.Cyclic(), pg.BlockCyclic(3, grid=(1, P))):
        A = pg.from_numpy(G, dist=dist)
        for key in [([2, 0, 2], slice(None, None, -1)), (slice(None), [3, -4]), G != G[0, 0], ([1], [1, 2, 3])]:
            same_as_numpy(lambda: A[key], lambda: G[key], f"{dtype.__name__} {key!r}")
        same_as_numpy(lambda: A[A != A[0, 0]], lambda: G[G != G[0, 0]], "distributed mask")
        _set(G, ([0, 0, 2], [1, 1, 3]), np.array([1, 2, 0]).astype(dtype), dist)
        _set(G, G != G[0, 0], G[0, 0], dist)
        _set(G, (slice(None), [0, 3]), np.array([True, False]), dist)


def _set(G, key, value, dist, view=lambda a: a, aug=False):
    def got():
        A = pg.from_numpy(G, dist=dist)
        if aug:
            view(A)[key] += value
        else:
            view(A)[key] = value
        return A

    def want():
        y = G.copy()
        if aug:
            view(y)[key] += value
        else:
            view(y)[key] = value
        return y
    same_as_numpy(got, want, f"{key!r} = {value!r}")


SETS = [
    (G1, [0, 3, 0, 3, 3], [1, 2, 3, 4, 5]), (G1, [0, -7, 6, -1], [1, 2, 3, 4]), (G1, [0, 2], 9),
    (G1, [0, 2], 9.7), (G1, [0, 2], [9.7, -3.2]), (G1.astype(np.int8), [0, 2], 300), (G1, [0, 2], [1, 2, 3]),
    (G1, [], 5), (G1, [], []), (G1, [], [1]), (G1, [7], 1), (G1, G1 > 20, [1, 2, 3, 4]), (G1, G1 > 20, -1),
    (G1, G1 > 20, [7]), (G1, G1 > 20, [7, 8]), (G1, np.array(True), 3), (G1, np.array(False), 3),
    (G2, ([0, 0, 1], [1, 1, 1]), [1., 2., 3.]), (G2, (slice(None), [4, 0, 4]), np.arange(12.).reshape(4, 3)),
    (G2, (slice(None), [4, 0]), np.array([100., 200.])), (G2, G2 % 3 == 0, np.arange(7.)),
    (G2, np.array([True, False, True, False]), np.arange(5.)), (G2, [1, 2], 5.),
    (G3, ([0, 2], slice(None), [1, 4]), np.arange(8).reshape(2, 4)),
    (G3, ([0, 2], slice(None), [1, 4]), np.arange(8).reshape(4, 2)),
    (G1 > 5, [0, 1], [True, False]), (G1 > 5, [0, 1], [2, 0]), (G1 * 1j, [0, 1], [1 + 2j, 3]),
    (G2, (..., [0, 0]), [[1.], [2.], [3.], [4.]]),
]


@pytest.mark.parametrize("dist", DISTS_keys[:3], ids=["block", "cyclic", "bc2"])
def test_set_every_key_kind_matches_numpy(dist):
    for G, key, value in SETS:
        _set(G, key, value, dist)
    _set(G1, [1, 1, 2], 5, dist, aug=True)
    _set(G2, ([0, 4, 0], [1, 3, 1]), [1., 2., 3.], dist, view=lambda a: a.T)
    _set(G2, (slice(None), [0, -1]), 7., dist, view=lambda a: a[::-1, ::2])
    _set(G1, [0, 1, -1, 0], [1, 2, 3, 4], dist, view=lambda a: a[1::3])
    _set(G2, G2.T > 7, -1., dist, view=lambda a: a.T)
    _set(G2, ([0, 0], slice(None), [1, 2]), 9., dist, view=lambda a: a[None, :, ::2])
    _set(G2, [0, 2, -1, 0], [1., 2., 3., 4.], dist, view=lambda a: a[2])
    _set(G2, (slice(None), [0, 1, 0]), np.arange(9.).reshape(3, 3), dist, view=lambda a: a[::-1, ::-1].T[1:4])


@pytest.mark.parametrize("where", ["list", "mask", "distributed"])
def test_set_values_numpy_refuses_raise_on_every_locale(where):
    """Regression (fancy._values): the values were converted per locale, on its slice only,
    so ``A[[0, 5]] = [1, 2**70]`` raised OverflowError on the locale holding 2**70 and the
    others went on into the scatter (a hang at 2+ locales); and ``A8[[0, 2]] = [1, 300]``
    stored 44 silently, ``A[[0]] = 1j`` stored 0.0 (NumPy raises both)."""
    x = np.arange(6)
    key = {"list": lambda A: [0, 5], "mask": lambda A: A % 5 == 0,
           "distributed": lambda A: pg.from_numpy(np.array([0, 5]))}[where]
    for G, value in [(x, [1, 2**70]), (x.astype(float), ["1", "x"]), (x.astype(np.int8), [1, 300]),
                     (x.astype(float), 1j), (x.astype(np.uint8), [-1, 2])]:
        def got():
            A = pg.from_numpy(G)
            A[key(A)] = value
            return A

        def want():
            y = G.copy()
            y[[0, 5]] = value
            return y
        same_as_numpy(got, want, f"{where} {G.dtype} <- {value!r}")


def test_set_value_with_leading_unit_dims():
    """Regression (fancy._fit): a value with extra leading size-1 dimensions, which NumPy
    accepts, raised ValueError on every locale."""
    for dist in DISTS_keys[:2]:
        _set(G1, [0, 2], np.array([[1, 2]]), dist)
        _set(G1, [0, 2, 0], np.ones((1, 1, 3), int), dist)
        _set(G2, (slice(None), [0, 1]), np.arange(8.).reshape(1, 4, 2), dist)
        _set(G1, [0, 2], np.ones((2, 2)), dist)   # NumPy refuses
    def got():
        A = pg.from_numpy(G1)
        A[pg.from_numpy(np.array([3, 1, 3]))] = np.array([[[5, 6, 7]]])
        return A
    y = G1.copy()
    y[[3, 1, 3]] = np.array([[[5, 6, 7]]])
    same_as_numpy(got, lambda: y, "distributed key, value of shape (1, 1, 3)")


def test_zero_d_integer_array_key():
    """Was a defect (IndexError on every locale): NumPy takes a 0-d integer array as an integer."""
    A = pg.from_numpy(G1)
    same_as_numpy(lambda: np.asarray(A[np.array(3)]), lambda: G1[np.array(3)], "A[np.array(3)]")
    B = pg.from_numpy(np.arange(12.).reshape(3, 4))
    same_as_numpy(lambda: np.asarray(B[np.array(1), np.int64(2)]), lambda: np.arange(12.).reshape(3, 4)[1, 2],
                  "B[np.array(1), 2]")
    same_as_numpy(lambda: B[:, np.array(1)].to_numpy(), lambda: np.arange(12.).reshape(3, 4)[:, 1], "B[:, 0-d]")

    def got():
        C = pg.from_numpy(np.arange(12.).reshape(3, 4))
        C[np.array(2), np.array(3)] = -1.0
        C[np.array(0)] = 5.0
        return C.to_numpy()

    def want():
        c = np.arange(12.).reshape(3, 4)
        c[np.array(2), np.array(3)] = -1.0
        c[np.array(0)] = 5.0
        return c
    same_as_numpy(got, want, "writes through 0-d keys")


def test_distributed_mask_assignment_refuses_2d_values():
    """Was a defect (accepted, written in C order): NumPy raises TypeError."""
    for v in (np.ones((3, 1)), np.ones((1, 3))):
        def got():
            A = pg.from_numpy(np.arange(6.))
            A[A > 2] = v
            return A

        def want():
            y = np.arange(6.)
            y[y > 2] = v
            return y
        same_as_numpy(got, want, f"mask <- shape {v.shape}")


@pytest.mark.parametrize("dist", DISTS_keys[:2], ids=["block", "cyclic"])
def test_range_and_bool_keys(dist):
    """Regression (fancy.is_advanced): ``A[range(1, 4)]``, ``A[True]``, ``A[np.True_]`` (keys
    NumPy accepts) raised IndexError on every locale."""
    for G, key in [(G1, range(1, 4)), (G2, (slice(None), range(2))), (G1, True), (G1, False), (G1, np.True_),
                   (G2, (0, True)), (G2, (True, [1, 2]))]:
        A = pg.from_numpy(G, dist=dist)
        same_as_numpy(lambda: A[key], lambda: G[key], repr(key))
    _set(G1, range(1, 4), 3., dist)
    _set(G1, True, 4., dist)
    _set(G1, False, 4., dist)
    _set(G2, np.True_, np.arange(5.), dist)
    _set(G2, (range(1, 3), slice(None)), 1., dist)


def test_scalar_keys_still_take_the_element_path():
    A = pg.from_numpy(G2)
    for key in [np.int64(-1), (np.int64(1), np.int32(2)), (1, -1), ...]:
        same_as_numpy(lambda: A[key], lambda: G2[key], repr(key))
    A[np.int64(1), np.int32(2)] = -3.0
    y = G2.copy()
    y[1, 2] = -3.0
    assert_matches(A, y)


@pytest.mark.parametrize("dx", DISTS_keys[:3], ids=["block", "cyclic", "bc2"])
def test_distributed_integer_and_mask_keys(dx):
    x = np.arange(9) * 10
    I = np.array([8, 0, -1, 3, 3, -9, 2])
    Ir, v = np.array([3, 5, 3, -6, 0, 3, 0]), np.arange(7) + 100
    for di in DISTS_keys[:3]:
        X, DI = pg.from_numpy(x, dist=dx), pg.from_numpy(I, dist=di)
        same_as_numpy(lambda: X[DI], lambda: x[I], "X[I]")
        same_as_numpy(lambda: X[::-1][DI], lambda: x[::-1][I], "X[::-1][I]")
        same_as_numpy(lambda: X[DI[::-2]], lambda: x[I[::-2]], "X[I[::-2]]")
        same_as_numpy(lambda: X[DI + 1], lambda: x[I + 1], "X[I + 1]")
        same_as_numpy(lambda: X[pg.from_numpy(I[:6].reshape(2, 3), dist=di)], lambda: x[I[:6].reshape(2, 3)], "2-D I")
        same_as_numpy(lambda: X[pg.from_numpy(I.astype(np.int32), dist=di)], lambda: x[I.astype(np.int32)], "int32")
        same_as_numpy(lambda: X[pg.from_numpy(np.array([1, 9]), dist=di)], lambda: x[np.array([1, 9])], "oob")
        same_as_numpy(lambda: X[pg.from_numpy(np.zeros(0, np.int64), dist=di)], lambda: x[np.zeros(0, np.int64)], "empty")

        def got(view=lambda a: a):
            Y = pg.from_numpy(x, dist=dx)
            view(Y)[pg.from_numpy(Ir, dist=di)] = v
            return Y

        def want(view=lambda a: a):
            y = x.copy()
            view(y)[Ir] = v
            return y
        same_as_numpy(got, want, "X[I] = v, repeats")
        same_as_numpy(lambda: got(lambda a: a[::-1]), lambda: want(lambda a: a[::-1]), "X[::-1][I] = v, repeats")
        M = x % 20 == 0
        same_as_numpy(lambda: X[pg.from_numpy(M, dist=di)], lambda: x[M], "X[M]")
        same_as_numpy(lambda: X[pg.from_numpy(M, dist=di)[::-1]], lambda: x[M[::-1]], "X[M[::-1]]")
        same_as_numpy(lambda: X[X > 30], lambda: x[x > 30], "X[X > 30]")

        def aug():
            Y = pg.from_numpy(x, dist=dx)
            Y[Y > 30] += 1
            return Y
        same_as_numpy(aug, lambda: np.where(x > 30, x + 1, x), "X[X > 30] += 1")


@pytest.mark.parametrize("grid", [None, (1, P), (P, 1)])
def test_distributed_masks_2d_grids_and_transposes(grid):
    G = np.arange(12).reshape(3, 4)
    for mk in (lambda: pg.Block(grid=grid), lambda: pg.Cyclic(grid=grid), lambda: pg.BlockCyclic(2, grid=grid)):
        A, MM = pg.from_numpy(G, dist=mk()), pg.from_numpy(G % 3 == 1, dist=pg.Cyclic(grid=grid))
        same_as_numpy(lambda: A[MM], lambda: G[G % 3 == 1], "A[M]")
        same_as_numpy(lambda: A.T[A.T > 4], lambda: G.T[G.T > 4], "A.T[A.T > 4]")
        same_as_numpy(lambda: A[MM.T], lambda: G[(G % 3 == 1).T], "wrong-shaped mask")

        def got():
            B = pg.from_numpy(G, dist=mk())
            B.T[B.T > 4] = np.arange(7)
            return B

        def want():
            y = G.copy()
            y.T[y.T > 4] = np.arange(7)
            return y
        same_as_numpy(got, want, "A.T[A.T > 4] = values")


@pytest.mark.parametrize("kind", ["list", "mask", "distributed", "view"])
def test_pending_expression_sees_the_values_before_a_fancy_write(kind):
    G = np.arange(7.)
    A = pg.from_numpy(G)
    E, F = A[:] + 1, A[1:] * 2
    if kind == "list":
        A[[0, 2]] = 50.
    elif kind == "mask":
        A[A > 3] += 50.
    elif kind == "distributed":
        A[pg.from_numpy(np.array([0, 2, 2]))] = 50.
    else:
        A[::-1][[0, 2]] = 50.
    assert_matches(E.eval(), G + 1)
    assert_matches(F.eval(), G[1:] * 2)


def test_value_reading_the_target():
    G = np.arange(7.)
    A = pg.from_numpy(G)
    A[[0, 1, 2]] = A[1:4] * 10
    y = G.copy()
    y[[0, 1, 2]] = y[1:4] * 10
    assert_matches(A, y)
    A[[0, 1, 2]] = A[[2, 1, 0]]
    y[[0, 1, 2]] = y[[2, 1, 0]]
    assert_matches(A, y)


def test_ghost_reads_after_fancy_writes():
    A = pg.zeros(9, ghosts=(1,))
    A[...] = np.arange(9.)
    A.update_ghosts()
    A[[2, 3, 5, 6]] = 100.
    B = pg.zeros(9)
    B[1:-1] = A[:-2] + A[2:]
    y = np.arange(9.)
    y[[2, 3, 5, 6]] = 100.
    b = np.zeros(9)
    b[1:-1] = y[:-2] + y[2:]
    assert_matches(B, b)
    A.update_ghosts()
    A[A > 50] = -1.
    B[1:-1] = A[:-2] - A[2:]
    y[y > 50] = -1
    b[1:-1] = y[:-2] - y[2:]
    assert_matches(B, b)
    same_as_numpy(lambda: A[[0, 3, 8, -1]], lambda: y[[0, 3, 8, -1]], "ghosted gather")
    C = pg.zeros((4, 5), ghosts=(1, 1))
    C[...] = G2
    C.update_ghosts()
    C[:, [1, 3]] = 0.
    D = pg.zeros((4, 5))
    D[1:-1, 1:-1] = C[:-2, 1:-1] + C[2:, 1:-1] + C[1:-1, :-2] + C[1:-1, 2:]
    z = G2.copy()
    z[:, [1, 3]] = 0
    d = np.zeros((4, 5))
    d[1:-1, 1:-1] = z[:-2, 1:-1] + z[2:, 1:-1] + z[1:-1, :-2] + z[1:-1, 2:]
    assert_matches(D, d)


# -- 2. the pshift fast repeat path ---------------------------------------------------
def _np_shift(a, s, axis, b=None):
    if b is None:
        return np.roll(a, -s, axis)
    out = np.full_like(a, b)
    n = a.shape[axis]
    src = [slice(None)] * a.ndim
    dst = [slice(None)] * a.ndim
    if s >= 0:
        src[axis], dst[axis] = slice(s, n), slice(0, max(n - s, 0))
    else:
        src[axis], dst[axis] = slice(0, n + s), slice(-s, n)
    out[tuple(dst)] = a[tuple(src)]
    return out


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float32, np.complex64, np.float64])
def test_plan_rerun_with_fancy_writes_and_fuse_switching(dtype):
    from pgas.exec import settings

    was = settings.get("fuse")
    G = (np.arange(24).reshape(4, 6) % 5).astype(dtype)
    shifts = [(1, 0), (-1, 0), (1, 1), (-2, 1, dtype(1)), (2, 0, dtype(0))]
    try:
        for dist in (pg.Block(), pg.Cyclic()):
            A = pg.from_numpy(G, dist=dist)
            y = G.copy()
            outs = [pg.zeros(G.shape, dtype, dist=dist) for _ in shifts]
            with pg.pshift_setup(A, shifts) as plan:
                for step, fuse in enumerate([False, True, True, "auto", False, True]):
                    pg.config(fuse=fuse)
                    plan(A, out=outs)
                    for R, sp in zip(outs, shifts):
                        assert_matches(R, _np_shift(y, sp[0], sp[1], *sp[2:]))
                    A[[step % 4, 0], [(2 * step) % 6, 5]] = dtype(step % 2)
                    y[[step % 4, 0], [(2 * step) % 6, 5]] = dtype(step % 2)
                    A[A.T.T == dtype(0)] = dtype(1)
                    y[y == dtype(0)] = dtype(1)
                    outs[0][[0]] = dtype(1)                     # the out written between calls too
    finally:
        pg.config(fuse=was)


def test_readonly_views_refuse_writes_and_follow_fancy_writes():
    A = pg.zeros(8, ghosts=(1,))
    A[...] = np.arange(8.)
    A.update_ghosts()
    ro, rog = A.local_readonly, A.local_with_ghosts_readonly
    bad = []
    for how in (lambda: ro.__setitem__(..., 1.0), lambda: rog.setflags(write=True), lambda: np.add(ro, 1, out=ro),
                lambda: np.copyto(rog, 0.0)):
        try:
            how()
            bad.append("a write went through")
        except (ValueError, TypeError):
            pass
    collective_verdict(not bad, str(bad))
    A[[0, 3, 4, 7]] = -1.0
    A.update_ghosts()
    y = np.arange(8.)
    y[[0, 3, 4, 7]] = -1
    own = A.layout.owned(pg.here)[0]
    collective_verdict(np.array_equal(ro, y[own]), f"interior {ro} != {y[own]}")
    lo, hi = own[0] - 1, own[-1] + 1 if own.size else 0
    ghosts_ok = (not own.size) or ((lo < 0 or rog[0] == y[lo]) and (hi >= 8 or rog[-1] == y[hi]))
    collective_verdict(ghosts_ok, f"ghost cells {rog} around {y[own]}")


@pytest.mark.parametrize("grid", [(1, P), (P, 1)])
def test_two_d_distributed_integer_index_on_grids(grid):
    x = np.arange(5) * 3
    I = np.array([[4, 0, -1], [2, 2, -5]])
    for mk in (lambda: pg.Block(grid=grid), lambda: pg.Cyclic(grid=grid), lambda: pg.BlockCyclic(2, grid=grid)):
        X, DI = pg.from_numpy(x, dist=pg.Cyclic()), pg.from_numpy(I, dist=mk())
        same_as_numpy(lambda: X[DI], lambda: x[I], f"2-D index on {grid}")
        same_as_numpy(lambda: X[DI.T], lambda: x[I.T], f"2-D index (transposed view) on {grid}")

        def got():
            Y = pg.from_numpy(x)
            Y[DI] = np.array([[1, 2, 3], [4, 5, 6]])
            return Y
        y = x.copy()
        y[I] = np.array([[1, 2, 3], [4, 5, 6]])
        same_as_numpy(got, lambda: y, f"X[2-D I] = values on {grid}")

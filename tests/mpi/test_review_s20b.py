"""Reviewer's tests (s20b): today's merges against NumPy, as a hostile user.

1. NumPy advanced indexing (pgas/array/fancy.py): every kind of key mixed with slices,
   integers, None and ..., non-adjacent index arrays, broadcasting, masks of partial
   dimensions, views (transposed, reversed, strided) as the indexed array, distributed
   masks and integer indices (as views and expressions too), assignment with repeats,
   casts, values that NumPy refuses (errors alike on every locale), pending lazy
   expressions and ghost cells after a write.
2. The pshift fast repeat path (ShiftGroup.rerun, the move kernel) with the data changed
   between calls through fancy assignment, every kernel dtype and fuse switching.
3. counting.locate_1d under update / gather / scatter, and comm.iallreduce.
"""

import numpy as np
import pytest

import pgas as pg
from pgas import comm
from util import assert_matches, collective_verdict

P = pg.num_locales
DISTS = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2), pg.BlockCyclic(3)]
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


@pytest.mark.parametrize("dist", DISTS[:3], ids=["block", "cyclic", "bc2"])
def test_get_every_key_kind_matches_numpy(dist):
    for k, (G, key) in enumerate(GET_KEYS):
        A = pg.from_numpy(G, dist=dist)
        same_as_numpy(lambda: A[key], lambda: G[key], f"key {k}: {key!r}")
    for k, (G, view, key) in enumerate(VIEWS):
        A = pg.from_numpy(G, dist=dist)
        same_as_numpy(lambda: view(A)[key], lambda: view(G)[key], f"view {k}: {key!r}")


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.float32, np.complex128])
def test_get_and_set_dtypes(dtype):
    G = (np.arange(12).reshape(3, 4) % 3 + 1j * (dtype is np.complex128)).astype(dtype) \
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


@pytest.mark.parametrize("dist", DISTS[:3], ids=["block", "cyclic", "bc2"])
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
    """FIXED on rev1 (fancy._values): the values were converted per locale, on its slice only,
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
    """FIXED on rev1 (fancy._fit): a value with extra leading size-1 dimensions, which NumPy
    accepts, raised ValueError on every locale."""
    for dist in DISTS[:2]:
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


@pytest.mark.parametrize("dist", DISTS[:2], ids=["block", "cyclic"])
def test_range_and_bool_keys(dist):
    """FIXED on rev1 (fancy.is_advanced): ``A[range(1, 4)]``, ``A[True]``, ``A[np.True_]`` (keys
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


@pytest.mark.parametrize("dx", DISTS[:3], ids=["block", "cyclic", "bc2"])
def test_distributed_integer_and_mask_keys(dx):
    x = np.arange(9) * 10
    I = np.array([8, 0, -1, 3, 3, -9, 2])
    Ir, v = np.array([3, 5, 3, -6, 0, 3, 0]), np.arange(7) + 100
    for di in DISTS[:3]:
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


# -- 3. locate_1d under gather / scatter / update; iallreduce -------------------------
@pytest.mark.parametrize("n", [1, 2, 5])
def test_gather_scatter_update_index_dtypes_and_owners(n):
    from pgas.exec import settings

    was = settings.get("fuse")
    pg.config(fuse=True)
    try:
        rng = np.random.default_rng(n + pg.here)
        x = np.arange(n) * 10 + 1
        for dist in DISTS:
            for dt in [np.int64, np.int32, np.uint64, ">i8", "strided", "broadcast"]:
                g = rng.integers(0 if dt is np.uint64 else -n, n, size=5)
                if dt == "broadcast":                                # read-only, stride 0
                    g = np.full(5, g[0])
                    gi = np.broadcast_to(np.int64(g[0]), (5,))
                else:
                    gi = np.repeat(g, 2)[::2] if dt == "strided" else g.astype(dt)
                everyone = comm.allgather(g)
                A = pg.from_numpy(x, dist=dist)
                got = A.gather(gi)
                collective_verdict(np.array_equal(got, x[g]), f"gather {dist} {dt}: {got} != {x[g]}")
                A.scatter(gi, np.full(5, -5))
                y = x.copy()
                for e in everyone:
                    y[e] = -5
                assert_matches(A, y)
                A.update(gi, np.ones(5, dtype=int))
                for e in everyone:
                    np.add.at(y, e, 1)
                assert_matches(A, y)
            A = pg.from_numpy(x, dist=dist)
            for bad in (n, -n - 1, 2**40):
                gi = np.array([bad] if pg.here == P - 1 else [0], dtype=np.int64)
                for op in (lambda: A.gather(gi), lambda: A.scatter(gi, np.ones(1, int)),
                           lambda: A.update(gi, np.ones(1, int))):
                    r = outcome(op)
                    kinds = comm.allgather(r[1] if r[0] == "err" else "no error")
                    collective_verdict(all(k == "IndexError" for k in kinds), f"index {bad}: {kinds}")
            assert A.gather(np.empty(0, np.int64)).size == 0
            A.update(np.empty(0, np.int64), np.empty(0, int))
            assert_matches(A, x)
    finally:
        pg.config(fuse=was)


def test_iallreduce_matches_allreduce():
    me = pg.here
    for v, op in [(me + 1, "sum"), (0.5 * me, "max"), (me == 1, "lor"), (1j * me, "sum"), (np.int8(100), "sum"),
                  (np.array([me, -me]), "min"), (np.float32(1.5), "sum"), (2, "prod")]:
        a = comm.allreduce(v, op)
        pending = comm.iallreduce(v, op)
        B = pg.from_numpy(np.arange(5.))
        B.gather(np.array([4 - me % 5]))                        # other communication before the wait
        b = pending.wait()
        collective_verdict(np.array_equal(a, b) and np.asarray(a).dtype == np.asarray(b).dtype, f"{v!r} {op}: {a!r} {b!r}")


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.float32, np.float64, np.complex64, np.complex128])
def test_copy_kernel_views_against_numpy(dtype):
    """The move kernel (exec/copies.py) directly, under fuse=True: reversed, strided,
    transposed, stride-0, misaligned (all views offset by one byte) and constant moves, in
    list order (a later move reads what an earlier one wrote), against NumPy's assignments."""
    from pgas.exec import copies, settings

    was = settings.get("fuse")
    pg.config(fuse=True)
    try:
        item = np.dtype(dtype).itemsize
        for offset in (0, 1):
            raw = np.zeros(offset + 200 * item, np.uint8)
            mem = raw[offset:offset + 200 * item].view(dtype)
            ref = mem.copy()
            rng = np.random.default_rng(7)
            init = (rng.integers(0, 5, 200) + (1j if np.dtype(dtype).kind == "c" else 0)).astype(dtype)

            def pairs(m):
                a, b = m[:60].reshape(6, 10), m[60:120].reshape(6, 10)
                c = m[120:180].reshape(3, 4, 5)
                return [(a[::-1, 1::2], b[:, :5]), (b.T[2:5], a.T[::-2][:3]), (c[:, ::-1, ::2], dtype(1)),
                        (m[180:190][::-1], np.broadcast_to(m[195:196], (10,))), (a[0], b[1]),
                        (b[2, ::3], a[0, :4]), (c.transpose(2, 0, 1)[1][1:], c[0, :, :3].T[:2])]   # no move overlaps itself
            mem[...] = init
            ref[...] = init
            mv = copies.Copies(pairs(mem))
            for _ in range(3):
                mv()
                for d, s in pairs(ref):
                    d[...] = s
                assert np.array_equal(mem, ref), (offset, np.flatnonzero(mem != ref))
                ref += dtype(1)
                mem += dtype(1)
            assert mv.kernel, "the kernel did not take the moves"
    finally:
        pg.config(fuse=was)


def test_lazy_expressions_indexed_and_as_values():
    G = np.arange(7.)

    def f1():
        A = pg.from_numpy(G)
        E = A[:] + 1
        A[[0, 1]] = 9.
        return E[[0, 1, -1]]
    same_as_numpy(f1, lambda: (G + 1)[[0, 1, -1]], "pending expression indexed after a write")

    def f2():
        A = pg.from_numpy(G)
        E = A[1:] * 2
        A[A > 2] = 0.
        return E[E > 4]
    same_as_numpy(f2, lambda: (G[1:] * 2)[G[1:] * 2 > 4], "pending expression masked by itself after a write")

    def f3():
        A = pg.from_numpy(G)
        E = A[:] + 1
        A[[0, 1]] = E[[1, 0]]
        return A
    y = G.copy()
    y[[0, 1]] = (G + 1)[[1, 0]]
    same_as_numpy(f3, lambda: y, "value: a pending expression indexed")

    def f4():
        A = pg.from_numpy(G)
        E = A[:] * 1
        A[pg.from_numpy(np.array([0, 0]))] = E[2:4]
        return A
    z = G.copy()
    z[[0, 0]] = G[2:4]
    same_as_numpy(f4, lambda: z, "distributed key, value a pending view expression")
    same_as_numpy(lambda: (lambda V: V[V > 3])(pg.from_numpy(G)[1:]), lambda: G[1:][G[1:] > 3], "view masked")


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

"""The cached statement's fast paths: slice keys straight to views, the
result dtype probed once per structure and dtypes, the owner and each message's
protocol chosen once per plan.  Each test tries to fool a cache with a statement
of the same shapes but another dtype, distribution, aliasing or slice bounds, run
back to back with the first: every one must match NumPy (or raise NumPy's error)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from util import assert_matches, collective_verdict

import pgas as pg
from pgas.array.expr import TraceError
from pgas.exec import settings, statement, transfer


@pytest.fixture(autouse=True)
def _defaults():
    pg.config()
    yield
    pg.config()


def _stencil(dtype, dist, n=9):
    G = (np.arange(n * n) % 7).reshape(n, n).astype(dtype)
    A = pg.from_numpy(G, dist=dist)
    T = pg.zeros((n, n), dtype=dtype, dist=dist)
    return G, A, T


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int64", "complex128"])
def test_same_shapes_other_dtype_or_distribution(dtype):
    """``T[1:-1, 1:-1] = c * (A[...] + A[...])`` first on float64 Block arrays, then on
    arrays of another dtype and distribution (the same structure key), then the
    first again: each result and dtype as NumPy's."""
    for dt, dist in (("float64", pg.Block()), (dtype, pg.Cyclic()), ("float64", pg.Block()),
                     (dtype, pg.BlockCyclic(2))):
        G, A, T = _stencil(dt, dist)
        value = 0.5 * (A[1:-1, 1:-1] + A[:-2, 2:])
        GT = np.zeros_like(G)
        GT[1:-1, 1:-1] = 0.5 * (G[1:-1, 1:-1] + G[:-2, 2:])
        T[1:-1, 1:-1] = value
        assert_matches(T, GT, rtol=0.0)
        collective_verdict(value.dtype == (0.5 * (G[1:-1, 1:-1] + G[:-2, 2:])).dtype,   # as probed by the statement
                           f"{dt}: dtype {value.dtype}")


def test_dtype_dependent_error_not_cached_away():
    """``B[:2] = A[:2] + 200`` runs on int16 arrays; the same statement on int8 arrays
    must raise NumPy's OverflowError (200 does not fit int8) on every locale (also where
    no element is computed: the elements are on locale 0), not reuse the int16 probe;
    int16 again runs."""
    n = 4 * pg.num_locales
    for dt, fails in (("int16", False), ("int8", True), ("int16", False)):
        G = np.arange(n).astype(dt)
        A = pg.from_numpy(G, dist=pg.Block())
        B = pg.zeros(n, dtype=dt, dist=pg.Block())
        value = A[:2] + 200
        if fails:
            with pytest.raises(OverflowError):
                B[:2] = value
        else:
            B[:2] = value
            GB = np.zeros(n, dtype=dt)
            GB[:2] = G[:2] + 200
            assert_matches(B, GB, rtol=0.0)
            collective_verdict(value.dtype == np.dtype(dt), f"{dt}: dtype {value.dtype}")


def test_same_shapes_other_slice_bounds_and_aliasing():
    """Statements of equal shapes differing only in slice bounds, steps or aliasing,
    back to back and repeated."""
    n = 10
    G = np.arange(n * n, dtype=float).reshape(n, n)
    cases = [("A", (slice(1, None), slice(None)), (slice(None, -1), slice(None))),
             ("A", (slice(None, -1), slice(None)), (slice(1, None), slice(None))),
             ("B", (slice(1, None), slice(None)), (slice(None, -1), slice(None))),
             ("A", (slice(1, None), slice(None)), (slice(None, 0, -1), slice(None))),
             ("A", (slice(1, None), slice(None)), (slice(None, -1), slice(None, None, -1)))]
    for _ in range(2):
        for src, tkey, skey in cases:
            A = pg.from_numpy(G, dist=pg.Cyclic())
            B = pg.from_numpy(G * 2, dist=pg.Block())
            GA, GB = G.copy(), G * 2
            S, GS = (A, GA) if src == "A" else (B, GB)
            A[tkey] = S[skey] + 1.0
            GA[tkey] = GS[skey] + 1.0
            assert_matches(A, GA, rtol=0.0)


def test_keys_that_are_not_all_slices():
    """Keys the slice fast path must leave alone: integers, ``None``, ``...``, too few
    slices, index lists and masks, as NumPy reads and writes them."""
    n = 6
    G = np.arange(n * n, dtype=float).reshape(n, n)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    for key in [(slice(1, 3), 2), (2, slice(None)), (Ellipsis, slice(1, None)), (slice(None), None),
                (slice(1, 4),), (slice(None), [0, 2]), ([1, 3], slice(None))]:
        got = A[key]
        want = G[key]
        got = got.to_numpy() if hasattr(got, "to_numpy") else np.asarray(got)
        collective_verdict(np.array_equal(got, want), f"A[{key!r}]: {got} != {want}")
    B = pg.from_numpy(G, dist=pg.Block())
    GB = G.copy()
    B[1:3, 2] = 7.0
    GB[1:3, 2] = 7.0
    B[(slice(None), [0, 2])] = -1.0
    GB[:, [0, 2]] = -1.0
    B[..., 4:] = A[..., :2]
    GB[..., 4:] = G[..., :2]
    assert_matches(B, GB, rtol=0.0)
    with pytest.raises(TraceError):
        pg.forall((range(n), range(n)), lambda i, j: B.__setitem__((slice(None), slice(None)), A[i, j]))


def test_auto_choices_made_once_per_plan(monkeypatch):
    """Under ``owner="cost"`` and ``protocol="auto"`` the owner's candidates and each
    message's protocol are worked out on the first run of a statement only: its repeats
    take them from the plan's cache (and the results stay right).  A ``pg.config`` change
    decides afresh."""
    calls = {"candidates": 0, "choose": 0}
    real_cands, real_choose = statement.candidates, transfer.choose

    def cands(*a, **k):
        calls["candidates"] += 1
        return real_cands(*a, **k)

    def choose(*a, **k):
        calls["choose"] += 1
        return real_choose(*a, **k)

    monkeypatch.setattr(statement, "candidates", cands)
    monkeypatch.setattr(transfer, "choose", choose)
    n = 24
    rng = np.random.default_rng(1)
    GA, Gx, Gy = rng.random((n, n)), rng.random(n), rng.random(n)
    for cfg in ({"owner": "cost", "protocol": "auto"}, {"owner": "cost", "protocol": "auto", "buffer_limit": 1 << 20}):
        pg.config(**cfg)
        statement._choices.clear()
        transfer._choices.clear()
        A, x, y = pg.from_numpy(GA, dist=pg.Cyclic()), pg.from_numpy(Gx, dist=pg.Cyclic()), pg.from_numpy(Gy, dist=pg.Block())
        gx = Gx.copy()

        def body(i, j):
            x[i] += A[j, i] * y[j]

        for step in range(4):
            pg.forall((range(n), range(n)), body)
            gx += GA.T @ Gy
            if step == 0:
                first = dict(calls)
        assert_matches(x, gx, rtol=1e-12)
        collective_verdict(calls == first, f"choices redone on repeats: {first} after the first run, {calls} after 4")
    collective_verdict(calls["candidates"] >= 2, f"a pg.config change did not decide afresh: {calls}")


def test_fingerprint_follows_config():
    """The settings' fingerprint (cached between ``pg.config`` calls) changes with every
    planning setting and comes back with the defaults."""
    base = settings.fingerprint()
    seen = {base}
    other = "pipelined" if settings.get("protocol") != "pipelined" else "packed"     # not the default
    for kw in ({"owner": "cost"}, {"protocol": other}, {"buffer_limit": 4096}, {"strips": 2},
               {"aggregate": False}, {"nonblocking": False}):
        pg.config()
        pg.config(**kw)
        fp = settings.fingerprint()
        collective_verdict(fp not in seen, f"{kw}: fingerprint {fp} seen before")
        seen.add(fp)
    pg.config()
    collective_verdict(settings.fingerprint() == base, "the defaults' fingerprint changed")


def test_bound_kernel_calls_follow_buffers_and_settings():
    """With ``fuse=True`` a repeated task calls its kernel as bound on its first run
    (:class:`pgas.exec.fuse._Bound`); the same statements on other arrays of the same
    layouts, in place and not, and between runs under other settings (baseline mode,
    strips under a small buffer limit, the interior first) all match NumPy."""
    from pgas.exec import fuse, interior

    pytest.importorskip("numba")
    n = 12
    rng = np.random.default_rng(5)
    before = sum(len(P.bound) for P in fuse._programs.values())
    for cfg in ({}, {"aggregate": False}, {}, {"buffer_limit": 256}, {}, {"mode": "in flight"}, {}):
        mode = cfg.pop("mode", None)
        pg.config(fuse=True, **cfg)
        old, interior.MODE = interior.MODE, mode or interior.MODE
        try:
            for _ in range(2):
                GA, GB = rng.random((n, n)), rng.random((n, n))
                A, B = pg.from_numpy(GA, dist=pg.Block()), pg.from_numpy(GB, dist=pg.Block())
                A[1:-1, 1:-1] = A[1:-1, 1:-1] + 0.25 * (B[:-2, 1:-1] + B[2:, 1:-1])    # in place, with halos
                GA[1:-1, 1:-1] = GA[1:-1, 1:-1] + 0.25 * (GB[:-2, 1:-1] + GB[2:, 1:-1])
                B[1:-1, :] = A[2:, :] * 0.5 - A[:-2, :]                               # not in place
                GB[1:-1, :] = GA[2:, :] * 0.5 - GA[:-2, :]
                assert_matches(A, GA, rtol=0.0)
                assert_matches(B, GB, rtol=0.0)
        finally:
            interior.MODE = old
    after = sum(len(P.bound) for P in fuse._programs.values())
    collective_verdict(after > before or after > 0, "no task call was bound: the test does not reach the fast path")


_BASIC = st.one_of(st.integers(-7, 7), st.builds(slice, st.none() | st.integers(-8, 8), st.none() | st.integers(-8, 8),
                                                 st.none() | st.integers(-3, 3).filter(bool)))


@hsettings(max_examples=60, deadline=None)
@given(key=st.tuples(_BASIC, _BASIC, _BASIC), inner=st.tuples(_BASIC, _BASIC))
def test_int_and_slice_keys_read_and_write_as_numpy(key, inner):
    """Keys mixing Python ints and slices (``A[0, :]``, a fast path of their own), also applied to
    a view: the view reads and is written as NumPy's; an int out of bounds raises
    NumPy's IndexError on every locale."""
    G = np.arange(5 * 6 * 7, dtype=np.float64).reshape(5, 6, 7)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    try:
        want = G[key]
    except IndexError:
        with pytest.raises(IndexError):
            A[key]
        return
    if np.ndim(want) == 0:
        return                                          # one element: not a view
    np.testing.assert_array_equal(A[key].to_numpy(), want)
    W = G.copy()
    W[key] = -1.0
    A[key] = -1.0
    assert_matches(A, W, rtol=0.0)
    if len(inner) > np.ndim(want):
        return
    inner = inner + (slice(None),) * (np.ndim(want) - len(inner))
    try:
        want2 = W[key][inner]
    except IndexError:
        with pytest.raises(IndexError):
            A[key][inner]
        return
    if np.ndim(want2) == 0:
        return
    np.testing.assert_array_equal(A[key][inner].to_numpy(), want2)
    W[key][inner] = 7.0
    A[key][inner] = 7.0
    assert_matches(A, W, rtol=0.0)

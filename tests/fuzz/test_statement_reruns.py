"""Fuzzing one statement text run again and again: ``T[tk] = A[ak] * c + B[bk]`` on fresh
arrays of drawn dtypes, distributions, grids, view keys, aliasing, scalars and settings,
each run twice (its repeat hits the caches), against NumPy.  ``$PGAS_FUZZ_EXAMPLES``
raises the example count (6 by default: each example compiles kernels for new dtypes)."""

import gc
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import assert_matches
from util import raises_alike as _same_error

import pgas as pg
from pgas.layout import grids


@pytest.fixture
def _defaults():
    pg.config()
    yield
    pg.config()


DTYPES = ["float64", "float32", "int64", "int32", "int8", "complex128", "bool"]


N = 9


@st.composite
def _dist(draw, ndim=2):
    grid = draw(st.sampled_from([None] + grids(pg.num_locales, ndim)))
    kind = draw(st.sampled_from(["block", "cyclic", "bc"]))
    return pg.Block(grid) if kind == "block" else pg.Cyclic(grid) if kind == "cyclic" else \
        pg.BlockCyclic(draw(st.integers(1, 3)), grid)


@st.composite
def _slice(draw, length, k):
    """A slice of a dimension of ``length`` with exactly ``k`` elements (steps of either sign)."""
    steps = [s for s in (1, 2, 3, -1, -2) if k <= 1 or abs(s) * (k - 1) < length]
    s = draw(st.sampled_from(steps))
    if k == 0:
        a = draw(st.integers(0, length))
        return slice(a, a, s)
    span = abs(s) * (k - 1)
    a = draw(st.integers(0, length - 1 - span))
    if s > 0:
        return slice(a, a + s * k, s)
    a += span
    stop = a + s * k
    return slice(a, None if stop < 0 else stop, s)


@st.composite
def _key(draw, shape, box):
    """A view key path (one or two levels: a view of a view) from ``shape`` to ``box``."""
    keys = []
    if draw(st.booleans()):                          # an outer view first, at least box-sized
        outer = []
        for n, k in zip(shape, box):
            m = draw(st.integers(k, n))
            outer.append(draw(_slice(n, m)))
        keys.append(tuple(outer))
        shape = tuple(len(range(*s.indices(n))) for s, n in zip(outer, shape))
    keys.append(tuple(draw(_slice(n, k)) for n, k in zip(shape, box)))
    return keys


def _apply(x, keys):
    if keys and type(keys[0]) is str:                               # a transposed operand (a view with a permuted map)
        x, keys = x.T, keys[1:]
    for k in keys:
        x = x[k]
    return x


def _np_or_error(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                return f(), None
            except Exception as e:           # noqa: BLE001 - NumPy's error is the expected one
                return None, type(e)


def _values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    v = rng.integers(-5, 6, shape)
    if dtype == "bool":
        return v > 0
    if dtype.startswith("complex"):
        return (v + 1j * rng.integers(-3, 4, shape)).astype(dtype)
    return v.astype(dtype)


SCALARS = [2, 0.1, -0.0, 1j, 3 + 0.5j, True, 300, np.float32(0.1), np.int8(3), np.float64(2.5), -7]


def _statement(T, tk, A, ak, B, bk, c):
    """The statement whose text is re-run: ``T[tk] = A[ak] * c + B[bk]``."""
    _apply(T, tk[:-1])[tk[-1]] = _apply(A, ak[:-1])[ak[-1]] * c + _apply(B, bk[:-1])[bk[-1]]
    return None


@st.composite
def _case(draw):
    box = (draw(st.integers(0, 4)), draw(st.integers(0, 5)))
    alias = draw(st.sampled_from(["none", "TA", "AB", "TAB"]))
    dts = [draw(st.sampled_from(DTYPES)) for _ in range(3)]
    dists = [draw(_dist()) for _ in range(3)]
    keys = [(["T"] if draw(st.booleans()) else []) + draw(_key((N, N), box)) for _ in range(3)]
    c = draw(st.sampled_from(SCALARS))
    cfg = draw(st.sampled_from([{}, {"fuse": True}, {"fuse": False}, {"protocol": "pipelined"},
                                {"protocol": "bounding"}, {"protocol": "auto"}, {"buffer_limit": 64},
                                {"strips": 2}, {"aggregate": False}, {"owner": "cost"},
                                {"owner": "cost", "protocol": "auto", "fuse": True}]))
    return alias, dts, dists, keys, c, cfg


def _run_case(case, seed):
    alias, dts, dists, keys, c, cfg = case
    pg.config()
    pg.config(**cfg)
    Gs = [_values(dt, (N, N), seed + k) for k, dt in enumerate(dts)]
    if "T" in alias and "A" in alias:
        Gs[0] = Gs[1]
    if "AB" in alias:
        Gs[2] = Gs[1]
    arrs = [pg.from_numpy(g, dist=d) for g, d in zip(Gs, dists)]
    if "T" in alias and "A" in alias:
        arrs[0] = arrs[1]
    if "AB" in alias:
        arrs[2] = arrs[1]
    G = [g.copy() for g in Gs]
    if arrs[0] is arrs[1]:
        G[0] = G[1]
    if arrs[2] is arrs[1]:
        G[2] = G[1]
    (T, A, B), (GT, GA, GB), (tk, ak, bk) = arrs, G, keys
    want, err = _np_or_error(lambda: _statement(GT, tk, GA, ak, GB, bk, c))
    what = f"{case}"
    if err is not None:
        _same_error(err, lambda: _statement(T, tk, A, ak, B, bk, c), what)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            _statement(T, tk, A, ak, B, bk, c)
    for X, GX in ((T, GT), (A, GA), (B, GB)):
        assert_matches(X, GX, rtol=1e-6)


@pytest.mark.usefixtures("_defaults")
@given(cases=st.lists(_case(), min_size=3, max_size=3))
@settings(max_examples=int(os.environ.get("PGAS_FUZZ_EXAMPLES", 6)), deadline=None)
def test_same_text_rerun_fuzz(cases):
    """The same statement text, ``T[tk] = A[ak] * c + B[bk]``, run three times in a row on
    fresh arrays (freed between runs: their ids and memory reused) of drawn dtypes,
    distributions, grids, view keys (steps of either sign, views of views, empty
    boxes), aliasing, scalars and settings; each run twice (its repeat hits the caches)."""
    for k, case in enumerate(cases):
        for rep in range(2):
            _run_case(case, 10 * k + rep)
            gc.collect()

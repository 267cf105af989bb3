"""Review of session 23's cached-statement fast paths (h10), rev10: the same statement
text re-run while everything the caches could key on changes between runs (operands
freed and reallocated, dtypes, distributions, grids, view bounds and steps, aliasing,
scalars, pg.config settings, ghosts, other write paths, exceptions), each result
against NumPy at 1-4 locales."""

import gc
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.layout import grids

from util import assert_matches, collective_verdict
from util import raises_alike as _same_error


@pytest.fixture(autouse=True)
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


@given(cases=st.lists(_case(), min_size=3, max_size=3))
@settings(max_examples=int(os.environ.get("REV10_EXAMPLES", 12)), deadline=None)
def test_same_text_rerun_fuzz(cases):
    """The same statement text, ``T[tk] = A[ak] * c + B[bk]``, run three times in a row on
    fresh arrays (freed between runs: their ids and memory reused) of drawn dtypes,
    distributions, grids, view keys (steps of either sign, views of views, empty
    boxes), aliasing, scalars and settings; each run twice (its repeat hits the caches)."""
    for k, case in enumerate(cases):
        for rep in range(2):
            _run_case(case, 10 * k + rep)
            gc.collect()


WEAK = [0.1, np.float64(0.1), np.float32(0.1), 1e300, 2, 300, -129, 1j, True, np.int8(7), 2 ** 70]


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8", "int32", "complex64", "bool"])
def test_scalar_type_and_value_rerun(dtype):
    """``B[1:] = A[:-1] + c`` and ``B[:-1] = c * A[1:] - A[:-1]`` re-run with scalars of
    other types and values (weak Python scalars, NumPy scalars, values that do not fit):
    each run's dtype, values and errors as NumPy's (the probe cached per structure must
    not carry one scalar's dtype or verdict to another)."""
    n = 3 * pg.num_locales + 2
    G = _values(dtype, (n,), 3)
    for rep in range(2):
        for c in WEAK:
            A = pg.from_numpy(G, dist=pg.Cyclic())
            for text in range(2):
                def stmt(B, A):
                    V = A[:-1] + c if text == 0 else c * A[1:] - A[:-1]
                    if text == 0:
                        B[1:] = V
                    else:
                        B[:-1] = V
                    return V
                GB = np.zeros(n, dtype)
                V, err = _np_or_error(lambda: stmt(GB, G))
                B = pg.zeros(n, dtype=dtype, dist=pg.Block())
                what = f"{dtype} {'B[1:] = A[:-1] + c' if text == 0 else 'B[:-1] = c * A[1:] - A[:-1]'} c={c!r}"
                if err is not None:
                    _same_error(err, lambda: stmt(B, A), what)
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with np.errstate(all="ignore"):
                        E = stmt(B, A)
                collective_verdict(E.dtype == V.dtype, f"{what}: expression dtype {E.dtype}, NumPy {V.dtype}")
                assert_matches(B, GB, rtol=1e-6)


def _writes(A, G, how, step):
    """Write ``A`` (and its NumPy twin ``G``) through a path other than a slice statement."""
    n = G.shape[0]
    i, j = (3 * step + 1) % n, (5 * step + 2) % n
    v = 100.0 + step
    if how == "put":
        if pg.here == (step % pg.num_locales):
            A.put((i, j), v)
        pg.barrier()
    elif how == "put_slice":
        if pg.here == 0:
            A.put((slice(i, i + 2), slice(None)), v)
        pg.barrier()
    elif how == "fancy":
        A[[i, j], [j, i]] = v
        G[[i, j], [j, i]] = v
        return
    elif how == "mask":
        A[A > 3.0] = v
        G[G > 3.0] = v
        return
    elif how == "scatter":
        A.scatter((np.array([i, j]), np.array([j, i])), np.array([v, v]))
    elif how == "update":                            # every locale's pair: added num_locales times
        A.update((np.array([i]), np.array([j])), np.array([v]))
        G[i, j] += v * pg.num_locales
        return
    elif how == "element":
        A[i, j] = v
    elif how == "local":
        A.local[...] += 1.0
        G += 1.0
        pg.barrier()
        return
    elif how == "ufunc":
        np.multiply(A, 2.0, out=A)
        G *= 2.0
        return
    if how in ("put", "fancy", "scatter", "element"):
        G[i, j] = v
        if how in ("fancy", "scatter"):
            G[j, i] = v
    elif how == "put_slice":
        G[i:i + 2, :] = v


@pytest.mark.parametrize("fuse", ["auto", True])
@pytest.mark.parametrize("how", ["put", "put_slice", "fancy", "mask", "scatter", "update", "element", "local",
                                 "ufunc"])
def test_ghosted_stencil_rerun_other_writes(how, fuse):
    """A 5-point stencil on a ghosted array, re-run with ``update_ghosts`` before some
    runs and not others, the array written between runs through one-sided puts, fancy
    and mask assignment, scatter, update, one element, its local block and a ufunc:
    every run as NumPy's (a ghost read must never serve values older than the owner's)."""
    pg.config(fuse=fuse)
    n = 4 * pg.num_locales + 2
    G = (np.arange(n * n) % 11).reshape(n, n).astype(float)
    A = pg.from_numpy(G, dist=pg.Block(), ghosts=(1, 1))
    B = pg.zeros((n, n), dist=pg.Block())
    GB = np.zeros((n, n))
    for step in range(5):
        if step % 2 == 0:
            A.update_ghosts()
        B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]) - A[1:-1, 1:-1]
        GB[1:-1, 1:-1] = 0.25 * (G[:-2, 1:-1] + G[2:, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:]) - G[1:-1, 1:-1]
        assert_matches(B, GB, rtol=1e-12)
        A[1:-1, 1:-1] = A[1:-1, 1:-1] + 0.5 * B[1:-1, 1:-1]             # in place, halos of B
        G[1:-1, 1:-1] = G[1:-1, 1:-1] + 0.5 * GB[1:-1, 1:-1]
        assert_matches(A, G, rtol=1e-12)
        _writes(A, G, how, step)
        assert_matches(A, G, rtol=1e-12)


@pytest.mark.parametrize("where", ["first", "last", "none", "outside"])
@pytest.mark.parametrize("form", ["view", "expr", "eval", "float", "uint", "empty"])
def test_integer_power_negative_exponent_data(where, form):
    """``B[1:] = A[1:] ** X[:-1]`` with an integer exponent array holding a negative
    element on one locale only: NumPy raises ValueError.  Was: only the locale computing
    that element raised, the others went on (at 2+ locales a hang or divergence in the
    next collective).  Now every locale raises alike; a float base, an unsigned exponent,
    an empty box or a negative element outside the view run as NumPy does."""
    n = 3 * pg.num_locales + 2
    G = np.arange(n) % 5
    C = np.ones(n, dtype=np.int64)
    if where != "none":
        C[{"first": 0, "last": n - 2, "outside": n - 1}[where]] = -1
    if form == "float":
        G = G.astype(float)
    if form == "uint":
        C = C.astype(np.uint8)
    A, X = pg.from_numpy(G, dist=pg.Block()), pg.from_numpy(C, dist=pg.Block())
    B = pg.zeros(n, dtype=G.dtype, dist=pg.Cyclic())
    GB = np.zeros(n, dtype=G.dtype)
    s = slice(1, 1) if form == "empty" else slice(1, None)
    t = slice(0, 0) if form == "empty" else slice(None, -1)

    def run(B, A, X):
        if form == "expr":
            B[s] = A[s] ** (X[t] * 1)
        elif form == "eval":
            B[s] = (A[s] ** X[t]).eval() if hasattr(A, "_storage") else A[s] ** X[t]
        else:
            B[s] = A[s] ** X[t]
    _, err = _np_or_error(lambda: run(GB, G, C))
    if err is not None:
        _same_error(err, lambda: run(B, A, X), f"{form} {where}")
    else:
        run(B, A, X)
        assert_matches(B, GB)
    run(B, A, pg.from_numpy(np.abs(C), dist=pg.Cyclic()))      # then the same text runs
    run(GB, G, np.abs(C))
    assert_matches(B, GB)
    if err is not None:                                        # and fails again (its structure cached)
        _same_error(err, lambda: run(B, A, pg.from_numpy(C, dist=pg.Cyclic())), f"{form} {where} again")


@given(runs=st.lists(st.tuples(st.sampled_from(["float64", "float32", "int32", "complex128"]),
                               st.sampled_from(["float64", "int64", "int8"]), _dist(), _dist(),
                               st.sampled_from([2, 0.5, np.float32(1.5), 1j, -3]),
                               st.tuples(st.integers(-1, 1), st.integers(-1, 1)),
                               st.sampled_from([{}, {"fuse": True}, {"owner": "cost"}, {"protocol": "auto"},
                                                {"buffer_limit": 64}, {"aggregate": False}])),
                     min_size=3, max_size=3))
@settings(max_examples=int(os.environ.get("REV10_EXAMPLES", 6)), deadline=None)
def test_forall_and_slice_statements_rerun(runs):
    """The same stencil as a forall statement (with a loop variable as a value, and a
    reduction) and as a slice statement, alternately, on arrays of drawn dtypes and
    distributions and under drawn settings: each run as NumPy's."""
    n = 7
    for k, (da, db, dista, distb, c, (di, dj), cfg) in enumerate(runs):
        pg.config()
        pg.config(**cfg)
        GA, GB = _values(da, (n, n), k), _values(db, (n, n), k + 7)
        A, B = pg.from_numpy(GA, dist=dista), pg.from_numpy(GB, dist=distb)
        inner = slice(1, n - 1)
        src = (slice(1 + di, n - 1 + di), slice(1 + dj, n - 1 + dj))

        def body(i, j):
            B[i, j] = A[i + di, j + dj] * c + i

        want, err = _np_or_error(lambda: (GA[src] * c + np.arange(1, n - 1)[:, None]).astype(GB.dtype))
        if err is None and not (np.iscomplexobj(want) and not np.iscomplexobj(GB)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pg.forall((range(1, n - 1), range(1, n - 1)), body)
                GB[inner, inner] = want
                assert_matches(B, GB, rtol=1e-6)
                B[inner, inner] = A[src] * c                  # the slice statement of the same access
                GB[inner, inner] = GA[src] * c
                assert_matches(B, GB, rtol=1e-6)
        x = pg.zeros(n, dtype=A.dtype, dist=pg.Cyclic())
        gx = np.zeros(n, dtype=GA.dtype)
        def red(i, j):
            x[i] += A[j, i]

        for _ in range(2):
            pg.forall((range(n), range(n)), red)
            gx = gx + GA.sum(axis=0, dtype=GA.dtype)
        assert_matches(x, gx, rtol=1e-6)


@pytest.mark.parametrize("fuse", ["auto", True])
def test_exceptions_then_same_statement(fuse):
    """Statements that raise (a broadcast error, a scalar that does not fit, an index out
    of bounds in forall, a stale expression), each followed by the same statement text
    that is valid: no cache keeps the failed run's state (the valid runs as NumPy's, the
    failing ones raise NumPy's error every time)."""
    from pgas.array.engine import StaleExpression

    pg.config(fuse=fuse)
    n = 3 * pg.num_locales + 3
    for rep in range(2):
        for dt, add, k in (("int8", 300, 3), ("int8", 3, 3), ("int16", 300, 3), ("int8", 3, 2), ("int8", 300, 2)):
            G = (np.arange(n) % 7).astype(dt)
            A = pg.from_numpy(G, dist=pg.Cyclic())
            B = pg.zeros(n, dtype=dt, dist=pg.Block())
            GB = np.zeros(n, dtype=dt)

            def stmt(B, A):
                B[1:] = A[:-1] + add

            def stmt2(B, A):
                B[1:] = A[:-1] - A[:k]                  # a broadcast error (k < n - 1)

            def stmt3(B, A):
                B[1:k + 1] = A[:k] + add
            for f in (stmt, stmt2, stmt3):
                _, err = _np_or_error(lambda: f(GB, G))
                if err is not None:
                    _same_error(err, lambda: f(B, A), f"{f.__name__} {dt} + {add}, k={k}")
                else:
                    f(B, A)
            assert_matches(B, GB)
        A = pg.from_numpy(np.arange(float(n)), dist=pg.Block())
        B = pg.zeros(n, dist=pg.Cyclic())
        for hi in (n, n - 1, n, n - 1):

            def body(i):
                B[i] = A[i + 1] * 2.0
            if hi == n:
                _same_error(IndexError, lambda: pg.forall((range(hi),), body), "forall out of bounds")
            else:
                pg.forall((range(hi),), body)
                want = np.zeros(n)
                want[:n - 1] = np.arange(1.0, n) * 2.0
                assert_matches(B, want)
        E = A[1:] * 2.0
        B[:-1] = E
        A[:] = 0.0
        _same_error(StaleExpression, lambda: B.__setitem__(slice(0, -1), E), "stale expression")
        E = A[1:] * 2.0
        B[:-1] = E
        assert_matches(B, np.zeros(n))


CONFIGS = [{}, {"fuse": True}, {"protocol": "pipelined"}, {"protocol": "bounding"}, {"protocol": "auto"},
           {"buffer_limit": 64}, {"strips": 3}, {"aggregate": False}, {"owner": "cost"},
           {"nonblocking": False}, {"burst": 1}, {"check": True}, {"fuse": False}, {"owner": "cost", "fuse": True},
           {"protocol": "auto", "buffer_limit": 128, "fuse": True}]


@pytest.mark.parametrize("dist", [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)], ids=str)
def test_config_changes_between_runs_same_arrays(dist):
    """Three statements (not in place with halos, in place, through a transposed view)
    re-run on the same arrays while ``pg.config`` changes between runs (every planning
    setting, a pg.config call that fails half-way included): each run as NumPy's."""
    n = 2 * pg.num_locales + 5
    rng = np.random.default_rng(7)
    GA, GB = rng.random((n, n)), rng.random((n, n))
    A, B = pg.from_numpy(GA, dist=dist), pg.from_numpy(GB, dist=dist)
    for cfg in CONFIGS + CONFIGS[::-1]:
        pg.config()
        pg.config(**cfg)
        with pytest.raises(ValueError):
            pg.config(owner="cost", protocol="none such")      # owner set, then the failure
        pg.config(owner=cfg.get("owner", "write"))
        for _ in range(2):
            B[1:-1, :] = A[2:, :] * 0.5 - A[:-2, :]
            GB[1:-1, :] = GA[2:, :] * 0.5 - GA[:-2, :]
            A[1:-1, 1:-1] = A[1:-1, 1:-1] + 0.25 * (B[:-2, 1:-1] + B[2:, 1:-1])
            GA[1:-1, 1:-1] = GA[1:-1, 1:-1] + 0.25 * (GB[:-2, 1:-1] + GB[2:, 1:-1])
            B[:, 1:] = A.T[:, :-1] + 1.0
            GB[:, 1:] = GA.T[:, :-1] + 1.0
        assert_matches(A, GA, rtol=1e-12)
        assert_matches(B, GB, rtol=1e-12)


def test_failed_config_call_changes_nothing():
    """``pg.config(owner="cost", protocol="none such")`` raises ValueError.  Was: the owner
    was set before the protocol was found bad, so the failed call changed how the next
    statements were planned (and ``check=True, fuse="bad"`` left the check setting on
    but checking off)."""
    from pgas.exec import settings as engine_settings

    before = pg.config()
    fp = engine_settings.fingerprint()
    for bad in ({"owner": "cost", "protocol": "none such"}, {"check": True, "fuse": "bad"},
                {"buffer_limit": 1 << 10, "strips": 0}, {"aggregate": False, "nosuch": 1}):
        with pytest.raises((ValueError, TypeError)):
            pg.config(**bad)
        now = {k: engine_settings.get(k) for k in before}
        collective_verdict(now == before, f"pg.config(**{bad}) raised but changed {now} (was {before})")
        collective_verdict(engine_settings.fingerprint() == fp, f"pg.config(**{bad}): fingerprint changed")


@pytest.mark.parametrize("op", ["iadd", "out", "imul_where"])
def test_same_kind_casting_rerun(op):
    """In-place operators and ``out=`` on views take NumPy's ``same_kind`` casting:
    ``B[1:] += A[:-1] * c`` re-run with int and float ``B`` and ``c`` (the dtype probe
    cached for the expression must not skip the casting check): errors and values as NumPy's."""
    n = 2 * pg.num_locales + 4
    for rep in range(2):
        for db, da, c in (("float64", "int64", 2), ("int64", "int64", 2), ("int64", "int64", 1.5),
                          ("int32", "int64", 2), ("float32", "float64", 0.5), ("int64", "float64", 2),
                          ("complex128", "float64", 1j), ("float64", "float64", 1j)):
            GA, GB = _values(da, (n,), rep), _values(db, (n,), rep + 1)
            A, B = pg.from_numpy(GA, dist=pg.Cyclic()), pg.from_numpy(GB, dist=pg.Block())

            def f(B, A):
                if op == "iadd":
                    V = B[1:]
                    V += A[:-1] * c
                elif op == "out":
                    np.multiply(A[:-1], c, out=B[1:])
                else:
                    V = B[:-1]
                    V *= A[1:] + c
            _, err = _np_or_error(lambda: f(GB, GA))
            what = f"{op}: {db} B, {da} A, c={c!r}"
            if err is not None:
                _same_error(TypeError if issubclass(err, TypeError) else err, lambda: f(B, A), what)
            else:
                f(B, A)
            assert_matches(B, GB, rtol=1e-12)


@given(perm=st.permutations([0, 1, 2]), steps=st.lists(st.sampled_from([1, 2, -1, -2]), min_size=6, max_size=6),
       dts=st.tuples(st.sampled_from(["float64", "int32"]), st.sampled_from(["float64", "complex128", "int8"])),
       dist=_dist(3))
@settings(max_examples=int(os.environ.get("REV10_EXAMPLES", 8)), deadline=None)
def test_3d_permuted_views_of_views_rerun(perm, steps, dts, dist):
    """3-D arrays: ``T[k1][k2] = A.transpose(perm)[k1][k2] - 2`` (views of a permuted view,
    steps of either sign on every level), re-run on new arrays of another dtype, and an
    expression reused as the value of two statements into targets of other dtypes."""
    shape = (4, 5, 6)
    GA = _values(dts[0], shape, 1)
    k1 = tuple(slice(None, None, s) for s in steps[:3])
    k2 = tuple(slice(1 if s > 0 else None, None, s) for s in steps[3:])
    for dt in (dts[0], dts[1], dts[0]):
        GA = _values(dt, shape, 1)
        A = pg.from_numpy(GA, dist=dist)
        V = A.transpose(perm)[k1][k2]
        GV = GA.transpose(perm)[k1][k2]
        T = pg.zeros(GV.shape, dtype=dt, dist=pg.Cyclic())
        GT = np.zeros(GV.shape, dtype=dt)
        T[...] = V - 2
        GT[...] = GV - 2
        assert_matches(T, GT)
        E = V * 3
        U = pg.zeros(GV.shape, dtype="int64", dist=pg.Block())
        C = pg.zeros(GV.shape, dtype="complex128", dist=pg.Block())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            U[...] = E
            C[...] = E
            GU, GC = np.zeros(GV.shape, "int64"), np.zeros(GV.shape, "complex128")
            GU[...] = GV * 3
            GC[...] = GV * 3
        assert_matches(U, GU)
        assert_matches(C, GC)


def test_integer_power_explained_on_one_locale():
    """``pg.explain`` is local: explaining ``B[1:] = A[1:] ** X[:-1]`` (an integer power
    whose exponent's data a statement checks with a reduction) on locale 0 alone
    reduces nothing (no hang), and the statement then still checks its data."""
    n = 2 * pg.num_locales + 3
    C = np.ones(n, dtype=np.int64)
    C[0] = -1
    A, X = pg.from_numpy(np.arange(n), dist=pg.Block()), pg.from_numpy(C, dist=pg.Cyclic())
    B = pg.zeros(n, dtype=np.int64, dist=pg.Block())
    if pg.here == 0:
        text = pg.explain(lambda: B.__setitem__(slice(1, None), A[1:] ** X[:-1]))
        assert "A" in text or text
    pg.barrier()
    _same_error(ValueError, lambda: B.__setitem__(slice(1, None), A[1:] ** X[:-1]), "after explain")
    B[1:] = A[1:] ** (X[:-1] * X[:-1])
    assert_matches(B, np.r_[0, np.arange(1, n)])


@pytest.mark.parametrize("case", [
    "forall_power",                 # fixed in rev24 (fperr.deferring_powers): it hung at 2+ locales
    "errstate_raise"])
def test_data_errors_on_one_locale(case):
    """NumPy raises on data here; pgas raises only on the locale computing the bad
    element and the others wait for it: ``pg.forall`` with an integer power whose
    exponent array has a negative element (slice statements check it first, see
    :func:`pgas.array.collective.power_data`), and a statement under
    ``np.errstate(divide="raise")`` dividing by a zero held by one locale."""
    n = 4 * pg.num_locales
    A = pg.from_numpy(np.arange(n), dist=pg.Block())
    B = pg.zeros(n, dtype=np.int64 if case == "forall_power" else float, dist=pg.Block())
    if case == "forall_power":
        C = np.ones(n, dtype=np.int64)
        C[1] = -1
        X = pg.from_numpy(C, dist=pg.Block())

        def body(i):
            B[i] = A[i] ** X[i]
        _same_error(ValueError, lambda: pg.forall((range(n),), body), "forall power")
    else:
        def f():
            with np.errstate(divide="raise"):
                B[1:] = 1.0 / A[:-1]
        _same_error(FloatingPointError, f, "errstate raise")


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("where", ["statement", "eval", "forall", "forall_reduce", "out"])
def test_errstate_raise_on_every_locale(where, fuse):
    """Under ``np.errstate(divide=/over=/invalid="raise")`` a data error held by one locale
    raises FloatingPointError on every locale alike (it hung at 2+ locales: only the
    locale computing the element raised), with compiled kernels too (numba raises
    nothing: they are bypassed while errors raise); the same statements without an
    error, and outside errstate, give NumPy's values."""
    n = 4 * pg.num_locales + 1
    g = np.arange(n, dtype=np.float64)
    A = pg.from_numpy(g, dist=pg.Cyclic())
    B = pg.zeros(n, dist=pg.Block())
    bad = n - 2                                   # one element, on one locale

    def run(kind):
        z = pg.from_numpy(np.where(np.arange(n) == bad, 0.0 if kind == "divide" else 1e308, 1.0), dist=pg.Block())
        if where == "statement":
            B[:] = (1.0 / z) if kind == "divide" else z * 10.0
        elif where == "eval":
            e = (1.0 / z[:]) if kind == "divide" else z[:] * 10.0      # an expression or an array
            return e.eval() if hasattr(e, "eval") else e
        elif where == "out":
            np.divide(1.0, z, out=B) if kind == "divide" else np.multiply(z, 10.0, out=B)
        elif where == "forall":
            def body(i):
                B[i] = (1.0 / z[i]) if kind == "divide" else z[i] * 10.0
            pg.forall((range(n),), body)
        else:
            s = pg.zeros(1, dist=pg.Block())

            def body(i):
                s[0] += (1.0 / z[i]) if kind == "divide" else z[i] * 10.0
            pg.forall((range(n),), body)

    pg.config(fuse=fuse)
    try:
        _errstate_cases(run, B, g, n, bad, where)
    finally:
        pg.config()


def _errstate_cases(run, B, g, n, bad, where):
    for kind in ("divide", "over"):
        with np.errstate(**{kind: "raise"}):
            _same_error(FloatingPointError, lambda: run(kind), f"{where} {kind}")
            B[:] = pg.from_numpy(g, dist=pg.Cyclic()) + 1      # no error: runs, NumPy's values
            assert_matches(B, g + 1)
    with np.errstate(all="ignore"):           # no raise: NumPy's inf, no reduction
        run("divide")
        if where in ("statement", "out", "forall"):
            want = 1.0 / np.where(np.arange(n) == bad, 0.0, 1.0)
            assert_matches(B, want)


@pytest.mark.parametrize("how", ["sum", "sum_axis", "prod", "mean", "mean_axis"])
def test_errstate_raise_in_reductions(how):
    """A reduction whose local part overflows on one locale (the last two elements, both on
    the last locale of a Block array) raises FloatingPointError on every locale alike under
    ``np.errstate(over="raise")`` (it hung at 2+ locales); without it, NumPy's inf."""
    n = 4 * pg.num_locales + 1
    g = np.where(np.arange(n) >= n - 2, 1e308, 1.0).reshape(n, 1)
    A = pg.from_numpy(g, dist=pg.Block())
    call = {"sum": lambda: A.sum(), "sum_axis": lambda: A.sum(axis=0), "prod": lambda: A.prod(),
            "mean": lambda: A.mean(), "mean_axis": lambda: A.mean(axis=0)}[how]
    with np.errstate(over="raise"):
        _same_error(FloatingPointError, call, how)
    with np.errstate(over="ignore"):
        got = call()
        want = {"sum": g.sum(), "sum_axis": g.sum(axis=0), "prod": g.prod(), "mean": g.mean(),
                "mean_axis": g.mean(axis=0)}[how]
        if hasattr(got, "layout"):
            assert_matches(got, want)
        else:
            collective_verdict(np.array_equal(got, want), f"{how}: {got} != NumPy {want}")

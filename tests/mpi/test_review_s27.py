"""Review s27 of 08c807f (pgas.exec.persistent): a repeat on the same arrays makes its last
run's kernel calls again (``_Binding.calls``), and scalar fills store into views kept with
the binding (``_Binding.fills``).  Every result is compared with NumPy's bit for bit (NaNs
equal, the sign of zero checked), after each step, with what a kept call or view depends
on changed between the steps; every verdict is collective."""

import gc
import warnings
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

import pgas as pg
from pgas import comm
from pgas.comm import check
from pgas.exec import persistent, fuse
from util import a_dist, collective_verdict

P = pg.num_locales


@pytest.fixture(autouse=True)
def _auto():
    pg.config(protocol="auto")              # the library's default (the suite pins "packed": conftest)
    yield
    pg.config()
    persistent.ENABLED = True


def exact(A, G, what: str) -> None:
    """Collective: DistArray ``A`` equals NumPy's ``G`` bit for bit on the elements each
    locale owns (NaNs equal, signed zeros told apart)."""
    __tracebackhide__ = True
    G = np.asarray(G)
    ok = tuple(A.shape) == G.shape and A.dtype == G.dtype
    if ok:
        want = G[np.ix_(*A.layout.owned(comm.here()))]
        got = np.asarray(A.local).reshape(want.shape)
        if got.dtype.kind in "fc":
            same = (got == want) | (np.isnan(got) & np.isnan(want))
            same &= np.signbit(got.real) == np.signbit(want.real)
        else:
            same = got == want
        ok = bool(np.all(same))
    collective_verdict(ok, lambda: f"{what}: got (owned) {np.asarray(A.local)!r}, "
                                   f"NumPy's {G[np.ix_(*A.layout.owned(comm.here()))]!r}")


def _calls_seen(before: int) -> int:
    return int(comm.allreduce(persistent.stats["calls"] - before, "max"))


# -- repeats made by the kept kernel calls -------------------------------------------

FUSABLE = ["float64", "float32", "int64", "int32", "int16", "int8", "uint8", "uint64", "bool"]

#: Constants: Python scalars and NumPy scalars of other dtypes (each its own program).
CONSTS = {
    "f": [0.5, -2.0, 3.0, -0.0, 1, 2, np.float32(0.1), np.float64(0.25), np.int8(3), np.float32(-1.5)],
    "i": [1, 2, 3, 7, np.int8(3), np.int16(5), np.uint8(2), np.int64(1), True],
    "b": [True, False, np.bool_(True), np.bool_(False)],
}


def _data(shape, dt, rng):
    if dt == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.startswith("float"):
        return (rng.standard_normal(shape) * 4).astype(dt)
    return rng.integers(0, 60, shape).astype(dt)


def _stmt(form: int, ndim: int, dt: str):
    """``f(T, A, c)``: one statement form over target T (read in place: the kept calls'
    case; or shifted: not in place), on DistArrays and on NumPy arrays alike."""
    rest = [slice(None)] * (ndim - 1)
    mid, lo, hi = (tuple([s] + rest) for s in (slice(1, -1), slice(0, -2), slice(2, None)))
    rev = tuple([slice(None, None, -1)] * ndim)
    odd = tuple([slice(1, None, 2)] + rest)

    def f(T, A, c):
        if dt == "bool":
            if form % 3 == 0:
                T[mid] = T[mid] ^ (A[hi] & c)
            elif form % 3 == 1:
                T[rev] = (T[rev] | A[...]) ^ c
            else:
                T[1:] = T[:-1] ^ c                             # reads T shifted: not in place
            return
        if form == 0:
            T[mid] = T[mid] * c + A[hi]                        # in place, a halo of A
        elif form == 1:
            T[mid] = T[mid] - c * (A[hi] - A[lo])
        elif form == 2:
            T[rev] = T[rev] + A[...] * c                       # reversed views
        elif form == 3:
            T[odd] = T[odd] * c + A[odd]                       # strided
        elif form == 4:
            T[1:] = T[:-1] + c                                 # reads T shifted
        elif form == 5:
            T[mid] = (T[mid] + c) * A[mid] + T[mid]            # the target read twice, in place
        else:
            T[...] = T[...] * c                                # no reads but the target's own
    return f


#: What may change between two steps: nothing, the data (through A.local or T.local, or
#: a one-sided put before pg.barrier()), the settings, or the loaded kernels.
PERTURB = ["none", "none", "none", "A.local", "T.local", "put", "fuse", "protocol", "reset", "fill"]


@hsettings(max_examples=30, deadline=None)
@given(ndim=st.integers(1, 3), dt=st.sampled_from(FUSABLE), form=st.integers(0, 6), seed=st.integers(0, 2**16),
       data=st.data())
def test_repeats_match_numpy_whatever_changes_between_them(ndim, dt, form, seed, data):
    """A statement run again and again with constants that change or stay (Python and
    NumPy scalars of other dtypes: each its own program) and, between steps, the arrays
    written through ``A.local``/``T.local`` or a put and ``pg.barrier()``, another
    ``fuse`` or ``protocol`` setting, ``fuse.reset()``, or a fill: NumPy's values after
    every step, bit for bit."""
    da, dtd = data.draw(a_dist(ndim)), data.draw(a_dist(ndim))
    rng = np.random.default_rng(seed)
    mine = np.random.default_rng(seed * 7 + comm.here())      # this locale's own data
    shape = tuple(int(x) for x in rng.integers(3, 3 + 3 * P, ndim)) if ndim < 3 else (4, 3 + P, 5)
    GA, GT = _data(shape, dt, rng), _data(shape, dt, rng)
    pg.config(protocol="auto", fuse=True)
    A, T = pg.from_numpy(GA, dist=da), pg.from_numpy(GT, dist=dtd)
    f = _stmt(form, ndim, dt)
    cs = CONSTS["b" if dt == "bool" else "f" if dt.startswith("float") else "i"]
    steps = [(cs[int(rng.integers(len(cs)))], PERTURB[int(rng.integers(len(PERTURB)))])
             for _ in range(int(rng.integers(2, 5)))]
    steps = [(c, p if r == 0 else "none") for c, p in steps for r in range(int(rng.integers(1, 4)))]
    for k, (c, p) in enumerate(steps):
        if p == "A.local":
            A.local[...] = _data(A.local.shape, dt, mine)
            GA = A.to_numpy()
        elif p == "T.local":
            T.local[...] = _data(T.local.shape, dt, mine)
            GT = T.to_numpy()
        elif p == "put":
            idx = tuple(int(x) for x in rng.integers(0, shape))
            v = _data((), dt, rng)[()]
            if comm.here() == P - 1:
                T.put(idx, v)
            pg.barrier()
            GT[idx] = v
        elif p == "fuse":
            pg.config(protocol="auto", fuse=[False, "auto", True][k % 3])
        elif p == "protocol":
            pg.config(protocol=["packed", "auto"][k % 2])
        elif p == "reset":
            fuse.reset()
        elif p == "fill":
            v = _data((), dt, rng)[()]
            T[tuple([slice(None, None, 2)] * ndim)] = v
            GT[tuple([slice(None, None, 2)] * ndim)] = v
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                f(T, A, c)
                f(GT, GA, c)
        exact(T, GT, f"step {k} ({c!r}, after {p}) of {steps}, form {form}, {dt} {shape}, {dtd} / {da}")
        exact(A, GA, f"A at step {k}")


def test_kept_calls_are_made_and_follow_a_mutated_0d_array_and_replicated_operand():
    """The kept calls are made (``stats["calls"]``) and give NumPy's values; a 0-d array
    constant and a replicated NumPy operand mutated in place between steps (programs
    lowered afresh, never kept), and a pending expression over the target, read what
    NumPy reads."""
    pg.config(protocol="auto", fuse=True)
    n, m = 4 * P + 3, 6
    GA = np.arange(n * m, dtype=float).reshape(n, m) / 3.0
    A = pg.from_numpy(GA, dist=pg.Cyclic((P, 1)))     # (row kernels: a column grid of 1)
    T = pg.from_numpy(np.ones((n, m)), dist=pg.Block((P, 1)))
    GT = np.ones((n, m))
    c, W = np.array(0.5), np.ones(m)
    before = persistent.stats["calls"]
    for k in range(4):
        T[1:-1, :] = T[1:-1, :] * c + A[2:, :]
        GT[1:-1, :] = GT[1:-1, :] * c + GA[2:, :]
        c[()] = c * 3.0 + 1.0
        T[1:-1, :] = T[1:-1, :] * W
        GT[1:-1, :] = GT[1:-1, :] * W
        W[:] = W * 2.0 - 0.5
        E, GE = T[1:-1, :] + 1.0, GT[1:-1, :] + 1.0        # pending: reads T as it is now
        for _ in range(3):
            T[1:-1, :] = T[1:-1, :] * 0.5 + A[:-2, :]
            GT[1:-1, :] = GT[1:-1, :] * 0.5 + GA[:-2, :]
        exact(T, GT, f"T at step {k}")
        exact(E.eval(), GE, f"pending expression at step {k}")
    seen = _calls_seen(before)
    collective_verdict(seen >= 4 or check.enabled or fuse.load_numba() is None, f"{seen} runs by kept calls")


def test_no_task_here_keeps_no_program():
    """A locale that owns no element of the written box (no task) keeps no kernel calls:
    they would hold the program, and with it its replicated NumPy operand, alive there
    alone after the statement (the program of an operand like that is lowered afresh on
    every run, so it is never run again).  Before the fix locales 1.. kept ``W`` alive."""
    pg.config(protocol="auto", fuse=True)
    n, m = 4 * P, 64
    T = pg.zeros((n, m), dist=pg.Block())
    W = np.full((1, m), 3.0)
    gone = weakref.ref(W)
    T[0:1, :] = T[0:1, :] + W
    del W
    gc.collect()
    collective_verdict(gone() is None, "the replicated operand is still alive after the statement")
    want = np.zeros((n, m))
    want[0] = 3.0
    exact(T, want, "T")


def test_floating_point_errors_after_kept_calls():
    """A repeat made by the kept calls reports floating-point errors as NumPy does: a
    warning where the zero is, the user's callback, and FloatingPointError on every
    locale under ``"raise"``; the values are NumPy's each time."""
    pg.config(protocol="auto", fuse=True)
    n, m = 4 * P + 3, 6
    GA, GT = np.ones((n, m)) * 2.0, np.ones((n, m))
    A, T = pg.from_numpy(GA, dist=pg.Block()), pg.from_numpy(GT, dist=pg.Block())

    def step():
        T[1:-1, :] = T[1:-1, :] / A[2:, :]

    def want():
        with np.errstate(divide="ignore"):
            GT[1:-1, :] = GT[1:-1, :] / GA[2:, :]

    for _ in range(4):
        step()
        want()
    before = persistent.stats["calls"]
    if comm.here() == P - 1:
        A.put((n - 1, 2), 0.0)
    pg.barrier()
    GA[n - 1, 2] = 0.0
    has_zero = T.owner((n - 2, 2)) == comm.here()          # (the element that divides by it)
    for mode in ("warn", "call", "raise", "ignore", "warn"):
        calls, hit = [], None
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                with np.errstate(divide=mode, call=lambda *a: calls.append(a)):
                    step()
            except FloatingPointError as e:
                hit = e
        want()                                  # (under raise the statement ran to its end, as NumPy's out=)
        got = {"warn": len(w) > 0, "call": len(calls) > 0}.get(mode)
        if mode == "raise":
            collective_verdict(hit is not None, "no FloatingPointError under raise")
        elif mode == "ignore":
            collective_verdict(hit is None and not w and not calls, f"reported under ignore: {w} {calls}")
        else:
            collective_verdict(hit is None and got == has_zero, f"{mode}: reported {got}, holds the zero {has_zero}")
        exact(T, GT, f"T after {mode}")
        T.local[...] = 1.0
        GT[...] = 1.0
    seen = _calls_seen(before)
    collective_verdict(seen >= 2 or check.enabled or fuse.load_numba() is None, f"{seen} runs by kept calls")


def test_new_arrays_at_old_addresses():
    """Arrays deleted and new ones made at once (the pool gives them the same windows,
    maybe the same ids) run the statement on their own data, and their windows go back
    to the pool as on the generic path."""
    from pgas.comm import window
    pg.config(protocol="auto", fuse=True)
    n, m = 4 * P + 3, 6
    GA = np.arange(n * m, dtype=float).reshape(n, m)
    live = {}
    for on in (False, True):
        persistent.ENABLED = on
        persistent.clear()
        A = pg.from_numpy(GA, dist=pg.Cyclic())
        for k in range(6):
            G = np.full((n, m), float(k))
            T = pg.from_numpy(G)
            for r in range(3):
                T[1:-1, :] = T[1:-1, :] * 0.5 + A[2:, :]
                G[1:-1, :] = G[1:-1, :] * 0.5 + GA[2:, :]
                T[0, :] = np.float64(k - r)                  # a fill into kept views
                G[0, :] = k - r
            exact(T, G, f"step {k} (path on: {on})")
            del T
        del A
        gc.collect()
        pg.zeros(1)                                          # collects the released windows
        live[on] = len(window._live)
    collective_verdict(live[True] <= live[False], f"live windows {live}")


# -- scalar fills into kept views -----------------------------------------------------

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float32", "float64", "complex64", "complex128"]


def _values(dt):
    """Values NumPy stores into ``dt`` without raising (Python and NumPy scalars of
    other dtypes; pgas's conversion of some others differs from NumPy's, not this
    change: see the review report)."""
    kind = np.dtype(dt).kind
    common = [0, 1, 7, True, False, np.int8(3), np.uint8(100), np.int64(42), np.bool_(True), np.int16(12)]
    if kind == "b":
        return common + [2.5, -1, np.float32(0.0), np.float64(-3.5)]
    if kind in "iu":
        return common + [np.float32(2.5), 99.9, np.float64(1.0)]
    out = common + [-1, 1.5, -0.0, float("inf"), float("nan"), np.float32(2.5), np.float64(1e30), np.int8(-3)]
    return out + ([1 + 2j, np.complex64(1 - 0.5j), complex("nan+1j")] if kind == "c" else [])


def _boxes(ndim):
    if ndim == 1:
        return [np.s_[:], np.s_[1::2], np.s_[::-1], np.s_[-2:0:-3], np.s_[3]]
    if ndim == 2:
        return [np.s_[0, :], np.s_[:, 2], np.s_[1::2, ::3], np.s_[::-1, 1:-1], np.s_[::-2, ::-1], np.s_[-1, ::2]]
    return [np.s_[1, :, ::2], np.s_[::-1, 0, :], np.s_[:, 1:, ::-2], np.s_[...]]


@hsettings(max_examples=30, deadline=None)
@given(ndim=st.integers(1, 3), dt=st.sampled_from(DTYPES), seed=st.integers(0, 2**16), data=st.data())
def test_fills_of_every_dtype_match_numpy(ndim, dt, seed, data):
    """Fills of rows, columns, strided and reversed boxes, repeated with the same value
    (a recorded fill) or another (Python scalars, NumPy scalars of other dtypes), and the
    same box viewed through a view: NumPy's values, bit for bit."""
    dist = data.draw(a_dist(ndim, 3))
    rng = np.random.default_rng(seed)
    shape = tuple(int(x) for x in rng.integers(4, 4 + 3 * P, ndim)) if ndim < 3 else (4, 5, 6)
    G = np.zeros(shape, dtype=dt)
    A = pg.from_numpy(G, dist=dist)
    vals, boxes = _values(dt), _boxes(ndim)
    for k in range(8):
        v, b = vals[int(rng.integers(len(vals)))], boxes[int(rng.integers(len(boxes)))]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(int(rng.integers(1, 3))):
                G[b] = v
                A[b] = v
            if k % 3 == 2:                                   # a view of a view: the same box
                A[...][b] = v
        exact(A, G, f"fill {k}: {v!r} into {b} of {dt} {shape} {dist}")


@pytest.mark.parametrize("dist", [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)], ids=str)
def test_forall_fills_and_in_place_repeats(dist):
    """``pg.forall`` fills (a box, rectangular parts of non-affine bounds, a clipped
    triangle), in-place updates with constants that change and stay, and a loop variable
    as a value: NumPy's values after each."""
    pg.config(protocol="auto", fuse=True)
    n, m = 3 * P + 4, 7
    G = np.zeros((n, m))
    A = pg.from_numpy(G, dist=dist)
    GB = np.arange(n * m, dtype=float).reshape(n, m)
    B = pg.from_numpy(GB, dist=pg.Cyclic())
    for v in (1.0, 1.0, 2.5, np.float64(2.5), 3, 3):
        pg.forall((range(1, n - 1), range(m)), lambda i, j: A.__setitem__((i, j), v))
        G[1:n - 1, :] = v
        pg.forall((range(n), lambda i: range(i * i % m)), lambda i, j: A.__setitem__((i, j), v + 1))
        for i in range(n):
            G[i, :i * i % m] = v + 1
        pg.forall((range(n), lambda i: range(min(i, m))), lambda i, j: A.__setitem__((i, j), v + 2))
        for i in range(n):
            G[i, :min(i, m)] = v + 2
        exact(A, G, f"fills of {v!r}")

        def body(i, j):
            A[i, j] = A[i, j] * 0.5 + B[i + 1, j] * v
        for _ in range(2):
            pg.forall((range(1, n - 1), range(m)), body)
            G[1:n - 1, :] = G[1:n - 1, :] * 0.5 + GB[2:, :] * v
        pg.forall((range(n), range(m)), lambda i, j: A.__setitem__((i, j), A[i, j] + 2 * i + j))
        G += 2 * np.arange(n)[:, None] + np.arange(m)[None, :]
        exact(A, G, f"updates with {v!r}")


@pytest.mark.parametrize("fz", [True, False], ids=["fused", "numpy"])
def test_an_error_before_the_wait_leaves_no_request_active(fz):
    """A warning made an error by a warnings filter (or an error callback) raises on the
    locale that divides by zero, in a task that reads no message (computed before the
    run waits for its transfers): its requests must not stay active, or the next run's
    MPI_Startall fails there ("already active") and the other locales wait for it; and
    the statement counts as done there, or a one-sided write towards it waits forever
    (pgas.comm.runtime._Epochs).  The next runs give NumPy's values on every locale."""
    pg.config(protocol="auto", fuse=fz)
    n, m = 6 * P, 6
    GA = np.full((n, m), 2.0)
    A, T = pg.from_numpy(GA, dist=pg.Block((P, 1))), pg.from_numpy(np.ones((n, m)), dist=pg.Block((P, 1)))

    def step():
        T[1:-1, :] = T[1:-1, :] / A[1:-1, :] + A[2:, :]

    for _ in range(3):
        step()
    if comm.here() == A.owner((2, 2)):
        A.put((2, 2), 0.0)                                   # an interior row of locale 0
    pg.barrier()
    GA[2, 2] = 0.0
    T.local[...] = 1.0
    raised = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            step()
        except RuntimeWarning as e:
            raised = e
    collective_verdict((raised is not None) == (A.owner((2, 2)) == comm.here()), f"raised {raised!r}")
    T.local[...] = 1.0
    GT = np.ones((n, m))
    pg.barrier()                        # (my own stores above done before the put below lands)
    if comm.here() == P - 1:            # a one-sided write towards locale 0: it waits until locale 0
        T.put((0, 1), 5.0)              # has completed as many statements as this one has
    pg.barrier()
    GT[0, 1] = 5.0
    with np.errstate(divide="ignore"):
        for _ in range(3):
            step()
            GT[1:-1, :] = GT[1:-1, :] / GA[1:-1, :] + GA[2:, :]
    exact(T, GT, "T after the error")

"""Random statements at 1, 2, 3 and 4 threads per locale against NumPy, bit for bit.

Every kernel that a locale splits over its threads (:mod:`pgas.exec.workers`: fused
kernels, row kernels, whole-array reductions, gathers and updates) must give NumPy's
values whatever the thread count.  The split threshold is lowered to 2 elements, so
that even the tiny arrays drawn here (odd extents, extents not divisible by the
thread count, extents of 1) are cut into blocks.  The statements: element-wise
expressions over views of every kind (contiguous, strided with steps 1-3, reversed,
transposed, integer-indexed, broadcast NumPy operands and scalars), in-place updates
whose reads overlap their writes (``A[1:] = A[:-1] + 1``, ``A[::2] = A[1::2]``,
``A[::-1] = A + ...``), augmented assignments, ``where``, reductions with and without
an axis, ``cumsum``, gathers ``A[idx]``, updates with repeated indices, ``forall``
bodies and compiled steps; on float64, float32, int32, int64 and bool data mixed (with
NumPy's casting), on Block, Cyclic and BlockCyclic arrays, under ``fuse=True`` and ``fuse="auto"`` and both protocols.  Values
are small multiples of 1/4, so that every sum is exact in any order and NumPy's result
is the only right one."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.exec import fuse, workers
from util import collective_verdict

pytest.importorskip("numba")

P = pg.num_locales
THREADS = (1, 2, 3, 4)
DTYPES = [np.float64, np.float32, np.int32, np.int64, np.bool_]
MODES = [("packed", True), ("packed", "auto"), ("auto", True), ("auto", "auto")]


@pytest.fixture(autouse=True)
def _tiny_splits(monkeypatch):
    monkeypatch.setattr(workers, "SPLIT_MIN", 2)
    monkeypatch.setattr(fuse, "FUSE_MIN", 3)      # "auto": small tasks fused once they ran a few times
    pg.config()
    yield
    pg.config()


def values(dtype, shape, seed, powers: bool = False):
    """Small multiples of 1/4 (integers for integer dtypes) with some zeros; ``powers``:
    +-0.5, 1 and 2 only (their products are exact in any order)."""
    rng = np.random.default_rng(seed)
    if powers:
        return rng.choice([-2, -1, -0.5, 0.5, 1, 2], shape).astype(dtype)
    x = rng.integers(-8, 9, shape)
    return (x / 4 if np.dtype(dtype).kind == "f" else x).astype(dtype)


@st.composite
def a_slice(draw, n: int, length: int):
    """A slice of ``range(n)`` with ``length`` (>= 1) elements, step +-1..3."""
    steps = [s for s in (1, 2, 3) if (length - 1) * s + 1 <= n]
    s = draw(st.sampled_from(steps))
    start = draw(st.integers(0, n - 1 - (length - 1) * s))
    if draw(st.booleans()):
        first = start + (length - 1) * s
        stop = first - length * s
        return slice(first, stop if stop >= 0 else None, -s)
    return slice(start, start + length * s, s)


@st.composite
def a_view(draw, shape, V, transposable: bool = True):
    """``(transposed, key)`` of a view of an array of ``shape`` (or of its transpose) with
    extents ``V``: per axis a slice of that length, or an integer where the array has an
    extra leading axis."""
    extra = len(shape) - len(V)
    flipped = tuple(reversed(shape))
    t = (transposable and len(shape) > 1 and all(flipped[extra + k] >= v for k, v in enumerate(V))
         and draw(st.integers(0, 2)) == 0)
    s = flipped if t else tuple(shape)
    key = [draw(st.integers(0, s[k] - 1)) for k in range(extra)]
    key += [draw(a_slice(s[extra + k], V[k])) for k in range(len(V))]
    return t, tuple(key)


def view(X, v):
    t, key = v
    return (X.T if t else X)[key]


@st.composite
def a_tree(draw, nleaves: int, depth: int = 2, top: bool = False):
    """An expression tree over ``nleaves`` leaves; ``top``: an operation, not a leaf."""
    if depth == 0 or (not top and draw(st.integers(0, 2)) == 0):
        if draw(st.integers(0, 3)):
            return ("leaf", draw(st.integers(0, nleaves - 1)))
        return ("const", draw(st.sampled_from([2, -1, 0.5, 3.0, True, np.float32(1.5), np.int32(3)])))
    kind = draw(st.integers(0, 6))
    if kind == 0:
        return ("un", draw(st.sampled_from(["neg", "abs", "square"])), draw(a_tree(nleaves, depth - 1)))
    if kind == 1:
        return ("where", draw(a_tree(nleaves, depth - 1)), draw(a_tree(nleaves, depth - 1)),
                draw(a_tree(nleaves, depth - 1)))
    return ("bin", draw(st.sampled_from(["add", "sub", "mul", "max", "lt", "ne"])),
            draw(a_tree(nleaves, depth - 1)), draw(a_tree(nleaves, depth - 1)))


_BIN = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "max": np.maximum, "lt": lambda a, b: a < b, "ne": lambda a, b: a != b}
_UN = {"neg": lambda a: ~a if getattr(a, "dtype", None) == bool else -a, "abs": abs, "square": np.square}


def build(tree, leaves, where):
    kind = tree[0]
    if kind == "leaf":
        return leaves[tree[1]]
    if kind == "const":
        return tree[1]
    if kind == "un":
        return _UN[tree[1]](build(tree[2], leaves, where))
    if kind == "where":
        c, x, y = (build(t, leaves, where) for t in tree[1:])
        return where(c != 0, x, y)
    return _BIN[tree[1]](build(tree[2], leaves, where), build(tree[3], leaves, where))


def np_where(c, x, y):
    out = np.where(c, x, y)
    return out[()] if out.ndim == 0 else out


@st.composite
def a_case(draw):
    d = draw(st.integers(1, 3))
    sizes = {1: [1, 2, 3, 5, 7, 13, 31, 97], 2: [1, 2, 3, 5, 7, 9, 11], 3: [1, 2, 3, 5, 6]}[d]
    shape = tuple(draw(st.sampled_from(sizes)) for _ in range(d))
    dtypes = [draw(st.sampled_from(DTYPES)) for _ in range(2)]
    kind = draw(st.sampled_from(["expr"] * 4 + ["overlap"] * 2 + ["augmented", "reduce", "cumsum", "gather", "update", "forall", "compile"]))
    case = dict(shape=shape, dtypes=dtypes, kind=kind, seed=draw(st.integers(0, 99)),
                dists=[draw(st.sampled_from(["block", "cyclic", "bc"])) for _ in range(2)],
                protocol_fuse=draw(st.sampled_from(MODES)))
    if kind in ("expr", "augmented"):
        nv = draw(st.integers(1, d))                  # the views' rank (A's trailing axes)
        V = [draw(st.integers(1, n)) for n in shape[d - nv:]]
        case["target"] = draw(a_view(shape, V, transposable=False))
        leaves = []
        for _ in range(draw(st.integers(1, 3))):
            src = draw(st.integers(0, 2))             # A itself, B, or a NumPy array broadcast
            if src == 2:
                shp = tuple(n if draw(st.booleans()) else 1 for n in V[draw(st.integers(0, len(V))):])
                leaves.append((2, shp))
            else:
                leaves.append((src, draw(a_view(shape, V))))
        case["leaves"], case["tree"] = leaves, draw(a_tree(len(leaves), top=True))
        case["op"] = draw(st.sampled_from(["iadd", "imul", "isub"])) if kind == "augmented" else "set"
        case["repeats"] = draw(st.integers(1, 3))
    elif kind == "overlap":
        ax = draw(st.integers(0, d - 1))
        n = shape[ax]
        length = draw(st.integers(1, n))
        case["ax"], case["w"], case["r"] = ax, draw(a_slice(n, length)), draw(a_slice(n, length))
        case["c"] = draw(st.sampled_from([1, 0.5, True]))
        case["repeats"] = draw(st.integers(1, 3))
    elif kind in ("forall", "compile"):
        case["c"] = draw(st.sampled_from([0.5, 2, np.float32(0.25)]))
        case["repeats"] = draw(st.integers(1, 4))
    elif kind == "reduce":
        case["op"] = draw(st.sampled_from(["sum", "prod", "min", "max"]))
        case["axis"] = draw(st.sampled_from([None] + list(range(d))))
    elif kind == "cumsum":
        case["axis"] = draw(st.integers(0, d - 1))
    else:
        size = int(np.prod(shape))
        case["idx"] = draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=3 * size))
    return case


def run(case, distributed: bool):
    """The case's result (a NumPy array or scalar) on NumPy arrays or DistArrays."""
    shape, (da, db), seed = case["shape"], case["dtypes"], case["seed"]
    a, b = values(da, shape, seed, case.get("op") == "prod"), values(db, shape, seed + 1)
    if distributed:
        dists = [{"block": pg.Block(), "cyclic": pg.Cyclic(), "bc": pg.BlockCyclic(2)}[k] for k in case["dists"]]
        A, B = pg.from_numpy(a, dist=dists[0]), pg.from_numpy(b, dist=dists[1])
    else:
        A, B = a.copy(), b.copy()
    kind = case["kind"]
    where = pg.where if distributed else np_where
    if kind in ("expr", "augmented"):
        for _ in range(case["repeats"]):
            leaves = [values(db, v, seed + 2) if j == 2 else view(A if j == 0 else B, v) for j, v in case["leaves"]]
            value = build(case["tree"], leaves, where)
            T = view(A, case["target"])
            key = case["target"][1]
            if case["op"] == "set":
                A[key] = value
            elif case["op"] == "iadd":
                T += value
            elif case["op"] == "imul":
                T *= value
            else:
                T -= value
        return A
    if kind == "overlap":
        lead = (slice(None),) * case["ax"]
        for _ in range(case["repeats"]):
            A[lead + (case["w"],)] = A[lead + (case["r"],)] + case["c"]
        return A
    if kind == "forall":
        return _forall(A, B, case["c"], distributed)
    if kind == "compile":
        step = pg.compile(_stencil) if distributed else _stencil
        for _ in range(case["repeats"]):
            step(A, B, case["c"])
        return np.concatenate([A.to_numpy().ravel(), B.to_numpy().ravel()]) if distributed else np.concatenate(
            [A.ravel(), B.ravel()])
    if kind == "reduce":
        return getattr(A, case["op"])(axis=case["axis"])
    if kind == "cumsum":
        return np.cumsum(A, axis=case["axis"])
    idx = np.array(case["idx"], dtype=np.int64)
    flat = np.unravel_index(idx, shape)
    if kind == "gather":
        return A[flat]
    v = values(da, len(idx), seed + 3)
    op, ufunc = ("or", np.bitwise_or) if np.dtype(da) == bool else ("add", np.add)
    if not distributed:
        for _ in range(P):
            ufunc.at(A, flat, v)
        return A
    A.update(flat, v, op)
    return A


def _stencil(A, B, c):
    """Two statements over the interior of ``A`` and ``B`` (every axis), one reading ``B``'s
    update of the other: a compiled step's body."""
    inner = (slice(1, -1),) * A.ndim
    lo, hi = (slice(None, -2),) + inner[1:], (slice(2, None),) + inner[1:]
    B[inner] = c * (A[lo] + A[hi]) - B[inner]
    A[inner] = B[inner] + A[inner] * 2


def _forall(A, B, c, distributed):
    """``B[i, ...] = A[i + 1, ...] * c - A[i - 1, ...]`` over the inner rows by ``pg.forall``
    (by a loop over rows for NumPy), then ``A[i] = B[n - 1 - i] + 1`` at every other row."""
    n = A.shape[0]
    rows = range(1, n - 1)
    lead = (slice(None),) * (A.ndim - 1)
    if distributed:
        if A.ndim == 1:
            pg.forall(rows, lambda i: B.__setitem__(i, A[i + 1] * c - A[i - 1]))
            pg.forall(range(0, n, 2), lambda i: A.__setitem__(i, B[n - 1 - i] + 1))
        else:
            cols = [range(m) for m in A.shape[1:]]

            def body(i, *js):
                B[(i,) + js] = A[(i + 1,) + js] * c - A[(i - 1,) + js]
            pg.forall((rows, *cols), body)
            pg.forall((range(0, n, 2), *cols), lambda i, *js: A.__setitem__((i,) + js, B[(n - 1 - i,) + js] + 1))
        return np.concatenate([A.to_numpy().ravel(), B.to_numpy().ravel()])
    for i in rows:
        B[(i,) + lead] = A[(i + 1,) + lead] * c - A[(i - 1,) + lead]
    for i in range(0, n, 2):
        A[(i,) + lead] = B[(n - 1 - i,) + lead] + 1
    return np.concatenate([A.ravel(), B.ravel()])


def outcome(case, distributed: bool):
    """``(error type or None, result as NumPy)``."""
    try:
        got = run(case, distributed)
    except (TypeError, ValueError, OverflowError, np.exceptions.DTypePromotionError) as e:
        return type(e), None
    return None, np.asarray(got.to_numpy() if hasattr(got, "to_numpy") else got)


def same(got, want) -> bool:
    return (got.dtype == want.dtype and got.shape == want.shape
            and got.tobytes() == want.tobytes())


@settings(max_examples=int(os.environ.get("PGAS_FUZZ_EXAMPLES", 60)), deadline=None)
@given(case=a_case())
def test_random_statements_at_every_thread_count_match_numpy(case):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want_err, want = outcome(case, False)
        protocol, mode = case["protocol_fuse"]
        for t in THREADS:
            pg.config(protocol=protocol, fuse=mode, threads=t)
            err, got = outcome(case, True)
            collective_verdict(err is want_err, lambda: f"threads={t}: raised {err}, NumPy {want_err}")
            if want_err is None:
                collective_verdict(same(got, want), lambda: f"threads={t} {protocol}/{mode}: got {got!r}, NumPy {want!r}")

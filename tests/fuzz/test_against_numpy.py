"""Fuzzing whole-array statements against NumPy.

Random element-wise statements on 1-D, 2-D and 3-D arrays of random distributions
(Block, Cyclic, BlockCyclic, any grid; extents not divisible by the locale count,
smaller than it, or 0): the target and the operands are random basic slices (steps
+-1..3, empty, integer-indexed dimensions, broadcast dimensions), operands may be
the target itself read shifted, and the value is a random expression tree of
operators, ufuncs and scalar constants of every kind (Python and NumPy, NEP 50
promotion).  Each statement is run several times in a loop (a repeat takes the
recorded fast paths: pgas.exec.persistent's replays, recorded kernel calls and kept
fills) with the constants changed between some repeats; some repeats are in-place
operators or ufuncs with ``out=``; lazy expressions are built before a write and read
after it.  Every example runs under both protocols ("packed", the harness's pin, and
"auto", the library's default) and every fuse mode (True, False, "auto" with a small
FUSE_MIN so that tasks switch from NumPy to kernels within the loop), each on fresh
arrays, and must equal NumPy exactly (NaNs equal; float power within a few ulps),
or raise NumPy's error type on every locale alike.

The other tests: loops of stencil statements whose repeats take the recorded paths
(with the generic path's other settings too: protocols, owner, buffer limit, strips),
statements through transposed, swapped, flipped and None / Ellipsis views, arrays
with ghost cells through sequences of updates, reads and every kind of write,
reductions and scans (axes, keepdims, dtype, initial, where, out), and forall bodies
against Python loops.  ``$PGAS_FUZZ_EXAMPLES`` raises every test's example count
(the defaults keep the file within about a minute at 4 locales).
"""

from __future__ import annotations

import itertools
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import collective_verdict

import pgas as pg
from pgas.array.expr import Affine
from pgas.exec import fuse
from pgas.layout import grids

P = pg.num_locales

MODES = [("packed", False), ("packed", True), ("packed", "auto"),
         ("auto", False), ("auto", True), ("auto", "auto")]

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.float32,
          np.float64, np.complex64, np.complex128]

#: Constants of every kind: Python (weak, NEP 50) and NumPy scalars (strong).
CONSTS = [0, 1, 2, -3, 7, 300, True, False, 0.5, -2.0, 1e30, float("inf"), float("nan"), -0.0, 1 + 2j,
          np.int8(-2), np.uint8(200), np.int32(5), np.int64(-7), np.float32(1.5), np.float64(-0.0),
          np.float64(3.25), np.complex128(2 - 1j), np.bool_(True)]
#: Exponents of ``**`` (no negative integer powers: NumPy raises on data).
EXPONENTS = [0, 1, 2, 3, 0.5, 2.0, np.int8(2), np.float32(2.0)]

BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "minimum", "maximum",
          "lt", "le", "gt", "ge", "eq", "ne", "and", "or", "xor", "lshift", "logical_and", "logical_xor",
          "rsub", "rdiv", "fmod", "copysign"]
UNARY = ["neg", "abs", "sqrt", "invert", "square", "sign", "floor", "isnan", "logical_not", "positive"]


@pytest.fixture(autouse=True)
def _defaults(monkeypatch):
    monkeypatch.setattr(fuse, "FUSE_MIN", 3)      # "auto": tasks of 3+ elements fused after FUSE_AFTER runs
    pg.config()
    yield
    pg.config()


# -- values ----------------------------------------------------------------------
def values(dtype, shape, seed: int):
    """Small values of ``dtype`` with some edge values (extremes, zeros, NaN, inf, -0.0)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    out = rng.integers(-5, 6, n).astype(dt)
    if dt.kind == "c":
        out = out + 1j * rng.integers(-3, 4, n)
    if n and rng.integers(0, 2):
        if dt.kind in "iu":
            info = np.iinfo(dt)
            edges = [info.min, info.max, 0, -1 if dt.kind == "i" else 1]
        elif dt.kind in "fc":
            edges = [np.nan, np.inf, -np.inf, -0.0, np.finfo(dt).max]
        else:
            edges = [True, False]
        k = min(n, int(rng.integers(1, 3)))
        pos = rng.choice(n, size=k, replace=False)
        out[pos] = np.array(edges, dtype=object)[rng.integers(0, len(edges), k)].astype(dt)
    return out.reshape(shape)


@st.composite
def a_dist(draw, ndim: int):
    grid = draw(st.sampled_from([None] + grids(P, ndim)))
    kind = draw(st.sampled_from(["block", "cyclic", "bc"]))
    if kind == "block":
        return pg.Block(grid)
    if kind == "cyclic":
        return pg.Cyclic(grid)
    return pg.BlockCyclic(draw(st.integers(1, 3)), grid)


# -- slices ----------------------------------------------------------------------
@st.composite
def a_slice(draw, n: int, length: int):
    """A slice of ``range(n)`` with ``length`` elements (step +-1..3)."""
    if length == 0:
        k = draw(st.integers(0, n))
        return draw(st.sampled_from([slice(k, k), slice(k, k, -1), slice(n, 0) if n else slice(0, 0)]))
    if length == n and draw(st.booleans()):
        return draw(st.sampled_from([slice(None), slice(None, None, -1)]))
    steps = [s for s in (1, 2, 3) if (length - 1) * s + 1 <= n]
    s = draw(st.sampled_from(steps))
    start = draw(st.integers(0, n - 1 - (length - 1) * s))
    if draw(st.booleans()):                   # reversed
        first = start + (length - 1) * s
        stop = first - length * s
        return slice(first, stop if stop >= 0 else None, -s)
    stop = start + length * s
    return slice(start, stop if draw(st.booleans()) or stop > n else min(stop, n), s)


@st.composite
def a_view_key(draw, shape, V):
    """A basic key into an array of ``shape`` whose view broadcasts to ``V``: each of the
    array's dims is an int or a slice, and the slices map, in order, onto the last dims
    of ``V`` with ``V``'s extent or 1.  None if there is none."""
    d, r_max = len(shape), len(V)
    options = []
    for r in range(0, min(d, r_max) + 1):
        for dims in itertools.combinations(range(d), r):
            if any(shape[k] < 1 for k in range(d) if k not in dims):
                continue                       # an int index needs an element
            targets = V[r_max - r:]
            if all(shape[k] >= 1 or t == 0 for k, t in zip(dims, targets)):
                options.append(dims)
    if not options:
        return None
    dims = draw(st.sampled_from(options))
    targets = V[len(V) - len(dims):]
    key = []
    for k in range(d):
        if k in dims:
            t = targets[dims.index(k)]
            choices = ([t] if shape[k] >= t else []) + ([1] if shape[k] >= 1 and t != 1 else [])
            length = draw(st.sampled_from(choices))
            key.append(draw(a_slice(shape[k], length)))
        else:
            key.append(draw(st.integers(-shape[k], shape[k] - 1)))
    return tuple(key)


# -- expression trees --------------------------------------------------------------
@st.composite
def a_tree(draw, nleaves: int, depth: int = 3):
    """('leaf', j) | ('const', slot) | ('un', name, t) | ('bin', name, l, r) | ('pow', t, e) | ('where', c, x, y)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if nleaves and draw(st.integers(0, 2)):
            return ("leaf", draw(st.integers(0, nleaves - 1)))
        return ("const", draw(st.integers(0, 2)))
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return ("un", draw(st.sampled_from(UNARY)), draw(a_tree(nleaves, depth - 1)))
    if kind == 1:
        return ("pow", draw(a_tree(nleaves, depth - 1)), draw(st.sampled_from(EXPONENTS)))
    if kind == 2:
        return ("where", ("bin", draw(st.sampled_from(["lt", "ge", "ne"])), ("leaf", 0) if nleaves else ("const", 0),
                          draw(a_tree(nleaves, 0))),
                draw(a_tree(nleaves, depth - 1)), draw(a_tree(nleaves, depth - 1)))
    return ("bin", draw(st.sampled_from(BINARY)), draw(a_tree(nleaves, depth - 1)), draw(a_tree(nleaves, depth - 1)))


_BIN = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "truediv": lambda a, b: a / b, "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
        "minimum": np.minimum, "maximum": np.maximum, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
        "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
        "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
        "lshift": lambda a, b: a << b, "logical_and": np.logical_and, "logical_xor": np.logical_xor,
        "rsub": lambda a, b: 7 - a, "rdiv": lambda a, b: 2.5 / a, "fmod": np.fmod, "copysign": np.copysign}
_UN = {"neg": lambda a: -a, "abs": abs, "sqrt": np.sqrt, "invert": lambda a: ~a, "square": np.square,
       "sign": np.sign, "floor": np.floor, "isnan": np.isnan, "logical_not": np.logical_not, "positive": lambda a: +a}


def build(tree, leaves, consts, where):
    kind = tree[0]
    if kind == "leaf":
        return leaves[tree[1]]
    if kind == "const":
        return consts[tree[1]]
    if kind == "un":
        return _UN[tree[1]](build(tree[2], leaves, consts, where))
    if kind == "pow":
        return build(tree[1], leaves, consts, where) ** tree[2]
    if kind == "where":
        return where(*[build(t, leaves, consts, where) for t in tree[1:]])
    return _BIN[tree[1]](build(tree[2], leaves, consts, where), build(tree[3], leaves, consts, where))


def inexact(tree) -> bool:
    """True if the tree has a power (libm's pow, NumPy's SIMD loops: compared within ulps)."""
    if tree[0] == "pow":
        return True
    return any(inexact(t) for t in tree[1:] if isinstance(t, tuple))


def np_where(c, x, y):
    out = np.where(c, x, y)
    return out[()] if out.ndim == 0 else out


# -- one case ------------------------------------------------------------------------
@st.composite
def a_case(draw, ndim=None):
    d = draw(st.integers(1, 3)) if ndim is None else ndim
    # the target view: d dims, some integer-indexed (at least one sliced)
    sliced = draw(st.lists(st.booleans(), min_size=d, max_size=d).filter(any))
    maxlen = {1: 14, 2: 6, 3: 4}[d]
    V = [draw(st.integers(0, maxlen)) for k in range(d) if sliced[k]]
    if draw(st.integers(0, 4)) == 0:
        V = [max(v, 1) for v in V]
    tshape = []
    for k in range(d):
        need = V[sum(sliced[:k])] if sliced[k] else 1
        tshape.append(draw(st.integers(need, need + 3)) if need or draw(st.booleans()) else 0)
    if draw(st.integers(0, 3)) == 0 and all(sliced):   # the whole array
        tshape, tkey = list(V), tuple(slice(None) for _ in V)
    else:
        tkey = []
        for k in range(d):
            if sliced[k]:
                tkey.append(draw(a_slice(tshape[k], V[sum(sliced[:k])])))
            else:
                tkey.append(draw(st.integers(-tshape[k], tshape[k] - 1)))
        tkey = tuple(tkey)
    # the arrays: 0 is the target; 1 and 2 read (extents at least the view's, some larger)
    arrays = [(tuple(tshape), draw(st.sampled_from(DTYPES)), draw(a_dist(d)))]
    for _ in range(draw(st.integers(0, 2))):
        shp = tuple(n + draw(st.integers(0, 2)) for n in tshape)
        arrays.append((shp, draw(st.sampled_from(DTYPES)), draw(a_dist(d))))
    leaves = []
    for _ in range(draw(st.integers(1, 3))):
        j = draw(st.integers(0, len(arrays) - 1))
        key = draw(a_view_key(arrays[j][0], tuple(V)))
        if key is not None:
            leaves.append((j, key))
    if draw(st.integers(0, 3)) == 0:       # a replicated NumPy array broadcast against the views
        r = draw(st.integers(0, len(V)))
        shp = tuple(n if draw(st.booleans()) else 1 for n in V[len(V) - r:])
        leaves.append((-1, ("np", shp, draw(st.sampled_from(DTYPES)))))
    tree = draw(a_tree(len(leaves)))
    reps = draw(st.integers(1, 5))
    # per repeat: the statement's kind and its three constants (often the last ones again)
    plan = []
    consts = [draw(st.sampled_from(CONSTS)) for _ in range(3)]
    for _ in range(reps):
        if draw(st.integers(0, 3)) == 0:
            consts = list(consts)
            consts[draw(st.integers(0, 2))] = draw(st.sampled_from(CONSTS))
        how = draw(st.sampled_from(["set"] * 6 + ["iadd", "isub", "imul", "out_add", "out_mul", "out_max"]))
        lazy = draw(st.integers(0, 3)) == 0
        plan.append((how, tuple(consts), lazy))
    # a lazy expression's tree: one of the arrays' views and a constant
    lazy_tree = ("bin", draw(st.sampled_from(["add", "mul", "sub", "maximum"])), ("leaf", 0), ("const", 0))
    reduce_ = draw(st.sampled_from([None, "sum", "prod", "min", "max", "cumsum", "sum0", "max_last"]))
    seed = draw(st.integers(0, 1000))
    return dict(arrays=arrays, tkey=tkey, leaves=leaves, tree=tree, plan=plan, lazy_tree=lazy_tree,
                reduce=reduce_, seed=seed)


def _stmt(how, T, tkey, value_of):
    """One statement on target ``T`` (a NumPy array or DistArray) at ``tkey`` (a key, or a
    list of view operations whose last is the key)."""
    if type(tkey) is list:
        T, tkey = apply_ops(T, tkey[:-1]), tkey[-1][1]
    if how == "set":
        T[tkey] = value_of()
    elif how == "iadd":
        T[tkey] += value_of()
    elif how == "isub":
        T[tkey] -= value_of()
    elif how == "imul":
        T[tkey] *= value_of()
    else:
        uf = {"out_add": np.add, "out_mul": np.multiply, "out_max": np.maximum}[how]
        uf(T[tkey], value_of(), out=T[tkey])


def run_case(case, distributed: bool):
    """Run a case on NumPy arrays or DistArrays: ``(outcome, arrays, lazies, reduction)``;
    ``outcome`` the type of the exception raised (None: ran)."""
    arrays = []
    for k, (shape, dtype, dist) in enumerate(case["arrays"]):
        g = values(dtype, shape, case["seed"] + k)
        arrays.append(pg.from_numpy(g, dist=dist) if distributed else g.copy())
    where = pg.where if distributed else np_where
    T = arrays[0]
    lazies = []
    try:
        for rep, (how, consts, lazy) in enumerate(case["plan"]):
            leaves = [_leaf(arrays[j] if j >= 0 else None, key) for j, key in case["leaves"]]
            E = None
            if lazy and leaves and not distributed:
                try:
                    E = np.array(build(case["lazy_tree"], leaves, consts, where), copy=True)   # its values now
                except (TypeError, ValueError, OverflowError):
                    case["no_lazy"] = case.get("no_lazy", ()) + (rep,)
            if lazy and leaves and distributed and rep not in case.get("no_lazy", ()):
                # (where NumPy raises building it, pgas raises only when it is evaluated: not built here)
                E = build(case["lazy_tree"], leaves, consts, where)
            _stmt(how, T, case["tkey"], lambda: build(case["tree"], leaves, consts, where))
            if E is not None:
                lazies.append(E)
        red = reduction(case["reduce"], T)
    except (TypeError, ValueError, OverflowError, ZeroDivisionError, pg.StaleExpression) as e:
        return type(e), arrays, lazies, None
    return None, arrays, lazies, red


def _leaf(X, key):
    if type(key) is tuple and key and type(key[0]) is str:    # ("np", shape, dtype): a replicated array
        return values(key[2], key[1], 7)
    return apply_ops(X, key) if type(key) is list else X[key]


def reduction(what, T):
    if what is None or T.size == 0:
        return None
    if T.dtype.kind in "fc" and what in ("sum", "prod", "cumsum", "sum0"):
        return None                        # float sums are not exactly comparable (order)
    if what == "sum":
        return T.sum()
    if what == "prod":
        return T.prod()
    if what == "min":
        return T.min()
    if what == "max":
        return T.max()
    if what == "cumsum":
        return np.cumsum(T)
    if what == "sum0":
        return T.sum(axis=0)
    return T.max(axis=-1)


def as_numpy(x):
    return x.to_numpy() if hasattr(x, "to_numpy") else x


def same(got, want, loose: bool) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if loose and want.dtype.kind in "fc":
        return bool(np.all(np.isclose(got, want, rtol=1e-6 if want.dtype.itemsize <= 4 else 1e-13,
                                      atol=0, equal_nan=True) | (got == want)))
    if want.dtype.kind in "fc":
        return bool(np.array_equal(got, want, equal_nan=True))
    return bool(np.array_equal(got, want))


def undefined_cast(case) -> bool:
    """True if the case casts a float or complex into an integer target (NumPy's result is
    the C cast's, undefined for NaN and out-of-range values): compared only when in range."""
    return np.dtype(case["arrays"][0][1]).kind in "iu"


def check_case(case):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want_err, want_arrays, want_lazies, want_red = run_case(case, False)
        ub = undefined_cast(case) and _cast_out_of_range(case)
        loose = inexact(case["tree"])
        for protocol, mode in MODES:
            pg.config(protocol=protocol, fuse=mode)
            got_err, got_arrays, got_lazies, got_red = run_case(case, True)
            what = f"protocol={protocol} fuse={mode}"
            if want_err is not None or got_err is not None:
                collective_verdict(want_err is got_err,
                                   lambda: f"{what}: raised {got_err}, NumPy {want_err}")
                if got_err is not None or want_err is not None:
                    continue
            if ub:
                continue
            for k, (g, w) in enumerate(zip(got_arrays, want_arrays)):
                gv = g.to_numpy()
                collective_verdict(same(gv, w, loose), lambda: f"{what}: array {k}: got {gv!r}, NumPy {w!r}")
            for k, (g, w) in enumerate(zip(got_lazies, want_lazies)):
                gv = as_numpy(g)
                collective_verdict(same(gv, w, loose), lambda: f"{what}: lazy {k}: got {gv!r}, NumPy {w!r}")
            gv = as_numpy(got_red)
            collective_verdict(same(gv, want_red, loose) if want_red is not None else got_red is None,
                               lambda: f"{what}: {case['reduce']}: got {gv!r}, NumPy {want_red!r}")


def _cast_out_of_range(case) -> bool:
    """True if some statement of the case casts a float/complex value that is NaN, infinite
    or out of the integer target's range (NumPy's result: undefined)."""
    arrays = [values(dt, shape, case["seed"] + k) for k, (shape, dt, _) in enumerate(case["arrays"])]
    T = arrays[0]
    info = np.iinfo(T.dtype)
    try:
        for how, consts, _ in case["plan"]:
            leaves = [_leaf(arrays[j] if j >= 0 else None, key) for j, key in case["leaves"]]
            v = np.asarray(build(case["tree"], leaves, consts, np_where))
            if v.dtype.kind in "fc":
                if how in ("iadd", "isub", "imul", "out_add", "out_mul", "out_max"):
                    return True                      # (NumPy raises: same_kind)
                r = np.real(v)
                if not np.all(np.isfinite(r) & (np.trunc(r) >= info.min) & (np.trunc(r) <= info.max)):
                    return True
            _stmt(how, T, case["tkey"], lambda: build(case["tree"], leaves, consts, np_where))
    except Exception:                               # noqa: BLE001  (NumPy raises: no values compared)
        return False
    return False


@settings(max_examples=int(os.environ.get("PGAS_FUZZ_EXAMPLES", 25)), deadline=None)
@given(case=a_case())
def test_random_statements_match_numpy(case):
    check_case(case)


# -- loops of stencil statements (the recorded fast paths) --------------------------------
#: Operations compiled by the fused kernels (and so the ones whose repeats make their last
#: run's kernel calls again, pgas.exec.persistent), per dtype kind.
KERNEL_BIN = {"b": ["add", "mul", "minimum", "maximum", "lt", "ne", "eq", "and", "or", "xor", "logical_xor"],
              "iu": ["add", "sub", "mul", "floordiv", "mod", "minimum", "maximum", "lt", "ge", "ne", "and", "or",
                     "xor", "logical_and"],
              "f": ["add", "sub", "mul", "truediv", "lt", "ge", "ne", "logical_and"]}
LOOP_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.float32, np.float64]


def _kind(dtype) -> str:
    k = np.dtype(dtype).kind
    return "iu" if k in "iu" else k


@st.composite
def a_stencil_tree(draw, nleaves: int, kind: str, depth: int = 2):
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        if draw(st.integers(0, 3)):
            return ("leaf", draw(st.integers(0, nleaves - 1)))
        return ("const", draw(st.integers(0, 2)))
    k = draw(st.integers(0, 7))
    if k == 0 and kind != "b":
        return ("un", draw(st.sampled_from(["neg", "abs", "square", "positive"] + (["sqrt"] if kind == "f" else ["invert"]))),
                draw(a_stencil_tree(nleaves, kind, depth - 1)))
    if k == 1:
        return ("where", ("bin", "lt", ("leaf", 0), draw(a_stencil_tree(nleaves, kind, 0))),
                draw(a_stencil_tree(nleaves, kind, depth - 1)), draw(a_stencil_tree(nleaves, kind, depth - 1)))
    return ("bin", draw(st.sampled_from(KERNEL_BIN[kind])), draw(a_stencil_tree(nleaves, kind, depth - 1)),
            draw(a_stencil_tree(nleaves, kind, depth - 1)))


def _weak(kind: str, draw):
    """A constant that keeps the arrays' dtype (Python scalars are weak), sometimes a NumPy one."""
    if kind == "b":
        return draw(st.sampled_from([True, False]))
    if kind == "iu":
        return draw(st.sampled_from([0, 1, 2, 3, 5, 7]))
    return draw(st.sampled_from([0.5, -1.25, 2.0, 0.0, -0.0, 3.0, float("inf")]))


@st.composite
def a_shifted_pair(draw, n: int):
    """A target slice of ``range(n)`` and an operand slice of the same length, shifted by up
    to 2 (sometimes both reversed or with step 2)."""
    lo, hi = draw(st.integers(0, min(2, n))), draw(st.integers(0, min(2, n)))
    length = max(0, n - lo - hi)
    o = draw(st.integers(-lo, hi))
    how = draw(st.sampled_from(["plain"] * 4 + ["rev", "step"]))
    if how == "rev" and length:
        t = slice(n - hi - 1, lo - 1 if lo else None, -1)
        return t, slice(n - hi - 1 + o, (lo + o - 1) if lo + o else None, -1)
    if how == "step" and length >= 2:
        m = (length + 1) // 2
        return slice(lo, lo + 2 * m - 1, 2), slice(lo + o, lo + o + 2 * m - 1, 2)
    return slice(lo, lo + length), slice(lo + o, lo + o + length)


@st.composite
def a_loop(draw):
    d = draw(st.sampled_from([1, 1, 2, 2, 3]))
    shape = tuple(draw(st.integers(0, {1: 40, 2: 12, 3: 6}[d])) for _ in range(d))
    dtype = draw(st.sampled_from(LOOP_DTYPES))
    kind = _kind(dtype)
    narr = draw(st.integers(1, 3))
    dists = [draw(a_dist(d)) for _ in range(narr)]
    stmts = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 4)) == 0:            # a scalar fill of a row / plane / the whole array
            t = draw(st.integers(0, narr - 1))
            if d > 1 and shape[0] and draw(st.booleans()):
                key = (draw(st.integers(0, shape[0] - 1)),) + (slice(None),) * (d - 1)
            else:
                key = (slice(None),) * d
            stmts.append(("fill", t, key, draw(st.sampled_from(["numpy", "python"]))))
            continue
        t = draw(st.integers(0, narr - 1))
        pairs = [draw(a_shifted_pair(n)) for n in shape]
        tkey = tuple(p[0] for p in pairs)
        leaves = []
        for _ in range(draw(st.integers(1, 4))):
            j = draw(st.integers(0, narr - 1))
            if draw(st.integers(0, 2)) == 0:      # the same place as the target (in place if j == t)
                leaves.append((j, tkey))
                continue
            # the operand: the target's own slices shifted (so the lengths match)
            key = []
            for (ts, _), n in zip(pairs, shape):
                start, stop, step = ts.indices(n)
                cnt = len(range(start, stop, step))
                o = draw(st.integers(-2, 2))
                first = start + o
                last = first + (cnt - 1) * step
                if cnt == 0 or min(first, last) < 0 or max(first, last) >= n:
                    o = 0
                    first = start
                if cnt == 0:
                    key.append(ts)
                elif step > 0:
                    key.append(slice(first, first + (cnt - 1) * step + 1, step))
                else:
                    e = first + cnt * step
                    key.append(slice(first, e if e >= 0 else None, step))
            leaves.append((j, tuple(key)))
        tree = draw(a_stencil_tree(len(leaves), kind))
        stmts.append(("stmt", t, tkey, leaves, tree))
    steps = draw(st.integers(2, 7))
    # constants per step: three slots, changed at some steps only
    consts, cons = [_weak(kind, draw) for _ in range(3)], []
    for _ in range(steps):
        if draw(st.integers(0, 3)) == 0:
            consts = list(consts)
            consts[draw(st.integers(0, 2))] = _weak(kind, draw)
        cons.append(tuple(consts))
    protocol, mode = draw(st.sampled_from(MODES))
    extra = {}
    if draw(st.integers(0, 2)) == 0:             # the generic path's other settings
        extra = dict(protocol=draw(st.sampled_from(["packed", "pipelined", "bounding", "auto"])),
                     owner=draw(st.sampled_from(["write", "cost"])),
                     buffer_limit=draw(st.sampled_from([64 << 20, 64, 200])),
                     strips=draw(st.sampled_from(["auto", 1, 3])), nonblocking=draw(st.booleans()),
                     aggregate=draw(st.integers(0, 3)) > 0, burst=draw(st.sampled_from([0, 2])))
        protocol = extra.pop("protocol")
    return dict(shape=shape, dtype=dtype, dists=dists, stmts=stmts, cons=cons, seed=draw(st.integers(0, 99)),
                protocol=protocol, fuse=mode, extra=extra)


def run_loop(loop, distributed: bool):
    arrays = []
    for k, dist in enumerate(loop["dists"]):
        g = values(loop["dtype"], loop["shape"], loop["seed"] + k)
        arrays.append(pg.from_numpy(g, dist=dist) if distributed else g.copy())
    where = pg.where if distributed else np_where
    try:
        for step, consts in enumerate(loop["cons"]):
            for s in loop["stmts"]:
                if s[0] == "fill":
                    _, t, key, how = s
                    v = np.dtype(loop["dtype"]).type(step % 3) if how == "numpy" else (step % 3 == 1)
                    arrays[t][key] = v
                    continue
                _, t, tkey, leaves, tree = s
                views = [arrays[j][key] for j, key in leaves]
                arrays[t][tkey] = build(tree, views, consts, where)
    except (TypeError, ValueError, OverflowError, ZeroDivisionError) as e:
        return type(e), arrays
    return None, arrays


@settings(max_examples=int(os.environ.get("PGAS_FUZZ_EXAMPLES", 25)), deadline=None)
@given(loop=a_loop())
def test_stencil_loops_match_numpy(loop):
    """Loops of 1-3 stencil statements (operands shifted views of 1-3 arrays of one dtype,
    some the target itself, in place or shifted; row and whole-array scalar fills) for
    2-7 steps, constants changed at some steps: the repeats take the recorded paths."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want_err, want = run_loop(loop, False)
        pg.config(protocol=loop["protocol"], fuse=loop["fuse"], **loop["extra"])
        got_err, got = run_loop(loop, True)
    what = f"protocol={loop['protocol']} fuse={loop['fuse']} {loop['extra']}"
    collective_verdict(want_err is got_err, lambda: f"{what}: raised {got_err}, NumPy {want_err}")
    if want_err is None:
        for k, (g, w) in enumerate(zip(got, want)):
            gv = g.to_numpy()
            collective_verdict(same(gv, w, False), lambda: f"{what}: array {k}: got {gv!r}, NumPy {w!r}")


# -- statements through transformed views ---------------------------------------------------
def apply_ops(X, ops):
    """``X`` through view operations (the same calls on NumPy arrays and DistArrays)."""
    for op in ops:
        if op[0] == "T":
            X = X.T
        elif op[0] == "swap":
            X = np.swapaxes(X, op[1], op[2])
        elif op[0] == "flip":
            X = np.flip(X, op[1])
        else:
            X = X[op[1]]
    return X


def _shape_after(shape, ops):
    return apply_ops(np.empty(shape, np.int8), ops).shape


@st.composite
def a_transform(draw, shape):
    """0-2 view operations that keep at least one dimension: transposes, swapped axes, flips,
    keys with None, Ellipsis, NumPy integers and slices."""
    ops = []
    for _ in range(draw(st.integers(0, 2))):
        cur = _shape_after(shape, ops)
        nd = len(cur)
        k = draw(st.integers(0, 3))
        if k == 0:
            ops.append(("T",))
        elif k == 1 and nd >= 2:
            ops.append(("swap", draw(st.integers(-nd, nd - 1)), draw(st.integers(-nd, nd - 1))))
        elif k == 2 and nd:
            ops.append(("flip", draw(st.integers(-nd, nd - 1))))
        else:
            items = []
            for n in cur:
                c = draw(st.integers(0, 4))
                if c == 0 and n:
                    items.append(np.int64(draw(st.integers(-n, n - 1))))
                elif c == 1:
                    items.append(slice(draw(st.integers(-n - 1, n + 1)), draw(st.integers(-n - 1, n + 1)),
                                       draw(st.sampled_from([1, 2, -1, -2, 3]))))
                else:
                    items.append(slice(None))
            if draw(st.booleans()):
                items.insert(draw(st.integers(0, len(items))), None)
            if draw(st.booleans()) and items:
                p = draw(st.integers(0, len(items) - 1))
                if all(type(x) is slice and x == slice(None) for x in items[p:]):
                    items[p:] = [Ellipsis]
            ops.append(("key", tuple(items)))
            if len(_shape_after(shape, ops)) == 0:
                ops.pop()
    return ops


@st.composite
def a_view_case(draw):
    d = draw(st.integers(1, 3))
    maxlen = {1: 12, 2: 7, 3: 4}[d]
    tshape = tuple(draw(st.integers(0, maxlen)) for _ in range(d))
    arrays = [(tshape, draw(st.sampled_from(DTYPES)), draw(a_dist(d)))]
    for _ in range(draw(st.integers(0, 2))):
        shp = tuple(draw(st.integers(0, maxlen)) for _ in range(d))
        arrays.append((shp, draw(st.sampled_from(DTYPES)), draw(a_dist(d))))
    tops = draw(a_transform(tshape))
    cur = _shape_after(tshape, tops)
    sliced = [draw(st.booleans()) if n else True for n in cur]
    if not any(sliced):
        sliced[0] = True
    key = []
    for n, s in zip(cur, sliced):
        key.append(draw(a_slice(n, draw(st.integers(0, n)))) if s else draw(st.integers(-n, n - 1)))
    tops = tops + [("key", tuple(key))]
    V = _shape_after(tshape, tops)
    leaves = []
    for _ in range(draw(st.integers(1, 3))):
        j = draw(st.integers(0, len(arrays) - 1))
        ops = draw(a_transform(arrays[j][0]))
        fit = draw(a_view_key(_shape_after(arrays[j][0], ops), tuple(V)))
        if fit is not None:
            leaves.append((j, ops + [("key", fit)]))
    tree = draw(a_tree(len(leaves), 2))
    plan = []
    consts = [draw(st.sampled_from(CONSTS)) for _ in range(3)]
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 2)) == 0:
            consts = list(consts)
            consts[draw(st.integers(0, 2))] = draw(st.sampled_from(CONSTS))
        how = draw(st.sampled_from(["set"] * 4 + ["iadd", "imul", "out_add"]))
        plan.append((how, tuple(consts), False))
    return dict(arrays=arrays, tkey=tops, leaves=leaves, tree=tree, plan=plan, lazy_tree=None,
                reduce=None, seed=draw(st.integers(0, 1000)))


@settings(max_examples=int(os.environ.get("PGAS_FUZZ_EXAMPLES", 15)), deadline=None)
@given(case=a_view_case())
def test_statements_through_transformed_views_match_numpy(case):
    """Targets and operands through transposes, swapped axes, flips, None / Ellipsis /
    NumPy-integer keys, then a basic key: written and read as NumPy does."""
    check_case(case)


# -- arrays with ghost cells: statements read them only while current ----------------------
GHOST_OPS = ["update", "update", "read", "read", "read", "self", "write_elem", "fill_row", "iadd", "local",
             "local_readonly", "invalidate", "update_op", "scatter", "put", "barrier", "fancy"]


@st.composite
def a_ghost_case(draw):
    d = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(1, {1: 14, 2: 7}[d])) for _ in range(d))
    ghosts = tuple(draw(st.integers(0, 2)) for _ in range(d))
    if not any(ghosts):
        ghosts = (1,) * d
    grid = draw(st.sampled_from([None] + grids(P, d)))
    ops = []
    for _ in range(draw(st.integers(2, 9))):
        op = draw(st.sampled_from(GHOST_OPS))
        if op == "update":
            ops.append((op, draw(st.booleans()), draw(st.booleans())))
        elif op in ("read", "self"):
            pairs = [draw(a_shifted_pair(n)) for n in shape]
            shifts = [tuple(draw(st.integers(-2, 2)) for _ in range(d)) for _ in range(draw(st.integers(1, 3)))]
            ops.append((op, tuple(p[0] for p in pairs), shifts, draw(st.sampled_from([0.5, -1.0, 2.0]))))
        elif op in ("write_elem", "put"):
            ops.append((op, tuple(draw(st.integers(0, n - 1)) for n in shape), draw(st.integers(-9, 9)) * 1.0))
        elif op == "fill_row":
            ops.append((op, draw(st.integers(0, shape[0] - 1)), draw(st.integers(-9, 9)) * 1.0))
        elif op in ("local", "invalidate"):
            ops.append((op, draw(st.integers(0, P - 1))))
        elif op in ("update_op", "scatter") and d > 1:
            ops.append(("barrier",))
        elif op in ("update_op", "scatter", "fancy"):
            k = draw(st.integers(1, 4))
            idx = [draw(st.integers(0, shape[0] - 1)) for _ in range(k)]
            ops.append((op, idx, [float(draw(st.integers(-5, 5))) for _ in range(k)]))
        else:
            ops.append((op,))
    return dict(shape=shape, ghosts=ghosts, grid=grid, ops=ops, protocol=draw(st.sampled_from(["packed", "auto"])),
                fuse=draw(st.sampled_from([True, False])))


def _shifted_key(tkey, shape, o):
    """``tkey``'s slices moved by ``o`` where they stay inside ``shape`` (else not moved)."""
    key = []
    for ts, n, s in zip(tkey, shape, o):
        start, stop, step = ts.indices(n)
        cnt = len(range(start, stop, step))
        first, last = start + s, start + s + (cnt - 1) * step
        if cnt == 0 or min(first, last) < 0 or max(first, last) >= n:
            key.append(ts)
        elif step > 0:
            key.append(slice(first, last + 1, step))
        else:
            key.append(slice(first, last - 1 if last >= 1 else None, step))
    return tuple(key)


def _ghost_step(op, A, B, numpy: bool, layout=None):
    kind = op[0]
    if kind == "update":
        if not numpy:
            A.update_ghosts(periodic=op[1], corners=op[2])
    elif kind in ("read", "self"):
        _, tkey, shifts, c = op
        T = B if kind == "read" else A
        value = A[_shifted_key(tkey, A.shape, shifts[0])]
        for o in shifts[1:]:
            value = value + c * A[_shifted_key(tkey, A.shape, o)]
        T[tkey] = value
    elif kind == "write_elem":
        A[op[1]] = op[2]
    elif kind == "put":
        if numpy:
            A[op[1]] = op[2]
        else:
            if pg.here == 0:
                A.put(op[1], op[2])
            pg.barrier()
    elif kind == "fill_row":
        A[op[1]] = op[2]
    elif kind == "iadd":
        A += 1.0
    elif kind == "local":
        owned = (layout or A.layout).owned(op[1])
        if numpy:
            A[np.ix_(*owned)] += 3.0
        elif pg.here == op[1]:
            A.local[...] += 3.0
    elif kind == "local_readonly":
        if not numpy:
            float(np.sum(A.local_readonly))
    elif kind == "invalidate":
        if not numpy and pg.here == op[1]:
            A.invalidate_ghosts()
    elif kind in ("update_op", "scatter"):          # locale 0's pairs (every locale's are applied)
        idx, vals = np.array(op[1]), np.array(op[2])
        if numpy:
            if kind == "scatter":
                A[idx] = vals
            else:
                np.add.at(A, idx, vals)
        else:
            if pg.here != 0:
                idx, vals = idx[:0], vals[:0]
            (A.scatter if kind == "scatter" else A.update)(idx, vals)
    elif kind == "fancy":
        A[op[1]] = np.array(op[2])[-1]
    elif kind == "barrier" and not numpy:
        pg.barrier()


@settings(max_examples=int(os.environ.get("PGAS_FUZZ_EXAMPLES", 15)), deadline=None)
@given(case=a_ghost_case())
def test_ghost_cell_sequences_match_numpy(case):
    """Arrays with ghost cells through random sequences of update_ghosts, stencils reading
    them (into another array or the array itself), element, row, fancy, irregular,
    one-sided and local writes, local read-only views, invalidations and barriers: every
    statement gives NumPy's answer (ghost cells read only while provably current)."""
    pg.config(protocol=case["protocol"], fuse=case["fuse"])
    shape = case["shape"]
    ga = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) % 7 - 3
    gb = np.zeros(shape)
    A = pg.from_numpy(ga, dist=pg.Block(case["grid"]), ghosts=case["ghosts"])
    B = pg.from_numpy(gb, dist=pg.Block(case["grid"]))
    for k, op in enumerate(case["ops"]):
        _ghost_step(op, ga, gb, True, A.layout)
        _ghost_step(op, A, B, False)
        if op[0] in ("read", "self"):
            for name, X, g in (("A", A, ga), ("B", B, gb)):
                got = X.to_numpy()
                collective_verdict(np.array_equal(got, g), lambda: f"after op {k} {op}: {name} {got!r}, NumPy {g!r}")


# -- reductions and scans of views, expressions and arrays ---------------------------------
RED_OPS = ["sum", "prod", "min", "max", "any", "all", "mean", "count_nonzero", "cumsum", "cumprod",
           "argmin", "argmax"]


@st.composite
def a_reduction(draw):
    d = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(0, {1: 17, 2: 7, 3: 4}[d])) for _ in range(d))
    dtype = draw(st.sampled_from(DTYPES))
    dist = draw(a_dist(d))
    src = draw(st.sampled_from(["array", "view", "expr"]))
    key = None
    if src != "array":
        key = tuple(draw(a_slice(n, draw(st.integers(0, n)))) for n in shape)
    op = draw(st.sampled_from(RED_OPS))
    vshape = shape if key is None else _shape_after(shape, [("key", key)])
    nd = len(vshape)
    single = op in ("cumsum", "cumprod", "argmin", "argmax")
    if single:
        axis = draw(st.sampled_from([None] + list(range(-nd, nd))))
    else:
        axis = draw(st.sampled_from([None, *range(-nd, nd),
                                     *[tuple(c) for r in (1, 2) for c in itertools.combinations(range(nd), r)]]))
    kw = {}
    if op in ("sum", "prod", "min", "max", "any", "all", "mean") and draw(st.booleans()):
        kw["keepdims"] = True
    if op in ("sum", "prod", "cumsum", "cumprod") and draw(st.integers(0, 3)) == 0:
        kw["dtype"] = draw(st.sampled_from([np.int8, np.int64, np.uint8, np.float64]))
    if op in ("sum", "prod", "min", "max") and draw(st.integers(0, 3)) == 0:
        kw["initial"] = draw(st.sampled_from([0, 5, -3]))
    where = op in ("sum", "prod", "min", "max", "any", "all", "mean") and draw(st.integers(0, 3)) == 0
    out = None
    if (op in ("sum", "prod", "min", "max", "mean", "cumsum", "cumprod") and axis is not None and "dtype" not in kw
            and draw(st.booleans())):
        # an out= whose dtype is the loop NumPy resolves for it (elsewhere NumPy's result depends
        # on the order it folds the elements into out's dtype): wider, or the default
        uf = {"sum": np.add, "mean": np.add, "cumsum": np.add, "prod": np.multiply, "cumprod": np.multiply,
              "min": np.minimum, "max": np.maximum}[op]
        odt = np.dtype(draw(st.sampled_from([dtype, np.int64, np.float64, np.complex128, np.float32, np.uint64,
                                             np.int8])))
        try:
            ok = uf.resolve_dtypes((odt, np.dtype(dtype), None), reduction=True)[0] == odt
        except (TypeError, ValueError):
            ok = False
        if ok and not (op == "mean" and np.dtype(dtype).kind in "biu" and odt != np.float64):
            out = (odt, draw(a_dist(1)))
    return dict(shape=shape, dtype=dtype, dist=dist, src=src, key=key, op=op, axis=axis, kw=kw, where=where,
                out=out, seed=draw(st.integers(0, 99)))


def _reduce(case, X, mask):
    op, kw = case["op"], dict(case["kw"])
    if mask is not None:
        kw["where"] = mask
    if op == "count_nonzero":
        return np.count_nonzero(X, axis=case["axis"])
    if case.get("out") is not None:
        shape = getattr(np, op)(np.zeros(X.shape, X.dtype), axis=case["axis"], **case["kw"]).shape
        odt, odist = case["out"]
        if not shape:
            return getattr(np, op)(X, axis=case["axis"], **kw)
        if isinstance(X, np.ndarray):
            kw["out"] = np.zeros(shape, odt)
        else:
            dist = odist if odist.grid is None or len(odist.grid) == len(shape) else pg.Cyclic()
            kw["out"] = pg.zeros(shape, dtype=odt, dist=dist)
        res = getattr(np, op)(X, axis=case["axis"], **kw)
        return res if res is kw["out"] else ("not out", res)
    return getattr(np, op)(X, axis=case["axis"], **kw)


@settings(max_examples=int(os.environ.get("PGAS_FUZZ_EXAMPLES", 25)), deadline=None)
@given(case=a_reduction())
def test_reductions_and_scans_match_numpy(case):
    """NumPy's reductions and scans (axis None, one, several, negative; keepdims, dtype,
    initial, where) of an array, a view or a lazy expression of any distribution: integer
    results and min / max exactly, float sums, products and means within rounding."""
    g = values(case["dtype"], case["shape"], case["seed"])
    A = pg.from_numpy(g, dist=case["dist"])
    gm = None
    if case["where"]:
        gm = (np.arange(g.size).reshape(g.shape) % 3) != 1
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if case["src"] == "array":
            X, gx = A, g
        elif case["src"] == "view":
            X, gx = A[case["key"]], g[case["key"]]
        else:
            X, gx = A[case["key"]] * 1 + A[case["key"]], g[case["key"]] * 1 + g[case["key"]]
        mask = None
        if gm is not None:
            gm = gm[case["key"]] if case["key"] is not None else gm
            mask = gm if case["seed"] % 2 else pg.from_numpy(gm, dist=case["dist"])
            if case["src"] == "view" and not isinstance(mask, np.ndarray):
                mask = pg.from_numpy(gm, dist=case["dist"])
        try:
            want, want_err = _reduce(case, gx, gm), None
        except (TypeError, ValueError, OverflowError) as e:
            want, want_err = None, type(e)
        try:
            got, got_err = _reduce(case, X, mask), None
            got = as_numpy(got)
        except (TypeError, ValueError, OverflowError) as e:
            got, got_err = None, type(e)
    collective_verdict(got_err is want_err, lambda: f"{case['op']}: raised {got_err}, NumPy {want_err}")
    if want_err is not None:
        return
    want = np.asarray(want)
    loose = case["op"] in ("sum", "prod", "mean", "cumsum", "cumprod") and want.dtype.kind in "fc"
    if loose and not (np.all(np.isfinite(gx)) and np.all(np.abs(gx) < 1e6)):
        return                     # inf - inf or an overflow depends on the order of the additions
    collective_verdict(same(got, want, loose) and type(got) is not None,
                       lambda: f"{case['op']}: got {got!r}, NumPy {want!r}")


# -- forall bodies over rectangular and triangular domains -----------------------------------
@st.composite
def a_forall(draw):
    nv = draw(st.integers(1, 2))
    reduce_ = draw(st.integers(0, 3)) == 0
    ranges = []
    for _ in range(nv + reduce_):
        lo = draw(st.integers(0, 3))
        step = draw(st.sampled_from([1, 1, 2, 3, -1]))
        cnt = draw(st.integers(0, 7))
        ranges.append((lo + (cnt - 1) * (-step) if step < 0 and cnt else lo, step, cnt))
    tri = nv + reduce_ >= 2 and ranges[1][1] == 1 and draw(st.integers(0, 2)) == 0   # j in range(i, i + cnt)
    nvars = nv + reduce_

    def sub(var):
        return (var, draw(st.sampled_from([1, 1, 2, -1, 3])), None)     # (variable, coefficient, offset: fitted)

    write = [sub(v) for v in range(nv)]
    if nv == 2 and draw(st.booleans()):
        write = write[::-1]                                              # T[j, i]
    reads = []
    for _ in range(draw(st.integers(1, 3))):
        arr = draw(st.sampled_from(["A", "B", "T"]))
        nd = len(write) if arr == "T" else draw(st.integers(1, 2))
        reads.append((arr, [sub(draw(st.integers(0, nvars - 1))) for _ in range(nd)]))
    value = draw(st.sampled_from(["sum", "prod_var", "where", "diff"]))
    dtype = draw(st.sampled_from([np.int64, np.int32, np.float64]))
    return dict(ranges=ranges, tri=tri, write=write, reads=reads, value=value, dtype=dtype, reduce=reduce_,
                dists=[draw(a_dist(2)), draw(a_dist(2)), draw(a_dist(len(write)))], fuse=draw(st.booleans()),
                protocol=draw(st.sampled_from(["packed", "auto"])), seed=draw(st.integers(0, 99)))


def _points(case):
    r = [range(lo, lo + step * cnt, step) for lo, step, cnt in case["ranges"]]
    pts = list(itertools.product(*r))
    if case["tri"]:                                               # j in range(i + lo1, i + lo1 + cnt1)
        pts = [p[:1] + (p[0] + p[1],) + p[2:] for p in pts]       # (a trapezoid)
    return pts


def _fit(subs, pts, extra):
    """Offsets making every subscript >= 0 over ``pts``, and the extents that hold them."""
    fitted, shape = [], []
    for var, a, _ in subs:
        vals = [a * p[var] for p in pts] or [0]
        off = -min(vals)
        fitted.append((var, a, off))
        shape.append(max(vals) + off + 1 + extra)
    return fitted, tuple(shape)


def _domain(case):
    r = [range(lo, lo + step * cnt, step) for lo, step, cnt in case["ranges"]]
    if case["tri"]:
        lo1, _, cnt1 = case["ranges"][1]
        r[1] = lambda i, lo1=lo1, cnt1=cnt1: range(i + lo1, i + lo1 + cnt1)
    return tuple(r)


@settings(max_examples=int(os.environ.get("PGAS_FUZZ_EXAMPLES", 15)), deadline=None)
@given(case=a_forall())
def test_forall_bodies_match_python_loops(case):
    """A forall assignment with random affine subscripts (coefficients +-1..3, transposed,
    reading the written array), loop variables as values, over rectangular ranges with
    negative steps, trapezoids, and a reduction (+=) over an omitted variable: as the
    loops compute it, every right side read before its left side is written."""
    pts = _points(case)
    write, tshape = _fit(case["write"], pts, 1)
    reads = []
    shapes = {"T": tshape}
    for arr, subs in case["reads"]:
        if arr == "T":
            subs = [(v, a, None) for (v, a, _) in subs]
            fitted = []
            for k, (v, a, _) in enumerate(subs):     # inside T: shift by the write's offset, clipped
                vals = [a * p[v] for p in pts] or [0]
                off = -min(vals)
                if max(vals) + off >= tshape[k]:
                    v, a, off = write[k]
                fitted.append((v, a, off))
            reads.append((arr, fitted))
            continue
        fitted, shp = _fit(subs, pts, 2)
        if arr in shapes and len(shapes[arr]) == len(shp):
            shapes[arr] = tuple(max(x, y) for x, y in zip(shapes[arr], shp))
        elif arr in shapes:
            fitted = fitted[:len(shapes[arr])] + [fitted[-1]] * (len(shapes[arr]) - len(fitted))
            fitted, shp = _fit([(v, a, None) for v, a, _ in fitted], pts, 2)
            shapes[arr] = tuple(max(x, y) for x, y in zip(shapes[arr], shp))
        else:
            shapes[arr] = shp
        reads.append((arr, fitted))
    dt = case["dtype"]
    rng = np.random.default_rng(case["seed"])
    G = {k: rng.integers(-5, 6, size=s).astype(dt) for k, s in shapes.items()}
    dists = dict(zip(["A", "B", "T"], case["dists"]))
    D = {k: pg.from_numpy(g, dist=dists[k] if len(dists[k].grid or (0,) * g.ndim) == g.ndim else pg.Cyclic())
         for k, g in G.items()}

    def at(X, subs, p):
        return tuple(a * p[v] + off for v, a, off in subs)

    def value(terms, p):
        s = terms[0]
        for t in terms[1:]:
            s = s + t
        how = case["value"]
        if how == "prod_var":
            return s * 2 + p[0]
        if how == "where":
            return pg.where(terms[0] > 0, s, -terms[0]) if isinstance(p[0], Affine) else (s if terms[0] > 0 else -terms[0])
        if how == "diff":
            return s - 3 * p[-1]
        return s

    # the loops: every right side first, then the writes (+= adds over the omitted variable)
    old = {k: g.copy() for k, g in G.items()}
    vals = [(at(G["T"], write, p), value([old[arr][at(None, subs, p)] for arr, subs in reads], p)) for p in pts]
    if case["reduce"]:
        for idx, v in vals:
            G["T"][idx] = G["T"][idx] + v
    else:
        for idx, v in vals:
            G["T"][idx] = v

    pg.config(protocol=case["protocol"], fuse=case["fuse"])
    if case["reduce"] and case["value"] == "sum" and [r[0] for r in reads] == ["T"] and reads[0][1] == write:
        return                  # T[i] += T[i] over j: pgas raises TraceError (the value is the target itself)

    def body(*ivars):
        terms = [D[arr][at(None, subs, ivars)] for arr, subs in reads]
        idx = at(None, write, ivars)
        if case["reduce"]:
            D["T"][idx] += value(terms, ivars)
        else:
            D["T"][idx] = value(terms, ivars)

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        pg.forall(_domain(case), body)
    for k in G:
        got = D[k].to_numpy()
        collective_verdict(np.array_equal(got, G[k]), lambda: f"{k}: got {got!r}, loops {G[k]!r}")

"""The lowering memo (pgas.array.lowering): a statement repeated with the same structure
skips lowering, and any difference (a subscript, a shape, a dtype, a distribution,
aliasing, a function, a constant's type or sign, the domain, the reduction, the
settings) must miss, so that every statement of a back-to-back pair matches NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.array import lowering as lower
from util import a_dist, assert_matches, collective_verdict

SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=20)

#: Constants that compare (or hash) equal but act differently.
CONSTS = [0.5, 2, True, 1, 1.0, -0.0, 0.0, np.float32(0.1), 0.1, np.int8(3), 3, 1j]
FUNCS = [np.add, np.multiply, np.subtract, np.maximum]


@pytest.fixture(autouse=True)
def _defaults():
    pg.config()
    yield
    pg.config()


def _base_spec():
    return {"n": 9, "tkey": slice(1, None), "akey": slice(None, -1), "bkey": slice(None, -1, 1),
            "adtype": "float64", "bdtype": "float64", "adist": pg.Block(), "bdist": pg.Block(),
            "alias": False, "func": np.add, "const": 0.5, "op": "="}


def _run(spec) -> None:
    """Run ``T[tkey] (op)= func(A[akey], B[bkey] * const)`` on fresh arrays and check it
    against NumPy exactly (values, and the sign of zeros)."""
    n = spec["n"]
    rng = np.random.default_rng(n)
    GA = rng.integers(1, 9, n).astype(spec["adtype"])
    GB = rng.integers(1, 9, n).astype(spec["bdtype"])
    A = pg.from_numpy(GA, dist=spec["adist"])
    if spec["alias"]:
        B, GB = A, GA
    else:
        B = pg.from_numpy(GB, dist=spec["bdist"])
    c = spec["const"]
    want_dtype = np.result_type(spec["func"](GA[spec["akey"]], GB[spec["bkey"]] * c))
    GT = np.zeros(n, dtype=np.complex128 if want_dtype.kind == "c" else np.float64)
    T = pg.from_numpy(GT.copy(), dist=pg.Cyclic())
    value = spec["func"](A[spec["akey"]], B[spec["bkey"]] * c)
    want = spec["func"](GA[spec["akey"]], GB[spec["bkey"]] * c)
    if spec["op"] == "=":
        T[spec["tkey"]] = value
        GT[spec["tkey"]] = want
    else:
        T[spec["tkey"]] += value
        GT[spec["tkey"]] += want
    assert_matches(T, GT, rtol=0.0)
    got = T.to_numpy()
    collective_verdict(np.array_equal(np.signbit(got.real), np.signbit(GT.real)),
                       lambda: f"signs of zeros differ: got {got}, expected {GT}")


VARIANTS = {
    "tkey": [slice(None, -1), slice(8, 0, -1), slice(0, 8)],          # 8 of the 9 elements each
    "akey": [slice(1, None), slice(8, 0, -1), slice(7, None, -1)],
    "bkey": [slice(1, None), slice(7, None, -1)],
    "n": [10, 5],
    "adtype": ["int64", "float32", "int8"],
    "bdtype": ["int32", "float32"],
    "adist": [pg.Cyclic(), pg.BlockCyclic(2)],
    "bdist": [pg.Cyclic(), pg.BlockCyclic(3)],
    "alias": [True],
    "func": FUNCS[1:],
    "const": CONSTS,
    "op": ["+="],
}


@SETTINGS
@given(st.data())
def test_one_difference_misses(data_):
    """A statement, then one differing in a single aspect, then the first again: all three
    match NumPy (a stale memo hit would give the first one's answer to the second)."""
    draw = data_.draw
    first = _base_spec()
    first["const"] = draw(st.sampled_from(CONSTS))
    aspect = draw(st.sampled_from(sorted(VARIANTS)))
    second = dict(first)
    second[aspect] = draw(st.sampled_from(VARIANTS[aspect]))
    n = second["n"]
    if n != first["n"]:                       # keys that fit the new size
        second["tkey"], second["akey"], second["bkey"] = slice(1, None), slice(None, -1), slice(None, -1)
    for spec in (first, second, first, second):
        _run(spec)


def test_repeat_hits_and_differences_miss():
    """The memo is used (a repeat adds no entry) and each difference adds one."""
    lower._memo.clear()
    spec = _base_spec()
    _run(spec)
    size = len(lower._memo)
    _run(spec)
    collective_verdict(len(lower._memo) == size, "a repeated statement was lowered again")
    for aspect in ("tkey", "akey", "alias", "func", "const", "op"):
        new = next(v for v in VARIANTS[aspect] if v is not spec[aspect] and not _equal(v, spec[aspect]))
        other = dict(spec, **{aspect: new})
        before = len(lower._memo)
        _run(other)
        collective_verdict(len(lower._memo) == before + 1 or len(lower._memo) == lower.MEMO_SIZE,
                           f"changing {aspect} did not lower afresh")


def _equal(a, b) -> bool:
    return type(a) is type(b) and a == b


def test_constant_keys_exact():
    """Constants equal under == but different in type or sign have different keys;
    NaN and mutable 0-d arrays are never memoised."""
    keys = [lower._const_key(c) for c in CONSTS]
    for i, a in enumerate(CONSTS):
        for j, b in enumerate(CONSTS):
            if i != j:
                collective_verdict(keys[i] != keys[j], f"{a!r} and {b!r} share a key")
    for bad in (float("nan"), np.array(2.0), [1, 2]):
        with pytest.raises(lower._Uncachable):
            lower._const_key(bad)


def test_nan_and_zero_d_constants_each_time():
    """Statements with a NaN or a 0-d array constant are lowered afresh and stay right
    when the 0-d array changes between runs."""
    n = 8
    GA = np.arange(n, dtype=float)
    A = pg.from_numpy(GA, dist=pg.Cyclic())
    T = pg.zeros(n, dist=pg.Block())
    x = np.array(2.0)
    for v in (2.0, 3.0, -1.0):
        x[...] = v
        T[:] = A * x
        assert_matches(T, GA * v, rtol=0.0)
    T[:] = A + float("nan")
    assert_matches(T, GA + np.nan, rtol=0.0)
    T[:] = A * 2.0
    assert_matches(T, GA * 2.0, rtol=0.0)


@pytest.mark.parametrize("change", ["aggregate", "owner", "fuse", "protocol", "buffer_limit", "check"])
def test_config_change_between_repeats(change):
    """The same statement before and after a ``pg.config`` change matches NumPy both times."""
    values = {"aggregate": False, "owner": "cost", "fuse": True, "protocol": "pipelined",
              "buffer_limit": 64, "check": True}
    n = 12
    rng = np.random.default_rng(3)
    GA, GB = rng.random(n), rng.random(n)
    A, B = pg.from_numpy(GA, dist=pg.Cyclic()), pg.from_numpy(GB, dist=pg.Block())
    for setting in ({}, {change: values[change]}, {}):
        pg.config(**setting)
        T = pg.zeros(n, dist=pg.BlockCyclic(2))
        T[1:] = A[:-1] * 0.5 + B[1:]
        T[:-1] += B[::-1][1:] * A[1:]
        GT = np.zeros(n)
        GT[1:] = GA[:-1] * 0.5 + GB[1:]
        GT[:-1] += GB[::-1][1:] * GA[1:]
        assert_matches(T, GT, rtol=0.0)
    pg.config()


@SETTINGS
@given(st.data())
def test_forall_differences_miss(data_):
    """Two foralls differing in the domain, a subscript, the reduction or a distribution,
    run back to back, then repeated: all match NumPy."""
    draw = data_.draw
    n = draw(st.integers(3, 8))
    lo = draw(st.integers(0, 1))
    shift = draw(st.integers(0, 1))
    red = draw(st.sampled_from(["=", "+=", "max"]))
    tri = draw(st.sampled_from([None, "upper", "lower"]))      # same box and count, other clips
    dists = [(draw(a_dist(2)), draw(a_dist(1))) for _ in range(2)]
    rng = np.random.default_rng(n)
    GA = rng.integers(-5, 6, (n + 1, n + 1)).astype(float)

    def run(lo, shift, red, tri, dA, dF):
        A = pg.from_numpy(GA, dist=dA)
        F = pg.zeros(n, dist=dF)
        GF = np.zeros(n)
        rows = {None: lambda i: range(lo, n), "upper": lambda i: range(i, n), "lower": lambda i: range(i + 1)}[tri]
        inner = rows if tri else range(lo, n)

        def body(i, j):
            if red == "+=":
                F[i] += A[j + shift, i]
            else:
                np.maximum(F[i], A[i + shift, j], out=F[i])

        if red == "=":
            pg.forall(range(lo, n), lambda i: F.__setitem__(i, A[i, i + shift] * 2.0))
            for i in range(lo, n):
                GF[i] = GA[i, i + shift] * 2.0
        else:
            pg.forall((range(n), inner), body)
            for i in range(n):
                for j in rows(i):
                    if red == "+=":
                        GF[i] += GA[j + shift, i]
                    else:
                        GF[i] = max(GF[i], GA[i + shift, j])
        assert_matches(F, GF, rtol=0.0)

    one = (lo, shift, red, tri) + dists[0]
    aspect = draw(st.integers(0, 4))
    two = list(one)
    if aspect == 0:
        two[0] = 1 - lo
    elif aspect == 1:
        two[1] = 1 - shift
    elif aspect == 2:
        two[2] = draw(st.sampled_from([r for r in ["=", "+=", "max"] if r != red]))
    elif aspect == 3:
        two[3] = draw(st.sampled_from([t for t in [None, "upper", "lower"] if t != tri]))
    else:
        two[4:] = dists[1]
    for args in (one, tuple(two), one, tuple(two)):
        run(*args)

"""pgas.array.apply: the compiled (numba) and NumPy versions of ``ufunc.at``-style
application give bit-identical results, repeats included, for every op and dtype
``update`` takes (the ops and dtypes the kernels leave out go to NumPy in both modes)."""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.array import apply, counting

pytest.importorskip("numba")

OPS_BY_KIND = {"i": ("add", "xor", "or", "and", "min", "max", "replace"),
               "u": ("add", "xor", "or", "and", "min", "max", "replace"),
               "f": ("add", "min", "max", "replace"), "c": ("add", "replace"),
               "b": ("xor", "or", "and", "replace")}
DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64,
          np.float32, np.float64, np.complex128]
CASES = [(np.dtype(d), op) for d in DTYPES for op in OPS_BY_KIND[np.dtype(d).kind]]
EDGES = {"i": lambda info: [info.min, info.max, -1, 0, 1], "u": lambda info: [info.max, 0, 1, 2],
         "f": lambda info: [np.inf, -np.inf, np.nan, -0.0, 0.0, info.max, info.tiny, 1e-30, 3.5],
         "c": lambda info: [complex(np.nan, 1), complex(1e308, -1e308), -0.0, 2.5j]}


def _values(dtype, raw, edges):
    """``raw`` (ints) mixed with the dtype's edge values, as ``dtype``."""
    if dtype.kind == "b":
        return np.array([r % 2 == 1 for r in raw], dtype=dtype)
    info = np.iinfo(dtype) if dtype.kind in "iu" else np.finfo(dtype)
    pool = EDGES[dtype.kind](info) if edges else []
    with np.errstate(all="ignore"):
        out = np.array([pool[r % len(pool)] if pool and r % 3 == 0 else r * 0.37 if dtype.kind in "fc" else r
                        for r in raw], dtype=object)
        return np.array(out.tolist(), dtype=dtype) if dtype.kind in "fc" else np.array(
            [int(v) % (1 << (8 * dtype.itemsize)) for v in out], dtype=np.uint64).astype(dtype)


def _both(fn):
    """``fn()`` with the compiled paths forced on, then with NumPy; both results."""
    out = []
    for mode in (True, False):
        pg.config(fuse=mode)
        try:
            out.append(fn())
        finally:
            pg.config()
    return out


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), (a, b)


@pytest.mark.parametrize("dtype,op", CASES, ids=[f"{d}-{o}" for d, o in CASES])
@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=40), st.lists(st.integers(-300, 300), min_size=40, max_size=40),
       st.lists(st.integers(-300, 300), min_size=10, max_size=10), st.booleans())
def test_at_compiled_and_numpy_are_bit_identical(dtype, op, idx, raw, start, edges):
    if op == "replace":
        pytest.skip("replace is one fancy-indexed store in both modes")
    idx = np.array(idx, dtype=np.int64)
    vals = _values(dtype, raw[:len(idx)], edges)
    base = _values(dtype, start, edges)

    def run():
        t = base.copy()
        with np.errstate(all="ignore"):
            apply.at(t, idx, vals, op)
        return t

    got, want = _both(run)
    _same_bits(got, want)
    ref = base.copy()
    with np.errstate(all="ignore"):
        apply.UFUNCS[op].at(ref, idx, vals)      # ufunc.at itself
    _same_bits(want, ref)


@pytest.mark.parametrize("dtype,op", CASES, ids=[f"{d}-{o}" for d, o in CASES])
@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=40), st.lists(st.integers(-300, 300), min_size=40, max_size=40),
       st.integers(1, 3), st.booleans())
def test_combine_then_apply_compiled_and_numpy_are_bit_identical(dtype, op, idx, raw, parts, edges):
    """The whole local path of ``update``: repeats combined at the source (in position
    order), then the distinct-offset records applied part by part (locale order)."""
    idx = np.array(idx, dtype=np.int64)
    vals = _values(dtype, raw[:len(idx)], edges)
    base = _values(dtype, raw[:10] if len(raw) >= 10 else [0] * 10, edges)

    def run():
        owners = idx % parts
        o, c, s, f, l, r = counting.inspect(owners, idx, 16, parts)
        pattern = SimpleNamespace(first=f, last=l, slot=s, repeats=r)
        with np.errstate(all="ignore"):
            comb = apply.combine(pattern, vals, op)
        edges_ = np.cumsum(c)
        t = base.copy()
        with np.errstate(all="ignore"):
            apply.apply(t, np.split(o, edges_[:-1]), np.split(comb, edges_[:-1]), op)
        return t

    got, want = _both(run)
    _same_bits(got, want)


def test_kernels_are_used_when_forced():
    pg.config(fuse=True)
    try:
        assert apply._kernel("add", np.dtype(np.float64), 5) is not None
        assert apply._kernel("min", np.dtype(np.float64), 5) is None      # float min/max: NumPy
        assert apply._kernel("add", np.dtype(np.complex128), 5) is None
        assert apply._kernel("xor", np.dtype(np.bool_), 5) is not None
    finally:
        pg.config()
    pg.config(fuse=False)
    try:
        assert apply._kernel("add", np.dtype(np.float64), 5) is None
    finally:
        pg.config()


"""The fast paths of the irregular operations against NumPy:

- ``update`` of integers with an exact, associative and commutative op on a 1-D
  array: bucketed in one compiled pass, repeats sent uncombined
  (:func:`pgas.array.irregular._bucket_1d`), in every fuse mode;
- ``gather`` by an index plan: consecutive served offsets sent as one slice, and
  the buffer of distinct values returned as it is when the indices are distinct
  and in owner order (:meth:`pgas.array.irregular.IndexPlan.gathering`).

Every locale derives every locale's indices from the drawn seed, so each computes
the NumPy reference itself.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.array import irregular
from util import collective_verdict

P = pg.num_locales
ME = pg.here
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=20)
UFUNCS = {"add": np.add, "xor": np.bitwise_xor, "or": np.bitwise_or, "and": np.bitwise_and,
          "min": np.minimum, "max": np.maximum}
OPS = {np.int64: list(UFUNCS), np.int32: list(UFUNCS), np.uint8: list(UFUNCS), bool: ["xor", "or", "and"]}
DISTS = {"block": pg.Block(), "cyclic": pg.Cyclic(), "bc3": pg.BlockCyclic(3)}


def check(ok, what=""):
    collective_verdict(bool(ok), lambda: repr(what))


def indices_of(seed, locale, n, size, kind):
    rng = np.random.default_rng([seed, locale])
    if kind == "repeats":
        idx = rng.integers(0, min(size, 3), size=n)
    elif kind == "sorted":
        idx = np.unique(rng.integers(0, size, size=n))
    elif kind == "runs":                           # consecutive stretches, as a stencil's halo
        a = int(rng.integers(0, size))
        idx = np.arange(a, min(size, a + n))
    else:
        idx = rng.integers(0, size, size=n)
    neg = rng.random(len(idx)) < (0.3 if kind == "random" else 0.0)
    return np.where(neg, idx - size, idx).astype(np.int64)


def values_of(dtype, seed, locale, n):
    rng = np.random.default_rng([seed, locale, 5])
    if np.dtype(dtype) == bool:
        return rng.random(n) < 0.5
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)   # wrapping adds


@st.composite
def update_cases(draw):
    dtype = draw(st.sampled_from(list(OPS)))
    return (dtype, draw(st.sampled_from(OPS[dtype])), draw(st.integers(1, 40)), draw(st.sampled_from(list(DISTS))),
            draw(st.sampled_from(["random", "repeats", "sorted"])), draw(st.integers(0, 60)),
            draw(st.integers(0, 2 ** 16)), draw(st.sampled_from([True, False, "auto"])))


@SETTINGS
@given(update_cases())
def test_integer_update_matches_numpy_in_every_fuse_mode(case):
    dtype, op, size, dist, kind, n, seed, fuse = case
    g = values_of(dtype, seed, 99, size)
    A = pg.from_numpy(g, dist=DISTS[dist])
    pg.config(fuse=fuse)
    try:
        idx = indices_of(seed, ME, n, size, kind)
        A.update(idx, values_of(dtype, seed, ME, len(idx)), op)
    finally:
        pg.config()
    ref = g.copy()
    for r in range(P):
        idx = indices_of(seed, r, n, size, kind)
        UFUNCS[op].at(ref, idx % size, values_of(dtype, seed, r, len(idx)))
    check(np.array_equal(A.to_numpy(), ref), f"update {dtype} {op} {dist} {kind} fuse={fuse}")


@pytest.mark.parametrize("fuse", [True, False])
def test_bucketing_agrees_with_the_general_path(fuse):
    # the fast path's records, applied one by one, equal the general path's combined ones
    A = pg.zeros(37, dtype=np.int64, dist=pg.BlockCyclic(4))
    rng = np.random.default_rng(3 + ME)
    idx = rng.integers(-37, 37, size=200)
    vals = rng.integers(-(2 ** 62), 2 ** 62, size=200)
    pg.config(fuse=fuse)
    try:
        fast = irregular._bucket_1d(A, idx, vals, "add")
    finally:
        pg.config()
    if fast is None:
        check(not fuse or not _have_numba(), "no fast path with fuse=True")
        return
    offs, out, counts = fast
    owners = np.repeat(np.arange(P), counts)
    g = idx % 37
    want = [(int(o), int(lo)) for o, lo in zip(A.layout.owners((g,)), A.layout.local_flat((g,)))]
    order = np.argsort(np.asarray([w[0] for w in want]), kind="stable")
    check(np.array_equal(owners, [want[k][0] for k in order]) and np.array_equal(offs, [want[k][1] for k in order])
          and np.array_equal(out, vals[order]), "bucket_1d differs from the layout's owners and offsets")


def _have_numba():
    try:
        import numba  # noqa: F401
        return True
    except ImportError:
        return False


@pytest.mark.parametrize("fuse", [True, False])
def test_out_of_range_update_raises_everywhere_and_applies_nothing(fuse):
    A = pg.zeros(20, dtype=np.int64, dist=pg.Block())
    idx = np.arange(10, dtype=np.int64)
    if ME == P - 1:
        idx[3] = 20 if fuse else -21
    pg.config(fuse=fuse)
    try:
        with pytest.raises(IndexError):
            A.update(idx, np.ones(10, dtype=np.int64), "add")
    finally:
        pg.config()
    check(not np.any(A.to_numpy()), "an update was applied")


@st.composite
def gather_cases(draw):
    return (draw(st.integers(1, 60)), draw(st.sampled_from(list(DISTS))), draw(st.sampled_from(["sorted", "runs", "random"])),
            draw(st.integers(0, 70)), draw(st.integers(0, 2 ** 16)), draw(st.sampled_from([np.float64, np.int32, bool])))


@SETTINGS
@given(gather_cases())
def test_planned_gather_matches_numpy(case):
    size, dist, kind, n, seed, dtype = case
    g = values_of(np.int64, seed, 98, size).astype(dtype)
    A = pg.from_numpy(g, dist=DISTS[dist])
    idx = indices_of(seed, ME, n, size, kind)
    plan = A.index_plan(idx)
    first = A.gather(plan)
    again = A.gather(plan)                          # a new array each time, never the same buffer
    again_ok = again is not first and not np.shares_memory(again, first)
    A[...] = A + 1 if dtype != bool else ~A
    later = A.gather(plan)
    g2 = g + 1 if dtype != bool else ~g
    check(first.dtype == A.dtype and np.array_equal(first, g[idx]) and np.array_equal(again, g[idx])
          and np.array_equal(later, g2[idx]) and again_ok, f"gather {dist} {kind}")
    check(np.array_equal(first, g[idx]), "an earlier result changed")

"""The counting passes of pgas.array.counting: compiled (numba) and NumPy versions agree
with a sort-based reference on random inputs."""

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.array import counting

MODES = [False] + ([True] if importlib.util.find_spec("numba") else [])      # True: compiled


@pytest.fixture(autouse=True)
def _defaults():
    yield
    pg.config()


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=60), st.integers(7, 300))
def test_counting_order_is_a_stable_grouping(mode, dest, nb):
    pg.config(fuse=mode)
    dest = np.array(dest, dtype=np.int64)
    order, counts = counting.counting_order(dest, nb)
    assert order.tolist() == np.argsort(dest, kind="stable").tolist()
    assert counts.tolist() == np.bincount(dest, minlength=nb).tolist()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 99), max_size=60), st.integers(1, 40))
def test_group_keys_matches_a_stable_sort(mode, dtype, keys, width):
    pg.config(fuse=mode)
    keys = np.array(keys, dtype=dtype)
    nb = 100 // width + 1
    got, counts = counting.group_keys(keys, width, nb)
    assert got.dtype == keys.dtype
    assert got.tolist() == keys[np.argsort(keys // width, kind="stable")].tolist()
    assert counts.tolist() == np.bincount(keys // width, minlength=nb).tolist()


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 2**62), max_size=40), st.lists(st.integers(0, 39), max_size=80))
def test_first_occurrences(mode, pool, picks):
    pg.config(fuse=mode)
    key = np.array([pool[p % len(pool)] for p in picks] if pool else [], dtype=np.int64)
    slot, first, last = counting.first_occurrences(key)
    n = len(key)
    assert len(first) == len(last) == len(set(key.tolist()))
    assert all(key[first[slot[i]]] == key[i] == key[last[slot[i]]] for i in range(n))
    for e, (f, l) in enumerate(zip(first.tolist(), last.tolist())):
        where = np.flatnonzero(key == key[f])
        assert f == where[0] and l == where[-1]


@pytest.mark.skipif(True not in MODES, reason="needs numba")
@settings(max_examples=25, deadline=None)
@given(st.integers(1, 2 ** 52 - 1), st.integers(1, 2 ** 40), st.integers(1, 9), st.integers(0, 2 ** 32),
       st.integers(0, 50))
def test_bucket_1d_matches_the_layout_arithmetic(n, b, p, seed, k):
    # the compiled pass divides in floating point and corrects: exact up to n < 2**52
    pg.config(fuse=True)
    rng = np.random.default_rng(seed)
    g = rng.integers(-n, n, size=k, dtype=np.int64)
    edge = np.array([0, n - 1, -1, -n, min(n - 1, b), min(n - 1, b - 1), min(n - 1, b * p)], dtype=np.int64)
    g = np.concatenate([g, edge])
    vals = rng.integers(0, 1000, size=len(g))
    offs, out, counts = counting.bucket_1d(g, vals, n, b, p)
    x = [int(v) % n for v in g]                         # Python ints: exact
    owners = [(v // b) % p for v in x]
    local = [(v // (b * p)) * b + v % b for v in x]
    order = sorted(range(len(x)), key=lambda i: owners[i])          # stable
    assert counts.tolist() == [owners.count(r) for r in range(p)]
    assert offs.tolist() == [local[i] for i in order]
    assert out.tolist() == [int(vals[i]) for i in order]
    assert counting.bucket_1d(np.array([n], dtype=np.int64), vals[:1], n, b, p) is None
    assert counting.bucket_1d(np.array([-n - 1], dtype=np.int64), vals[:1], n, b, p) is None


def _check_inspect(got, owners, local, width, nb):
    """``inspect``'s result against what it promises (entry order within an owner aside)."""
    offsets, counts, slot, first, last, repeats = got
    key = owners * width + local
    distinct = np.unique(key)
    assert counts.tolist() == np.bincount(distinct // width, minlength=nb).tolist()
    assert sorted((offsets + np.repeat(np.arange(nb), counts) * width).tolist()) == distinct.tolist()
    assert np.all(np.diff(np.repeat(np.arange(nb), counts)) >= 0)             # grouped by owner
    assert np.array_equal(offsets[slot] + owners * 0, local)
    for e in range(len(offsets)):
        where = np.flatnonzero(slot == e)
        assert first[e] == where[0] and last[e] == where[-1]
    assert repeats.tolist() == [i for i in range(len(key)) if first[slot[i]] != i]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("increasing", [True, False])
@settings(max_examples=15, deadline=None)
@given(nb_extra=st.integers(0, 3), step=st.integers(1, 3), seed=st.integers(0, 2 ** 32))
def test_inspect_increasing_targets_take_the_short_path(mode, increasing, nb_extra, step, seed):
    """Strictly increasing (owner, offset) targets (a reshape's, a sorted read's) give what
    the hash pass gives, from the short path; any other order takes the hash pass."""
    pg.config(fuse=mode)
    rng = np.random.default_rng(seed)
    nb, width = 1 + nb_extra, 50
    key = np.sort(rng.choice(nb * width, size=min(40, nb * width), replace=False))[::step]
    if not increasing:
        key = np.concatenate([key, key[:3][::-1]])           # repeats, out of order
    owners, local = (key // width).astype(np.int64), (key % width).astype(np.int64)
    assert (counting._increasing(owners, local, width, nb) is not None) == (increasing or len(key) < 2)
    before = counting.INCREASING_MIN
    try:
        for counting.INCREASING_MIN in (1, 1 << 62):         # the short path where it applies; the hash pass
            _check_inspect(counting.inspect(owners, local, width, nb), owners, local, width, nb)
    finally:
        counting.INCREASING_MIN = before

"""The sample sort's local orders (no MPI): an ``np.argsort`` with its ties put in order is
``np.argsort(kind="stable")`` for every key dtype, with NaNs of any bit pattern and zeros
of both signs; records sorted by (value, key) for keys in any order."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pgas.array.index import SUPPORTED_DTYPES
from pgas.array.sorting.samplesort import _key_order, _stable_order


def _values(dtype, draw_ints, specials):
    dtype = np.dtype(dtype)
    x = np.array(draw_ints, dtype=np.int64)
    x = (x % 2).astype(bool) if dtype.kind == "b" else (np.abs(x) if dtype.kind == "u" else x).astype(dtype)
    if dtype.kind in "fc" and len(x):
        u = x.view(f"u{x.itemsize // (2 if dtype.kind == 'c' else 1)}")
        for i, s in zip(range(0, len(x), 3), specials):
            x[i] = {0: -0.0, 1: 0.0, 2: np.nan, 3: np.nan, 4: np.inf}[s]
            if s == 3:
                u[i * (2 if dtype.kind == "c" else 1)] |= np.array(1, u.dtype) << np.array(8 * u.itemsize - 1, u.dtype)
    return x


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SUPPORTED_DTYPES), st.lists(st.integers(-4, 4), max_size=300),
       st.lists(st.integers(0, 4), max_size=100))
def test_stable_order_is_numpys_stable_argsort(dtype, ints, specials):
    x = _values(dtype, ints, specials)
    order, sv = _stable_order(x)
    want = np.argsort(x, kind="stable")
    assert np.array_equal(order, want)
    assert np.array_equal(sv.view(np.uint8), x[want].view(np.uint8))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SUPPORTED_DTYPES), st.lists(st.integers(-4, 4), max_size=300),
       st.lists(st.integers(0, 4), max_size=100), st.integers(0, 2**32 - 1))
def test_key_order_sorts_by_value_then_key(dtype, ints, specials, seed):
    x = _values(dtype, ints, specials)
    g = np.random.default_rng(seed).permutation(len(x)).astype(np.int64) * 3
    by_g = np.argsort(g)
    want = by_g[np.argsort(x[by_g], kind="stable")]
    assert np.array_equal(_key_order(x, g), want)

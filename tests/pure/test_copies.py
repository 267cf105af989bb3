"""pgas.exec.copies: a compiled group's local moves in one numba kernel, against NumPy's
assignments, over random strided views, scalars and dtypes; the fallbacks to NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgas.exec import copies
from pgas.exec.copies import SMALL, Copies

pytest.importorskip("numba")

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_, np.complex128]


def _views(draw, base, shape):
    """A random strided, possibly reversed view of ``shape`` into ``base`` (C order)."""
    parts = []
    for n in shape:
        step = draw(st.sampled_from([1, 1, 2, -1]))
        parts.append(slice(n - 1, None, -1) if step < 0 else slice(0, (n - 1) * step + 1, step))
    return parts


@st.composite
def lists(draw):
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    ndim = draw(st.integers(1, 4))
    pairs, bases, exprs = [], [], []
    for _ in range(draw(st.integers(1, 7))):
        shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
        big = tuple(2 * n for n in shape)
        dst = np.zeros(big, dtype=dtype)
        src = (np.arange(np.prod(big)).reshape(big) % 7 + 1).astype(dtype)
        dv = dst[tuple(_views(draw, dst, shape))]
        if draw(st.booleans()):
            sv = src[tuple(_views(draw, src, shape))]
        else:
            sv = draw(st.sampled_from([0, 1, 2.0, 3, True]))
        bases.append((dst, src))
        pairs.append((dv, sv))
    return pairs, bases


@given(lists())
@settings(derandomize=True, database=None, deadline=None, max_examples=25)
def test_kernel_moves_as_numpy(case):
    pairs, bases = case
    want = [d.copy() for d, _ in bases]
    # the same moves on copies of the destinations, by NumPy
    for (dv, sv), (d, _), w in zip(pairs, bases, want):
        off = dv.__array_interface__["data"][0] - d.__array_interface__["data"][0]
        wv = np.lib.stride_tricks.as_strided(w.reshape(-1)[off // d.itemsize:], dv.shape, dv.strides)
        wv[...] = sv
    c = Copies(pairs)
    c._compile()
    c()
    for (d, _), w in zip(bases, want):
        np.testing.assert_array_equal(d, w)


def test_after_runs_and_settings(monkeypatch):
    a = np.arange(64.0)
    b = np.zeros(64)
    pairs = [(b[k::8], a[k * 8:k * 8 + 8]) for k in range(8)]
    from pgas.exec import settings as s
    monkeypatch.setattr(copies, "AFTER_LOADED", 3)
    for mode, first in ((False, None), (True, 2), ("auto", 3)):
        monkeypatch.setitem(s._settings, "fuse", mode)
        b[...] = 0
        c = Copies(pairs)
        used = None
        for run in range(1, 6):
            c()
            if c.kernel and used is None:
                used = run
        assert used == first, mode
        np.testing.assert_array_equal(b.reshape(8, 8).T.reshape(-1), a)


def test_fallbacks_to_numpy():
    raw = np.zeros(8 * 9 + 1, dtype=np.uint8)
    mis = raw[1:].view(np.float64)                      # elements not aligned
    a = np.arange(8.0)
    for pairs in ([(mis[k:k + 1], a[k:k + 1]) for k in range(8)],
                  [(np.zeros(2, ">f8")[:1], a[:1])] * 3,                   # not native
                  [(np.zeros(2, "U2"), np.array(["a", "b"]))] * 3):        # not numeric
        c = Copies(pairs)
        c._compile()
        assert not c.kernel
        c()
        for d, s in pairs:
            np.testing.assert_array_equal(d, s)


def test_too_few_moves_stay_numpy():
    a = np.arange(4.0)
    b = np.zeros(4)
    c = Copies([(b[:2], a[2:]), (b[2:], a[:2])])
    assert c.kernel is False
    c()
    np.testing.assert_array_equal(b, [2, 3, 0, 1])


def test_large_moves_stay_numpy():
    a = np.arange(5000.0)
    b = np.zeros(5000)
    small = [(b[k:k + 1], a[k:k + 1]) for k in range(4)]
    c = Copies(small + [(b[10:], a[10:])])
    c._compile()
    assert c.kernel and len(c.rest) == 1
    c()
    np.testing.assert_array_equal(b[10:], a[10:])
    np.testing.assert_array_equal(b[:4], a[:4])


def test_overlapping_moves_stay_with_numpy():
    """A move whose source overlaps its destination, or a large move touching what a
    small one reads, would come out differently in the kernel: such lists keep NumPy."""
    a = np.arange(40.0)
    want = a.copy()
    want[1:11] = want[0:10].copy()
    want[20:23] = want[30:33].copy()
    want[24:27] = want[34:37].copy()
    c = Copies([(a[1:11], a[0:10]), (a[20:23], a[30:33]), (a[24:27], a[34:37])])
    c._compile()
    assert c.kernel is False
    c()
    np.testing.assert_array_equal(a, want)

    b = np.arange(3000.0)
    want = b.copy()
    want[:2000] = want[1000:3000].copy()     # large (NumPy, after the kernel's moves) ...
    want[2500:2503] = want[0:3].copy()       # ... then a small one reading what it wrote
    want[2600:2603] = want[2900:2903].copy()
    want[2700:2703] = want[2950:2953].copy()
    c = Copies([(b[:2000], b[1000:3000]), (b[2500:2503], b[0:3]), (b[2600:2603], b[2900:2903]),
                (b[2700:2703], b[2950:2953])])
    c._compile()
    assert c.kernel is False
    c()
    np.testing.assert_array_equal(b, want)


def test_disjoint_moves_in_one_block_still_compile():
    """Ghost wraps move from a block's interior into its own ghost cells: they share the
    block's memory but no element, so the kernel still takes them."""
    blk = np.arange(36.0).reshape(6, 6)
    pairs = [(blk[0, 1:5], blk[4, 1:5]), (blk[5, 1:5], blk[1, 1:5]), (blk[1:5, 0], blk[1:5, 4]),
             (blk[1:5, 5], blk[1:5, 1])]
    ref = blk.copy()
    for d, s in [(ref[0, 1:5], ref[4, 1:5]), (ref[5, 1:5], ref[1, 1:5]), (ref[1:5, 0], ref[1:5, 4]),
                 (ref[1:5, 5], ref[1:5, 1])]:
        d[...] = s
    c = Copies(pairs)
    c._compile()
    assert c.kernel
    c()
    np.testing.assert_array_equal(blk, ref)


def _run(make, runs=2, change=None):
    """The moves by Copies (kernel forced) and by NumPy assignments in list order."""
    pytest.importorskip("numba")
    (pk, mk), (pn, mn) = make(), make()
    c = Copies(pk)
    c._compile()
    for r in range(runs):
        if change and r:
            change(mk), change(mn)
        c()
        for d, s in pn:
            d[...] = s
    return mk, mn


def test_zero_d_source_view_is_not_frozen():
    """Was: a 0-d ndarray source went into the kernel's constants at compile time, so later
    runs copied its first value."""
    def make():
        m, out = np.arange(10.0), np.zeros(9)
        return [(out[0:3], m[0:3]), (out[3:6], m[3:6]), (out[6:7], m[9:10].reshape(())), (out[7:9], m[1:3])], (m, out)

    def change(mem):
        mem[0][9] = 42.0
    got, want = _run(make, 2, change)
    np.testing.assert_array_equal(got[1], want[1])


def test_zero_d_small_destination_read_by_a_large_move():
    """Was: 0-d views counted as sharing nothing, so the kernel ran a small 0-d write before
    an earlier large move reading that element."""
    n = SMALL + 8

    def make():
        m = np.arange(3 * n, dtype=np.float64)
        return [(m[n:2 * n], m[0:n]), (m[5:6].reshape(()), -1.0), (m[2 * n:2 * n + 2], m[6:8]),
                (m[2 * n + 2:2 * n + 4], m[8:10])], (m,)
    got, want = _run(make, 1)
    np.testing.assert_array_equal(got[0], want[0])


@st.composite
def _moves(draw):
    """``(buffer length, [(dst spec, src spec, length), ...])``."""
    big = draw(st.booleans())
    n = 3 * (SMALL + 20) if big else 64   # room for the longest move at stride 3
    spec = []
    for _ in range(draw(st.integers(1, 6))):
        length = draw(st.integers(1, SMALL + 20 if big else 20))

        def view(step):
            span = (length - 1) * abs(step) + 1
            start = draw(st.integers(0, n - span))
            return ("v", start + (span - 1 if step < 0 else 0), step)
        dst = view(draw(st.sampled_from([1, 2, -1])))
        kind = draw(st.sampled_from(["v", "b", "c"]))
        if kind == "v":
            src = view(draw(st.sampled_from([1, 3, -1, -2])))
        elif kind == "b":
            src = ("b", draw(st.integers(0, n - 1)), 0)
        else:
            src = ("c", draw(st.floats(-5, 5)), 0)
        spec.append((dst, src, length))
    return n, spec


def _build(n, spec, dtype):
    m = np.arange(n).astype(dtype)
    pairs = []
    for (_, d0, ds), (kind, s0, ss), length in spec:
        dst = m[d0::ds][:length]
        src = (m[s0::ss][:length] if kind == "v" else np.broadcast_to(m[s0:s0 + 1], (length,)) if kind == "b"
               else s0)
        pairs.append((dst, src))
    return m, pairs


class _Forced(Copies):
    """fuse=True from the second run on, whatever the count of small moves."""

    __slots__ = ()

    def _ready(self) -> bool:
        return True


@given(_moves(), st.integers(2, 4), st.sampled_from([np.float64, np.int32, np.complex64]))
@settings(max_examples=60, deadline=None)
def test_copy_kernel_moves_as_numpy_in_list_order(moves, runs, dtype):
    """Run 1 by NumPy, run 2 compiles (the kernel, unless the guard refuses) and moves, later
    runs by the kernel: after each, the buffer equals NumPy's assignments in list order."""
    pytest.importorskip("numba")
    n, spec = moves
    (mk, pk), (mn, pn) = _build(n, spec, dtype), _build(n, spec, dtype)
    c = _Forced(pk)
    c.kernel = None if any(d.size <= SMALL for d, _ in pk) else False
    for r in range(runs):
        c()
        for d, s in pn:
            d[...] = s
        np.testing.assert_array_equal(mk, mn, err_msg=f"run {r + 1}, kernel {c.kernel}")

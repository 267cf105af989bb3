"""Review of session 22 (rev22), pure part: the copy kernel of pgas.exec.copies against NumPy's
assignments in list order, for drawn lists of moves within one buffer (overlapping sources and
destinations, reversed and strided views, broadcast sources, constants, small and large moves)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgas.exec.copies import SMALL, Copies


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
@settings(max_examples=150, deadline=None)
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

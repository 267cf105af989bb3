"""Read-only views of a locale's block (``A.local_readonly``, ``A.local_with_ghosts_readonly``):
the current values, no writing through them (nor making them writable), and, unlike
``A.local``, no end of ghost currency: a stencil after them still reads the ghost cells
(no message), while ``A.local`` makes it fetch again.  1-4 locales."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from test_ghost_reads import FIVE, run_stencil
from test_ghost_reads import setup as ghost_setup
from util import collective_verdict

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=12)


@given(st.integers(1, 3), st.integers(0, 2), st.sampled_from(["f8", "i4", "c16", "?", "u1"]))
@SETTINGS
def test_views_are_current_and_read_only(ndim, gw, dtype):
    shape = (5, 4, 3)[:ndim]
    g = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
    A = pg.from_numpy(g, ghosts=(gw,) * ndim) if gw else pg.from_numpy(g)
    v, w = A.local_readonly, A.local_with_ghosts_readonly
    ok = np.array_equal(v, A.local) and np.array_equal(w, A.local_with_ghosts)
    ok = ok and not v.flags.writeable and not w.flags.writeable and v.dtype == A.dtype
    collective_verdict(ok, f"{v} vs {A.local}")
    for x in (v, w):
        if x.size:
            with pytest.raises(ValueError):
                x[...] = x
        with pytest.raises(ValueError):
            x.setflags(write=True)
    if g.dtype.kind == "f":
        A[...] = g + 1                                    # later values show through
        collective_verdict(np.array_equal(v, A.local), "stale view")


def test_reading_keeps_ghost_reads():
    G, A, B = ghost_setup()
    m = run_stencil(B, A, FIVE, G)
    collective_verdict(m == 0, f"{m} messages with current ghost cells")
    total = float(A.local_readonly.sum() + A.local_with_ghosts_readonly.sum())
    m = run_stencil(B, A, FIVE, G)
    collective_verdict(m == 0, f"{m} messages after read-only views ({total})")
    A.local                                               # the writable view: counts as a write
    m = run_stencil(B, A, FIVE, G)
    collective_verdict(P == 1 or m > 0, "no messages after A.local")

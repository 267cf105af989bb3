"""repr / str of distributed arrays, views and expressions, against NumPy's printing."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from test_axis_reduce import global_array
from util import collective_verdict

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=15)


def numpy_body(G, prefix):
    return np.array2string(G, separator=", ", prefix=prefix)


@SETTINGS
@given(st.sampled_from([(5,), (3, 4), (1200,), (40, 30), (2, 3, 2), (12, 11, 10)]),
       st.sampled_from([np.float64, np.int32, np.int64, bool, np.complex128]),
       st.sampled_from([pg.Block(), pg.Cyclic(), pg.BlockCyclic(3)]))
def test_repr_and_str_match_numpy(shape, dtype, dist):
    G = global_array(shape, dtype)
    A = pg.from_numpy(G, dist=dist)
    r, s = repr(A), str(A)
    want = "DistArray(" + numpy_body(G, "DistArray(")
    collective_verdict(r.startswith(want) and r.endswith(f"dist={A.dist})"), lambda: f"{r!r} vs {want!r}")
    collective_verdict(s == str(G), lambda: f"{s!r} vs {str(G)!r}")
    collective_verdict(("dtype=" in r) == (np.dtype(dtype) in (np.dtype(np.int32),)), r)
    collective_verdict(("shape=" in r) == (G.size > 1000), r)
    if len(shape) >= 2:
        V = A[::2, ::-1]
        rv = repr(V)
        collective_verdict(rv.startswith("View(" + numpy_body(G[::2, ::-1], "View(")), rv)
        collective_verdict(str(A.T) == str(G.T))


def test_printing_moves_only_shown_elements():
    G = np.arange(100000.0)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    with pg.comm_diagnostics() as d:
        r = repr(A)
    collective_verdict(r.startswith("DistArray([0.0000e+00, 1.0000e+00") or "..." in r, r)
    collective_verdict(d.bytes < 2000 * P, f"{d.bytes} bytes")
    E = A[1:] + A[:-1]
    collective_verdict(repr(E).startswith("Expr([1.0000e+00, 3.0000e+00") or "..." in repr(E))
    Z = pg.zeros((0, 2))
    collective_verdict(repr(Z) == f"DistArray([], shape=(0, 2), dtype=float64, dist={Z.dist})", repr(Z))

"""One-sided reads and writes (get, put, scalar access, window boxes): values, dtypes,
message counts, errors raised everywhere, and their order with statements and barriers."""

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import assert_matches, collective_verdict

import pgas as pg
from pgas import comm
from pgas.array.index import basic_index
from pgas.layout import grids

P = pg.num_locales


ME = pg.here


SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=20)


DTYPES = [bool, np.int32, np.int64, np.float32, np.float64, np.complex128]


@st.composite
def layouts(draw, max_ndim=4, max_extent=6):
    """A shape (extents may be below the locale count, or zero) and a distribution whose
    grid is often degenerate: (1, P), (P, 1, 1), ... and whose blocks may exceed the extent."""
    ndim = draw(st.integers(1, max_ndim))
    shape = tuple(draw(st.lists(st.integers(0, max_extent), min_size=ndim, max_size=ndim)))
    grid = draw(st.sampled_from([None] + grids(P, ndim)))
    kind = draw(st.sampled_from(["block", "cyclic", "bc", "bc-big"]))
    if kind == "block":
        return shape, pg.Block(grid=grid)
    if kind == "cyclic":
        return shape, pg.Cyclic(grid=grid)
    if kind == "bc-big":
        return shape, pg.BlockCyclic(max_extent + draw(st.integers(1, 5)), grid=grid)
    return shape, pg.BlockCyclic(tuple(draw(st.integers(1, 4)) for _ in shape), grid=grid)


def index_key(draw, shape, allow_int=True):
    """A basic key of ints (negative ones too) and slices (negative steps too)."""
    parts = []
    for n in shape:
        options = [st.builds(slice, st.none() | st.integers(-n - 1, n + 1), st.none() | st.integers(-n - 1, n + 1),
                             st.none() | st.sampled_from([1, 2, 3, -1, -2, -3]))]
        if allow_int and n:
            options.append(st.integers(-n, n - 1))
        parts.append(draw(st.one_of(*options)))
    return tuple(parts)


def global_array(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(-40, 40, size=shape)
    dtype = np.dtype(dtype)
    if dtype == np.complex128:
        return (g + 1j * rng.integers(-9, 9, size=shape)).astype(dtype)
    if dtype == bool:
        return g > 0
    return g.astype(dtype)


def expected_row(A, key):
    """(messages, bytes) this locale should send to each locale for a one-sided get/put of
    ``key``: one message per remote owner, the owner's selected elements as payload."""
    sel, _ = basic_index(key, A.shape, A.label)
    msgs = np.zeros(P, dtype=np.int64)
    nbytes = np.zeros(P, dtype=np.int64)
    if all(len(s) for s in sel):
        owners = A.layout.owners(tuple(np.meshgrid(*sel, indexing="ij"))).ravel()
        counts = np.bincount(owners, minlength=P)
        msgs[:] = counts > 0
        nbytes[:] = counts * A.dtype.itemsize
    msgs[ME] = nbytes[ME] = 0
    return msgs, nbytes


# -- one-sided access, dtypes, degenerate grids, message counts --------------
@SETTINGS
@given(layouts(), st.sampled_from(DTYPES), st.data())
def test_get_of_slices_values_dtypes_and_per_pair_counts(layout, dtype, data):
    """Every locale reads the same key at once; each locale's row of the diagnostics matrix
    is exactly one message per remote owner, with the owner's elements as payload."""
    shape, dist = layout
    G = global_array(shape, dtype)
    A = pg.from_numpy(G, dist=dist)
    key = index_key(data.draw, shape)
    with pg.comm_diagnostics() as d:
        got = A.get(key)
    want = G[key]
    msgs, nbytes = expected_row(A, key)
    ok = (np.shape(got) == np.shape(want) and np.asarray(got).dtype == G.dtype and np.array_equal(got, want)
          and np.array_equal(d.matrix[ME], msgs) and np.array_equal(d.byte_matrix[ME], nbytes))
    collective_verdict(ok, lambda: f"get {key} of {A.label} {dist}: got {got!r} want {want!r}; "
                                   f"row {d.matrix[ME].tolist()} bytes {d.byte_matrix[ME].tolist()}, "
                                   f"expected {msgs.tolist()} / {nbytes.tolist()}")


@SETTINGS
@given(layouts(), st.sampled_from(DTYPES), st.data())
def test_put_of_slices_from_one_locale(layout, dtype, data):
    """One locale writes a (possibly reversed, strided, multi-dimensional) region; the
    result matches NumPy everywhere and the writer sent one message per remote owner."""
    shape, dist = layout
    G = global_array(shape, dtype, 1)
    A = pg.from_numpy(G, dist=dist)
    key = index_key(data.draw, shape)
    writer = data.draw(st.integers(0, 3)) % P
    value = global_array(np.shape(G[key]), dtype, 2)
    with pg.comm_diagnostics() as d:
        if ME == writer:
            A.put(key, value)
        pg.barrier()
    G[key] = value
    assert_matches(A, G)
    msgs, nbytes = expected_row(A, key)
    ok = ME != writer or (np.array_equal(d.matrix[ME], msgs) and np.array_equal(d.byte_matrix[ME], nbytes))
    collective_verdict(ok and (d.messages == int(msgs.sum()) if ME == writer else True),
                       lambda: f"put {key}: row {d.matrix[ME].tolist()}, expected {msgs.tolist()}")


@SETTINGS
@given(layouts(max_extent=5), st.sampled_from(DTYPES), st.data())
def test_scalar_access_negative_indices_dtypes_and_counts(layout, dtype, data):
    """Collective ``A[i]`` and one-sided ``A.get(i)`` return a scalar of the array's dtype;
    a remote get is one message of one element, a local one none."""
    shape, dist = layout
    if 0 in shape:
        return
    G = global_array(shape, dtype, 3)
    A = pg.from_numpy(G, dist=dist)
    idx = tuple(data.draw(st.integers(-n, n - 1)) for n in shape)
    with pg.comm_diagnostics() as d:
        one_sided = A.get(idx)
    owner = A.owner(idx)
    row = np.zeros(P, dtype=np.int64)
    if owner != ME:
        row[owner] = 1
    collective = A[idx]
    ok = (np.ndim(one_sided) == 0 and np.asarray(one_sided).dtype == G.dtype and one_sided == G[idx]
          and np.asarray(collective).dtype == G.dtype and collective == G[idx]
          and np.array_equal(d.matrix[ME], row) and int(d.byte_matrix[ME].sum()) == int(row.sum()) * G.itemsize)
    collective_verdict(ok, lambda: f"{idx}: get {one_sided!r}, A[i] {collective!r}, want {G[idx]!r}, "
                                   f"row {d.matrix[ME].tolist()}")
    new = global_array((), dtype, 4)[()]
    A[idx] = new
    G[idx] = new
    assert_matches(A, G)


def test_window_box_transfers_with_negative_strides_shaped_out():
    """Strided boxes (negative strides too) read the same from this locale and from others."""
    win = comm.allocate(24, np.int64, ("box", 24))
    win.local[:] = np.arange(24) + 100 * ME
    pg.barrier()
    bad = []
    for t in range(P):
        base = np.arange(24) + 100 * t
        for offset, counts, strides in [(1, (2, 3), (6, 2)), (23, (3, 4), (-6, -1)), (5, (4,), (-1,))]:
            out = np.empty(counts, dtype=np.int64)
            win.get(t, offset, out, counts, strides)
            want = np.lib.stride_tricks.as_strided(base[offset:], counts, tuple(8 * s for s in strides))
            if not np.array_equal(out, want):
                bad.append((t, offset, counts, strides, out.tolist()))
        regions = [(1, (2, 3), (6, 2)), (20, (2,), (-3,))]
        out = np.empty(8, dtype=np.int64)
        win.get_regions(t, regions, out)
        want = base[[1, 3, 5, 7, 9, 11, 20, 17]]
        if not np.array_equal(out, want):
            bad.append((t, "regions", out.tolist(), want.tolist()))
    pg.barrier()
    collective_verdict(not bad, repr(bad[:3]))


# -- window boxes from the own locale ----------------------------------------
def test_window_box_get_into_flat_out_from_own_locale():
    win = comm.allocate(12, np.float64, ("flat", 12))
    win.local[:] = np.arange(12) + 100 * ME
    pg.barrier()
    bad = []
    for t in range(P):
        out = np.empty(4)
        try:
            win.get(t, 1, out, counts=(2, 2), strides=(6, 2))
            if not np.array_equal(out, np.array([1.0, 3.0, 7.0, 9.0]) + 100 * t):
                bad.append((t, out.tolist()))
        except ValueError as e:
            bad.append((t, str(e)))
    pg.barrier()
    collective_verdict(not bad, repr(bad))


BAD_SCALARS = [(np.float64, 1j), (np.int64, float("nan")), (np.int32, 2 ** 40), (np.float64, "x")]


@pytest.mark.parametrize("dtype,value", BAD_SCALARS)
def test_scalar_write_of_unstorable_value_raises_everywhere(dtype, value):
    A = pg.zeros(2 * P, dtype=dtype, name="A")
    try:
        A[0] = value
        raised = False
    except (TypeError, ValueError, OverflowError):
        raised = True
    collective_verdict(raised, "A[0] = v did not raise here, though it raised on the owner")


def test_put_of_out_of_range_int_raises():
    A = pg.zeros(2 * P, dtype=np.int32)
    raised = True
    if ME == 0:
        try:
            A.put(2 * P - 1, 2 ** 40)
            raised = False
        except (OverflowError, ValueError, TypeError):
            pass
    pg.barrier()
    collective_verdict(raised, lambda: f"stored {A.get(2 * P - 1)} for 2**40")


@pytest.mark.parametrize("dtype,value", [(bool, 1), (np.int64, 2.0), (np.int32, 3.0)])
def test_put_accepts_python_scalars_numpy_accepts(dtype, value):
    A = pg.zeros(2 * P, dtype=dtype)
    ref = np.zeros(2 * P, dtype=dtype)
    ref[-1] = value
    A[2 * P - 1] = value                       # collective write accepts it
    ok = True
    try:
        A.put(-1, value)
    except TypeError:
        ok = False
    pg.barrier()
    collective_verdict(ok, f"put of {value!r} into {np.dtype(dtype)} raised")
    assert_matches(A, ref)


me = pg.here


DISTS = [pg.Block(), pg.Cyclic()]


@pytest.mark.parametrize("dist", DISTS, ids=["block", "cyclic"])
def test_put_after_a_statement_then_barrier_is_not_lost(dist):
    """Rule 5: put, barrier, then the value is there.  Here the put lands on an
    element a slow owner writes in an earlier statement (same layouts: no peers),
    and the late statement overwrites it: the put is lost, silently."""
    if P < 2:
        pytest.skip("needs two locales")
    n = 4 * P
    for trial in range(3):
        A = pg.zeros(n, dist=dist)
        B = pg.from_numpy(np.arange(n, dtype=float), dist=dist)
        mine = A.layout.owned(P - 1)[0]                 # the last locale's elements
        if me == P - 1:
            time.sleep(0.2)
        A[:] = B + 1
        if me != P - 1:
            for k in mine:
                A.put(int(k), 1000.0 + me)
        pg.barrier()
        got = np.asarray(A.local)
        ok = me != P - 1 or bool(np.all(got >= 1000.0))
        collective_verdict(ok, lambda: f"trial {trial}: the puts were lost, got {got} on the last locale")


@pytest.mark.parametrize("dist", DISTS, ids=["block", "cyclic"])
@pytest.mark.parametrize("how", ["put", "update_one"])
def test_a_statement_does_not_read_later_one_sided_writes(dist, how):
    """Rule 2/3: ``B[:] = A[::-1]`` reads the values A had before it.  A locale that
    finished its part writes A one-sidedly at once; the slow reader (locale 0)
    must not see those later writes (at 2 locales every locale is a peer)."""
    n = 4 * P
    for trial in range(3):
        A = pg.from_numpy(np.arange(n, dtype=np.int64), dist=dist)
        B = pg.zeros(n, dtype=np.int64, dist=dist)
        if me == 0:
            time.sleep(0.2)
        B[:] = A[::-1]
        if me != 0:
            for i in range(n):
                if how == "put":
                    A.put(i, -7)
                else:
                    A.update_one(i, 100)
        pg.barrier()
        assert_matches(B, np.arange(n, dtype=np.int64)[::-1])


@pytest.mark.parametrize("dist", DISTS, ids=["block", "cyclic"])
def test_get_after_a_statement_reads_its_result(dist):
    """``A[:] = 5`` then ``A.get(k)`` on another locale, no barrier: the get returns
    the old 0.0 without error while the owner is still in the statement.  Either the
    runtime orders it or docs/memory-model.md must say a barrier is needed (it says
    so only for one-sided writes); old runtime (global barrier) returned 5."""
    if P < 2:
        pytest.skip("needs two locales")
    n = 4 * P
    A = pg.zeros(n, dist=dist)
    k = int(A.layout.global_index(P - 1, (0,))[0])
    if me == P - 1:
        time.sleep(0.2)
    A[:] = 5.0
    v = A.get(k)
    collective_verdict(v == 5.0, f"A.get({k}) returned {v}, the statement wrote 5.0")

"""Adversarial review of the foundation layer (comm, dist, DistArray core) on any
number of locales.

Tests marked ``xfail(strict=True)`` pin down real bugs found in the review (their
reasons say what is wrong); the others check corner cases that hold today:
non-square and degenerate grids, extents smaller than the locale count, blocks
longer than the extent, every supported dtype, negative indices and steps,
per-pair message and byte counts, and the window pool's release protocol.
Every verdict is collective, so a failure never leaves a locale waiting.
"""

import gc
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgas as pg
from pgas.layout import grids
from pgas import comm
from pgas.array.index import basic_index

from util import assert_matches, collective_verdict

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


@pytest.mark.parametrize("shape,grid", [((2, 9), (P, 1)), ((9, 2), (1, P)), ((1, 3, 5), (P, 1, 1)),
                                        ((3, 1, 2, 5), (1, 1, 1, P)), ((2, 2, 2, 2), (1, P, 1, 1))])
@pytest.mark.parametrize("kind", ["block", "cyclic", "bc7"])
def test_degenerate_grids_round_trip_and_reduce(shape, grid, kind):
    """Grids with all locales on one axis, often an axis shorter than the locale count."""
    dist = {"block": pg.Block, "cyclic": pg.Cyclic}.get(kind, lambda grid: pg.BlockCyclic(7, grid=grid))(grid=grid)
    G = global_array(shape, np.float64, 5)
    A = pg.from_numpy(G, dist=dist)
    assert_matches(A, G)
    T = A.to_numpy()
    ok = np.array_equal(T, G) and math.isclose(A.sum(), G.sum()) and A.min() == G.min() and A.max() == G.max()
    ok = ok and A[tuple(-1 for _ in shape)] == G[(-1,) * len(shape)]
    collective_verdict(ok, f"{shape} {dist}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduction_and_ufunc_result_dtypes_follow_numpy(dtype):
    G = global_array((3, 2, 5), dtype, 6)
    A = pg.from_numpy(G, dist=pg.BlockCyclic(7, grid=(P, 1, 1)))  # blocks past the extent: one busy locale
    bad = []
    for name in ("sum", "prod", "min", "max", "mean"):
        r, e = getattr(A, name)(), getattr(G, name)()
        if np.asarray(r).dtype != np.asarray(e).dtype or not np.allclose(r, e, rtol=1e-5):
            bad.append(f"{name}: {r!r} vs {e!r}")
    for label, f in [("+1", lambda x: x + 1), ("*2.5", lambda x: x * 2.5), ("/2", lambda x: x / 2),
                     ("==", lambda x: x == x), ("abs", np.abs), ("+int32", lambda x: x + np.int32(1))]:
        r, e = f(A), f(G)
        if r.dtype != e.dtype or not np.allclose(r.to_numpy(), e):
            bad.append(f"ufunc {label}: {r.dtype} vs {e.dtype}")
    collective_verdict(not bad, lambda: "; ".join(bad))


def test_from_numpy_with_different_shapes_fails_everywhere():
    """Locales passing arrays of different shapes all raise (no locale left in a collective)."""
    try:
        pg.from_numpy(np.zeros(3 + ME % 2))
        raised = False
    except ValueError:
        raised = True
    collective_verdict(raised == (P > 1), f"raised={raised}")


# -- window pool: release only when the storage is dead on every locale ------
def _key_array(value):
    return pg.full((3 * P + 1, 2), value, dtype=np.int64, dist=pg.Cyclic(grid=(P, 1)))


def test_live_view_keeps_window_out_of_the_pool():
    A = _key_array(7)
    view = A.local.T[::-1]           # a derived view outlives the array
    wid = A._win.id
    del A
    gc.collect()
    others = [_key_array(9) for _ in range(3)]
    pg.barrier()
    ok = bool(np.all(view == 7)) and all(o._win.id != wid for o in others)
    collective_verdict(ok, "memory of a live view was handed to a new array")
    del view
    B = _key_array(1)               # now released everywhere: the pool hands it back
    collective_verdict(B._win.id == wid, f"window {wid} not reused (got {B._win.id})")


def _reused_soon(wid) -> bool:
    """Whether window ``wid`` comes back within the next allocations of its key (the pool
    may first hand out other windows it holds; all are kept alive meanwhile)."""
    held = []
    for _ in range(70):
        held.append(_key_array(0))
        if held[-1]._win.id == wid:
            return True
    return False


def test_release_on_some_locales_only_is_not_reused():
    A = _key_array(5)
    wid = A._win.id
    keep = A if ME % 2 == 1 else None
    del A
    B = _key_array(6)
    reused = B._win.id == wid
    ok = (P == 1 or not reused) and (keep is None or bool(np.all(keep.local == 5)))   # locale 1 holds it if P > 1
    collective_verdict(ok, f"reused={reused}: window reused while a locale still holds the array, or not pooled")
    del keep
    collective_verdict(reused or _reused_soon(wid), "window released everywhere was not pooled")


def test_cycle_collected_on_one_locale_only_is_not_reused():
    """GC timing differs per locale: an array in a reference cycle is pooled only once
    every locale has collected it, so no locale's decision depends on its own GC."""
    was = gc.isenabled()
    gc.disable()
    try:
        A = _key_array(3)
        wid = A._win.id
        cycle = [A]
        cycle.append(cycle)
        del A, cycle
        if ME == 0:
            gc.collect()
        B = _key_array(4)
        same_everywhere = comm.allgather(B._win.id)
        ok = B._win.id != wid or P == 1
        collective_verdict(ok and len(set(same_everywhere)) == 1, f"pool decisions differ: {same_everywhere}")
        gc.collect()
        collective_verdict(B._win.id == wid or _reused_soon(wid), "window released everywhere was not pooled")
    finally:
        if was:
            gc.enable()


def test_window_box_transfers_with_negative_strides_shaped_out():
    """Strided boxes (negative strides too) read the same from this locale and from others."""
    win = comm.allocate(24, np.int64, ("review-box", 24))
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


# -- bugs found in the review ------------------------------------------------
def test_window_box_get_into_flat_out_from_own_locale():
    win = comm.allocate(12, np.float64, ("review-flat", 12))
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


@pytest.mark.parametrize("dtype", [np.float16, np.longdouble])
def test_astype_rejects_unsupported_dtypes_like_constructors(dtype):
    A = pg.arange(3)
    try:
        A.astype(dtype)
        raised = False
    except TypeError:
        raised = True
    collective_verdict(raised, f"astype({np.dtype(dtype)}) made an array")

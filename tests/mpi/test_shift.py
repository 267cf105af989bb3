"""cshift / eoshift / pshift / pshift_setup / np.roll against NumPy on 1-4 locales.

Also: eoshift's boundary refused for bool and unsigned dtypes or as a view, and ghosted
arrays refused as shift outputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import a_dist, assert_matches, collective_verdict

import pgas as pg

P = pg.num_locales
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=20)


@st.composite
def a_case(draw):
    ndim = draw(st.integers(1, 4))
    top = {1: 12, 2: 7, 3: 5, 4: 4}[ndim]
    shape = tuple(draw(st.lists(st.integers(1, top), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from([np.float64, np.int32]))
    return shape, dtype, draw(a_dist(ndim, max_block=3))


def data(shape, seed=0, dtype=float):
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(dtype)


def np_eoshift(a, s, axis, boundary):
    """NumPy reference of Fortran's EOSHIFT."""
    n = a.shape[axis]
    b = np.asarray(boundary, dtype=a.dtype)
    out = np.empty_like(a)
    src, dst = np.moveaxis(a, axis, 0), np.moveaxis(out, axis, 0)
    for i in range(n):
        dst[i] = src[i + s] if 0 <= i + s < n else b
    return out


@pytest.fixture(autouse=True)
def _defaults():
    pg.config()
    yield
    pg.config()


@given(a_case(), st.data())
@SETTINGS
def test_cshift_matches_numpy_roll(case, draw):
    shape, dtype, dist = case
    axis = draw.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    s = draw.draw(st.sampled_from([0, 1, -1, n, -n, n - 1, 1 - n, 2 * n + 1, -3 * n - 2]))
    g = data(shape, 1, dtype)
    A = pg.from_numpy(g, dist=dist)
    assert_matches(pg.cshift(A, s, axis), np.roll(g, -s, axis))
    assert_matches(np.roll(A, s, axis), np.roll(g, s, axis))


@given(a_case(), st.data())
@SETTINGS
def test_eoshift_matches_numpy(case, draw):
    shape, dtype, dist = case
    axis = draw.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    s = draw.draw(st.sampled_from([0, 1, -1, 2, -2, n, -n, n - 1, 1 - n, n + 3, -n - 3]))
    kind = draw.draw(st.sampled_from(["zero", "one", "scalar", "numpy", "dist"]))
    g = data(shape, 2, dtype)
    A = pg.from_numpy(g, dist=dist)
    rest = shape[:axis] + shape[axis + 1:]
    if kind == "zero":
        b, want = 0, 0
    elif kind == "one":
        b, want = 1, 1
    elif kind == "scalar":
        b = want = dtype(-7)
    else:
        want = data(rest, 3, dtype) if rest else dtype(5)
        b = pg.from_numpy(want) if kind == "dist" and rest else want
    ref = np_eoshift(g, s, axis, want)
    assert_matches(pg.eoshift(A, s, axis, boundary=b), ref)


@given(st.integers(1, 3), st.data())
@SETTINGS
def test_pshift_matches_sequential(ndim, draw):
    shape = tuple(draw.draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim)))
    dist = draw.draw(a_dist(ndim, max_block=3))
    shifts = draw.draw(st.lists(st.tuples(st.integers(-7, 7), st.integers(0, ndim - 1),
                                          st.sampled_from([None, 0, 1, 2.5])), min_size=1, max_size=6))
    g = data(shape, 4)
    A = pg.from_numpy(g, dist=dist)
    spec = [(s, ax) if b is None else (s, ax, b) for s, ax, b in shifts]
    outs = pg.pshift(A, spec)
    for R, (s, ax, b) in zip(outs, shifts):
        assert_matches(R, np.roll(g, -s, ax) if b is None else np_eoshift(g, s, ax, b))


def test_roll_forms():
    g = data((5, 6), 5)
    A = pg.from_numpy(g, dist=pg.Cyclic())
    assert_matches(np.roll(A, 3), np.roll(g, 3))                     # axis=None: flattened
    assert_matches(np.roll(A, (1, -2), (0, 1)), np.roll(g, (1, -2), (0, 1)))
    assert_matches(np.roll(A, (1, 2), (1, 1)), np.roll(g, (1, 2), (1, 1)))   # repeated axes add up
    assert_matches(np.roll(A, 2, axis=(0, 1)), np.roll(g, 2, axis=(0, 1)))
    assert_matches(np.roll(A, 0, 0), g)
    x = pg.from_numpy(g[0])
    assert_matches(np.roll(x, -4), np.roll(g[0], -4))
    assert_matches(np.roll(x * 2, 1), np.roll(g[0] * 2, 1))          # an expression is materialised
    with pytest.raises(np.exceptions.AxisError):
        np.roll(A, 1, 2)
    with pytest.raises(ValueError, match="broadcast"):
        np.roll(A, (1, 2, 3), (0, 1))


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_pshift_one_message_per_pair(ndim):
    """The QCD case and its lower-rank cousins: +1 and -1 along every axis (plus end-off
    shifts) send at most one message per locale pair per pshift."""
    shape = (8,) * ndim if ndim < 4 else (4, 4, 4, 4)
    g = data(shape, 6)
    A = pg.from_numpy(g)
    shifts = [(s, ax) for ax in range(ndim) for s in (1, -1)] + [(2, 0, 1.5), (-1, ndim - 1, 0)]
    with pg.comm_diagnostics() as d:
        outs = pg.pshift(A, shifts)
    collective_verdict(int(d.matrix.max(initial=0)) <= 1, lambda: f"messages per pair:\n{d.matrix}")
    for R, sp in zip(outs, shifts):
        assert_matches(R, np.roll(g, -sp[0], sp[1]) if len(sp) == 2 else np_eoshift(g, *sp))
    if P > 1:                                        # sequential cshifts send one exchange each
        with pg.comm_diagnostics() as d2:
            for s, ax in shifts[:2 * ndim]:
                pg.cshift(A, s, ax)
        collective_verdict(d2.messages >= d.messages, f"{d2.messages} < {d.messages}")


def test_pshift_setup_reuse_and_errors():
    g = data((6, 8), 7)
    A = pg.from_numpy(g)
    B = pg.from_numpy(g * 3)
    shifts = [(1, 0), (-1, 1), (2, 1, -1.0)]
    with pg.pshift_setup(A, shifts) as plan:
        outs = [pg.empty_like(A) for _ in shifts]
        for X, gx in ((A, g), (B, g * 3)):
            res = plan(X, out=outs)
            collective_verdict(all(r is o for r, o in zip(res, outs)), "out= not returned")
            assert_matches(outs[0], np.roll(gx, -1, 0))
            assert_matches(outs[1], np.roll(gx, 1, 1))
            assert_matches(outs[2], np_eoshift(gx, 2, 1, -1.0))
        with pytest.raises(ValueError, match="set up for"):
            plan(pg.zeros((6, 9)))
        with pytest.raises(ValueError, match="set up for"):
            plan(pg.zeros((6, 8), dtype=np.float32))
        if P > 1:
            with pytest.raises(ValueError, match="set up for"):
                plan(pg.zeros((6, 8), dist=pg.Cyclic()))
        with pytest.raises(ValueError, match="one array per shift"):
            plan(A, out=outs[:2])
        C = pg.from_numpy(g)                             # in place: out= holds the source
        plan(C, out=[C, outs[1], outs[2]])
        assert_matches(C, np.roll(g, -1, 0))
        assert_matches(outs[1], np.roll(g, 1, 1))
        with pytest.raises(ValueError, match="distinct"):
            plan(A, out=[outs[0], outs[0], outs[2]])
    with pytest.raises(RuntimeError, match="freed"):
        plan(A)
    assert "freed" in repr(plan)


def test_errors_alike_on_every_locale():
    A = pg.from_numpy(data((4, 5), 8))
    with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
        pg.cshift(A, 1, 2)
    with pytest.raises(np.exceptions.AxisError):
        pg.pshift(A, [(1, 0), (1, -3)])
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        pg.eoshift(A, 1, 1, boundary=np.zeros(5))
    with pytest.raises(ValueError, match=r"shape \(5,\)"):
        pg.eoshift(A, 1, 0, boundary=pg.zeros(4))
    with pytest.raises(TypeError, match="cast"):
        pg.eoshift(A, 1, 0, boundary=1j)
    with pytest.raises(TypeError, match="integer"):
        pg.cshift(A, 1.5, 0)
    with pytest.raises(TypeError, match=r"\(shift, axis\)"):
        pg.pshift(A, [(1,)])
    with pytest.raises(ValueError, match="no shifts"):
        pg.pshift(A, [])
    with pytest.raises(ValueError, match="does not match"):
        pg.cshift(A, 1, 0, out=pg.zeros((4, 5), dtype=np.int64))
    with pytest.raises(TypeError, match="DistArray"):
        pg.cshift(np.zeros(3), 1)


def test_baseline_mode_and_explain():
    g = data((7, 3), 9)
    A = pg.from_numpy(g, dist=pg.BlockCyclic(2))
    pg.config(aggregate=False)
    assert_matches(pg.pshift(A, [(3, 0), (-1, 1, 4)])[1], np_eoshift(g, -1, 1, 4))
    pg.config(aggregate=True)
    R = pg.empty_like(A)
    text = pg.explain(lambda: pg.cshift(A, 2, 0, out=R), locales=4)
    collective_verdict("one exchange" in text and text.count("all 4 locales") == 2, text)


def test_out_and_pending_expressions():
    g = data((9,), 10)
    A = pg.from_numpy(g)
    R = pg.zeros(9)
    e = R[1:] + 1                                     # pending: reads R before the shift writes it
    pg.cshift(A, 4, out=R)
    assert_matches(e.eval(), np.ones(8))
    assert_matches(R, np.roll(g, -4))


def _attempt(f):
    """Run f on every locale; return (result, None) or (None, 'Type: message')."""
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001 - the finding is the exception itself
        return None, f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.uint64])
def test_eoshift_default_boundary_raises_for_bool_and_unsigned(dtype):
    # docs/polyshift.md: eoshift's boundary is "the constants 0 (the default)".
    # NumPy end-off shift of [1,1,1,1,1] by 1 with fill 0 gives [1,1,1,1,0] (False for bool).
    # pgas raises TypeError "cannot cast a boundary of dtype int64 to the array's bool/uint8
    # (rule 'same_kind')" on every locale, for the DEFAULT boundary (and for pshift (1, 0, 0)).
    a = np.ones(5, dtype=dtype)
    A = pg.from_numpy(a)
    R, err = _attempt(lambda: pg.eoshift(A, 1))
    collective_verdict(err is None, f"pg.eoshift(A, 1) on {np.dtype(dtype)} raised {err}")
    assert_matches(R, np.concatenate([a[1:], np.zeros(1, dtype)]))


def test_eoshift_boundary_that_is_a_view_raises():
    # docs/polyshift.md: the boundary may be "an array (NumPy or distributed) of the array's
    # shape without the shifted axis". A distributed row A[0] (a View) is such an array.
    # NumPy: end-off shift of a by 1 along axis 0 filling with a[0] -> rows a[1], a[2], a[3], a[0].
    # pgas raises TypeError "distributed expression: use .to_numpy() ..." on every locale
    # (a DistArray boundary works; a View of one does not).
    a = np.arange(12).reshape(4, 3)
    A = pg.from_numpy(a)
    R, err = _attempt(lambda: pg.eoshift(A, 1, 0, A[0]))
    collective_verdict(err is None, f"pg.eoshift(A, 1, 0, A[0]) raised {err}")
    assert_matches(R, np.concatenate([a[1:], a[:1]]))


def test_empty_like_of_ghosted_array_rejected_as_shift_output():
    # docs/polyshift.md's own pattern: nbrs = [pg.empty_like(phi) ...]; plan(phi, out=nbrs).
    # With a ghosted phi, empty_like/zeros_like drop the ghost widths (ghosts (0, 0)), and
    # every shift with out= raises ValueError "output float64 array of shape (4, 6) with
    # Block(grid=...) does not match the source float64 array of shape (4, 6) with Block(grid=...)"
    # -- the two descriptions printed are identical. Expected: the shift result, as with
    # NumPy's np.roll(phi, -1, 0).
    a = np.arange(24.0).reshape(4, 6)
    phi = pg.zeros((4, 6), ghosts=(1, 1))
    phi[...] = a
    out = pg.empty_like(phi)
    _, err = _attempt(lambda: pg.cshift(phi, 1, 0, out=out))
    collective_verdict(err is None, f"pg.cshift(phi, 1, 0, out=pg.empty_like(phi)) raised {err}; "
                                    f"empty_like ghosts={out.ghosts}, phi ghosts={phi.ghosts}")
    assert_matches(out, np.roll(a, -1, 0))


# -- several sources, in place -------------------------------------------------------------------
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_pshift_several_sources_one_message_per_pair(ndim):
    """Every shift of every source (two dtypes) in one exchange: at most one message per
    locale pair however many sources, half the messages of one pshift per source."""
    shape = (8,) * ndim
    g, h = data(shape, 11), data(shape, 12, np.int32)
    A, B = pg.from_numpy(g), pg.from_numpy(h)
    shifts = [(s, ax) for ax in range(ndim) for s in (1, -1)] + [(2, 0, 7)]
    for _ in range(3):                                   # first call and compiled repeats
        with pg.comm_diagnostics() as d:
            (ra, rb) = pg.pshift([A, B], shifts)
        collective_verdict(int(d.matrix.max(initial=0)) <= 1, lambda: f"messages per pair:\n{d.matrix}")
        for x, rows in ((g, ra), (h, rb)):
            for R, sp in zip(rows, shifts):
                assert_matches(R, np.roll(x, -sp[0], sp[1]) if len(sp) == 2 else np_eoshift(x, *sp))
    with pg.comm_diagnostics() as d1:
        pg.pshift(A, shifts)
        pg.pshift(B, shifts)
    collective_verdict(d.messages * 2 == d1.messages, f"{d.messages} messages for two sources at once, "
                                                      f"{d1.messages} for one pshift each")


def test_pshift_several_sources_other_layouts_and_plan():
    g, h = data((6, 9), 13), data((5, 4), 14, np.float32)
    A, B = pg.from_numpy(g, dist=pg.Cyclic()), pg.from_numpy(h, dist=pg.BlockCyclic(2))
    shifts = [(1, 1), (-3, 0, 2.5)]
    ra, rb = pg.pshift((A, B), shifts)
    assert_matches(ra[0], np.roll(g, -1, 1))
    assert_matches(rb[1], np_eoshift(h, -3, 0, 2.5))
    outs = [[pg.empty_like(A) for _ in shifts], [pg.empty_like(B) for _ in shifts]]
    with pg.pshift_setup([A, B], shifts) as plan:
        for k in range(3):
            got = plan([A, B], out=outs)
            collective_verdict(got[0][0] is outs[0][0], "out= not returned")
            assert_matches(outs[0][0], np.roll(g, -1, 1))
            assert_matches(outs[1][1], np_eoshift(h, -3, 0, 2.5))
        with pytest.raises(ValueError, match="set up for"):
            plan([B, A])
        with pytest.raises(ValueError, match="source"):
            plan(A)
    with pytest.raises(ValueError, match="one sequence of destinations per source"):
        pg.pshift([A, B], shifts, out=[outs[0]])
    with pytest.raises(ValueError, match="distinct"):
        pg.pshift([A, A], shifts)
    with pytest.raises(ValueError, match="distinct"):
        pg.pshift([A, B], shifts, out=[outs[0], [outs[1][0], outs[1][0]]])
    with pytest.raises(TypeError, match="DistArray"):
        pg.pshift([A, np.zeros(3)], shifts)
    with pytest.raises(ValueError, match="no source"):
        pg.pshift([], shifts)


@pytest.mark.parametrize("aggregate", [True, False])
def test_shift_in_place(aggregate):
    """A destination that is a source: every shift reads the sources as they were before
    the call (np.roll's result, written back), by the compiled group, the generic path and
    baseline mode (where the source is copied first)."""
    g = data((7, 6), 15)
    pg.config(aggregate=aggregate)
    try:
        A = pg.from_numpy(g, dist=pg.BlockCyclic(2))
        x = g.copy()
        for k in range(3):                               # repeats run compiled
            pg.cshift(A, 1, 0, out=A)
            x = np.roll(x, -1, 0)
            assert_matches(A, x)
            pg.pshift(A, [(-2, 1)], out=[A])
            x = np.roll(x, 2, 1)
            assert_matches(A, x)
        B, C = pg.from_numpy(g), pg.from_numpy(g * 2)
        R = pg.empty_like(B)
        pg.pshift([B, C], [(1, 0), (2, 1, -1.0)], out=[[R, C], [B, pg.empty_like(C)]])
        assert_matches(R, np.roll(g, -1, 0))
        assert_matches(C, np_eoshift(g, 2, 1, -1.0))       # C <- shift of B's old values
        assert_matches(B, np.roll(g * 2, -1, 0))           # B <- shift of C's old values
        D = pg.from_numpy(g)
        pg.eoshift(D, -1, 1, boundary=pg.zeros(7), out=D)  # a distributed boundary: lowered per call
        assert_matches(D, np_eoshift(g, -1, 1, 0.0))
    finally:
        pg.config(aggregate=True)


def test_square_grid_placement_moves_fewer_elements():
    """Block(grid="square") places a (4P, 8) array's blocks so they are most nearly square
    for its shape: a +-1 polyshift along both axes is NumPy's and moves no more bytes
    than over the default grid (at 4 locales: a 4 x 1 grid, 2 faces per block, instead of
    2 x 2's four)."""
    g = data((4 * P, 8), 16)
    shifts = [(s, ax) for ax in range(2) for s in (1, -1)]
    moved = []
    for dist in (pg.Block(), pg.Block(grid="square")):
        A = pg.from_numpy(g, dist=dist)
        with pg.comm_diagnostics() as d:
            outs = pg.pshift(A, shifts)
        for R, (s, ax) in zip(outs, shifts):
            assert_matches(R, np.roll(g, -s, ax))
        moved.append(d.bytes)
    collective_verdict(moved[1] <= moved[0], f"bytes moved: default grid {moved[0]}, square {moved[1]}")
    if P == 4:
        assert pg.Block(grid="square").bind(g.shape, P).grid == (4, 1)

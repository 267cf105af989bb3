"""The inspector's iterations of one locale against brute force: found from the locale's
owned indices (work grows with its share), they equal the box's iterations whose
written element it owns, in box order, for boxes, domains of parts, and writes with
constant, negated, strided or non-separable subscripts; in chunks too, which keep
whole the loop variables they are told to."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pgas.layout import Block, BlockCyclic, Cyclic
from pgas.plan import Access, Statement
from pgas.plan.inspector import box_points, global_indices, owned_chunks, owned_points


@st.composite
def cases(draw):
    P = draw(st.sampled_from([1, 2, 3, 4, 6]))
    nvars = draw(st.integers(1, 3))
    box = tuple((draw(st.integers(-3, 3)), draw(st.sampled_from([1, 2, -1, 3])), draw(st.integers(0, 6)))
                for _ in range(nvars))
    ndim = draw(st.integers(1, 2))
    rows, consts = [], []
    for _ in range(ndim):
        row = [0] * nvars
        kind = draw(st.sampled_from(["var", "var", "const", "two"]))
        if kind != "const":
            row[draw(st.integers(0, nvars - 1))] = draw(st.sampled_from([1, 2, -1, -2, 3]))
        if kind == "two" and nvars > 1:
            row[draw(st.integers(0, nvars - 1))] += 1
        rows.append(tuple(row))
        consts.append(draw(st.integers(0, 6)))
    probe = Access(0, tuple(rows), (0,) * ndim)
    g = global_indices(probe, box_points(Statement(box, (probe,), 0, "add")))
    lows = [int(x.min()) if x.size else 0 for x in g]      # statements write inside the array:
    wx = Access(0, tuple(rows), tuple(c - lo for c, lo in zip(consts, lows)))   # shift into range
    shape = tuple(max(int(x.max()) - lo + 1 if x.size else 1, 1) + c for x, lo, c in zip(g, lows, consts))
    grid = [1] * ndim
    grid[draw(st.integers(0, ndim - 1))] = P
    dist = draw(st.sampled_from([Block(tuple(grid)), Cyclic(tuple(grid)), BlockCyclic(2, tuple(grid))]))
    layout = dist.bind(shape, P)
    parts = ()
    if draw(st.booleans()):                    # a domain of 2 parts split along the first variable
        s, st_, n = box[0]
        cut = draw(st.integers(0, n))
        parts = (((s, st_, cut),) + box[1:], ((s + st_ * cut, st_, n - cut),) + box[1:])
    return Statement(box, (wx,), 0, "add", parts=parts), wx, layout, P


@settings(max_examples=60, deadline=None)
@given(cases())
def test_owned_points_equal_brute_force(case):
    stmt, wx, layout, P = case
    pts = box_points(stmt)
    g = global_indices(wx, pts)
    owners = np.broadcast_to(np.asarray(layout.owners(g)), (stmt.size,))
    seen = []
    for me in range(P):
        pos, vals = owned_points(stmt, wx, layout, me)
        want = np.flatnonzero(owners == me)
        assert pos.tolist() == want.tolist()
        for v in range(stmt.nvars):
            assert vals[v].tolist() == pts[v][want].tolist()
        seen.extend(pos.tolist())
    assert sorted(seen) == list(range(stmt.size))       # every iteration once


@settings(max_examples=60, deadline=None)
@given(cases(), st.integers(1, 7), st.integers(0, 3))
def test_owned_chunks_are_the_owned_points_in_bounded_runs(case, most, whole):
    stmt, wx, layout, P = case
    whole = min(whole, stmt.nvars)
    for me in range(P):
        pos, vals = owned_points(stmt, wx, layout, me)
        chunks = list(owned_chunks(stmt, wx, layout, me, most, whole))
        if whole == 0:
            assert len(chunks) <= 1
        got = np.concatenate([c[0] for c in chunks]) if chunks else np.zeros(0, np.int64)
        assert got.tolist() == pos.tolist()
        for v in range(stmt.nvars):
            assert np.concatenate([c[1][v] for c in chunks] or [np.zeros(0)]).tolist() == vals[v].tolist()
        inner = int(np.prod([n for _, _, n in stmt.box][whole:]))
        for c in chunks:                                 # a chunk: at most `most` points, or one run of the kept axes
            assert 0 < len(c[0]) <= max(most, inner) or stmt.parts
            if stmt.nvars:                               # the kept axes' every value, for each outer value
                outer = {tuple(c[1][v][k] for v in range(whole)) for k in range(len(c[0]))}
                for o in outer:
                    mine = [k for k in range(len(vals[0])) if tuple(vals[v][k] for v in range(whole)) == o]
                    inside = [k for k in range(len(c[0])) if tuple(c[1][v][k] for v in range(whole)) == o]
                    assert len(mine) == len(inside)

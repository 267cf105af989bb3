"""The pure planner against brute force: pieces partition the box, every access has
one owner per piece and the affine local index is exact; messages obey the bound."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgas.layout import Block, BlockCyclic, Cyclic, DimMap
from pgas.layout.segments import var_lattices
from pgas.plan import Access, PlanError, Statement, describe, plan, plan_local
from pgas.plan.pieces import c_strides
from pgas.plan.transfers import expand


def _dist(kind, block, grid):
    return {"block": Block(grid), "cyclic": Cyclic(grid), "bc": BlockCyclic(block, grid)}[kind]


@st.composite
def statements(draw, separable=True):
    """A random statement over 1-2 loop vars and 1-3 arrays of 1-2 dims, on up to 64 locales."""
    P = draw(st.sampled_from([1, 2, 3, 4, 5, 8, 16, 33, 64]))
    nvars = draw(st.integers(1, 2))
    box = []
    for _ in range(nvars):
        step = draw(st.sampled_from([1, 1, 2, 3, -1, -2]))
        count = draw(st.integers(0, 9))
        box.append((0, step, count))
    nslots = draw(st.integers(1, 3))
    layouts = []
    for _ in range(nslots):
        ndim = draw(st.integers(1, 2))
        grid = [1] * ndim
        grid[draw(st.integers(0, ndim - 1))] = P
        if ndim == 2 and P in (4, 16, 64) and draw(st.booleans()):
            grid = [2, P // 2] if P == 4 else [4, P // 4]     # equal maps: A[i, i] meets both
        kind = draw(st.sampled_from(["block", "cyclic", "bc"]))
        layouts.append((kind, draw(st.integers(1, 4)), tuple(grid), ndim))
    naccess = draw(st.integers(1, 4))
    accesses = []
    shapes = [[1] * L[3] for L in layouts]
    for k in range(naccess):
        slot = 0 if k == 0 else draw(st.integers(0, nslots - 1))
        ndim = layouts[slot][3]
        M = []
        for d in range(ndim):
            row = [0] * nvars
            if k == 0 or draw(st.booleans()):
                v = d % nvars if k == 0 else draw(st.integers(0, nvars - 1))
                row[v] = draw(st.sampled_from([1, 1, 2, -1])) if k else 1
            if not separable and k and nvars > 1 and draw(st.booleans()):
                row = [draw(st.sampled_from([1, 2])) for _ in range(nvars)]
            M.append(row)
        # offsets chosen so the access stays in bounds: shift by minus the minimum
        c = []
        for d, row in enumerate(M):
            lo = sum(min(a * s * (n - 1), 0) if n else 0 for a, (_, s, n) in zip(row, box))
            hi = sum(max(a * s * (n - 1), 0) if n else 0 for a, (_, s, n) in zip(row, box))
            off = -lo + draw(st.integers(0, 3))
            c.append(off)
            shapes[slot][d] = max(shapes[slot][d], off + hi + 1 + draw(st.integers(0, 3)))
        accesses.append(Access(slot, M, c))
    if nvars > 1 and all(accesses[0].M[d][1] == 0 for d in range(len(accesses[0].M))):
        red = "add"
    else:
        red = None
    stmt = Statement(tuple(box), tuple(accesses), 0, red)
    lays = tuple(_dist(kind, b, g).bind(tuple(shapes[s]), P) for s, (kind, b, g, _) in enumerate(layouts))
    return stmt, lays


def _brute(stmt, lays):
    """Per iteration point: per access (owner, flat local offset)."""
    axes = [range(a, a + s * n, s) if n else range(0) for a, s, n in stmt.box]
    out = {}
    for pt in itertools.product(*axes):
        row = []
        for x in stmt.accesses:
            L = lays[x.slot]
            g = tuple(sum(a * i for a, i in zip(r, pt)) + c for r, c in zip(x.M, x.c))
            o = L.owner(g)
            loc = L.local_index(g)
            row.append((o, sum(s * l for s, l in zip(c_strides(L.local_shape(o)), loc))))
        out[pt] = row
    return out


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(statements(), st.sampled_from(["write", "cost"]))
def test_pieces_exact(sl, owner):
    stmt, lays = sl
    p = plan(stmt, lays, owner)
    truth = _brute(stmt, lays)
    seen = {}
    for e, lp in enumerate(p.locales):
        assert lp.locale == e
        for t in lp.tasks:
            lats = lp.pieces[t.piece]
            values = [lat.values() for lat in lats]
            pts = list(itertools.product(*[range(len(v)) for v in values]))
            for a, ref in enumerate(t.refs):
                offs = expand(ref.offset, t.shape, ref.strides)
                for n, idx in enumerate(itertools.product(*[range(k) for k in t.shape])):
                    pt = tuple(lat.first + lat.dt * idx[2 * v] + lat.du * idx[2 * v + 1] for v, lat in enumerate(lats))
                    assert truth[pt][a] == (ref.owner, offs[n])
                    if a == 0:
                        assert pt not in seen
                        seen[pt] = e
                assert (ref.msg >= 0) == (ref.owner != e)
            assert truth[pt][p.owning][0] == e if pts else True
    assert set(seen) == set(truth)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(statements())
def test_buffers_hold_the_right_elements(sl):
    """Every remote ref's buffer view picks exactly its LMAD's elements out of its message."""
    stmt, lays = sl
    p = plan(stmt, lays, "cost")
    for e, lp in enumerate(p.locales):
        bufs = {}
        for kind, msgs in (("f", lp.fetches), ("w", lp.writebacks)):
            for i, m in enumerate(msgs):
                assert m.peer != e
                bufs[(kind, i)] = np.concatenate([expand(o, c, s) for o, c, s in m.regions] or [np.zeros(0, int)])
                assert len(bufs[(kind, i)]) == m.size
            if kind == "w":
                for m in msgs:     # write-back regions never overlap
                    allw = np.concatenate([expand(o, c, s) for o, c, s in m.regions])
                    assert len(np.unique(allw)) == len(allw)
        for t in lp.tasks:
            for a, ref in enumerate(t.refs):
                if ref.msg < 0:
                    continue
                kind = "w" if a == stmt.write else "f"
                buf = bufs[(kind, ref.msg)]
                got = buf[expand(ref.boffset, t.shape, ref.bstrides)]
                assert np.array_equal(got, expand(ref.offset, t.shape, ref.strides))
        # the bound: one message per (other locale, array) read and per (other locale) written
        keys = [(m.peer, m.slot) for m in lp.fetches]
        assert len(keys) == len(set(keys))
        assert len(lp.writebacks) == len({m.peer for m in lp.writebacks})


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(statements(separable=False))
def test_inspector_gathers(sl):
    stmt, lays = sl
    p = plan(stmt, lays)
    truth = _brute(stmt, lays)
    pts = list(itertools.product(*[range(a, a + s * n, s) for a, s, n in stmt.box]))
    if p.kind != "inspector":
        return
    execs = [truth[pt][0][0] for pt in pts]
    for e, lp in enumerate(p.locales):
        lp = lp.inspector
        mine = [pt for pt, x in zip(pts, execs) if x == e]
        assert lp.count == len(mine)
        for most in (3, 1 << 20):                    # chunks of 3 points of the box, one chunk
            got = [[] for _ in stmt.accesses]
            for chunk in lp.chunks(most):
                for a, g in enumerate(chunk.gathers):
                    part = [None] * chunk.count
                    for pos, off in zip(g.local_pos, g.local_off):
                        part[pos] = (e, off)
                    for i, pos, bpos in g.remote:
                        m = lp.fetches[i]
                        for q, b in zip(pos, bpos):
                            part[q] = (m.peer, m.offsets[b])
                    got[a] += part
            for a in range(len(stmt.accesses)):
                assert got[a] == [tuple(truth[pt][a]) for pt in mine]


def test_period_does_not_depend_on_extent():
    """Doubling the extent leaves the pieces and messages of a Cyclic stencil unchanged."""
    counts = []
    for n in (64, 128, 256):
        L = Cyclic().bind((n, n), 4)
        acc = [Access(0, ((1, 0), (0, 1)), (1, 1))] + [Access(1, ((1, 0), (0, 1)), c)
                                                      for c in [(0, 1), (2, 1), (1, 0), (1, 2)]]
        s = Statement(((0, 1, n - 2), (0, 1, n - 2)), acc, 0)
        p = plan(s, (L, L))
        counts.append((len(p.pieces), p.messages))
    assert counts[0] == counts[1] == counts[2] == (4, 8)


def test_jacobi_paper_figure6():
    """Jacobi-2D 8x8 on a Cyclic 2x2 grid: 4 pieces of 9 points; each locale fetches the
    union of A[i+-1, j] from one locale and of A[i, j+-1] from another."""
    L = Cyclic((2, 2)).bind((8, 8), 4)
    acc = [Access(0, ((1, 0), (0, 1)), (1, 1))] + [Access(1, ((1, 0), (0, 1)), c)
                                                  for c in [(0, 1), (2, 1), (1, 0), (1, 2)]]
    p = plan(Statement(((0, 1, 6), (0, 1, 6)), acc, 0), (L, L))
    assert [int(np.prod(t.shape)) for lp in p.locales for t in lp.tasks] == [9, 9, 9, 9]
    assert p.messages == 8
    text = describe(p, ["Anew", "A"])
    assert "owning access Anew[i + 1, j + 1]" in text and "messages: 8" in text


def test_local_plans_at_many_locales():
    """A locale's plan of a shifted Cyclic copy at 1024 locales: one piece, one message,
    one reader; the plans of all locales together have 1024 pieces and messages."""
    L = Cyclic().bind((10**6,), 1024)
    s = Statement(((0, 1, 10**6 - 1),), (Access(0, ((1,),), (1,)), Access(1, ((1,),), (0,))), 0)
    lp = plan_local(s, (L, L), 0, 5)
    assert len(lp.pieces) == 1 and lp.messages == 1 and lp.fetches[0].peer == 4 and lp.readers == (6,)
    p = plan(s, (L, L))
    assert len(p.pieces) == 1024 and p.messages == 1024


def test_cost_model_picks_the_access_that_moves_least():
    """A[i] = B[i] + B[i] + C[i]: with B and C on another layout, owning by B moves less."""
    LA = Block().bind((40,), 4)
    LB = Cyclic().bind((40,), 4)
    acc = [Access(0, ((1,),), (0,)), Access(1, ((1,),), (0,)), Access(1, ((1,),), (0,)), Access(2, ((1,),), (0,))]
    s = Statement(((0, 1, 40),), acc, 0)
    pw, pc = plan(s, (LA, LB, LB)), plan(s, (LA, LB, LB), "cost")
    assert pc.owning == 1 and pc.moved < pw.moved
    assert "chosen by cost" in describe(pc, "ABC")


def test_errors():
    L = Block().bind((10,), 2)
    with pytest.raises(PlanError, match="reaches index 10"):
        plan(Statement(((0, 1, 10),), (Access(0, ((1,),), (1,)),), 0), (L,))
    with pytest.raises(PlanError, match="in-place operator"):
        Statement(((0, 1, 3), (0, 1, 3)), (Access(0, ((1, 0),), (0,)),), 0)
    with pytest.raises(PlanError, match="A\\[i \\+ j\\].*reduce into it"):
        Statement(((0, 1, 3), (0, 1, 3)), (Access(0, ((1, 1),), (0,)),), 0)


def test_plans_are_cached():
    L = Cyclic().bind((100,), 3)
    s = Statement(((0, 1, 99),), (Access(0, ((1,),), (1,)), Access(1, ((1,),), (0,))), 0)
    assert plan_local(s, (L, L), 0, 1) is plan_local(s, (Cyclic().bind((100,), 3),) * 2, 0, 1)


@st.composite
def reductions(draw):
    """``x[a*i + c] op= f(A[i, j] or A[j, i], y[j])`` on random distributions and locale counts."""
    P = draw(st.integers(1, 6))
    n, m = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    a = draw(st.sampled_from([1, 2, -1]))
    cx = n - 1 if a < 0 else draw(st.integers(0, 2))
    step = draw(st.sampled_from([1, 2, -1]))
    box = ((0, 1, n), ((m - 1) * 2 if step < 0 else 0, 2 * step if step < 0 else step, m))
    jmax = box[1][0] + (box[1][1] * (m - 1) if step > 0 else 0)

    def dist(ndim):
        kind = draw(st.sampled_from(["block", "cyclic", "bc"]))
        grid = None
        if ndim == 2 and P in (4, 6):
            grid = draw(st.sampled_from([None, (2, P // 2), (1, P)]))
        return _dist(kind, draw(st.integers(1, 4)), grid)

    tr = draw(st.booleans())
    M_A = ((0, 1), (1, 0)) if tr else ((1, 0), (0, 1))
    shape_A = (jmax + 1, n) if tr else (n, jmax + 1)
    acc = (Access(0, ((a, 0),), (cx,)), Access(1, M_A, (0, 0)), Access(2, ((0, 1),), (0,)))
    lays = (dist(1).bind((max(cx + a * (n - 1), cx) + 1,), P), dist(2).bind(shape_A, P), dist(1).bind((jmax + 1,), P))
    return Statement(box, acc, 0, draw(st.sampled_from(["add", "minimum", "bitwise_xor"]))), lays


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(reductions())
def test_accumulate_plans_cover_each_contribution(sl):
    """Replaying a plan with one unit per iteration: every written element receives, through
    local stores and accumulate buffers, exactly the iterations that write it; accumulate
    regions never overlap within a message and the message bound holds."""
    stmt, lays = sl
    p = plan(stmt, lays, "cost")
    truth = _brute(stmt, lays)
    want = {}
    for row in truth.values():
        want[row[0]] = want.get(row[0], 0) + 1
    got = {}
    axes = p.reduce_axes
    for e, lp in enumerate(p.locales):
        bufs = [np.zeros(m.size, int) for m in lp.writebacks]
        for t in lp.tasks:
            ref = t.refs[0]
            ones = np.ones(t.shape, int).sum(axis=axes, keepdims=True) if axes else np.ones(t.shape, int)
            offs = expand(ref.offset, ones.shape, ref.strides)
            if ref.msg < 0:
                for o, v in zip(offs.tolist(), ones.reshape(-1).tolist()):
                    got[(e, o)] = got.get((e, o), 0) + v
            else:
                assert p.accumulate or not axes
                pos = expand(ref.boffset, ones.shape, ref.bstrides)
                np.add.at(bufs[ref.msg], pos, ones.reshape(-1))
        for m, buf in zip(lp.writebacks, bufs):
            allw = np.concatenate([expand(o, c, s) for o, c, s in m.regions])
            assert len(np.unique(allw)) == len(allw)
            for o, v in zip(allw.tolist(), buf.tolist()):
                got[(m.peer, o)] = got.get((m.peer, o), 0) + v
        assert len(lp.writebacks) == len({m.peer for m in lp.writebacks})
        assert len(lp.fetches) == len({(m.peer, m.slot) for m in lp.fetches})
    assert {k: v for k, v in got.items() if v} == want
    if p.accumulate:
        assert p.owning != stmt.write and p.candidates[0][0] == stmt.write
        assert p.moved <= p.candidates[0][1]


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(statements(), st.sampled_from(["write", "cost"]))
def test_peers_are_exactly_the_locales_that_talk(sl, owner):
    """Each locale's readers and writers, found from its own memory alone, are exactly the
    locales whose plans fetch from it or write back into it."""
    stmt, lays = sl
    p = plan(stmt, lays, owner)
    for e, lp in enumerate(p.locales):
        readers = {r for r, o in enumerate(p.locales) if any(m.peer == e for m in o.fetches)}
        writers = {r for r, o in enumerate(p.locales) if any(m.peer == e for m in o.writebacks)}
        assert (set(lp.readers), set(lp.writers)) == (readers, writers)


@pytest.mark.parametrize("kinds", [("block", "cyclic"), ("cyclic", "block"), ("block", "bc"), ("bc", "cyclic")])
def test_mixed_layouts_piece_count_does_not_grow_with_extent(kinds):
    """A 5-point stencil reading one distribution and writing another is cut into the
    same few pieces whatever the extent (it was (n-2)^2 pieces with Block mixed in)."""
    counts = []
    for n in (32, 64, 128):
        LA, LB = (_dist(k, 4, None).bind((n, n), 4) for k in kinds)
        acc = [Access(0, ((1, 0), (0, 1)), (1, 1))] + [Access(1, ((1, 0), (0, 1)), c)
                                                      for c in [(0, 1), (2, 1), (1, 0), (1, 2), (1, 1)]]
        p = plan(Statement(((0, 1, n - 2), (0, 1, n - 2)), acc, 0), (LA, LB))
        counts.append(len(p.pieces))
    assert counts[0] == counts[1] == counts[2] and counts[0] <= 256, counts


@st.composite
def var_cases(draw):
    step = draw(st.sampled_from([1, 1, 2, 3, -1, -2]))
    count = draw(st.integers(0, 40))
    start = draw(st.integers(0, 5)) if step > 0 else draw(st.integers(80, 120))
    terms = []
    for _ in range(draw(st.integers(1, 3))):
        a = draw(st.sampled_from([1, 1, 2, -1, 3]))
        p = draw(st.integers(1, 4))
        b = draw(st.sampled_from([1, 2, 3, 5, 50]))
        c = -min([a * (start + step * k) for k in range(count)] + [0]) + draw(st.integers(0, 3))
        terms.append((a, c, DimMap(500, p, b)))
    fixed = tuple((i, draw(st.integers(0, terms[i][2].p - 1))) for i in range(len(terms)) if draw(st.booleans()))
    return start, step, count, terms, fixed


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(var_cases())
def test_var_lattices_against_brute_force(case):
    """The lattices of one loop variable cover exactly the iterations where the fixed
    terms lie on their coordinates, once each, with one owner per term on each."""
    start, step, count, terms, fixed = case
    seen = []
    for k0, n, T, nt in var_lattices(start, step, count, terms, fixed):
        ks = [k0 + u + T * t for t in range(nt) for u in range(n)]
        assert len({tuple(m.owner(a * (start + step * k) + c) for a, c, m in terms) for k in ks}) == 1
        seen += ks
    want = [k for k in range(count)
            if all(terms[i][2].owner(terms[i][0] * (start + step * k) + terms[i][1]) == q for i, q in fixed)]
    assert sorted(seen) == want

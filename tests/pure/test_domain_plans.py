"""Plans of pg.forall's non-rectangular domains, checked by the pure planner (no MPI):
the message bound of a triangle against its bounding rectangle, clipped pieces that do
not grow with n and move their tight footprint, bands for transposed reads, and which
bounds are detected as affine.  Run once here rather than at every locale count."""

import math

import numpy as np
import pytest

from pgas.exec.domain import resolve_parts, resolve
from pgas.layout import Block, BlockCyclic, Cyclic
from pgas.plan import Access, Statement, plan
from pgas.plan.inspector import box_points, global_indices

DISTS = [Cyclic(), Block(), BlockCyclic(2), BlockCyclic(3)]


def points(dom):
    """Every point of a domain tuple by nested Python loops."""
    out = [()]
    for item in dom:
        new = []
        for p in out:
            r = item(*p[:item.__code__.co_argcount]) if callable(item) else item
            new += [p + (x,) for x in (range(r) if isinstance(r, int) else r)]
        out = new
    return out


def test_plan_keeps_message_bound():
    """A triangle's statement sends at most one message per (locale, peer, array),
    like its bounding rectangle, and moves no more; as clipped pieces and as
    rectangular rows alike."""
    n, P = 64, 4
    for dist in DISTS:
        L = dist.bind((n, n), P)
        accs = (Access(0, ((1, 0), (0, 1)), (0, 0)), Access(1, ((0, 1), (1, 0)), (0, 0)))
        tri = resolve((range(n), lambda i: range(i + 1, n)))
        rows = resolve_parts(tri.items)
        s_box = Statement(((0, 1, n), (0, 1, n)), accs, 0)
        g_box = plan(s_box, (L, L))
        for s_tri in (Statement(tri.box, accs, 0, None, (), tri.clips, tri.count),
                      Statement(rows.box, accs, 0, None, rows.parts)):
            g_tri = plan(s_tri, (L, L))
            assert s_tri.size == n * (n - 1) // 2
            assert g_tri.messages <= P * (P - 1)
            assert g_tri.messages <= g_box.messages and g_tri.moved <= g_box.moved


def _tight(stmt, layouts, per_access=False):
    """Distinct (executing locale, remote element) pairs the statement needs, by
    looking at every point: the fewest elements any plan can move (with
    ``per_access``, counted once per access that reads the element)."""
    pts = box_points(stmt)
    W = stmt.accesses[stmt.write]
    ex = np.broadcast_to(np.asarray(layouts[W.slot].owners(global_indices(W, pts))), (stmt.size,))
    need = set()
    for k, x in enumerate(stmt.accesses):
        if k != stmt.write:
            g = global_indices(x, pts)
            ow = np.broadcast_to(np.asarray(layouts[x.slot].owners(g)), (stmt.size,))
            far = np.flatnonzero(ow != ex)
            need |= {(int(ex[p]), x.slot, k if per_access else -1) + tuple(int(a[p]) for a in g) for p in far}
    return len(need)


CHOL = ((lambda n: (range(3, n), lambda i: range(3, i + 1))),
        (Access(0, ((1, 0), (0, 1)), (0, 0)), Access(0, ((1, 0), (0, 0)), (0, 3)),
         Access(0, ((0, 1), (0, 0)), (0, 3))), "subtract", lambda n: [(n, n)])
SYRK = ((lambda n: (range(n), lambda i: range(i + 1), range(6))),
        (Access(0, ((1, 0, 0), (0, 1, 0)), (0, 0)), Access(1, ((1, 0, 0), (0, 0, 1)), (0, 0)),
         Access(1, ((0, 1, 0), (0, 0, 1)), (0, 0))), "add", lambda n: [(n, n), (n, 6)])


@pytest.mark.parametrize("case", [CHOL, SYRK], ids=["cholesky", "syrk"])
@pytest.mark.parametrize("P", [2, 3, 4, 6])
def test_clipped_pieces_do_not_grow_with_n_and_footprints_are_tight(case, P):
    """Clipped triangles: the pieces per locale do not grow with n, one message per
    (locale, peer, array), and an access through one variable of each clip (the
    Cholesky update's A[i, k], A[j, k], syrk's A[i, k], A[j, k]) moves exactly its
    tight footprint (an element two accesses read moves twice if their lattices
    differ, as for rectangles)."""
    dom, accs, red, shapes = case
    for dist in DISTS:
        npieces = []
        for n in (24, 48, 96):
            D = resolve(dom(n))
            assert D.clips and not D.parts
            s = Statement(D.box, accs, 0, red, (), D.clips, D.count)
            lay = tuple(dist.bind(sh, P) for sh in shapes(n))
            g = plan(s, lay)
            npieces.append(max(len(lp.pieces) for lp in g.locales))
            for lp in g.locales:
                keys = [(m.peer, m.slot) for m in lp.fetches]
                assert len(keys) == len(set(keys))
            b = max(dist.block) if dist.kind == "block-cyclic" else 1
            far = sum(r.owner != lp.locale for lp in g.locales for t in lp.tasks for r in t.refs)
            slack = (b - 1) * far                     # the hull of a block's part of a piece
            assert _tight(s, lay) <= g.moved <= _tight(s, lay, per_access=True) + slack
            if P in (2, 4) and not slack:
                assert g.moved == _tight(s, lay)
        assert npieces[2] <= npieces[0] + 2, npieces


def test_transposed_triangle_is_cut_into_bands():
    """A read through both variables of a clip (``B[j, i]`` over ``j > i``): each
    piece is cut into at most BANDS bands along ``i``, so the pieces still do not
    grow with n, and the bands' hulls move little more than the tight footprint."""
    from pgas.plan.clip import BANDS
    P = 4
    accs = (Access(0, ((1, 0), (0, 1)), (0, 0)), Access(1, ((0, 1), (1, 0)), (0, 0)))
    for dist in DISTS:
        npieces = []
        for n in (48, 96, 192):
            L = dist.bind((n, n), P)
            D = resolve((range(n), lambda i: range(i + 1, n)))
            s = Statement(D.box, accs, 0, None, (), D.clips, D.count)
            g = plan(s, (L, L))
            npieces.append(max(len(lp.pieces) for lp in g.locales))
            tight = _tight(s, (L, L))
            assert tight <= g.moved <= tight * (1 + 2 / BANDS) and g.moved <= plan(Statement(D.box, accs, 0),
                                                                                 (L, L)).moved
        assert npieces[2] <= npieces[1] + 2, npieces


def test_affine_detection():
    """Affine bounds clip; bounds that are not affine, or depend on a dependent
    variable, fall back to rectangular parts."""
    n = 9
    for dom in [(range(n), lambda i: range(i + 1, n)), (range(n), lambda i: range(i)),
                (range(2, n), lambda i: range(2, i + 1)), (range(n), range(3), lambda i: range(i, 2 * i + 1)),
                (range(0, n, 2), lambda i: range(i, n, 2)), (range(n), lambda i: range(i + 1), range(4)),
                (range(5), range(4), lambda i: range(i), lambda i, j: range(j, 5)),
                (range(n - 1, -1, -2), lambda i: range(i + 1, n))]:
        D = resolve(dom)
        assert D.clips and not D.parts and D.count == len(points(dom))
    for dom in [(range(n), lambda i: range(max(0, i - 2), i)), (range(n), lambda i: range(i % 2, n, 2)),
                (range(n), lambda i: range(i), lambda i, j: range(j))]:
        D = resolve(dom)
        assert not D.clips
        assert sum(math.prod(c for _, _, c in b) for b in (D.parts or (D.box,))) == len(points(dom))

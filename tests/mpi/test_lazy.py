"""Unassigned expressions keep NumPy's eager meaning: they are materialised before
any collective write to an array they read (statements, scalar writes, in-place
ufuncs, update, scatter).

Also: expressions dropped or held across writes, stale used expressions refused, and
expressions indexed or used as values."""

import warnings

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg
from pgas import comm
from pgas.array import engine


def test_pending_expressions_see_values_before_later_writes():
    G = np.arange(10.0)
    A = pg.from_numpy(G, dist=pg.Cyclic())
    B = A[1:] + A[:-1]
    A[3] = 100.0
    C = A[1:] * 2
    A += A
    D = A[:5] - 1
    mine = np.array([0]) if pg.here == 0 else np.array([], dtype=np.int64)
    A.update(mine, np.ones(len(mine)))
    E = A[::2] + 0
    A.scatter(mine, np.full(len(mine), -7.0))
    G2 = G.copy()
    e1 = G[1:] + G[:-1]
    G2[3] = 100.0
    e2 = G2[1:] * 2
    G2 += G2
    e3 = G2[:5] - 1
    G2[0] += 1.0
    e4 = G2[::2] + 0
    G2[0] = -7.0
    assert_matches(A, G2)
    for lazy, expect in ((B, e1), (C, e2), (D, e3), (E, e4)):
        assert_matches(lazy.eval(), expect)


def outcome(fn):
    """``("ok", value)`` or ``("err", exception type name)``."""
    try:
        return "ok", fn()
    except Exception as e:                       # noqa: BLE001 - compared with NumPy's
        return "err", type(e).__name__


def same_as_numpy(got_fn, want_fn, tag):
    """Collective: ``got_fn()`` (a DistArray or NumPy result) equals ``want_fn()``, or both raise
    the same exception type; every locale must agree on the outcome."""
    want = outcome(want_fn)
    got = outcome(lambda: (lambda r: r.to_numpy() if hasattr(r, "to_numpy") else np.asarray(r))(got_fn()))
    if want[0] == "err" or got[0] == "err":
        ok, why = got == want, f"{tag}: got {got}, NumPy {want}"
    else:
        g, w = got[1], np.asarray(want[1])
        ok = g.shape == w.shape and g.dtype == w.dtype and np.array_equal(g, w, equal_nan=g.dtype.kind in "fc")
        why = f"{tag}: got {g!r}, NumPy {w!r}"
    kinds = comm.allgather(got[0] if got[0] == "ok" else got[1])
    collective_verdict(len(set(kinds)) == 1, f"{tag}: locales disagree: {kinds}")
    collective_verdict(ok, why)


def test_lazy_expressions_indexed_and_as_values():
    G = np.arange(7.)

    def f1():
        A = pg.from_numpy(G)
        E = A[:] + 1
        A[[0, 1]] = 9.
        return E[[0, 1, -1]]
    same_as_numpy(f1, lambda: (G + 1)[[0, 1, -1]], "pending expression indexed after a write")

    def f2():
        A = pg.from_numpy(G)
        E = A[1:] * 2
        A[A > 2] = 0.
        return E[E > 4]
    same_as_numpy(f2, lambda: (G[1:] * 2)[G[1:] * 2 > 4], "pending expression masked by itself after a write")

    def f3():
        A = pg.from_numpy(G)
        E = A[:] + 1
        A[[0, 1]] = E[[1, 0]]
        return A
    y = G.copy()
    y[[0, 1]] = (G + 1)[[1, 0]]
    same_as_numpy(f3, lambda: y, "value: a pending expression indexed")

    def f4():
        A = pg.from_numpy(G)
        E = A[:] * 1
        A[pg.from_numpy(np.array([0, 0]))] = E[2:4]
        return A
    z = G.copy()
    z[[0, 0]] = G[2:4]
    same_as_numpy(f4, lambda: z, "distributed key, value a pending view expression")
    same_as_numpy(lambda: (lambda V: V[V > 3])(pg.from_numpy(G)[1:]), lambda: G[1:][G[1:] > 3], "view masked")


@pytest.fixture
def _defaults():
    pg.config()
    yield
    pg.config()


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("how", ["operator", "ufunc", "where"])
def test_expression_built_on_a_stale_used_subexpression(how):
    # Regression (pgas/array/expr.py Expr.__init__): E was
    # used (so no longer pending), its operand A was then written, and F = E * 2 took its
    # read set from E with A's *current* version: F silently computed from the new A
    # ([12, 12, ...] instead of [4, 6, ...]), where E.eval() itself raises StaleExpression.
    # Silent wrong answer at every locale count.
    from pgas.array.engine import StaleExpression

    a = np.arange(6.0)
    A = pg.from_numpy(a.copy())
    E = A[1:] + 1
    G = E + 0                         # E used: not pending any more, not evaluated
    A[:] = 5.0                        # G (pending) is materialised first; E is now stale
    want = (a[1:] + 1) * 2
    try:
        F = E * 2 if how == "operator" else np.multiply(E, 2) if how == "ufunc" else pg.where(E > 0, E * 2, 0.0)
        got = F.to_numpy()
        why = None if np.array_equal(got, want) else f"got {got}, expected {want} or StaleExpression"
    except StaleExpression:
        why = None
    collective_verdict(why is None, lambda: why)
    assert_matches(G, a[1:] + 1)


@pytest.mark.usefixtures("_defaults")
def test_assigning_a_stale_used_expression():
    # Regression (pgas/array/engine.py assign): B[:] = E with
    # E used and its operand A written since assigned the new A's result ([6, 6, ...] instead
    # of [2, 3, ...]) silently; E.eval() and np.add(E, 0, out=C) raise StaleExpression.
    from pgas.array.engine import StaleExpression

    a = np.arange(6.0)
    A, B = pg.from_numpy(a.copy()), pg.zeros(5)
    E = A[1:] + 1
    G = E + 0
    A[:] = 5.0
    try:
        B[:] = E
        got = B.to_numpy()
        why = None if np.array_equal(got, a[1:] + 1) else f"got {got}, expected {a[1:] + 1} or StaleExpression"
    except StaleExpression:
        why = None
    collective_verdict(why is None, lambda: why)
    assert_matches(G, a[1:] + 1)
    B[:] = A[1:] * 2                  # a fresh expression still assigns
    assert_matches(B, np.full(5, 10.0))


P = pg.num_locales


def _fresh(k):
    """An array of a size no other test makes: the window pool misses, so it collects."""
    return pg.zeros(977 + 31 * k + 7 * P)


def test_dropped_pending_expressions_are_forgotten_but_held_ones_keep_old_values():
    """Expressions held in every way a program holds them (a list, a closure cell, a
    suspended generator, an attribute, a nested tree) survive the agreed forgetting and
    keep the values of before a collective write; the dropped ones are forgotten."""
    A = pg.from_numpy(np.arange(10.0))
    old = np.arange(10.0)
    keep = [A[1:] + A[:-1]]

    def closure():
        x = A[1:] * 3
        return lambda: x

    def gen():
        y = A[:-1] - 1
        yield 1
        yield y

    c, g = closure(), gen()
    next(g)

    class Box:
        pass

    box = Box()
    box.e = A[2:] * A[:-2]
    nested = (A[1:] + 1) * 2
    for k in range(3):
        A[1:] + A[:-1]                                   # built and dropped at once
    n0 = len(engine._pending)
    for k in range(3):
        _fresh(k)
    collective_verdict(len(engine._pending) == n0 - 3, f"{n0} pending, {len(engine._pending)} after collecting")
    A[:] = -5.0
    assert_matches(keep[0].eval(), old[1:] + old[:-1])
    assert_matches(c().eval(), old[1:] * 3)
    assert_matches(next(g).eval(), old[:-1] - 1)
    assert_matches(box.e.eval(), old[2:] * old[:-2])
    assert_matches(nested.eval(), (old[1:] + 1) * 2)


def test_one_sided_write_to_an_operand_of_a_used_unevaluated_expression_warns_or_keeps_old_values():
    """The locales agree at pg.barrier() on the arrays written one-sided, and count a
    write of each, so E raises StaleExpression, as after a collective write, instead of
    reading the put's value."""
    A = pg.from_numpy(np.arange(10.0))
    B = pg.zeros(9)
    E = A[1:] + A[:-1]
    B[:] = E                                             # E used, not evaluated
    warned = False
    if pg.here == 0:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            A.put(3, 100.0)
        warned = any(issubclass(x.category, pg.PendingExpressionWarning) for x in w)
    pg.barrier()
    try:
        got = E.eval().to_numpy()
    except pg.StaleExpression:
        got = None
    old = np.arange(10.0)
    ok = warned if pg.here == 0 else True
    kept = got is None or np.array_equal(got, old[1:] + old[:-1])
    collective_verdict(ok or kept, f"no warning, and E read the put's value: {got}")

"""Collective operations whose exchange (:func:`pgas.comm.exchange`) carries their agreement:
under the default, folded collective call checking, ``gather``, ``scatter``, ``index_plan``,
``A[idx] = v``, axis reductions to an array, scans and ``to_numpy(root=...)`` only fold the
call, and the exchange that moves their data agrees on it and on every locale's error;
``searchsorted`` gathers each locale's first element in its agreement; ``gather(plan)`` is
agreed the first time a plan is used with an array, as a ghost update is.  Counted per call,
and their errors and mismatched calls raised alike on every locale, whether every pair of
locales messages (dense) or only non-empty parts travel, ended by a consensus (sparse)."""

from __future__ import annotations

import numpy as np
import pytest

import pgas as pg
from pgas import comm
from pgas.comm import counters, window
from util import collective_verdict, raised_everywhere

P = comm.num_locales()
ME = comm.here()
N = 16 * max(P, 2)
several = pytest.mark.skipif(P == 1, reason="a mismatch needs two locales")


def _arrays():
    A = pg.from_numpy(np.arange(N, dtype=np.float64), dist=pg.Block(), name="A")
    S = pg.from_numpy(np.sort(np.random.default_rng(3).random(N)), dist=pg.Block(), name="S")
    M = pg.from_numpy(np.ones((N, 4)), dist=pg.Block(), name="M")
    V = pg.from_numpy(np.random.default_rng(4).random(N), dist=pg.Cyclic(), name="V")
    return A, S, M, V


#: Global collectives (other than barriers) per call, after a first call: (at one locale, dense,
#: sparse), and barriers per call; the window pool's own reductions (:func:`pgas.comm.window.collect`,
#: made where its decision does not ride in a new array's agreement) left out.  A new result array costs one
#: (the agreement before its window is made), a sparse exchange one (its consensus).
COUNTS = {
    "gather": ((0, 0, 1), 0),             # the index plan's exchange, then replies between peers
    "scatter": ((0, 0, 1), 0),
    "index_plan": ((0, 0, 1), 0),
    "gather-plan": ((0, 0, 0), 0),        # peers only, agreed at the first call by the plan
    "setitem": ((0, 0, 1), 0),            # A[idx] = v: one scatter
    "getitem": ((0, 1, 2), 1),            # A[idx]: a new array (its agreement agrees on the call), a gather
    "searchsorted": ((2, 2, 4), 1),       # the agreement with the first elements, two exchanges, a new array
    "searchsorted-numpy": ((3, 2, 2), 0),  # the agreement with the first elements, one allreduce
    "sum-axis": ((0, 1, 2), 1),           # one exchange, a new array
    "cumsum": ((0, 1, 2), 1),
    "to_numpy-root": ((0, 0, 1), 0),
}


@pytest.mark.parametrize("op", list(COUNTS))
def test_synchronisations_per_call(exchange_kind, op, monkeypatch):
    """Each operation's global collectives and barriers per call under folded checking: none
    of its own to agree on the call (the exchange carries it) but where a scalar or a new
    array needs one; its results still NumPy's."""
    A, S, M, V = _arrays()
    idx = np.random.default_rng([7, ME]).integers(0, N, 12)
    every = np.random.default_rng(8).integers(0, N, 12)
    plan = A.index_plan(idx)
    x = np.arange(N, dtype=np.float64)
    calls = {"gather": lambda: A.gather(idx), "scatter": lambda: A.scatter(idx, -1.0),
             "index_plan": lambda: A.index_plan(idx), "gather-plan": lambda: A.gather(plan),
             "setitem": lambda: A.__setitem__(every, -2.0), "getitem": lambda: A[every],
             "searchsorted": lambda: np.searchsorted(S, V), "searchsorted-numpy": lambda: np.searchsorted(S, x / N),
             "sum-axis": lambda: M.sum(axis=0), "cumsum": lambda: A.cumsum(), "to_numpy-root": lambda: A.to_numpy(0)}
    call = calls[op]
    pool, collect = [0], window.collect

    def counted_collect(*carried):
        before = counters.collectives()
        collect(*carried)
        pool[0] += counters.collectives() - before
    monkeypatch.setattr(window, "collect", counted_collect)
    pg.config(check="auto")
    try:
        got = call()
        calls_made = 3
        with pg.comm_diagnostics() as d:
            for _ in range(calls_made):
                got = call()
    finally:
        pg.config()
    (one, dense, sparse), barriers = COUNTS[op]
    want = one if P == 1 else sparse if exchange_kind == "sparse" else dense
    own = d.collectives - max(comm.allgather(pool[0]))
    collective_verdict(own == want * calls_made and d.barriers == barriers * calls_made,
                       lambda: f"{op}: {own / calls_made} collectives, {d.barriers / calls_made} "
                               f"barriers per call; expected {want} and {barriers}")
    s = np.sort(np.random.default_rng(3).random(N))
    v = np.random.default_rng(4).random(N)
    a = A.to_numpy()
    expected = {"gather": lambda: a[idx], "gather-plan": lambda: a[idx], "getitem": lambda: a[every],
                "searchsorted": lambda: np.searchsorted(s, v), "searchsorted-numpy": lambda: np.searchsorted(s, x / N),
                "sum-axis": lambda: np.full(4, float(N)), "cumsum": lambda: np.cumsum(a),
                "to_numpy-root": lambda: a if ME == 0 else None}
    if op in expected:
        mine = got.to_numpy() if hasattr(got, "to_numpy") else got
        want_v = expected[op]()
        ok = mine is None if want_v is None else np.array_equal(mine, want_v)
        collective_verdict(ok, lambda: f"{op}: got {mine}, NumPy {want_v}")


def _in_step(A) -> None:
    collective_verdict(A.sum() == A.sum(), "not in step after the error")


@several
@pytest.mark.parametrize("op", ["gather", "scatter", "index_plan", "update"])
def test_bad_index_on_one_locale(folding, exchange_kind, op):
    """An index out of range on the last locale only raises IndexError on every locale, each
    message naming that locale (the exchange carries its status: no agreement first)."""
    A, *_ = _arrays()
    idx = np.array([0, N + 5 if ME == P - 1 else 1])
    call = {"gather": lambda: A.gather(idx), "scatter": lambda: A.scatter(idx, 1.0),
            "index_plan": lambda: A.index_plan(idx), "update": lambda: A.update(idx, 1.0)}[op]
    text = raised_everywhere(call, IndexError)
    collective_verdict(f"on locale {P - 1}" in text and str(N + 5) in text, f"message {text!r}")
    _in_step(A)


@several
@pytest.mark.parametrize("case", ["gather-scatter", "gather-plans", "setitem-keys", "getitem-keys", "cumsum-cumprod",
                                  "sum-axis", "root", "searchsorted-side"])
def test_calls_differ(folding, exchange_kind, case):
    """Locales making different calls (or the same with other arguments) that only fold them
    meet in the exchange, or in the first agreement by a plan, and raise CollectiveMismatch on
    every locale, naming the calls."""
    A, S, M, V = _arrays()
    B = pg.zeros(N, name="B")
    first = ME == 0
    plans = [A.index_plan(np.array([ME])), A.index_plan(np.array([N - 1 - ME]))]

    def job():
        if case == "gather-scatter":
            A.gather(np.array([1])) if first else A.scatter(np.array([1]), 1.0)
        elif case == "gather-plans":
            A.gather(plans[0] if first else plans[1])
        elif case == "setitem-keys":
            A[np.array([ME])] = 1.0
        elif case == "getitem-keys":
            A[np.array([ME, 0]) if first else np.array([N + 3, 0])]
        elif case == "cumsum-cumprod":
            A.cumsum() if first else A.cumprod()
        elif case == "sum-axis":
            M.sum(axis=0) if first else M.max(axis=0)
        elif case == "root":
            A.to_numpy(root=ME)
        else:
            np.searchsorted(S, V, side="left" if first else "middle")
        B[:] = 1
        return B.sum()

    text = raised_everywhere(job, pg.CollectiveMismatch)
    shown = {"gather-scatter": "A.gather(...)", "gather-plans": "A.gather(plan)", "cumsum-cumprod": "A.cumsum(",
             "sum-axis": "M.sum(axis=0)", "root": "A.to_numpy()", "searchsorted-side": "np.searchsorted(",
             "setitem-keys": "A[<index>] = ...", "getitem-keys": "A[<index>]"}[case]
    collective_verdict(f"called {shown}" in text, f"message {text!r}")
    _in_step(A)


@several
def test_reduction_error_on_one_locale(folding, exchange_kind):
    """An axis reduction's error on one locale only (its ``out=`` of another shape) raises the
    same ValueError on every locale: the partial results' exchange carries it (it hung: the
    others waited in the exchange)."""
    _, _, M, _ = _arrays()
    outs = [pg.zeros(4), pg.zeros(5)]
    text = raised_everywhere(lambda: M.sum(axis=0, out=outs[1] if ME == P - 1 else outs[0]), ValueError)
    collective_verdict(f"on locale {P - 1}" in text and "out=" in text, f"message {text!r}")
    _in_step(M)


@pytest.mark.parametrize("case", ["plan-layout", "root", "side", "key", "getitem-key"])
def test_replicated_errors(folding, exchange_kind, case):
    """Bad arguments given alike on every locale raise alike (after the call is agreed)."""
    A, S, M, V = _arrays()
    plan = pg.zeros(N + 1).index_plan(np.array([0]))
    call, kind = {"plan-layout": (lambda: A.gather(plan), ValueError),
                  "root": (lambda: A.to_numpy(root=P), ValueError),
                  "side": (lambda: np.searchsorted(S, V, side="middle"), ValueError),
                  "key": (lambda: A.__setitem__(np.array([0, N]), 1.0), IndexError),
                  "getitem-key": (lambda: A[np.array([0, N])], IndexError)}[case]
    raised_everywhere(call, kind)
    _in_step(A)


@pytest.fixture(params=[False, True, "auto"], ids=["unchecked", "strict", "folded"])
def any_checking(request):
    pg.config(check=request.param)
    try:
        yield request.param
    finally:
        pg.config()


@several
@pytest.mark.parametrize("case", ["sum", "mean", "var", "argmax", "cumsum", "cumsum-out"])
def test_argument_error_on_one_locale(any_checking, exchange_kind, case):
    """An axis out of range (or a scan's ``out=`` of another shape) on the last locale only,
    whatever the checking: the same error class and message on every locale (the axis's
    error, or CollectiveMismatch where the calls are compared first), never a hang (the
    others waited in the exchange of the partial results)."""
    _, _, M, _ = _arrays()
    axis = 5 if ME == P - 1 else 0
    outs = [pg.zeros((N, 4)), pg.zeros((N, 5))]
    call = {"sum": lambda: M.sum(axis=axis), "mean": lambda: M.mean(axis=axis), "var": lambda: M.var(axis=axis),
            "argmax": lambda: M.argmax(axis=axis), "cumsum": lambda: M.cumsum(axis=axis),
            "cumsum-out": lambda: M.cumsum(axis=0, out=outs[1] if ME == P - 1 else outs[0])}[case]
    try:
        call()
        got = None
    except (ValueError, pg.CollectiveMismatch) as e:
        got = (type(e).__name__, str(e))
    every = comm.allgather(got)
    collective_verdict(all(g is not None and g == every[0] for g in every), f"raised {every}")
    want = "called" if every[0][0] == "CollectiveMismatch" else "out=" if case == "cumsum-out" else "axis 5"
    collective_verdict(want in every[0][1] and (f"locale {P - 1}" in every[0][1] or every[0][0] != "AxisError"),
                       f"message {every[0]}")
    _in_step(M)

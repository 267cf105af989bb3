"""Floating-point and integer data errors under np.errstate / pg.errstate: raised,
warned or ignored as NumPy does, on every locale alike, in statements, forall bodies,
reductions, collectives and shifts, fused or not."""

import warnings

import numpy as np
import pytest
from util import assert_matches, collective_verdict
from util import raises_alike as _same_error

import pgas as pg

P = pg.num_locales


@pytest.fixture
def _defaults():
    pg.config()
    yield
    pg.config()


def _np_or_error(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                return f(), None
            except Exception as e:           # noqa: BLE001 - NumPy's error is the expected one
                return None, type(e)


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("where", ["first", "last", "none", "outside"])
@pytest.mark.parametrize("form", ["view", "expr", "eval", "float", "uint", "empty"])
def test_integer_power_negative_exponent_data(where, form):
    """``B[1:] = A[1:] ** X[:-1]`` with an integer exponent array holding a negative
    element on one locale only: NumPy raises ValueError.  Was: only the locale computing
    that element raised, the others went on (at 2+ locales a hang or divergence in the
    next collective).  Now every locale raises alike; a float base, an unsigned exponent,
    an empty box or a negative element outside the view run as NumPy does."""
    n = 3 * pg.num_locales + 2
    G = np.arange(n) % 5
    C = np.ones(n, dtype=np.int64)
    if where != "none":
        C[{"first": 0, "last": n - 2, "outside": n - 1}[where]] = -1
    if form == "float":
        G = G.astype(float)
    if form == "uint":
        C = C.astype(np.uint8)
    A, X = pg.from_numpy(G, dist=pg.Block()), pg.from_numpy(C, dist=pg.Block())
    B = pg.zeros(n, dtype=G.dtype, dist=pg.Cyclic())
    GB = np.zeros(n, dtype=G.dtype)
    s = slice(1, 1) if form == "empty" else slice(1, None)
    t = slice(0, 0) if form == "empty" else slice(None, -1)

    def run(B, A, X):
        if form == "expr":
            B[s] = A[s] ** (X[t] * 1)
        elif form == "eval":
            B[s] = (A[s] ** X[t]).eval() if hasattr(A, "_storage") else A[s] ** X[t]
        else:
            B[s] = A[s] ** X[t]
    _, err = _np_or_error(lambda: run(GB, G, C))
    if err is not None:
        _same_error(err, lambda: run(B, A, X), f"{form} {where}")
    else:
        run(B, A, X)
        assert_matches(B, GB)
    run(B, A, pg.from_numpy(np.abs(C), dist=pg.Cyclic()))      # then the same text runs
    run(GB, G, np.abs(C))
    assert_matches(B, GB)
    if err is not None:                                        # and fails again (its structure cached)
        _same_error(err, lambda: run(B, A, pg.from_numpy(C, dist=pg.Cyclic())), f"{form} {where} again")


@pytest.mark.usefixtures("_defaults")
def test_integer_power_explained_on_one_locale():
    """``pg.explain`` is local: explaining ``B[1:] = A[1:] ** X[:-1]`` (an integer power
    whose exponent's data a statement checks with a reduction) on locale 0 alone
    reduces nothing (no hang), and the statement then still checks its data."""
    n = 2 * pg.num_locales + 3
    C = np.ones(n, dtype=np.int64)
    C[0] = -1
    A, X = pg.from_numpy(np.arange(n), dist=pg.Block()), pg.from_numpy(C, dist=pg.Cyclic())
    B = pg.zeros(n, dtype=np.int64, dist=pg.Block())
    if pg.here == 0:
        text = pg.explain(lambda: B.__setitem__(slice(1, None), A[1:] ** X[:-1]))
        assert "A" in text or text
    pg.barrier()
    _same_error(ValueError, lambda: B.__setitem__(slice(1, None), A[1:] ** X[:-1]), "after explain")
    B[1:] = A[1:] ** (X[:-1] * X[:-1])
    assert_matches(B, np.r_[0, np.arange(1, n)])


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("case", [
    "forall_power",                 # fperr.deferring_powers: this hung at 2+ locales
    "errstate_raise"])
def test_data_errors_on_one_locale(case):
    """NumPy raises on data here; pgas raises only on the locale computing the bad
    element and the others wait for it: ``pg.forall`` with an integer power whose
    exponent array has a negative element (slice statements check it first, see
    :func:`pgas.array.collective.power_data`), and a statement under
    ``np.errstate(divide="raise")`` dividing by a zero held by one locale."""
    n = 4 * pg.num_locales
    A = pg.from_numpy(np.arange(n), dist=pg.Block())
    B = pg.zeros(n, dtype=np.int64 if case == "forall_power" else float, dist=pg.Block())
    if case == "forall_power":
        C = np.ones(n, dtype=np.int64)
        C[1] = -1
        X = pg.from_numpy(C, dist=pg.Block())

        def body(i):
            B[i] = A[i] ** X[i]
        _same_error(ValueError, lambda: pg.forall((range(n),), body), "forall power")
    else:
        def f():
            with np.errstate(divide="raise"):
                B[1:] = 1.0 / A[:-1]
        _same_error(FloatingPointError, f, "errstate raise")


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("where", ["statement", "eval", "forall", "forall_reduce", "out"])
def test_errstate_raise_on_every_locale(where, fuse):
    """Under ``np.errstate(divide=/over=/invalid="raise")`` a data error held by one locale
    raises FloatingPointError on every locale alike (it hung at 2+ locales: only the
    locale computing the element raised), with compiled kernels too (numba raises
    nothing: they are bypassed while errors raise); the same statements without an
    error, and outside errstate, give NumPy's values."""
    n = 4 * pg.num_locales + 1
    g = np.arange(n, dtype=np.float64)
    A = pg.from_numpy(g, dist=pg.Cyclic())
    B = pg.zeros(n, dist=pg.Block())
    bad = n - 2                                   # one element, on one locale

    def run(kind):
        z = pg.from_numpy(np.where(np.arange(n) == bad, 0.0 if kind == "divide" else 1e308, 1.0), dist=pg.Block())
        if where == "statement":
            B[:] = (1.0 / z) if kind == "divide" else z * 10.0
        elif where == "eval":
            e = (1.0 / z[:]) if kind == "divide" else z[:] * 10.0      # an expression or an array
            return e.eval() if hasattr(e, "eval") else e
        elif where == "out":
            np.divide(1.0, z, out=B) if kind == "divide" else np.multiply(z, 10.0, out=B)
        elif where == "forall":
            def body(i):
                B[i] = (1.0 / z[i]) if kind == "divide" else z[i] * 10.0
            pg.forall((range(n),), body)
        else:
            s = pg.zeros(1, dist=pg.Block())

            def body(i):
                s[0] += (1.0 / z[i]) if kind == "divide" else z[i] * 10.0
            pg.forall((range(n),), body)

    pg.config(fuse=fuse)
    try:
        _errstate_cases(run, B, g, n, bad, where)
    finally:
        pg.config()


def _errstate_cases(run, B, g, n, bad, where):
    for kind in ("divide", "over"):
        with np.errstate(**{kind: "raise"}):
            _same_error(FloatingPointError, lambda: run(kind), f"{where} {kind}")
            B[:] = pg.from_numpy(g, dist=pg.Cyclic()) + 1      # no error: runs, NumPy's values
            assert_matches(B, g + 1)
    with np.errstate(all="ignore"):           # no raise: NumPy's inf, no reduction
        run("divide")
        if where in ("statement", "out", "forall"):
            want = 1.0 / np.where(np.arange(n) == bad, 0.0, 1.0)
            assert_matches(B, want)


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("how", ["sum", "sum_axis", "prod", "mean", "mean_axis"])
def test_errstate_raise_in_reductions(how):
    """A reduction whose local part overflows on one locale (the last two elements, both on
    the last locale of a Block array) raises FloatingPointError on every locale alike under
    ``np.errstate(over="raise")`` (it hung at 2+ locales); without it, NumPy's inf."""
    n = 4 * pg.num_locales + 1
    g = np.where(np.arange(n) >= n - 2, 1e308, 1.0).reshape(n, 1)
    A = pg.from_numpy(g, dist=pg.Block())
    call = {"sum": lambda: A.sum(), "sum_axis": lambda: A.sum(axis=0), "prod": lambda: A.prod(),
            "mean": lambda: A.mean(), "mean_axis": lambda: A.mean(axis=0)}[how]
    with np.errstate(over="raise"):
        _same_error(FloatingPointError, call, how)
    with np.errstate(over="ignore"):
        got = call()
        want = {"sum": g.sum(), "sum_axis": g.sum(axis=0), "prod": g.prod(), "mean": g.mean(),
                "mean_axis": g.mean(axis=0)}[how]
        if hasattr(got, "layout"):
            assert_matches(got, want)
        else:
            collective_verdict(np.array_equal(got, want), f"{how}: {got} != NumPy {want}")


def _n():
    return 4 * pg.num_locales + 1


def _numpy_raises(err, call) -> bool:
    try:
        call()
    except err:
        return True
    return False


def _check_value(got, want, what):
    if hasattr(got, "layout"):
        assert_matches(got, want)
    else:
        collective_verdict(np.array_equal(np.asarray(got), np.asarray(want), equal_nan=True) and
                           np.asarray(got).dtype == np.asarray(want).dtype,
                           lambda: f"{what}: {got!r} != NumPy {want!r}")


def _big(n):
    """Ones with two 1e200s at the end (both on the last locale of a Block array): their
    squares, products and squared deviations overflow."""
    g = np.ones(n)
    g[n - 2:] = 1e200
    return g


def _cases():
    def cumsum_block(D):
        g = np.ones(_n())
        g[-2:] = 1e308
        return lambda: D(g).cumsum(), lambda: g.cumsum()

    def cumprod_axis(D):
        g = _big(_n()).reshape(-1, 1)
        return lambda: D(g).cumprod(axis=0), lambda: g.cumprod(axis=0)

    def var(D):
        g = _big(_n())
        return lambda: D(g).var(), lambda: g.var()

    def std_axis(D):
        g = _big(_n()).reshape(-1, 1)
        return lambda: D(g).std(axis=0), lambda: g.std(axis=0)

    def matmul(D):
        g = np.ones((_n(), _n()))
        g[-2, :] = 1e200
        return lambda: D(g) @ D(g), lambda: g @ g

    def dot(D):
        g = _big(_n())
        return lambda: pg.dot(D(g), D(g)), lambda: np.dot(g, g)

    def norm(D):
        g = _big(_n())
        return lambda: pg.linalg.norm(D(g)), lambda: np.linalg.norm(g)

    def astype_int(D):
        g = np.ones(_n())
        g[-2] = np.nan
        return lambda: D(g).astype(np.int64), lambda: g.astype(np.int64)

    def astype_f32(D):
        g = np.ones(_n())
        g[-2] = 1e300
        return lambda: D(g).astype(np.float32), lambda: g.astype(np.float32)

    def update_add(D):
        g = np.ones(_n())
        g[-2] = 1e308

        def ref():
            want = g.copy()
            np.add.at(want, [_n() - 2], np.full(1, 1e308))
            return want

        def run():
            A = D(g)
            idx = np.array([_n() - 2]) if pg.here == 0 else np.zeros(0, np.int64)
            A.update(idx, np.full(len(idx), 1e308), op="add")
            return A
        return run, ref

    def scatter_cast(D):
        def ref():
            want = np.zeros(_n(), np.float32)
            want[[_n() - 2]] = np.full(1, 1e300)
            return want

        def run():
            A = pg.zeros(_n(), dtype=np.float32, dist=pg.Block())
            idx = np.array([_n() - 2]) if pg.here == 0 else np.zeros(0, np.int64)
            A.scatter(idx, np.full(len(idx), 1e300))
            return A
        return run, ref

    return {f.__name__: f for f in (cumsum_block, cumprod_axis, var, std_axis, matmul, dot, norm, astype_int,
                                     astype_f32, update_add, scatter_cast)}


_CASES = _cases()


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("case", sorted(_CASES))
def test_errstate_raise_in_collectives(case):
    """A collective whose local part hits a floating-point error on one locale raises
    FloatingPointError on every locale alike under ``np.errstate(all="raise")`` (it hung at
    2+ locales, or raised on the one locale only: scans, var/std, matmul/dot/norm, astype,
    update/scatter ran outside fperr); without "raise", NumPy's values (inf, nan)."""
    def D(g):
        return pg.from_numpy(g, dist=pg.Block())
    run, ref = _CASES[case](D)
    with np.errstate(all="raise"):
        assert _numpy_raises(FloatingPointError, ref), "the case must raise in NumPy"
        _same_error(FloatingPointError, run, case)
    with np.errstate(all="ignore"):
        _check_value(run(), ref(), case)


@pytest.mark.usefixtures("_defaults")
def test_vdot_reports_no_errors_as_numpy():
    """NumPy's ``vdot`` reports no floating-point errors (BLAS), even under "raise": pgas's
    neither (it hung at 2+ locales: the locale holding the overflow raised alone)."""
    g = _big(_n())
    with np.errstate(all="raise"):
        want = np.vdot(g, g)
        got = pg.vdot(pg.from_numpy(g, dist=pg.Block()), pg.from_numpy(g, dist=pg.Cyclic()))
    _check_value(got, want, "vdot")


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("mode", ["call", "log"])
def test_user_call_and_log_categories_kept(mode):
    """``np.errstate(divide="raise", over=mode)`` with the user's ``np.seterrcall``: an
    overflow goes to the user's callback (``"call"``) or its ``write`` (``"log"``) as in
    NumPy, and raises nothing (it raised FloatingPointError on every locale for
    ``"call"``, and AttributeError on the overflowing locale alone, a hang, for ``"log"``);
    the user's callback is in place afterwards."""
    n = _n()
    g = np.ones(n)
    g[-2] = 1e308
    seen = []

    class Log:
        def __call__(self, kind, flag):
            seen.append(kind)

        def write(self, msg):
            seen.append(msg)

    user = Log()
    old = np.seterrcall(user)
    try:
        err = None
        try:
            with np.errstate(divide="raise", over=mode):
                got = pg.from_numpy(g, dist=pg.Block()) * 10.0             # an element-wise ufunc
                B = pg.zeros(n, dist=pg.Block())
                B[:] = pg.from_numpy(g, dist=pg.Cyclic())[:] * 10.0        # a statement
        except Exception as e:              # noqa: BLE001
            err = f"{type(e).__name__}: {e}"
        collective_verdict(err is None, lambda: f"{mode}: raised {err}")
        collective_verdict(np.geterrcall() is user, "the user's callback was not restored")
        mine = int(bool(seen))
    finally:
        np.seterrcall(old)
    from pgas import comm
    collective_verdict(comm.allreduce(np.int32(mine), "sum") >= 1, f"{mode}: the user's callback was never called")
    with np.errstate(over="ignore"):
        assert_matches(got, g * 10.0)
        assert_matches(B, g * 10.0)


@pytest.mark.usefixtures("_defaults")
def test_errstate_inside_forall_body():
    """``np.errstate(divide="raise")`` inside a ``pg.forall`` body applies to the statements
    the body writes, as NumPy's would to its loop (it was left at tracing: nothing raised);
    FloatingPointError on every locale alike; outside it, NumPy's inf."""
    n = _n()
    g = np.ones(n)
    g[-2] = 0.0
    A = pg.from_numpy(g, dist=pg.Cyclic())
    B = pg.zeros(n, dist=pg.Block())

    def body(i):
        with np.errstate(divide="raise"):
            B[i] = 1.0 / A[i]

    def plain(i):
        B[i] = 1.0 / A[i]
    _same_error(FloatingPointError, lambda: pg.forall((range(n),), body), "errstate in forall")
    with np.errstate(divide="ignore"):
        pg.forall((range(n),), plain)
        assert_matches(B, 1.0 / g)


@pytest.mark.usefixtures("_defaults")
def test_sum_overflowing_only_when_combined():
    """A whole-array sum whose partial sums are finite on every locale but overflow when
    added: NumPy raises FloatingPointError under ``over="raise"``; pgas did not (the MPI
    reduction reports nothing; at 1 locale the local sum did).  Now alike everywhere;
    otherwise NumPy's inf."""
    n = _n()
    g = np.zeros(n)
    g[0] = g[-1] = 1e308                     # the first and last locales of a Block array
    A = pg.from_numpy(g, dist=pg.Block())
    with np.errstate(over="raise"):
        assert _numpy_raises(FloatingPointError, lambda: g.sum())
        _same_error(FloatingPointError, lambda: A.sum(), "sum")
    with np.errstate(over="ignore"):
        _check_value(A.sum(), g.sum(), "sum")
    with np.errstate(all="raise"):          # finite: no error, NumPy's value
        _check_value(pg.from_numpy(np.ones(n), dist=pg.Block()).sum(), np.ones(n).sum(), "finite sum")


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("case", ["var_inf", "var_ddof", "mean_empty_axis"])
def test_var_mean_own_errors(case):
    """NumPy's errors inside var and mean, which pgas ignored (``np.errstate(invalid=/divide=
    "ignore")`` around its own arithmetic): var of an array holding inf (``x - mean`` is
    inf - inf), var with ``ddof`` >= n (division by zero degrees of freedom), mean of empty
    slices along an axis (0/0).  FloatingPointError on every locale alike under "raise";
    otherwise NumPy's values."""
    n = _n()
    if case == "var_inf":
        g = np.ones(n)
        g[-2] = np.inf

        def ref(x):
            return x.var()
    elif case == "var_ddof":
        g = np.arange(n, dtype=np.float64)

        def ref(x):
            return x.var(ddof=n)
    else:
        g = np.ones((0, n))

        def ref(x):
            return x.mean(axis=0)
    A = pg.from_numpy(g, dist=pg.Block())
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _numpy_raises(FloatingPointError, lambda: ref(g))
        _same_error(FloatingPointError, lambda: ref(A), case)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check_value(ref(A), ref(g), case)


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("small", [False, True])
def test_integer_power_out_float(small):
    """``np.power(int_array, int_array, out=float_array)`` computes with NumPy's integer loop,
    so a negative exponent raises ValueError; pgas checked the exponent only for an integer
    ``out`` and raised on the locale holding it alone (``small``: fewer elements than
    locales, some locales empty).  Without a negative exponent, NumPy's values."""
    n = max(pg.num_locales - 1, 1) if small else _n()
    x = np.ones(n, np.int64)
    x[-1] = -1
    A, X = pg.from_numpy(np.arange(1, n + 1), dist=pg.Block()), pg.from_numpy(x, dist=pg.Block())
    F = pg.zeros(n, dist=pg.Block())
    assert _numpy_raises(ValueError, lambda: np.power(np.arange(1, n + 1), x, out=np.zeros(n)))
    _same_error(ValueError, lambda: np.power(A, X, out=F), "power out=float")
    X2 = pg.from_numpy(np.abs(x), dist=pg.Block())
    np.power(A, X2, out=F)
    assert_matches(F, np.power(np.arange(1, n + 1), np.abs(x), out=np.zeros(n)))
    np.power(A, X, out=F, dtype=np.float64)          # a float loop: NumPy's 1/n, no error
    assert_matches(F, np.power(np.arange(1, n + 1), x, out=np.zeros(n), dtype=np.float64))


@pytest.mark.usefixtures("_defaults")
@pytest.mark.skip(reason="not fixed: pgas expressions are lazy, so an error is raised (or not) by the np.errstate "
                         "in force when the expression is evaluated, not when it is written as NumPy's would be; "
                         "`with np.errstate(divide='raise'): e = 1.0 / A[:]` then `B[:] = e` outside raises nothing")
def test_errstate_when_expression_written():
    """NumPy computes ``1.0 / a`` when written, under the errstate in force then; a pgas
    expression written under ``np.errstate(divide="raise")`` and evaluated after it is not
    checked."""
    n = _n()
    g = np.ones(n)
    g[-2] = 0.0
    A = pg.from_numpy(g, dist=pg.Block())
    B = pg.zeros(n, dist=pg.Block())

    def run():
        with np.errstate(divide="raise"):
            e = 1.0 / A[:]
        B[:] = e
    _same_error(FloatingPointError, run, "expression written under errstate")


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("how", ["eoshift", "pshift", "eoshift_repeated", "pshift_plan"])
def test_shift_boundary_cast_errors(how):
    """An end-off shift of a float32 array whose float64 boundary array holds 1e300 on one
    locale: the boundary's cast overflows there.  Under ``np.errstate(over="raise")``
    FloatingPointError on every locale alike (it raised on that locale alone: the shift's
    statements ran with one exchange, outside fperr, and a compiled group reported no
    error when repeated); otherwise NumPy's inf."""
    m = 2 * pg.num_locales + 1
    b = np.ones(m)
    b[-1] = 1e300
    A = pg.ones((m, m), dtype=np.float32, dist=pg.Block())
    B = pg.from_numpy(b, dist=pg.Block())

    def want():
        r = np.empty((m, m), np.float32)
        r[:-1] = 1
        r[-1] = b
        return r
    if how.startswith("eoshift"):
        def run():
            return pg.eoshift(A, 1, axis=0, boundary=B)
    elif how == "pshift":
        def run():
            return pg.pshift(A, [(1, 0, B), (1, 1)])[0]
    else:
        plan = pg.pshift_setup(A, [(1, 0, B), (1, 1)])

        def run():
            return plan(A)[0]
    with np.errstate(over="ignore"):
        for _ in range(3 if how in ("eoshift_repeated", "pshift_plan") else 1):   # cached and compiled
            assert_matches(run(), want())
    with np.errstate(over="raise"):
        assert _numpy_raises(FloatingPointError, want)
        _same_error(FloatingPointError, run, how)
    if how == "pshift_plan":
        plan.free()


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("fuse", ["auto", True])
@pytest.mark.parametrize("form", ["assign", "reduce", "expr", "float_base"])
def test_forall_integer_power_negative_exponent(form, fuse):
    """``pg.forall`` bodies with an integer power whose exponent (an array element, or an
    expression of one) is negative at one point, on one locale: NumPy's ValueError on
    every locale alike (it hung at 2+ locales: the locale computing that element raised
    alone; slice statements check the exponent first, forall records did not); a float
    base computes NumPy's values with no error; without a negative exponent, NumPy's values.
    The failed loop leaves its targets as they were, as NumPy raises before writing (it ran to
    its end and wrote them, then raised)."""
    pg.config(fuse=fuse)
    n = _n()
    a = np.arange(1, n + 1)
    x = np.ones(n, np.int64)
    x[-2] = -1
    A, X = pg.from_numpy(a, dist=pg.Block()), pg.from_numpy(x, dist=pg.Cyclic())
    X2 = pg.from_numpy(np.abs(x), dist=pg.Cyclic())
    Af = pg.from_numpy(a.astype(np.float64), dist=pg.Block())
    B = pg.full(n, 7, dtype=np.float64 if form == "float_base" else np.int64, dist=pg.Block())
    s = pg.full(1, 5, dtype=np.int64, dist=pg.Block())

    def run(E):
        if form == "assign":
            def body(i):
                B[i] = A[i] ** E[i]
        elif form == "reduce":
            def body(i):
                s[0] += A[i] ** E[i]
        elif form == "expr":
            def body(i):
                B[i] = (A[i] + 0) ** (E[i] * 1)
        else:
            def body(i):
                B[i] = Af[i] ** E[i]
        pg.forall((range(n),), body)
    if form == "float_base":
        run(X)
        assert_matches(B, a.astype(np.float64) ** x)
        return
    _same_error(ValueError, lambda: run(X), form)
    assert_matches(B, np.full(n, 7))          # as they were, on every locale
    assert_matches(s, np.array([5]))
    s.fill(0)
    run(X2)
    if form == "reduce":
        collective_verdict(int(s.to_numpy()[0]) == int(np.sum(a ** np.abs(x))), f"sum {s.to_numpy()}")
    else:
        assert_matches(B, a ** np.abs(x))


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("fuse", [True, False])
def test_default_warn_with_compiled_kernels(fuse):
    """``B[:] = 1.0 / A[:] + 1.0`` with a zero in ``A``, default errstate ("warn"): the
    locale holding the zero warns "divide by zero" as NumPy does, with compiled kernels
    too (they gave no warning: numba checks no flags; fixed by reading the processor's
    flags around the kernel, :func:`pgas.exec.fperr.compiled`); an overflow warns
    "overflow"; no warning without an error or under "ignore"; "call" reaches the
    user's callback; the values are NumPy's."""
    import warnings as w

    from pgas import comm
    pg.config(fuse=fuse)
    try:
        n = _n()
        g = np.ones(n)
        g[-2] = 0.0
        A, B = pg.from_numpy(g, dist=pg.Block()), pg.zeros(n, dist=pg.Block())
        for _ in range(2):                            # the second run takes the bound (repeat) path
            with w.catch_warnings(record=True) as got, np.errstate(divide="warn"):
                w.simplefilter("always")
                B[:] = 1.0 / A[:] + 1.0
            mine = [str(x.message) for x in got if issubclass(x.category, RuntimeWarning)]
            holder = bool((A.local == 0).any())          # the locale holding the zero
            collective_verdict(not holder or any("divide by zero" in m for m in mine), f"warnings {mine}")
            collective_verdict(comm.allreduce(np.int32(len(mine)), "sum") >= 1, "no RuntimeWarning on any locale")
            with np.errstate(divide="ignore"):
                assert_matches(B, 1.0 / g + 1.0)
        with w.catch_warnings(record=True) as got, np.errstate(divide="ignore"):
            w.simplefilter("always")
            B[:] = 1.0 / A[:] + 1.0
            B[:] = A[:] * 2.0 + 1.0                      # no error at all
        collective_verdict(not [x for x in got if issubclass(x.category, RuntimeWarning)],
                           lambda: f"spurious warnings {[str(x.message) for x in got]}")
        big = pg.from_numpy(np.where(np.arange(n) == n - 2, 1e308, 1.0), dist=pg.Block())
        with w.catch_warnings(record=True) as got, np.errstate(over="warn"):
            w.simplefilter("always")
            B[:] = big[:] * 10.0 + 1.0
        seen = comm.allreduce(np.int32(any("overflow" in str(x.message) for x in got)), "sum")
        collective_verdict(seen >= 1, "no overflow warning on any locale")
        calls = []
        old = np.seterrcall(lambda kind, flag: calls.append(kind))
        try:
            with np.errstate(divide="call"):
                B[:] = 1.0 / A[:] + 1.0
        finally:
            np.seterrcall(old)
        seen = comm.allreduce(np.int32(any("divide" in c for c in calls)), "sum")
        collective_verdict(seen >= 1, f"the callback saw {calls}")
    finally:
        pg.config()


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("protocol", ["packed", "auto"])
@pytest.mark.parametrize("form", ["divide", "accumulate", "cast"])
def test_warnings_as_errors_on_every_locale(protocol, form):
    """Under ``warnings.simplefilter("error")`` (every locale) a RuntimeWarning met by the
    locale holding a zero (or an element too big for the int8 target) alone, on the generic
    path (``protocol="packed"``, a Cyclic target: not owner-computes): it raised there alone,
    in the middle of the statement, and a one-sided ``put`` towards that locale then waited
    forever (the statement never ended there).  Now every locale raises RuntimeWarning alike,
    the same message naming the locale that met it, and the job goes on."""
    pg.config(protocol=protocol)
    n = 4 * P + 2
    g = np.arange(1.0, n + 1)
    g[n - 3] = 0.0 if form != "cast" else 1e10                # held by the last locale (Block)
    A = pg.from_numpy(g, dist=pg.Block())
    B = pg.zeros(n, dtype=np.int8 if form == "cast" else float, dist=pg.Cyclic())
    err = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            if form == "divide":
                B[1:] = 1.0 / A[:-1]
            elif form == "accumulate":
                B[1:] += 1.0 / A[:-1]
            else:
                B[1:] = A[:-1]
        except RuntimeWarning as e:
            err = e
    collective_verdict(err is not None, "no RuntimeWarning here")
    said = pg.comm.allgather(str(err))
    collective_verdict(len(set(said)) == 1 and (P == 1 or "(on locale " in said[0]), f"messages {said}")
    for r in range(P):                        # a one-sided write towards every locale (Cyclic: B[r] is
        B.put(r, 5)                           # locale r's): the one that met the error waited forever
    pg.barrier()
    B[...] = 0
    B[1:] = A[:-1] * 0 + 2
    want = np.zeros(n, dtype=B.dtype)
    want[1:] = 2
    assert_matches(B, want)


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("first", ["ignore", "error"])
def test_warnings_filters_read_afresh_in_each_block(first):
    """``warnings.catch_warnings()`` blocks in a row, ``first`` then the other filter in
    turn, each with a statement dividing by zero on the last locale: every ``"error"`` block
    raises RuntimeWarning on every locale, every ``"ignore"`` block nothing.  A block's
    filter list is often made where the block before had its own, freed at its end, and an
    answer kept by the list's id was then the block before's: under ``"error"`` the last
    locale raised alone, in the middle of the statement; under ``"ignore"`` the locales
    agreed for nothing (where only some of them took the stale answer, they hung)."""
    pg.config(protocol="packed")
    n = 4 * P + 2
    g = np.arange(1.0, n + 1)
    g[n - 3] = 0.0                                            # held by the last locale (Block)
    A = pg.from_numpy(g, dist=pg.Block())
    B = pg.zeros(n, dist=pg.Cyclic())
    for action in [first, "error" if first == "ignore" else "ignore"] * 8:
        err = None
        with warnings.catch_warnings():
            warnings.simplefilter(action)
            try:
                B[1:] = 1.0 / A[:-1]
            except RuntimeWarning as e:
                err = e
        said = pg.comm.allgather(None if err is None else str(err))
        want_error = action == "error"
        collective_verdict(all((s is not None) == want_error for s in said) and len(set(said)) == 1,
                           f"under {action!r}: {said}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.zeros(n)
        want[1:] = 1.0 / g[:-1]
    assert_matches(B, want)


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("protocol", ["packed", "auto"])
def test_error_on_one_locale_ends_the_statement(protocol):
    """An error no agreement foresees (the user's error callback raising) on the locale
    computing the element that divides by zero alone, on the generic path: that locale raises, the statement's messages
    still complete, so a one-sided ``put`` towards it (which waits until it has ended as many
    statements as the writer) and the next statements run."""
    pg.config(protocol=protocol)
    n = 4 * P + 2
    g = np.arange(1.0, n + 1)
    g[n - 3] = 0.0
    A = pg.from_numpy(g, dist=pg.Block())
    B = pg.zeros(n, dist=pg.Cyclic())

    def boom(kind, flag):
        raise ValueError(f"callback: {kind}")
    err = None
    with np.errstate(divide="call", call=boom):
        try:
            B[1:] = 1.0 / A[:-1]
        except ValueError as e:
            err = e
    raised = pg.comm.allgather(err is not None)
    collective_verdict(sum(raised) == 1, f"raised on locales {[r for r, x in enumerate(raised) if x]}: {err!r}")
    for r in range(P):                        # a one-sided write towards every locale (B[r] is locale r's)
        B.put(r, 5.0)
    pg.barrier()
    B[1:] = A[:-1] + 1.0
    assert_matches(B, np.r_[5.0, g[:-1] + 1.0])


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("check", [True, "auto"], ids=["strict", "folded"])
@pytest.mark.parametrize("how", ["errstate", "filter"])
def test_error_state_on_one_locale_is_a_mismatch(how, check):
    """``np.errstate(divide="raise")`` or ``warnings.simplefilter("error")`` on the last
    locale only: that locale agrees on the statement's errors where the others do not.
    With checking on, strict or by default, every locale raises the same CollectiveMismatch
    at the others' next call (it hung: the agreement met the others' next collective)."""
    if P == 1:
        pytest.skip("needs two locales")
    pg.config(check=check, protocol="packed")
    n = 4 * P + 2
    g = np.arange(1.0, n + 1)
    g[n - 3] = 0.0
    A, B = pg.from_numpy(g, dist=pg.Block()), pg.zeros(n, dist=pg.Cyclic())
    alone = pg.here == P - 1
    err = None
    with warnings.catch_warnings(), np.errstate(divide="raise" if alone and how == "errstate" else "ignore"):
        warnings.simplefilter("error" if alone and how == "filter" else "ignore")
        try:
            B[1:] = 1.0 / A[:-1]
            pg.barrier()
        except pg.CollectiveMismatch as e:
            err = e
    said = pg.comm.allgather(str(err))
    collective_verdict(err is not None and len(set(said)) == 1, f"raised {said}")


def _ratio_step(T, U, A, B):
    U[:] = A[:] * 2.0
    T[:] = A[:] / B[:]


@pytest.mark.usefixtures("_defaults")
@pytest.mark.parametrize("form", ["statement", "alias", "step", "forall", "out", "view_inplace"])
def test_error_leaves_targets_as_numpy(form):
    """A statement that raises under ``np.errstate(divide="raise")`` (one zero, held by one
    locale) leaves the arrays it writes as NumPy leaves them, ghost cells included: as they
    were where NumPy's right side is a temporary (``T[:] = A[:] / B[:]``, one reading its
    own target, a compiled step's statement after one that ran, a forall: all its
    statements), written where NumPy's ufunc writes before it raises (``out=``,
    ``T[1:] /= B[1:]``).  (The target was written, then the error raised.)"""
    n = 4 * P + 2
    a, b = np.arange(1.0, n + 1), np.ones(n)
    b[n - 2] = 0.0                                 # on the last locale
    t, u = np.full(n, 7.0), np.full(n, 5.0)
    A, B = pg.from_numpy(a), pg.from_numpy(b)
    T, U = pg.from_numpy(t, ghosts=(1,)), pg.from_numpy(u)
    if form == "step":
        step = pg.compile(_ratio_step)
        with np.errstate(divide="ignore"):
            step(pg.zeros(n, ghosts=(1,)), pg.zeros(n), A, A)      # recorded, then run
    T.update_ghosts()
    padded = T.local_with_ghosts_readonly.copy()
    runs = {
        "statement": (lambda: T.__setitem__(slice(None), A[:] / B[:]), lambda: t.__setitem__(slice(None), a / b)),
        "alias": (lambda: B.__setitem__(slice(1, -1), B[:-2] / B[2:]), lambda: b.__setitem__(slice(1, -1), b[:-2] / b[2:])),
        "step": (lambda: step(T, U, A, B), lambda: _ratio_step(t, u, a, b)),
        "forall": (lambda: pg.forall(range(n), lambda i: (U.__setitem__(i, A[i] * 2.0), T.__setitem__(i, A[i] / B[i]))),
                   lambda: t.__setitem__(slice(None), a / b)),
        "out": (lambda: np.divide(A, B, out=T), lambda: np.divide(a, b, out=t)),
        "view_inplace": (lambda: T[1:].__itruediv__(B[1:]), lambda: t[1:].__itruediv__(b[1:])),
    }
    mine, numpys = runs[form]
    with np.errstate(divide="raise"):
        assert _numpy_raises(FloatingPointError, numpys)
        _same_error(FloatingPointError, mine, form)
    assert_matches(T, t)
    assert_matches(U, u)
    assert_matches(B, b)
    if form not in ("out", "view_inplace"):
        got = T.local_with_ghosts_readonly
        collective_verdict(np.array_equal(got, padded), lambda: f"{form}: padded block {got}, before {padded}")
    T.update_ghosts()                              # the ghost cells mirror the values again
    V = pg.zeros(n)
    V[1:-1] = T[:-2] + T[2:]
    assert_matches(V, np.r_[0.0, t[:-2] + t[2:], 0.0])


@pytest.mark.usefixtures("_defaults")
def test_threaded_sum_warns_once():
    """A float sum split over a locale's threads whose parts overflow warns once, as NumPy's
    one call does (each part warned: four warnings at four threads)."""
    pg.config(threads=4)
    per = 4 * (1 << 17)                            # four parts of SPLIT_MIN // 2 on every locale
    x = np.full(per * P, 1e303)
    A = pg.from_numpy(x)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        s = A.sum()
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        w = x.sum()
    said = [str(m.message) for m in got]
    collective_verdict(s == w and said == [str(m.message) for m in want], f"sum {s}, warned {said}")

"""NumPy conformance: every ufunc with every method, and a list of common NumPy
functions and Python operators, on small distributed arrays (float, int, bool).

For each case the verdict is "works" (the result equals NumPy's on the global
arrays: same shape, dtype and values) or "raises" (a TypeError, ValueError or
NotImplementedError with advice); a different result is a failure, as is a
verdict that differs between locales.

The documentation's table, ``docs/conformance.md``, is this test's output: with
``PGAS_CONFORMANCE_TABLE=path`` locale 0 writes the page (entry point, dtype,
verdict, the error's advice; ``make conformance`` regenerates it at 4 locales),
and every run checks that each verdict in the committed page is still the one it
finds, so the page cannot fall out of date silently.
"""

import os
import warnings

import numpy as np

import pgas as pg
from pgas import comm
from util import collective_verdict

UFUNCS = sorted({getattr(np, n) for n in dir(np) if isinstance(getattr(np, n), np.ufunc)}, key=lambda u: u.__name__)

GLOBALS = {
    "float": (np.array([[-2.5, -1.0, 0.0, 0.5], [1.0, 1.5, 2.0, 3.0], [4.0, -0.5, 0.25, 7.0]]),
              np.array([[1.0, 2.0, -1.5, 0.5], [3.0, 0.25, 2.0, -2.0], [0.5, 1.0, 4.0, 2.0]])),
    "int": (np.array([[-3, -1, 0, 1], [2, 3, 4, 5], [6, -2, 7, 1]]),
            np.array([[1, 2, 3, 1], [2, 1, 3, 2], [1, 4, 2, 3]])),
    "bool": (np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]]),
             np.array([[True, True, False, True], [False, True, True, False], [False, True, False, True]])),
}

ALLOWED = (TypeError, ValueError, NotImplementedError)


def _value(x):
    """A pgas result ready to compare: lazy values are materialised (collective);
    DistArrays are compared on the elements each locale owns, with no messages."""
    if isinstance(x, tuple):
        return tuple(_value(v) for v in x)
    return x.eval() if hasattr(x, "eval") and not hasattr(x, "layout") else x


def _equal(got, want) -> str | None:
    """None if ``got`` is NumPy's ``want`` (on the part this locale owns), else why not."""
    if isinstance(want, tuple) and not isinstance(want, np.ndarray):
        if not isinstance(got, tuple) or len(got) != len(want):
            return f"got {got!r}, expected {want!r}"
        return next((w for w in (_equal(g, e) for g, e in zip(got, want)) if w), None)
    if isinstance(got, tuple):
        return f"got {got!r}, expected {want!r}"
    w = np.asarray(want)
    if hasattr(got, "layout"):
        if tuple(got.shape) != w.shape or got.dtype != w.dtype:
            return f"got shape {got.shape} dtype {got.dtype}, expected shape {w.shape} dtype {w.dtype}"
        g, w = np.asarray(got.local), w[np.ix_(*got.layout.owned(comm.here()))]
    else:
        g = np.asarray(got)
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"got shape {g.shape} dtype {g.dtype}, expected shape {w.shape} dtype {w.dtype}"
    if w.dtype.kind in "fc":
        same = np.allclose(g, w, rtol=1e-12, atol=0, equal_nan=True)
    else:
        same = np.array_equal(g, w)
    return None if same else f"got {g!r}, expected {w!r}"


def _case(table, name, dtype, fn, dist_args, np_args):
    """Run one case on NumPy and on pgas and record its verdict."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            want, werr = fn(*np_args), None
        except Exception as e:           # noqa: BLE001 - any NumPy error counts as "raises"
            want, werr = None, e
        try:
            got, gerr = _value(fn(*dist_args)), None
        except Exception as e:           # noqa: BLE001 - classified below
            got, gerr = None, e
    if gerr is not None:
        advice = str(gerr).split("\n")[0][:160]
        if werr is not None and type(werr) is type(gerr) and str(werr) == str(gerr):
            table.append((name, dtype, "raises", f"{type(gerr).__name__} (NumPy's own): {advice}"))
        elif not isinstance(gerr, ALLOWED):
            table.append((name, dtype, f"FAIL: {type(gerr).__name__} is not a clear error", advice))
        else:
            table.append((name, dtype, "raises", f"{type(gerr).__name__}: {advice}"))
        return
    if werr is not None:
        table.append((name, dtype, f"FAIL: NumPy raises {type(werr).__name__} but pgas returned {got!r:.80}", ""))
        return
    why = _equal(got, want)
    table.append((name, dtype, "works" if why is None else f"FAIL: {why[:200]}", ""))


def _numpy_takes(uf, kind) -> bool:
    ga, gb = GLOBALS[kind]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            uf(*(ga, gb)[:uf.nin])
            return True
        except Exception:                # noqa: BLE001
            return False


def _ufunc_cases(table):
    # the statement-path variants (mixed distributions, outer) run for one dtype NumPy takes, to stay fast
    slow_kind = {uf: next((k for k in GLOBALS if _numpy_takes(uf, k)), "float") for uf in UFUNCS}
    for kind, (ga, gb) in GLOBALS.items():
        A = pg.from_numpy(ga)
        B = pg.from_numpy(gb)
        Bc = pg.from_numpy(gb, dist=pg.Cyclic())
        x, y = pg.from_numpy(ga[0]), pg.from_numpy(gb[1], dist=pg.Cyclic())
        for uf in UFUNCS:
            n, nin = uf.__name__, uf.nin
            _case(table, f"np.{n}", kind, uf, (A, B)[:nin], (ga, gb)[:nin])
            if nin == 2 and slow_kind[uf] == kind:
                _case(table, f"np.{n} (mixed distributions)", kind, uf, (A, Bc), (ga, gb))
                _case(table, f"np.{n} (array, scalar)", kind, uf, (A, gb.flat[1]), (ga, gb.flat[1]))
            _case(table, f"np.{n}.reduce", kind, uf.reduce, (x,), (ga[0],))
            _case(table, f"np.{n}.reduce(axis=None)", kind, lambda a: uf.reduce(a, axis=None), (A,), (ga,))
            _case(table, f"np.{n}.accumulate", kind, uf.accumulate, (x,), (ga[0],))
            _case(table, f"np.{n}.reduceat", kind, lambda a: uf.reduceat(a, [0, 2]), (x,), (ga[0],))
            if slow_kind[uf] == kind:
                _case(table, f"np.{n}.outer", kind, uf.outer, (x, y), (ga[0], gb[1]))
            _case(table, f"np.{n}.at", kind, _at_case(uf), (x.copy(),), (ga[0].copy(),))


def _at_case(uf):
    """``uf.at(a, [0, 1], a[0])`` returning ``a``: on a DistArray every locale passes the
    indices and values, so each contribution is applied once per locale (NumPy's
    reference applies it ``P`` times, with the value read before any)."""
    def run(a):
        extra = [a[0]] if uf.nin == 2 else []
        for _ in range(1 if isinstance(a, pg.DistArray) else pg.num_locales):
            uf.at(a, [0, 1], *extra)
        return a
    return run


def _functions():
    """(name, function of (A, B, M, x, y), dtypes) for common NumPy functions and operators."""
    allk = ("float", "int", "bool")
    num = ("float", "int")
    fs = [
        ("np.sum", lambda A, B, M, x, y: np.sum(A), allk), ("np.prod", lambda A, B, M, x, y: np.prod(A), allk),
        ("np.min", lambda A, B, M, x, y: np.min(A), allk), ("np.max", lambda A, B, M, x, y: np.max(A), allk),
        ("np.amin", lambda A, B, M, x, y: np.amin(A), allk), ("np.amax", lambda A, B, M, x, y: np.amax(A), allk),
        ("np.mean", lambda A, B, M, x, y: np.mean(A), num), ("np.std", lambda A, B, M, x, y: np.std(A), num),
        ("np.var", lambda A, B, M, x, y: np.var(A), num), ("np.median", lambda A, B, M, x, y: np.median(A), num),
        ("np.average", lambda A, B, M, x, y: np.average(A), num), ("np.any", lambda A, B, M, x, y: np.any(A), allk),
        ("np.all", lambda A, B, M, x, y: np.all(A), allk),
        ("np.count_nonzero", lambda A, B, M, x, y: np.count_nonzero(A), allk),
        ("np.sum(axis=0)", lambda A, B, M, x, y: np.sum(A, axis=0), num),
        ("np.where(c, x, y)", lambda A, B, M, x, y: np.where(A > B, A, B), num),
        ("np.where(c)", lambda A, B, M, x, y: np.where(A > B), num),
        ("np.copy", lambda A, B, M, x, y: np.copy(A), allk), ("np.shape", lambda A, B, M, x, y: np.shape(A), allk),
        ("np.ndim", lambda A, B, M, x, y: np.ndim(A), allk), ("np.size", lambda A, B, M, x, y: np.size(A), allk),
        ("np.allclose", lambda A, B, M, x, y: np.allclose(A, B), num),
        ("np.array_equal", lambda A, B, M, x, y: (np.array_equal(A, B), np.array_equal(A, A)), allk),
        ("np.isclose", lambda A, B, M, x, y: np.isclose(A, B), num),
        ("np.matmul", lambda A, B, M, x, y: np.matmul(A, M), allk), ("np.dot", lambda A, B, M, x, y: np.dot(A, M), allk),
        ("np.dot (vectors)", lambda A, B, M, x, y: np.dot(x, y), allk),
        ("np.vdot", lambda A, B, M, x, y: np.vdot(x, y), num), ("np.inner", lambda A, B, M, x, y: np.inner(x, y), num),
        ("np.outer", lambda A, B, M, x, y: np.outer(x, y), allk),
        ("np.tensordot", lambda A, B, M, x, y: np.tensordot(A, B), num),
        ("np.einsum ij,jk->ik", lambda A, B, M, x, y: np.einsum("ij,jk->ik", A, M), num),
        ("np.einsum ii", lambda A, B, M, x, y: np.einsum("ii", M[:3]), num),
        ("np.linalg.norm", lambda A, B, M, x, y: (np.linalg.norm(A), np.linalg.norm(x)), num),
        ("np.linalg.norm(ord=2, 2-D)", lambda A, B, M, x, y: np.linalg.norm(A, 2), ("float",)),
        ("np.linalg.inv", lambda A, B, M, x, y: np.linalg.inv(M[:3]), ("float",)),
        ("np.linalg.solve", lambda A, B, M, x, y: np.linalg.solve(M[:3], x[:3]), ("float",)),
        ("np.cumsum", lambda A, B, M, x, y: np.cumsum(A), num), ("np.cumprod", lambda A, B, M, x, y: np.cumprod(A), num),
        ("np.sort", lambda A, B, M, x, y: np.sort(x), num), ("np.argsort", lambda A, B, M, x, y: np.argsort(x), num),
        ("np.argmax", lambda A, B, M, x, y: np.argmax(A), num), ("np.argmin", lambda A, B, M, x, y: np.argmin(A), num),
        ("np.unique", lambda A, B, M, x, y: np.unique(A), allk), ("np.nonzero", lambda A, B, M, x, y: np.nonzero(A), allk),
        ("np.clip", lambda A, B, M, x, y: np.clip(A, 0, 2), num), ("np.round", lambda A, B, M, x, y: np.round(A), num),
        ("np.transpose", lambda A, B, M, x, y: np.transpose(A), allk),
        ("np.reshape", lambda A, B, M, x, y: np.reshape(A, 12), allk), ("np.ravel", lambda A, B, M, x, y: np.ravel(A), allk),
        ("np.concatenate", lambda A, B, M, x, y: np.concatenate([x, y]), allk),
        ("np.stack", lambda A, B, M, x, y: np.stack([x, y]), allk), ("np.flip", lambda A, B, M, x, y: np.flip(x), allk),
        ("np.roll", lambda A, B, M, x, y: np.roll(x, 1), allk), ("np.diff", lambda A, B, M, x, y: np.diff(x), num),
        ("np.trace", lambda A, B, M, x, y: np.trace(A), num), ("np.diag", lambda A, B, M, x, y: np.diag(A), allk),
        ("np.zeros_like", lambda A, B, M, x, y: np.zeros_like(A), allk),
        ("np.full_like", lambda A, B, M, x, y: np.full_like(A, 2), allk),
        ("np.nan_to_num", lambda A, B, M, x, y: np.nan_to_num(A), num), ("np.nansum", lambda A, B, M, x, y: np.nansum(A), num),
        ("np.ptp", lambda A, B, M, x, y: np.ptp(A), num), ("np.percentile", lambda A, B, M, x, y: np.percentile(A, 50), num),
        ("np.cross", lambda A, B, M, x, y: np.cross(x[:3], y[:3]), num),
        ("np.convolve", lambda A, B, M, x, y: np.convolve(x, y), num), ("np.kron", lambda A, B, M, x, y: np.kron(x, y), num),
        ("np.append", lambda A, B, M, x, y: np.append(x, 1), allk), ("np.tile", lambda A, B, M, x, y: np.tile(x, 2), allk),
        ("np.repeat", lambda A, B, M, x, y: np.repeat(x, 2), allk), ("np.squeeze", lambda A, B, M, x, y: np.squeeze(A), allk),
        ("np.expand_dims", lambda A, B, M, x, y: np.expand_dims(x, 0), allk),
        ("np.broadcast_to", lambda A, B, M, x, y: np.broadcast_to(x, (2, 4)), allk),
        ("np.real", lambda A, B, M, x, y: np.real(A), num), ("np.imag", lambda A, B, M, x, y: np.imag(A), num),
        ("np.result_type", lambda A, B, M, x, y: np.result_type(A, 1.0), allk),
        ("np.iscomplexobj", lambda A, B, M, x, y: np.iscomplexobj(A), allk),
        ("np.array_equiv", lambda A, B, M, x, y: np.array_equiv(A, B), allk),
        ("np.asarray", lambda A, B, M, x, y: np.asarray(A), allk), ("np.array", lambda A, B, M, x, y: np.array(A), allk),
        ("np.histogram", lambda A, B, M, x, y: np.histogram(x), num), ("np.bincount", lambda A, B, M, x, y: np.bincount(x), ("int",)),
        ("np.searchsorted", lambda A, B, M, x, y: np.searchsorted(x, 1), num),
        ("A + B, A - B, A * B", lambda A, B, M, x, y: (A + B, A - B, A * B), num),
        ("A / B, A // B, A % B, A ** 2", lambda A, B, M, x, y: (A / B, A // B, A % B, A ** 2), num),
        ("-A, abs(A), ~A", lambda A, B, M, x, y: (-A, abs(A), ~A), ("int",)),
        ("A & B, A | B, A ^ B", lambda A, B, M, x, y: (A & B, A | B, A ^ B), ("int", "bool")),
        ("A < B, A == B, A != B", lambda A, B, M, x, y: (A < B, A == B, A != B), allk),
        ("A @ M", lambda A, B, M, x, y: A @ M, allk), ("x @ y", lambda A, B, M, x, y: x @ y, allk),
        ("divmod(A, B)", lambda A, B, M, x, y: divmod(A, B), num),
        ("bool(A > 0)", lambda A, B, M, x, y: bool(A > 0), num), ("float(A)", lambda A, B, M, x, y: float(A), num),
        ("int(A)", lambda A, B, M, x, y: int(A), num), ("len(A)", lambda A, B, M, x, y: len(A), allk),
        ("list(x)", lambda A, B, M, x, y: list(x), allk), ("round(A)", lambda A, B, M, x, y: round(A), num),
        ("A in B", lambda A, B, M, x, y: 1 in A, num),
    ]
    return fs


def _function_cases(table):
    for kind, (ga, gb) in GLOBALS.items():
        gm = np.concatenate([ga.T[:, :3], gb.T[:, :3]], axis=1)[:, :3]          # (4, 3)
        gx, gy = ga[0], gb[1]
        args = (pg.from_numpy(ga, dist=pg.Cyclic()), pg.from_numpy(gb, dist=pg.BlockCyclic(2)),
                pg.from_numpy(gm), pg.from_numpy(gx), pg.from_numpy(gy, dist=pg.Cyclic()))
        for name, fn, kinds in _functions():
            if kind in kinds:
                _case(table, name, kind, fn, args, (ga, gb, gm, gx, gy))


DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "docs", "conformance.md")


def _write(table, path):
    works = sum(1 for r in table if r[2] == "works")
    raises = sum(1 for r in table if r[2] == "raises")
    lines = ["# NumPy conformance", "",
             "Every NumPy ufunc with each of its methods, and a list of common NumPy functions and",
             "Python operators, applied to small distributed arrays (float, int and bool) and",
             "compared with NumPy on the same global arrays. Each case either **works** (same",
             "shape, dtype and values as NumPy) or **raises** a clear error on every locale, whose",
             "advice is shown; a different result would be a test failure. This page is the output",
             "of `tests/mpi/test_conformance.py` (`make conformance` regenerates it), and every test",
             "run checks that its verdicts are still true.", "",
             f"{works} cases compute NumPy's result, {raises} raise with advice, "
             f"{len(table) - works - raises} fail ({comm.num_locales()} locales).", "",
             "| entry point | dtype | verdict | advice |", "|---|---|---|---|"]
    esc = lambda t: t.replace("|", "\\|")               # noqa: E731 - Markdown table cells
    lines += [f"| `{esc(n)}` | {k} | {v} | {esc(a)} |" for n, k, v, a in table]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def _stale(table) -> list:
    """The cases whose verdict in the committed ``docs/conformance.md`` differs from ``table``."""
    documented = {}
    with open(DOC) as f:
        for line in f:
            cells = [c.strip() for c in line.split(" | ")]
            if line.startswith("| `") and len(cells) >= 3:
                documented[(cells[0][3:-1].replace("\\|", "|"), cells[1])] = cells[2]
    found = {(n, k): v for n, k, v, _ in table}
    return sorted(f"{n} [{k}]: {documented.get((n, k), 'absent')} -> {found.get((n, k), 'absent')}"
                  for n, k in set(documented) | set(found) if documented.get((n, k)) != found.get((n, k)))


def test_conformance_every_ufunc_method_and_common_functions():
    table = []
    _ufunc_cases(table)
    _function_cases(table)
    path = os.environ.get("PGAS_CONFORMANCE_TABLE")
    if path and comm.here() == 0:
        _write(table, path)
    fails = [r for r in table if r[2].startswith("FAIL")]
    stale = _stale(table)
    collective_verdict(not stale, lambda: f"docs/conformance.md is out of date ({len(stale)} verdicts changed, "
                       f"e.g. {stale[:4]}): run `make conformance`")
    collective_verdict(not fails, lambda: f"{len(fails)} cases differ from NumPy: "
                       + "; ".join(f"{n} [{k}]: {v} {a}" for n, k, v, a in fails[:8]))
    verdicts = [r[2] for r in table]
    agree = all(v == verdicts for v in comm.allgather(verdicts))   # values differing on one locale show here
    collective_verdict(agree, "locales reached different verdicts")
    assert len(UFUNCS) > 80 and len(_functions()) >= 60

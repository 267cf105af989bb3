"""NumPy's entry points for distributed arrays: ufunc methods, gufuncs and ``__array_function__``.

Every way NumPy can reach a DistArray (or a view or lazy expression) either
computes NumPy's global result or raises a TypeError / ValueError /
NotImplementedError on every locale alike saying what to use instead; never a
silently different value.

- ``np.<ufunc>(...)`` element-wise: the array classes compute it (locally, or
  as a statement); a ufunc with core dimensions (``matmul``, ``vecdot``,
  ``matvec``, ``vecmat``) goes to :mod:`pgas.array.linalg`.
- ``ufunc.reduce`` over all elements maps to the whole-array reductions
  (``np.add.reduce(x)`` is ``x.sum()``); over an axis, to the array's method
  with ``axis=`` (which raises if unsupported); ``ufunc.outer`` is one
  statement on broadcast views; ``accumulate`` of ``add``, ``multiply``,
  ``maximum`` and ``minimum`` is the distributed scan of
  :mod:`pgas.array.reductions.scan`; ``at`` of ``add``, ``minimum``, ``maximum`` and the bitwise ufuncs is
  ``A.update`` (each locale passing its own indices and values); other ``accumulate``
  and ``reduceat`` raise.
- ``np.func(A, ...)`` (NEP 18) looks ``func`` up in :data:`HANDLED`, built
  from the ``NUMPY_FUNCTIONS`` dicts of the modules in :data:`MODULES` (and
  any :func:`register` call); anything else raises ``TypeError: np.<name> is
  not supported on pgas arrays: <advice>``.
"""

from __future__ import annotations

import importlib

import numpy as np

from .. import comm

#: Modules whose ``NUMPY_FUNCTIONS`` dict ({numpy function: implementation}) fill HANDLED.
MODULES = ["pgas.array.npapi", "pgas.array.linalg", "pgas.array.norms", "pgas.array.einsum",
           "pgas.array.reductions.functions", "pgas.array.shape", "pgas.array.creation.like", "pgas.array.creation.conversion", "pgas.array.sorting.sort",
           "pgas.array.sorting.unique", "pgas.array.sorting.searchsorted", "pgas.array.shifts.functions",
           "pgas.array.reductions.nan", "pgas.array.numeric", "pgas.array.padding", "pgas.array.quantiles.functions"]

#: NumPy function -> pgas implementation (built on first use; see :func:`handled`).
HANDLED: dict = {}

GENERIC = "use A.to_numpy() to compute it with NumPy on the global array (a copy on every locale)"

#: Advice for NumPy functions that are NOT in :data:`HANDLED`, by the name the error gives them
#: (``"linalg.solve"`` for ``np.linalg.solve``); any other unhandled function gets :data:`GENERIC`.
#: Functions handled only in some cases say which in their own errors.
ADVICE = {
    "nonzero": "use A.to_numpy(), or pg.where(cond, x, y) for element-wise choices",
    "linalg.solve": "no distributed solver; use A.to_numpy()",
}


def register(functions: dict) -> None:
    """Add ``{numpy function: implementation}`` entries to :data:`HANDLED`."""
    handled().update(functions)


def handled() -> dict:
    """:data:`HANDLED`, filled from :data:`MODULES` on first use."""
    if not HANDLED:
        for m in MODULES:
            HANDLED.update(importlib.import_module(m).NUMPY_FUNCTIONS)
    return HANDLED


def _fname(func) -> str:
    mod = getattr(func, "__module__", "") or ""
    sub = mod.split(".")[1] if mod.startswith("numpy.") and mod.split(".")[1] in ("linalg", "fft") else ""
    return f"{sub}.{func.__name__}" if sub else getattr(func, "__name__", str(func))


def unsupported(name: str, advice: str | None = None) -> TypeError:
    """The error for a NumPy entry point pgas does not provide."""
    return TypeError(f"np.{name} is not supported on pgas arrays: {advice or ADVICE.get(name, GENERIC)}")


def _check_tracing(what: str) -> None:
    from . import engine
    from .expr import TraceError
    if engine.tracing():
        raise TraceError(f"np.{what} cannot be traced inside pg.forall: use ufuncs and pg.where on subscripted arrays")


def array_function(func, types, args, kwargs):
    """NEP 18 dispatch for DistArray and the lazy classes."""
    impl = handled().get(func)
    if impl is None:
        raise unsupported(_fname(func))
    if func is not np.where:                 # np.where is pg.where, which forall bodies may use
        _check_tracing(_fname(func))
    return impl(*args, **kwargs)


# -- ufuncs ------------------------------------------------------------------
_REDUCERS = {np.add: "sum", np.multiply: "prod", np.minimum: "min", np.maximum: "max",
             np.logical_and: "all", np.logical_or: "any"}


def ufunc(uf, method, inputs, out, kwargs, elementwise):
    """``uf.method(*inputs, out=out, **kwargs)`` on distributed operands; ``elementwise``
    computes a plain element-wise call (or returns NotImplemented)."""
    name = uf.__name__
    if method != "__call__" or uf.signature:
        _check_tracing(f"{name}.{method}")
    if method == "__call__":
        if kwargs.get("where", True) is not True:
            raise unsupported(name, "where= is not supported on distributed operands; use "
                                    f"pg.where(cond, np.{name}(...), other)")
        if uf.signature is not None:
            return _gufunc(uf, inputs, out, kwargs)
        res = elementwise(uf, method, inputs, out, kwargs)
        if res is NotImplemented:
            raise unsupported(name, f"it has {uf.nout} outputs, which pgas computes only on whole arrays of one "
                                    "distribution; compute each output separately (e.g. A // B and A % B)")
        return res
    if method == "reduce":
        return _reduce(uf, inputs, out, kwargs)
    if method == "outer":
        return _outer(uf, inputs, out, kwargs)
    if method == "accumulate":
        return _accumulate(uf, inputs, out, kwargs)
    if method == "at":
        return _at(uf, inputs)
    raise unsupported(f"{name}.{method}", "use A.to_numpy()")


#: ufuncs whose ``at`` is an ``update`` op (the logical ones on bool arrays only).
_AT_OPS = {np.add: "add", np.multiply: "multiply", np.minimum: "min", np.maximum: "max", np.bitwise_xor: "xor",
           np.bitwise_or: "or", np.bitwise_and: "and"}
_AT_BOOL_OPS = {np.logical_xor: "xor", np.logical_or: "or", np.logical_and: "and", np.add: "or",
                np.multiply: "and"}           # NumPy's add and multiply on bools


def _at(uf, inputs):
    """``uf.at(A, indices, values)``: collective, each locale passing its own indices and
    values (NumPy arrays), run as ``A.update(indices, values, op)``: one aggregated message
    per owner, repeats accumulated as NumPy's unbuffered ``at`` does (in some order between
    locales)."""
    from . import collective, engine, irregular
    from .core import DistArray
    name = f"{uf.__name__}.at"
    a, *rest = inputs
    if type(a) is not DistArray:
        raise unsupported(name, "the updated operand must be a whole DistArray (not a view or an expression)")
    op = (_AT_BOOL_OPS.get(uf) if a.dtype.kind == "b" else None) or _AT_OPS.get(uf)
    if op is None:
        raise unsupported(name, "A.update(indices, values, op) runs add, multiply, minimum, maximum and the "
                                "bitwise ufuncs' at (logical_and/or/xor on bool arrays); for others "
                                "(subtract, divide, power, ...) gather, compute and scatter")
    if len(rest) != 2 or any(not isinstance(x, (np.ndarray, np.generic, int, float, complex, bool, list, tuple))
                             for x in rest):
        raise unsupported(name, "pass this locale's indices and values as NumPy arrays: np.add.at(A, idx, v)")
    collective.folded(f"np.{name}({{0}}, ...)", a)      # agreed in update's exchange
    engine.before_write(a, None)
    irregular.update(a, rest[0], rest[1], op, broadcast=True)


def _gufunc(uf, inputs, out, kwargs):
    from . import einsum, linalg
    name = uf.__name__
    axis = kwargs.pop("axis", None) if name == "vecdot" else None
    if out is not None or kwargs:
        raise unsupported(name, f"out= and other keywords are not supported with distributed operands; "
                                f"write C[...] = np.{name}(A, B)")
    a, b = inputs
    if uf is np.matmul:
        return linalg.matmul(a, b)
    if name in ("vecdot", "matvec", "vecmat"):
        return einsum.vector_gufunc(name, a, b, axis)
    raise unsupported(name, "pgas computes np.matmul on 1-D and 2-D operands and np.vecdot, np.matvec, "
                            "np.vecmat (stacked too); for batched matmul loop over 2-D slices")


def _dist(x):
    from .expr import Lazy
    return x.eval() if isinstance(x, Lazy) else x


def _reduce(uf, inputs, out, kwargs):
    name = f"{uf.__name__}.reduce"
    red = _REDUCERS.get(uf)
    if red is None:
        raise unsupported(name, "pgas reduces with add, multiply, minimum, maximum, logical_and and logical_or "
                                "(A.sum(), A.prod(), A.min(), A.max(), np.all, np.any); else use A.to_numpy()")
    (a,) = inputs
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    if out is not None or kwargs.pop("keepdims", False) or kwargs:
        raise unsupported(name, f"out=, keepdims=, initial= and where= are not supported; use A.{red}()")
    a = _dist(a)
    whole = axis is None or (a.ndim == 1 and axis in (0, -1, (0,), (-1,)))
    kw = {} if whole else {"axis": axis}
    if red in ("all", "any"):
        if not whole:
            raise unsupported(name, f"np.{red} over an axis is not available; use np.{red}(A) for all elements")
        return HANDLED_FUNCS[red](a)
    if dtype is not None:
        if red in ("min", "max"):
            raise unsupported(name, f"dtype= is not supported with {uf.__name__}; use A.astype(dtype).{red}()")
        kw["dtype"] = dtype
    return getattr(a, red)(**kw)


def _accumulate(uf, inputs, out, kwargs):
    from .reductions import scan
    name = f"{uf.__name__}.accumulate"
    if uf not in scan.ACCUMULATE:
        raise unsupported(name, "pgas scans with add, multiply, maximum and minimum (np.cumsum, np.cumprod, "
                                "np.maximum.accumulate, ...); for other ufuncs use A.to_numpy()")
    if isinstance(out, tuple):
        out = out[0] if len(out) == 1 else out
    axis, dtype = kwargs.pop("axis", 0), kwargs.pop("dtype", None)
    if kwargs:
        raise unsupported(name, f"keyword(s) {', '.join(kwargs)} not supported; pass axis=, dtype= and out=")
    (a,) = inputs
    return scan.accumulate(uf, a, axis, dtype, out)


def _outer(uf, inputs, out, kwargs):
    from .view import View
    name = f"{uf.__name__}.outer"
    if out is not None or kwargs or uf.nin != 2 or uf.nout != 1:
        raise unsupported(name, "pgas computes ufunc.outer of two operands with one output, without keywords")
    a, b = (_dist(x) for x in inputs)
    na, nb = np.ndim(a), np.ndim(b)

    def widen(x, key):
        return View.whole(x)[key] if hasattr(x, "layout") else np.asarray(x)[key]

    va = widen(a, (Ellipsis,) + (None,) * nb)
    vb = widen(b, (None,) * na + (Ellipsis,))
    res = uf(va, vb)
    return res.eval() if hasattr(res, "eval") else res


# -- NumPy functions ---------------------------------------------------------
def reject_keywords(kwargs, name: str, allowed=()) -> None:
    bad = [k for k, v in kwargs.items() if k not in allowed and v is not None and v is not False]
    if bad:
        raise unsupported(name, f"keyword(s) {', '.join(bad)} not supported; use the array's method")


def _truth(kind: str):
    def impl(a, axis=None, out=None, keepdims=False, **kw):
        reject_keywords(dict(kw, out=out, keepdims=keepdims, axis=axis), kind)
        a = _dist(a)
        if a.size == 0:
            return np.bool_(kind == "all")
        nz = _dist(a != 0)
        return np.bool_(nz.max() if kind == "any" else nz.min())
    impl.__name__ = kind
    impl.__doc__ = f"Collective: ``np.{kind}`` over all elements, on every locale."
    return impl


def _aligned(a, b, name: str):
    """This locale's parts of ``a`` and ``b`` (one broadcast to the other's shape) on the
    first distributed operand's layout."""
    from .creation.constructors import empty
    from .expr import Lazy
    a, b = _dist(a), _dist(b)
    model = a if hasattr(a, "layout") else b
    shape = np.broadcast_shapes(np.shape(a) if not hasattr(a, "layout") else a.shape,
                                np.shape(b) if not hasattr(b, "layout") else b.shape)
    if shape != model.shape:
        raise unsupported(name, "the result shape must be the distributed operand's shape; use A.to_numpy()")
    owned = np.ix_(*model.layout.owned(comm.here()))
    parts = []
    for x in (a, b):
        if x is model:
            parts.append(x.local)
        elif hasattr(x, "layout") and x.layout.key == model.layout.key:
            parts.append(x.local)
        elif hasattr(x, "layout") or isinstance(x, Lazy):
            tmp = empty(model.shape, x.dtype, model.dist)
            tmp[...] = x
            parts.append(tmp.local)
        else:
            parts.append(np.broadcast_to(np.asarray(x), shape)[owned])
    return parts


def _all_locales(ok: bool) -> np.bool_:
    return np.bool_(comm.allreduce(np.int32(0 if ok else 1), "sum") == 0)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Collective: ``np.allclose`` of distributed arrays (or one and a NumPy value), on every locale."""
    x, y = _aligned(a, b, "allclose")
    return _all_locales(bool(np.all(np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan))))


def array_equal(a1, a2, equal_nan=False):
    """Collective: ``np.array_equal`` of distributed arrays (or one and a NumPy value), on every locale."""
    if tuple(np.shape(a1)) != tuple(np.shape(a2)):
        return np.False_
    x, y = _aligned(a1, a2, "array_equal")
    return _all_locales(bool(np.array_equal(x, y, equal_nan=equal_nan)))


def where(condition, x=None, y=None):
    """``np.where(cond, x, y)`` is :func:`pgas.where` (lazy, element-wise)."""
    from .expr import where as pg_where
    if x is None or y is None:
        raise unsupported("where", "np.where(cond) with one argument (nonzero) is not available; for choices "
                                   "use pg.where(cond, x, y)")
    return pg_where(condition, x, y)


def copy(a, order="K", subok=False):
    """Collective: a copy of a distributed array (same distribution)."""
    return _dist(a).copy()


def result_type(*arrays_and_dtypes):
    """``np.result_type`` with distributed operands standing for their dtypes."""
    return np.result_type(*[x.dtype if hasattr(x, "layout") or hasattr(x, "eval") else x for x in arrays_and_dtypes])


def _is_pair(axes, pa, pb) -> bool:
    try:
        (xa,), (xb,) = axes
        return int(xa) % max(pa, 1) == pa - 1 and int(xb) == 0
    except (TypeError, ValueError):
        return False


TENSORDOT_CASES = ("pgas handles matrix-product cases (axes=1, axes=([n-1], [0])), axes=2 on equal 2-D shapes "
                   "and axes=0 on vectors")


def tensordot(a, b, axes=2):
    """Collective: ``np.tensordot`` for its matrix-product cases (:data:`TENSORDOT_CASES`)."""
    from . import linalg
    na, nb = np.ndim(a), np.ndim(b)
    if axes == 1 or _is_pair(axes, na, nb):
        if na <= 2 and nb <= 2:
            return linalg.matmul(a, b)
    elif axes == 2 and na == nb == 2:
        return _sum_product(a, b)
    elif axes == 0 and na == nb == 1:
        return linalg.outer(a, b)
    raise unsupported("tensordot", TENSORDOT_CASES)


def _sum_product(a, b):
    if np.shape(a) != np.shape(b):
        raise ValueError(f"shape-mismatch for sum: {np.shape(a)} and {np.shape(b)}")
    dtype = np.result_type(a, b)
    p = _dist(np.multiply(a, b))
    if dtype.kind == "b":
        return np.bool_(p.sum() != 0)
    return np.asarray(p.sum(dtype=dtype)).astype(dtype)[()]


def ptp(a, axis=None, out=None, keepdims=False):
    """Collective: ``np.ptp`` (largest minus smallest element), on every locale."""
    reject_keywords({"axis": axis, "out": out, "keepdims": keepdims}, "ptp")
    a = _dist(a)
    return a.max() - a.min()


def average(a, axis=None, weights=None, returned=False, **kw):
    """Collective: ``np.average`` without weights (the mean), on every locale."""
    reject_keywords(dict(kw, axis=axis, weights=weights, returned=returned), "average")
    return _dist(a).mean()


def clip(a, a_min=None, a_max=None, out=None, **kw):
    """Element-wise ``np.clip`` as ``np.minimum(np.maximum(a, a_min), a_max)`` (NumPy's definition)."""
    reject_keywords(dict(kw, out=out), "clip")
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    res = a if a_min is None else np.maximum(a, a_min)
    return res if a_max is None else np.minimum(res, a_max)


HANDLED_FUNCS = {"all": _truth("all"), "any": _truth("any")}

# (np.sum, np.mean, np.var, ... are pgas.array.reductions.functions's, which pgas.array.npapi.MODULES loads later.)
NUMPY_FUNCTIONS = {
    np.where: where, np.copy: copy, np.allclose: allclose,
    np.array_equal: array_equal, np.result_type: result_type, np.tensordot: tensordot,
    np.shape: lambda a: tuple(a.shape), np.ndim: lambda a: a.ndim,
    np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis],
    np.ptp: ptp, np.average: average, np.clip: clip,
    np.iscomplexobj: lambda x: np.result_type(x).kind == "c", np.isrealobj: lambda x: np.result_type(x).kind != "c",
}

"""Element-wise functions of the array API standard.

Those that are NumPy ufuncs run distributed: on distributed operands of one shape (or one
distributed operand and scalars), each locale computes its own part, with no message between
locales; operands that broadcast to a shape of 1 to 4 dimensions run as pgas's lazy expressions,
which broadcast as NumPy does (each locale reads the broadcast operands' elements it needs).
``round`` and ``clip`` run distributed too; ``real`` and ``imag``, and other operands (NumPy
arrays of some dimensions, results of more dimensions), are gathered, computed by NumPy on every
locale and distributed again.  Operands are promoted by the standard's rules within a kind and NumPy's
across kinds (:mod:`.dtypes`).
"""

from __future__ import annotations

import builtins
import inspect

import numpy as np

from . import dtypes as _dtypes
from ...comm.userwarn import GatherWarning, warn
from .arrays import broadcast_distributed, dist, gathered, is_array, is_dist, to_numpy, wrap

UNARY = ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil", "conj", "cos",
         "cosh", "exp", "expm1", "floor", "isfinite", "isinf", "isnan", "log", "log1p", "log2", "log10",
         "logical_not", "negative", "positive", "sign", "signbit", "sin", "sinh", "square", "sqrt", "tan",
         "tanh", "trunc")
BINARY = ("add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
          "bitwise_xor", "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal", "hypot",
          "less", "less_equal", "logaddexp", "logical_and", "logical_or", "logical_xor", "maximum", "minimum",
          "multiply", "not_equal", "pow", "remainder", "subtract")
#: Element-wise functions that are not NumPy ufuncs: computed on gathered operands.
OTHER = ("real", "imag")


def _operand(x):
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x[()]                     # a 0-d array is a NumPy scalar of its (strong) data type
    return dist(x)


def _check(name: str, args) -> None:
    arrays = [a for a in args if is_array(a)]
    if not arrays:
        raise TypeError(f"{name}: expected at least one array, got {', '.join(type(a).__name__ for a in args)}")
    _dtypes.result_type(*arrays)         # the promotion (:mod:`.dtypes`): a clear error for non-arrays
    for a in args:
        if not is_array(a) and not isinstance(a, (builtins.bool, int, float, complex)):
            raise TypeError(f"{name}: {type(a).__name__} is not an array or a Python scalar")


def elementwise(name: str):
    """The standard's element-wise function ``name`` (NumPy's function of that name)."""
    uf = getattr(np, name)

    def impl(*args):
        _check(name, args)
        if broadcast_distributed(args):
            return wrap(uf(*[_operand(a) for a in args]))
        return wrap(uf(*[to_numpy(a) for a in args]))
    impl.__name__ = impl.__qualname__ = name
    names = ("x",) if name in UNARY else ("x1", "x2")
    impl.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    impl.__doc__ = (f"Collective: ``{name}`` element-wise (NumPy's ``np.{name}``): each locale computes its "
                    "part of distributed operands, broadcast included (results of 1-4 dimensions); NumPy "
                    "array operands of some dimensions are gathered with them.")
    return impl


def _clip_gathered(x, lo, hi):
    x_np = to_numpy(x)
    lo, hi = to_numpy(lo), to_numpy(hi)
    if lo is None and hi is None:
        return wrap(np.array(x_np, copy=True))
    return wrap(np.asarray(np.clip(x_np, lo, hi)).astype(x_np.dtype, copy=False))


def _bound(b, dtype):
    """A bound of ``clip`` as an operand: a Python integer outside an integer ``dtype``'s range is
    taken to its nearest end (clipping to it is the same), as NumPy's ``clip`` accepts it."""
    if dtype.kind in "iu" and isinstance(b, int) and not isinstance(b, builtins.bool):
        info = np.iinfo(dtype)
        return builtins.min(builtins.max(b, int(info.min)), int(info.max))
    return _operand(b)


def clip(x, /, min=None, max=None):
    """Collective: ``x`` clipped to ``[min, max]``, in ``x``'s data type.

    Distributed (``np.maximum`` and ``np.minimum`` as pgas's lazy expressions) for a distributed
    ``x`` with bounds that are None, scalars, 0-d arrays or distributed arrays broadcasting to
    ``x``'s shape; otherwise the operands are gathered to every locale (a
    :class:`pgas.GatherWarning`) and the result distributed."""
    bounds = [b for b in (min, max) if b is not None]
    if (is_dist(x) and broadcast_distributed([x, *bounds])
            and all(np.broadcast_shapes(tuple(b.shape), tuple(x.shape)) == tuple(x.shape)
                    for b in bounds if is_dist(b))):
        res = dist(x)
        if not bounds:
            return res.copy()
        if min is not None:
            res = np.maximum(res, _bound(min, x.dtype))
        if max is not None:
            res = np.minimum(res, _bound(max, x.dtype))
        res = dist(res)
        return res if res.dtype == x.dtype else res.astype(x.dtype)
    if is_dist(x) or any(is_dist(b) for b in bounds):
        warn("pgas.array_api.clip gathers its distributed operands to every locale and computes with NumPy there",
             GatherWarning)
    return _clip_gathered(x, min, max)


_round_gathered = gathered(np.round, "round")


def round(x, /):
    """Collective: ``x`` rounded to the nearest integer, halves to even (NumPy's ``round``):
    distributed (pgas's ``np.round``) for a numeric distributed ``x``, else gathered."""
    if is_dist(x) and x.dtype.kind in "iufc":
        return wrap(np.round(dist(x)))
    return _round_gathered(x)


FUNCTIONS = {n: elementwise(n) for n in UNARY + BINARY}
FUNCTIONS.update({n: gathered(getattr(np, n), n) for n in OTHER})
FUNCTIONS.update({"clip": clip, "round": round})

"""The namespace's arrays: DistArrays of 1 to 4 dimensions; NumPy arrays, the same on every locale, otherwise.

pgas distributes arrays of 1 to 4 dimensions.  The standard also needs 0-d arrays (the results of
reductions, ``x[0, 0]``) and allows more dimensions: those are NumPy arrays that every locale holds
alike, as pgas's reductions already return their value on every locale.  :func:`to_numpy` gathers a
distributed operand to every locale (collective), :func:`wrap` distributes a global result.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from ..core import DistArray
from ..creation.constructors import from_numpy
from ..expr import Lazy
from ..index import SUPPORTED_DTYPES
from ...comm.userwarn import GatherWarning, warn

#: The most dimensions a DistArray has; larger (and 0-d) arrays are replicated NumPy arrays.
MAX_NDIM = 4


def is_dist(x) -> bool:
    """Whether ``x`` is a distributed array (a DistArray, a view or a lazy expression)."""
    return isinstance(x, (DistArray, Lazy))


def is_array(x) -> bool:
    """Whether ``x`` is one of the namespace's arrays (distributed, or a NumPy array or scalar)."""
    return is_dist(x) or isinstance(x, (np.ndarray, np.generic))


def dist(x):
    """A view or lazy expression evaluated to a DistArray; a NumPy scalar as a 0-d array; else ``x``."""
    if isinstance(x, Lazy):
        return x.eval()
    if isinstance(x, np.generic):
        return np.asarray(x)
    return x


def distributable(shape, dtype) -> bool:
    """Whether an array of ``shape`` and ``dtype`` is held as a DistArray."""
    return 1 <= len(shape) <= MAX_NDIM and np.dtype(dtype) in SUPPORTED_DTYPES


def to_numpy(x):
    """Collective for a distributed ``x``: the global array on every locale; other values unchanged."""
    if is_dist(x):
        return dist(x).to_numpy()
    if isinstance(x, np.generic):
        return np.asarray(x)
    return x


def wrap(value):
    """Collective: a global result (the same on every locale) as a namespace array."""
    if isinstance(value, (DistArray, Lazy)):
        return dist(value)
    a = np.asarray(value)
    if distributable(a.shape, a.dtype):
        return from_numpy(a)
    return a


def _tree(f, value):
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_tree(f, v) for v in value])
    if isinstance(value, (tuple, list)):
        return type(value)(_tree(f, v) for v in value)
    return f(value)


def broadcast_distributed(args) -> bool:
    """Whether element-wise work on ``args`` runs distributed: at least one distributed operand, the
    others distributed or 0-d, all of one shape, or broadcasting to a non-empty shape of 1 to
    :data:`MAX_NDIM` dimensions (pgas's statements and lazy expressions broadcast as NumPy does)."""
    if not any(is_dist(a) for a in args) or not all(is_dist(a) or np.ndim(a) == 0 for a in args):
        return False
    shapes = {tuple(a.shape) for a in args if is_dist(a)}
    if len(shapes) == 1:
        return True
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        return False                     # NumPy's error, raised by the gathered path on every locale
    return 1 <= len(shape) <= MAX_NDIM and math.prod(shape) > 0


def wrap_all(value):
    """Collective: :func:`wrap` of a result or of each array in a tuple, list or named tuple of them."""
    return _tree(wrap, value)


def _any_data(value) -> bool:
    """Whether ``value`` (or a dict, tuple or list of values) holds a distributed array with elements."""
    if isinstance(value, dict):
        return any(_any_data(v) for v in value.values())
    if isinstance(value, (tuple, list)):
        return any(_any_data(v) for v in value)
    return is_dist(value) and math.prod(value.shape) > 0


def gathered(npfunc, name: str, doc: str = ""):
    """The namespace function ``name`` computed by ``npfunc`` on gathered operands.

    Every distributed operand is gathered to every locale (``to_numpy``), NumPy computes the
    result on each locale alike, and the result is distributed again (:func:`wrap`).  A
    :class:`pgas.GatherWarning` says so, unless the distributed operands are all empty."""
    def impl(*args, **kwargs):
        if _any_data((args, kwargs)):
            warn(f"pgas.array_api.{name} gathers its distributed operands to every locale and computes "
                 f"with NumPy there", GatherWarning)
        res = npfunc(*_tree(to_numpy, args), **{k: _tree(to_numpy, v) for k, v in kwargs.items()})
        return wrap_all(res)
    impl.__name__ = impl.__qualname__ = name
    try:
        impl.__signature__ = inspect.signature(npfunc)
    except (TypeError, ValueError):
        pass
    impl.__doc__ = (doc or f"``{name}`` of the array API standard, as NumPy computes it.") + (
        "\n\nGathers: collective; every distributed operand is gathered to every locale, NumPy computes "
        "the result there and it is distributed again.")
    return impl

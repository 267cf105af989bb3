"""Creation functions of the array API standard.

``zeros``, ``ones``, ``empty``, ``full``, ``eye`` and the ``*_like`` functions allocate a distributed
array directly (each locale fills its own part); ``asarray``, ``arange`` and ``linspace`` compute the
global values on every locale alike and distribute them; ``meshgrid``, ``tril``, ``triu`` and
``from_dlpack`` gather their operands.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ..creation import constructors as pg
from . import device as _device
from . import dtypes as _dtypes
from .arrays import dist, distributable, gathered, is_dist, to_numpy, wrap


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    return tuple(operator.index(s) for s in shape)


def _default(value) -> np.dtype:
    if isinstance(value, builtins.bool):
        return _dtypes.bool
    if isinstance(value, int):
        return _dtypes.int64
    if isinstance(value, float):
        return _dtypes.float64
    if isinstance(value, complex):
        return _dtypes.complex128
    return np.asarray(value).dtype


def _filled(shape, value, dtype):
    shape = _shape(shape)
    dtype = np.dtype(dtype)
    if distributable(shape, dtype):
        return pg.full(shape, np.asarray(value, dtype=dtype)[()], dtype=dtype)
    return np.full(shape, value, dtype=dtype)


def zeros(shape, *, dtype=None, device=None):
    """Collective: an array of zeros (``float64`` unless ``dtype`` says)."""
    _device.check(device)
    return _filled(shape, 0, _dtypes.float64 if dtype is None else dtype)


def ones(shape, *, dtype=None, device=None):
    """Collective: an array of ones (``float64`` unless ``dtype`` says)."""
    _device.check(device)
    return _filled(shape, 1, _dtypes.float64 if dtype is None else dtype)


def empty(shape, *, dtype=None, device=None):
    """Collective: an array with uninitialised elements (``float64`` unless ``dtype`` says)."""
    _device.check(device)
    shape, dtype = _shape(shape), np.dtype(_dtypes.float64 if dtype is None else dtype)
    return pg.empty(shape, dtype) if distributable(shape, dtype) else np.empty(shape, dtype)


def full(shape, fill_value, *, dtype=None, device=None):
    """Collective: an array filled with ``fill_value`` (its default data type unless ``dtype`` says)."""
    _device.check(device)
    if is_dist(fill_value) or isinstance(fill_value, np.ndarray):
        fill_value = to_numpy(fill_value)[()]
    return _filled(shape, fill_value, _default(fill_value) if dtype is None else dtype)


def zeros_like(x, /, *, dtype=None, device=None):
    """Collective: zeros of ``x``'s shape (and data type unless ``dtype`` says)."""
    return zeros(x.shape, dtype=x.dtype if dtype is None else dtype, device=device)


def ones_like(x, /, *, dtype=None, device=None):
    """Collective: ones of ``x``'s shape (and data type unless ``dtype`` says)."""
    return ones(x.shape, dtype=x.dtype if dtype is None else dtype, device=device)


def empty_like(x, /, *, dtype=None, device=None):
    """Collective: an uninitialised array of ``x``'s shape (and data type unless ``dtype`` says)."""
    return empty(x.shape, dtype=x.dtype if dtype is None else dtype, device=device)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """Collective: ``fill_value`` in ``x``'s shape (and data type unless ``dtype`` says)."""
    return full(x.shape, fill_value, dtype=x.dtype if dtype is None else dtype, device=device)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """Collective: ones on diagonal ``k`` of an ``n_rows x n_cols`` array."""
    _device.check(device)
    dtype = np.dtype(_dtypes.float64 if dtype is None else dtype)
    n_cols = n_rows if n_cols is None else n_cols
    return pg.eye(n_rows, n_cols, k, dtype)


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """Collective: evenly spaced values in ``[start, stop)``, computed on every locale and distributed."""
    _device.check(device)
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = _dtypes.float64 if any(isinstance(v, float) for v in (start, stop, step)) else _dtypes.int64
    return wrap(np.arange(start, stop, step, dtype=dtype))


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """Collective: ``num`` evenly spaced values from ``start`` to ``stop``, computed on every locale."""
    _device.check(device)
    if dtype is None:
        dtype = _dtypes.complex128 if isinstance(start, complex) or isinstance(stop, complex) else _dtypes.float64
    return wrap(np.linspace(start, stop, num, dtype=dtype, endpoint=endpoint))


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """Collective: ``obj`` (an array, a Python scalar or nested sequence, a buffer) as an array.

    A distributed ``obj`` stays distributed (converted by ``astype`` if ``dtype`` differs; ``copy=False``
    then raises ValueError); other values are converted on every locale alike and distributed."""
    _device.check(device)
    if is_dist(obj):
        obj = dist(obj)
        same = dtype is None or np.dtype(dtype) == obj.dtype
        if copy is False and not same:
            raise ValueError("asarray(copy=False) cannot change the data type without a copy")
        if same:
            return obj.copy() if copy else obj
        return obj.astype(dtype)
    if dtype is None and isinstance(obj, (builtins.bool, int, float, complex)):
        dtype = _default(obj)
    if copy is False and not isinstance(obj, np.ndarray):
        raise ValueError("asarray(copy=False) needs an array to share memory with")
    if isinstance(obj, (list, tuple)):
        obj = [to_numpy(o) if is_dist(o) else o for o in obj]
    a = np.array(obj, dtype=dtype, copy=True if copy else None)
    if isinstance(obj, np.ndarray) and copy is False and a is not obj and not distributable(a.shape, a.dtype):
        return obj
    return wrap(a)


meshgrid = gathered(lambda *arrays, indexing="xy": list(np.meshgrid(*arrays, indexing=indexing)), "meshgrid",
                    "Coordinate matrices from coordinate vectors.")
tril = gathered(lambda x, /, *, k=0: np.tril(x, k=k), "tril", "The lower triangle of (each matrix in) ``x``.")
triu = gathered(lambda x, /, *, k=0: np.triu(x, k=k), "triu", "The upper triangle of (each matrix in) ``x``.")
from_dlpack = gathered(lambda x, /, *, device=None, copy=None: np.from_dlpack(x), "from_dlpack",
                       "An array from an object with ``__dlpack__`` (a NumPy array is copied onto the locales).")

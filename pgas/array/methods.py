"""NumPy's array methods shared by DistArray and View (an expression reaches them through
its value): reductions along axes, scans, shape changes, products and the size attributes.
Every method is collective; the attributes (``nbytes``, ``itemsize``, ``mT``) are metadata."""

from __future__ import annotations

import numpy as np

from . import shape
from .reductions import axisreduce, scan

_NoValue = np._NoValue


class ArrayMethods:
    """Mixin of the NumPy array methods; see :mod:`pgas.array.reductions.axisreduce`, :mod:`pgas.array.reductions.scan`
    and :mod:`pgas.array.shape`."""

    __slots__ = ()

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """Collective: a DistArray of the elements converted to ``dtype`` (a view's or an
        array's distribution), as NumPy's ``astype``: ``casting`` is checked alike on every
        locale (TypeError as NumPy's); with ``copy=False`` an array or view already of
        ``dtype`` is returned itself (writes through it reach the array, as in NumPy).
        ``order`` and ``subok`` are accepted and have no effect (a locale's storage order
        is its distribution's)."""
        from .index import check_dtype
        dtype = check_dtype(dtype)
        if order not in ("K", "A", "C", "F"):
            raise ValueError(f"order must be one of 'K', 'A', 'C', 'F', not {order!r}")
        if not np.can_cast(self.dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to {dtype!r} according to the rule "
                            f"{casting!r}")
        if not copy and dtype == self.dtype:       # an array or a view itself, as NumPy
            return self
        return self._astype(dtype)

    def fill(self, value) -> None:
        """Collective: set every element to ``value`` (converted as NumPy's ``fill``: a
        replicated scalar, so its errors are raised alike on every locale)."""
        from .expr import Lazy
        if isinstance(value, Lazy) or hasattr(value, "_storage"):
            raise TypeError("fill takes a scalar value; assign a distributed one with A[...] = B")
        probe = np.empty(1, dtype=self.dtype)
        probe.fill(value)                      # NumPy's own conversion and errors
        self[...] = probe[0]

    # -- reductions --------------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
        """Collective: the sum along ``axis`` (all axes by default): a DistArray over the kept
        axes, or a scalar on every locale."""
        return axisreduce.reduce(self, "sum", axis, dtype, out, keepdims, initial, where)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
        """Collective: the product along ``axis`` (see :meth:`sum`)."""
        return axisreduce.reduce(self, "prod", axis, dtype, out, keepdims, initial, where)

    def min(self, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
        """Collective: the smallest element along ``axis`` (NaN propagates; empty raises)."""
        return axisreduce.reduce(self, "min", axis, None, out, keepdims, initial, where)

    def max(self, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
        """Collective: the largest element along ``axis`` (NaN propagates; empty raises)."""
        return axisreduce.reduce(self, "max", axis, None, out, keepdims, initial, where)

    def any(self, axis=None, out=None, keepdims=False, *, where=True):
        """Collective: whether any element along ``axis`` is true."""
        return axisreduce.reduce(self, "any", axis, None, out, keepdims, _NoValue, where)

    def all(self, axis=None, out=None, keepdims=False, *, where=True):
        """Collective: whether every element along ``axis`` is true."""
        return axisreduce.reduce(self, "all", axis, None, out, keepdims, _NoValue, where)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
        """Collective: the arithmetic mean along ``axis`` (float64 for integer input)."""
        return axisreduce.mean(self, axis, dtype, out, keepdims, where)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True):
        """Collective: the variance along ``axis`` with ``ddof`` delta degrees of freedom, over
        the elements ``where`` selects."""
        return axisreduce.var(self, axis, dtype, out, ddof, keepdims, where=where)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True):
        """Collective: the standard deviation along ``axis`` (see :meth:`var`)."""
        return axisreduce.var(self, axis, dtype, out, ddof, keepdims, std=True, where=where)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        """Collective: the global index of the smallest element along ``axis`` (flat C-order
        index for ``axis=None``); the first one on ties, NaN first."""
        return axisreduce.arg(self, "argmin", axis, out, keepdims)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        """Collective: the global index of the largest element along ``axis`` (see :meth:`argmin`)."""
        return axisreduce.arg(self, "argmax", axis, out, keepdims)

    def cumsum(self, axis=None, dtype=None, out=None):
        """Collective: the cumulative sum along ``axis`` (of the C-order ravel for ``axis=None``)."""
        return scan.scan(self, "cumsum", axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None):
        """Collective: the cumulative product along ``axis`` (see :meth:`cumsum`)."""
        return scan.scan(self, "cumprod", axis, dtype, out)

    # -- metadata --------------------------------------------------------------
    @property
    def itemsize(self) -> int:
        """The bytes of one element."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """The bytes of all elements (global, as NumPy's ``nbytes`` of the whole array)."""
        return self.size * self.dtype.itemsize

    @property
    def flat(self):
        """NumPy's element iterator: not on a distributed array (TypeError naming what to use)."""
        raise TypeError(f"{self.label} is distributed: A.flat would iterate element by element; use "
                        "A.ravel() (a 1-D DistArray), A.to_numpy().flat, or pg.forall")

    # -- products and element-wise methods --------------------------------------
    def dot(self, b, out=None):
        """Collective: ``np.dot(A, b)`` (see :func:`pgas.array.linalg.dot`)."""
        from .linalg import dot
        if out is not None:
            raise TypeError("A.dot(b, out=...) is not supported on pgas arrays: write C[...] = A.dot(b)")
        return dot(self, b)

    def conj(self):
        """Collective: the complex conjugate (a DistArray; a copy for real arrays, as NumPy)."""
        return _value(np.conjugate(self))

    conjugate = conj

    def round(self, decimals=0, out=None):
        """Collective: ``np.round(A, decimals)`` (see :func:`pgas.array.numeric.round_`)."""
        from .numeric import round_
        return _value(round_(self, decimals, out))

    def clip(self, min=None, max=None, out=None, **kwargs):
        """Collective: ``np.clip(A, min, max)`` (a DistArray)."""
        from .npapi import clip
        return _value(clip(self, min, max, out, **kwargs))

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        """Collective: ``np.trace`` of a 2-D array, a scalar on every locale."""
        from .numeric import trace
        return trace(self, offset, axis1, axis2, dtype, out)

    def searchsorted(self, v, side="left", sorter=None):
        """Collective: ``np.searchsorted`` of a sorted 1-D array (see :func:`pgas.searchsorted`)."""
        from .sorting.searchsorted import searchsorted
        if sorter is not None:
            raise TypeError("A.searchsorted(sorter=...) is not supported on pgas arrays: sort A first")
        return searchsorted(self, v, side)

    def item(self, *args):
        """Collective: one element as a Python scalar, on every locale (``A.item()`` of a
        size-1 array, ``A.item(k)`` by flat C-order index, ``A.item(i, j)``)."""
        if not args:
            if self.size != 1:
                raise ValueError("can only convert an array of size 1 to a Python scalar")
            key = (0,) * self.ndim
        elif len(args) == 1 and self.ndim != 1:
            k = args[0][0] if isinstance(args[0], tuple) and len(args[0]) == 1 else args[0]
            if isinstance(k, tuple):
                key = k
            else:
                if not -self.size <= k < self.size:
                    raise IndexError(f"index {k} is out of bounds for size {self.size}")
                key = tuple(int(x) for x in np.unravel_index(k % self.size, self.shape))
        else:
            key = args[0] if len(args) == 1 else args
        return np.asarray(self[key]).item()

    def tolist(self):
        """Collective: the elements as nested Python lists, on every locale (``A.to_numpy().tolist()``)."""
        return self.to_numpy().tolist()

    # -- the array API standard ---------------------------------------------
    def __array_namespace__(self, /, *, api_version=None):
        """The array API standard's namespace for pgas arrays, :mod:`pgas.array.api` (``pgas.array_api``);
        ``api_version`` may be None or ``"2023.12"``."""
        if api_version not in (None, "2023.12"):
            raise ValueError(f"pgas.array_api implements the array API standard 2023.12, not {api_version!r}")
        from . import api
        return api

    @property
    def device(self):
        """The array API standard's device: the locale grid (``pgas.array_api.LOCALES``)."""
        from .api.device import LOCALES
        return LOCALES

    def to_device(self, device, /, *, stream=None):
        """The array itself on ``device``, which must be the locale grid (the one device)."""
        from .api.device import to_device
        return to_device(self, device, stream=stream)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Collective: a DLPack capsule of the global array, gathered to every locale (``to_numpy``)."""
        return self.to_numpy().__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        """The DLPack device of :meth:`__dlpack__`'s gathered copy: the CPU, ``(1, 0)``."""
        return (1, 0)

    # -- shape ---------------------------------------------------------------
    @property
    def mT(self):
        """The view with the last two axes swapped (no copy); NumPy's ``mT``."""
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return shape.swapaxes(self, -1, -2)

    @property
    def T(self):
        """The transposed view (no copy)."""
        return shape.transpose(self)

    def transpose(self, *axes):
        """The view with axes permuted (reversed by default); no copy."""
        return shape.transpose(self, None if axes in ((), (None,)) else axes)

    def swapaxes(self, axis1, axis2):
        """The view with two axes interchanged; no copy."""
        return shape.swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None):
        """The view without axes of extent 1; no copy."""
        return shape.squeeze(self, axis)

    def reshape(self, *newshape, order="C"):
        """Collective: a new array of ``newshape`` with the elements in C order."""
        return shape.reshape(self, *newshape, order=order)

    def ravel(self, order="C"):
        """Collective: the elements in C order as a new 1-D array (a copy)."""
        return shape.ravel(self, order)

    def flatten(self, order="C"):
        """Collective: the elements in C order as a new 1-D array (a copy)."""
        return shape.ravel(self, order)


def _value(x):
    """A lazy expression's value as a DistArray (method results are arrays, as NumPy's)."""
    from .expr import Lazy
    return x.eval() if isinstance(x, Lazy) else x

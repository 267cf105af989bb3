"""DistArray: a distributed array whose storage lives in MPI-allocated windows.

Each locale stores the elements it owns densely (C order, blocks
concatenated); ``A.local`` is that storage as a writable NumPy array.
Element-wise operations on whole arrays of one layout compute locally with no
messages; scalar ``A[i, j]`` reads and writes are collective; ``A.get`` and
``A.put`` are one-sided.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from .. import comm
from ..layout import Distribution, Layout
from . import collective, engine, irregular, slicing
from .index import check_dtype, scalar_index
from .reduce import reduce_all

_created = itertools.count()      # creation is collective: every locale numbers arrays alike


class DistArray(NDArrayOperatorsMixin):
    """A distributed array; make one with :func:`pgas.zeros`, :func:`pgas.from_numpy` and friends."""

    __slots__ = ("layout", "dtype", "name", "local", "_flat_local", "_win", "_me", "_seq", "__weakref__")

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError("DistArray has no public constructor: use pg.zeros, pg.empty, pg.full, pg.arange or pg.from_numpy")

    @classmethod
    def _create(cls, layout: Layout, dtype, name: str | None = None) -> "DistArray":
        """Collective: allocate storage for ``layout`` (uninitialised)."""
        self = object.__new__(cls)
        self.layout = layout
        self.dtype = np.dtype(dtype)
        self.name = name
        shape = layout.local_shape(comm.here())
        self._win = comm.allocate(math.prod(shape), self.dtype, (layout.key, self.dtype.str),
                                  math.prod(layout.shape) * self.dtype.itemsize)
        self._flat_local = self._win.storage()
        self.local = self._flat_local.reshape(shape)
        self._me = comm.here()
        self._seq = next(_created)
        return self

    # -- metadata ---------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.layout.shape

    @property
    def ndim(self) -> int:
        return self.layout.ndim

    @property
    def size(self) -> int:
        return int(np.prod(self.layout.shape))

    @property
    def dist(self) -> Distribution:
        """The distribution, with the grid it was bound to."""
        return dataclasses.replace(self.layout.dist, grid=self.layout.grid)

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def label(self) -> str:
        """How errors name this array."""
        kind = f"array {self.name!r}" if self.name else f"{self.dtype} array"
        return f"{kind} of shape {self.shape}"

    def __repr__(self) -> str:
        name = f"{self.name!r}, " if self.name else ""
        return f"DistArray({name}shape={self.shape}, dtype={self.dtype}, dist={self.dist})"

    def __iter__(self):
        raise TypeError(f"{self.label} is distributed: iterate over A.to_numpy() or use pg.forall")

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"{self.label} is distributed: use A.to_numpy() to get a global NumPy array")

    def _locate_slow(self, key) -> tuple[int, int] | None:
        """:meth:`Layout.locate` for keys it declines: raises IndexError for out-of-range
        or too many indices, returns None for keys that are not one element."""
        idx = scalar_index(key, self.shape, self)
        return None if idx is None else self.layout.locate(idx)

    def owner(self, index) -> int:
        """The locale that owns element ``index``."""
        idx = self._scalar(index)
        return self.layout.owner(idx)

    def _scalar(self, key) -> tuple[int, ...]:
        idx = scalar_index(key, self.shape, self)
        if idx is None:
            raise IndexError(f"{self.label}: {key!r} does not name one element")
        return idx


    # -- collective whole-array access ----------------------------------
    def to_numpy(self) -> np.ndarray:
        """Collective: the whole global array, on every locale."""
        collective.checked("{0}.to_numpy()", self)
        parts = comm.allgatherv(self.local)
        out = np.empty(self.shape, dtype=self.dtype)
        for r, part in enumerate(parts):
            if part.size:
                out[self.layout.owned_key(r)] = part.reshape(self.layout.local_shape(r))
        return out

    def __getitem__(self, key):
        if not engine.tracing():
            loc = self.layout.locate(key)
            if loc is not None or collective.is_element(key, self.ndim):
                return collective.read(self, key, loc)     # errors raised on every locale alike
        return engine.getitem(self, key)

    def __setitem__(self, key, value) -> None:
        if not engine.tracing():
            loc = self.layout.locate(key)
            if loc is not None or collective.is_element(key, self.ndim):
                return collective.write(self, key, loc, value, engine.before_write)
        engine.setitem(self, key, value)

    # -- one-sided access ------------------------------------------------
    def get(self, index):
        """One-sided read of one element or a basic slice (ints and slices); the
        other locales are not involved.  A slice moves one message per remote owning
        locale, a strided box wherever the owner's part is one."""
        loc = self.layout.locate(index) or self._locate_slow(index)
        if loc is not None:
            owner, flat = loc
            return self._flat_local[flat] if owner == self._me else self._win.get1(owner, flat)
        return slicing.get_slice(self, index)

    def put(self, index, value) -> None:
        """One-sided write of one element or a basic slice (value broadcast to it); complete
        when it returns, visible to other locales after their next synchronisation
        (e.g. ``pg.barrier()``)."""
        loc = self.layout.locate(index) or self._locate_slow(index)
        if loc is None:
            return slicing.put_slice(self, index, value)
        value = self._element(value, index)
        owner, flat = loc
        if owner == self._me:
            self._flat_local[flat] = value[0]
        else:
            self._win.put(owner, flat, value)

    def _element(self, value, key) -> np.ndarray:
        """``value`` converted for storing in one element, as NumPy assignment does
        (``2.7`` into an int array is 2; ``2**40`` into int32 or ``1j`` into float raise)."""
        if np.ndim(value) != 0:
            raise ValueError(f"{self.label}: {key!r} is one element; cannot store a value of shape {np.shape(value)}")
        out = np.empty(1, dtype=self.dtype)
        try:
            out[0] = value
        except (TypeError, ValueError, OverflowError) as e:
            raise type(e)(f"{self.label}: cannot store {value!r} in a {self.dtype} element: {e}") from None
        return out

    def _cast(self, value) -> np.ndarray:
        value = np.asarray(value)
        if not np.can_cast(value.dtype, self.dtype, casting="same_kind") and value.dtype != self.dtype:
            if not (value.ndim == 0 and np.can_cast(np.min_scalar_type(value), self.dtype, "same_kind")):
                raise TypeError(f"{self.label}: cannot store {value.dtype} values in a {self.dtype} array")
        return value.astype(self.dtype, copy=False)

    # -- irregular access: bodies in pgas.array.irregular ------------------
    def update_one(self, index, value, op: str = "add") -> None:
        """One-sided ``A[index] op= value`` at the owner in one message (see :mod:`pgas.array.irregular`)."""
        irregular.update_one(self, index, value, op)

    def fetch_add(self, index, value):
        """One-sided atomic add; returns the previous value (one message)."""
        return irregular.fetch_add(self, index, value)

    def compare_exchange(self, index, expected, value):
        """One-sided atomic compare-and-swap; returns the value found (one message)."""
        return irregular.compare_exchange(self, index, expected, value)

    def index_plan(self, indices) -> "irregular.IndexPlan":
        """Collective: inspect an index pattern once, for repeated gather / scatter / update."""
        collective.checked("{0}.index_plan(...)", self)
        return irregular.index_plan(self, indices)

    def update(self, indices, values, op: str = "add") -> None:
        """Collective: ``A[i] op= v`` for every locale's (index, value) pairs, repeats included."""
        collective.checked(f"{{0}}.update(..., op={op!r})", self)
        engine.before_write(self, None)
        irregular.update(self, indices, values, op)

    def gather(self, indices) -> np.ndarray:
        """Collective: the values at this locale's indices (or index plan), in order."""
        collective.checked("{0}.gather(...)", self)
        return irregular.gather(self, indices)

    def scatter(self, indices, values) -> None:
        """Collective: ``A[i] = v`` for every locale's pairs (last value wins on repeats)."""
        collective.checked("{0}.scatter(...)", self)
        engine.before_write(self, None)
        irregular.scatter(self, indices, values)

    # -- element-wise operations on whole arrays --------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method != "__call__" or kwargs.get("where", True) is not True:
            return NotImplemented
        outs = out if out is not None else ()
        arrays = [x for x in inputs + tuple(outs) if isinstance(x, DistArray)]
        layout = arrays[0].layout
        if any(a.layout.key != layout.key for a in arrays) or any(
                not isinstance(x, DistArray) and not engine.is_scalar(x) for x in inputs + tuple(outs)):
            return engine.ufunc(ufunc, method, inputs, out, kwargs)
        collective.ufunc(ufunc, inputs, outs)          # check the call; raise data errors everywhere
        args = [x.local if isinstance(x, DistArray) else x for x in inputs]
        if outs:
            for o in outs:
                engine.before_write(o, None)
            ufunc(*args, out=tuple(o.local for o in outs), **kwargs)
            return outs[0] if len(outs) == 1 else outs
        probe = ufunc(*[np.empty(0, x.dtype) if isinstance(x, DistArray) else x for x in inputs], **kwargs)
        probe = probe if isinstance(probe, tuple) else (probe,)
        res = tuple(DistArray._create(layout, p.dtype) for p in probe)
        ufunc(*args, out=tuple(r.local for r in res), **kwargs)
        return res[0] if len(res) == 1 else res

    def astype(self, dtype) -> "DistArray":
        """Collective: a copy converted to ``dtype`` (same distribution)."""
        collective.checked("{0}.astype(...)", self, args=(str(dtype),))
        res = DistArray._create(self.layout, check_dtype(dtype))
        res.local[...] = self.local
        return res

    def copy(self) -> "DistArray":
        """Collective: a copy with the same distribution."""
        return self.astype(self.dtype)

    # -- reductions --------------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, **kw):
        """Collective: the sum of all elements, on every locale."""
        return reduce_all(self, np.sum, "sum", axis, dtype, out)

    def prod(self, axis=None, dtype=None, out=None, **kw):
        """Collective: the product of all elements, on every locale."""
        return reduce_all(self, np.prod, "prod", axis, dtype, out)

    def min(self, axis=None, out=None, **kw):
        """Collective: the smallest element, on every locale."""
        return reduce_all(self, np.min, "min", axis, None, out)

    def max(self, axis=None, out=None, **kw):
        """Collective: the largest element, on every locale."""
        return reduce_all(self, np.max, "max", axis, None, out)

    def mean(self, axis=None, dtype=None, out=None, **kw):
        """Collective: the arithmetic mean of all elements, on every locale."""
        total = reduce_all(self, np.sum, "sum", axis, dtype if dtype is not None else np.result_type(self.dtype, 0.0), out,
                           "mean")
        return total / self.size


engine.register_array(DistArray)

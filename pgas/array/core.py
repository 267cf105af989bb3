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
from typing import overload

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from .. import comm
from ..exec import fperr, settings
from ..exec.ghosts import GhostState, wrote
from ..exec.store import Store
from ..layout import Distribution, Layout
from . import collective, engine, fancy, ghosts, irregular, npapi, printing, slicing
from .index import check_dtype, convert, scalar_index
from .methods import ArrayMethods
from .view import _slices as slices

_created = itertools.count()      # creation is collective: every locale numbers arrays alike


class DistArray(ArrayMethods, ghosts.GhostMethods, NDArrayOperatorsMixin):
    """A distributed array; make one with ``pg.zeros``, ``pg.from_numpy`` and friends.

    Every locale holds the same ``DistArray`` object's metadata and its own part of
    the elements.  Indexing with slices builds views and lazy expressions that run
    as one collective statement when assigned; see the documentation pages
    *Concepts* and *Memory model* for what is collective and when writes are seen.

    Attributes
    ----------
    shape : tuple of int
        The global shape.
    ndim, size : int
        The number of dimensions and of elements (global).
    dtype : numpy.dtype
        The element type.
    dist : Distribution
        The distribution, with the locale grid it was bound to
        (``Cyclic(grid=(2, 2))``).
    layout : pgas.layout.Layout
        The distribution bound to this shape and locale count: ``layout.grid``
        (locales per dimension), ``layout.blocks`` (block size per dimension),
        ``layout.owner(index)``, ``layout.local_shape(locale)``,
        ``layout.owned(locale)`` (the global indices a locale stores).  Pure
        index arithmetic: using it sends no message.
    local : numpy.ndarray
        This locale's elements as a writable NumPy array of shape
        ``layout.local_shape(pg.here)``, blocks concatenated in global order.
        Reading and writing it are plain memory accesses (no message); writes
        are seen by other locales after ``pg.barrier()``.
    name : str or None
        The name given at construction; error messages use it.
    store : pgas.exec.store.Store
        What the statement engine runs over on this locale: the storage in the
        array's MPI window, the ghost-cell state and the count of collective
        writes.  Internal to the library: read and write elements through
        ``local`` and indexing instead.

    Examples
    --------
    On 4 locales (``pgas run -n 4``), a Cyclic 8 x 8 array sits on a 2 x 2 grid
    and each locale stores a 4 x 4 block of it:

    >>> A = pg.zeros((8, 8), dist=pg.Cyclic())        # doctest: +SKIP
    >>> A.layout.grid, A.layout.blocks, A.local.shape  # doctest: +SKIP
    ((2, 2), (1, 1), (4, 4))
    >>> A.owner((3, 2)), A.layout.owned(1)[1]          # doctest: +SKIP
    (2, array([1, 3, 5, 7]))
    """

    __slots__ = ("layout", "dtype", "name", "store", "_local", "_storage", "_win", "_me", "_seq", "__weakref__")
    # the public slots' types, for type checkers (annotations only: the slots hold the values)
    layout: Layout
    dtype: np.dtype
    name: str | None
    store: Store

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError("DistArray has no public constructor: use pg.zeros, pg.empty, pg.full, pg.arange or pg.from_numpy")

    @classmethod
    def _create(cls, layout: Layout, dtype, name: str | None = None) -> "DistArray":
        """Collective: allocate storage for ``layout`` (uninitialised)."""
        self = object.__new__(cls)
        self.layout = layout
        self.dtype = np.dtype(dtype)
        self.name = name
        collected = collective.allocating(layout, self.dtype)     # making a window is collective: agreed first
        shape = layout.local_shape(comm.here())
        size = math.prod(layout.storage_shape(comm.here()))           # the local shape, plus any ghost cells
        win = comm.allocate(size, self.dtype, (layout.key, self.dtype.str),
                            math.prod(layout.shape) * self.dtype.itemsize, collected)
        #: What the engine runs over (:class:`pgas.exec.store.Store`): storage, window,
        #: ghost-cell state, and the collective writes seen (lazy expressions check it).
        self.store = Store(layout, self.dtype, win, GhostState() if layout.ghosts else None)
        self._win = win
        self._storage = self.store.storage            # flat; with ghost cells, the padded block
        self._local = ghosts.interior(self._storage, layout) if layout.ghosts else self._storage.reshape(shape)
        self._me = comm.here()
        self._seq = next(_created)
        engine.allocated(self)                 # its one-sided writes count as writes at pg.barrier()
        return self

    @property
    def local(self) -> np.ndarray:
        """This locale's elements as a writable NumPy array (a view of its window storage;
        with ghost cells, the interior of the padded block).  With ghost cells, taking
        this view counts as a write: statements stop reading the ghost cells that mirror
        it until the next ``update_ghosts`` (see ``docs/polyshift.md``)."""
        if engine.capturing:
            engine.capturing[-1].refuse("array data read or written outside a statement (A.local, a reduction, a copy, "
                                          "a ufunc with several outputs)")
        if self.store.ghost is not None:
            self.store.ghost.touch()
        return self._local

    # -- metadata ---------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The global shape."""
        return self.layout.shape

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self.layout.ndim

    @property
    def size(self) -> int:
        """The number of elements (global)."""
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
        """Collective: the values as NumPy shows them (only the elements shown move) and the
        distribution; call it on every locale alike (see :mod:`pgas.array.printing`)."""
        return printing.distarray_repr(self)

    def __str__(self) -> str:
        """Collective: the values as NumPy's ``str`` shows them (see :meth:`__repr__`)."""
        return printing.distarray_str(self)

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


    @property
    def _flat_local(self) -> np.ndarray:
        """This locale's elements, flat and dense, for the paths that need dense storage:
        an array with ghost cells raises here, on every locale alike, rather than misread."""
        if self.layout.ghosts:
            ghosts.dense_only(self)
        return self._storage

    # -- collective whole-array access ----------------------------------
    @overload
    def to_numpy(self, root: None = None) -> np.ndarray: ...

    @overload
    def to_numpy(self, root: int) -> np.ndarray | None: ...

    def to_numpy(self, root: int | None = None) -> np.ndarray | None:
        """Collective: the whole global array, on every locale; with ``root``, only on locale
        ``root`` (each locale sends its part there, one message) and None elsewhere."""
        if root is None:
            collective.checked("{0}.to_numpy()", self, args=(repr(root),))
            parts = comm.allgatherv(np.ascontiguousarray(self._local).reshape(-1))
        else:
            collective.folded("{0}.to_numpy()", self, args=(repr(root),))     # agreed in the exchange
            send = [np.empty(0, self.dtype)] * self.layout.num_locales
            bad = None
            if not isinstance(root, (int, np.integer)) or not 0 <= root < self.layout.num_locales:
                bad = ValueError(f"to_numpy: root must be a locale number in [0, {self.layout.num_locales}), "
                                 f"got {root!r}")
            else:
                send[root] = np.ascontiguousarray(self._local).reshape(-1)
            parts = comm.exchange(send, self.dtype, bad)
            if self._me != root:
                return None
        out = np.empty(self.shape, dtype=self.dtype)
        for r, part in enumerate(parts):
            if part.size:
                out[self.layout.owned_key(r)] = part.reshape(self.layout.local_shape(r))
        return out

    def redistribute(self, dist) -> "DistArray":
        """Collective: a copy with distribution ``dist`` (one statement: at most one aggregated
        message per locale pair)."""
        from .creation.conversion import redistribute

        return redistribute(self, dist)

    def __getitem__(self, key):
        if type(key) is tuple and key and not engine._tracers:
            v = slices(self, key)                      # the common case, a slice on every dimension
            if v is not None:
                return v
        key = fancy.scalar_key(key)
        if type(key) is tuple and key and type(key[0]) is slice:
            return engine.getitem(self, key)           # not one element: a view (or a forall error)
        if not engine.tracing():
            loc = self.layout.locate(key)
            if loc is not None or collective.is_element(key, self.ndim):
                if engine.capturing:
                    engine.capturing[-1].refuse("an element read")
                return collective.read(self, key, loc)     # errors raised on every locale alike
        return engine.getitem(self, key)

    def __setitem__(self, key, value) -> None:
        if type(key) is tuple and key and not engine._tracers:
            v = slices(self, key)                      # the common case, a slice on every dimension
            if v is not None:
                return engine.assign(v, value)
        key = fancy.scalar_key(key)
        if type(key) is tuple and key and type(key[0]) is slice:
            return engine.setitem(self, key, value)    # not one element
        if not engine.tracing():
            loc = self.layout.locate(key)
            if loc is not None or collective.is_element(key, self.ndim):
                if engine.capturing:
                    engine.capturing[-1].refuse("an element write")
                return collective.write(self, key, loc, value, engine.before_write)
        engine.setitem(self, key, value)

    # -- one-sided access ------------------------------------------------
    def get(self, index):
        """One-sided read of one element or a basic slice (ints and slices); the
        other locales are not involved.  A slice moves one message per remote owning
        locale, a strided box wherever the owner's part is one."""
        if engine.capturing:
            engine.capturing[-1].refuse("A.get (one-sided)")
        loc = self.layout.locate(index) or self._locate_slow(index)
        if settings.strict:
            comm.fence()                    # after every earlier access; sees writes others completed
        if loc is not None:
            owner, flat = loc
            if owner == self._me:
                return self._storage[flat]
            comm.await_target(owner)
            return self._win.get1(owner, flat)
        return slicing.get_slice(self, index)

    def put(self, index, value) -> None:
        """One-sided write of one element or a basic slice (value broadcast to it); complete
        when it returns, visible to other locales after their next synchronisation
        (e.g. ``pg.barrier()``)."""
        if engine.capturing:
            engine.capturing[-1].refuse("A.put (one-sided)")
        loc = self.layout.locate(index) or self._locate_slow(index)
        self._one_sided("put")              # elements and slices alike
        if loc is None:
            slicing.put_slice(self, index, value)
        else:
            value = self._element(value, index)
            owner, flat = loc
            if owner == self._me:
                self._storage[flat] = value[0]
            else:
                comm.await_target(owner)
                self._win.put(owner, flat, value)
        if settings.strict:
            comm.fence()                    # complete and ordered before the next access

    def _one_sided(self, what: str) -> None:
        """Hook of every one-sided write (``what``: the method): ghost copies of this array
        stop being current, and lazy expressions learn of it (:func:`engine.one_sided_write`)."""
        wrote(self)
        engine.one_sided_write(self, what)

    def get_async(self, index) -> "slicing.Pending":
        """Start a one-sided read of one element or a basic slice; ``h.wait()`` returns it.
        Reads to several owners (and several ``get_async`` calls) are in flight together."""
        if engine.capturing:
            engine.capturing[-1].refuse("A.get_async (one-sided)")
        if settings.strict:
            comm.fence()
            h = slicing.start_get(self, index)
            comm.fence()                    # strict: complete before the next access
            return h
        return slicing.start_get(self, index)

    def put_async(self, index, value) -> "slicing.Pending":
        """Start a one-sided write of one element or a basic slice; ``h.wait()`` completes it
        (then visible to other locales after their next synchronisation, as :meth:`put`)."""
        if engine.capturing:
            engine.capturing[-1].refuse("A.put_async (one-sided)")
        self._one_sided("put_async")
        h = slicing.start_put(self, index, value)
        if settings.strict:
            comm.fence()
        return h

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
        return convert(value, self.dtype, self, same_kind=True)

    # -- irregular access: bodies in pgas.array.irregular ------------------
    def update_one(self, index, value, op: str = "add") -> None:
        """One-sided ``A[index] op= value`` at the owner, atomically, in one message (none if
        local); ``op`` is one of ``add, xor, or, and, min, max, replace`` as the dtype allows.
        Complete at the caller by its next synchronisation; seen by other locales after
        the next ``pg.barrier()``."""
        if engine.capturing:
            engine.capturing[-1].refuse("A.update_one (one-sided)")
        self._one_sided("update_one")
        irregular.update_one(self, index, value, op)
        if settings.strict:
            comm.fence()

    def fetch_add(self, index, value):
        """One-sided atomic add; returns the previous value (one message)."""
        if engine.capturing:
            engine.capturing[-1].refuse("A.fetch_add (one-sided)")
        self._one_sided("fetch_add")
        old = irregular.fetch_add(self, index, value)
        if settings.strict:
            comm.fence()
        return old

    def compare_exchange(self, index, expected, value):
        """One-sided atomic compare-and-swap; returns the value found (one message)."""
        if engine.capturing:
            engine.capturing[-1].refuse("A.compare_exchange (one-sided)")
        self._one_sided("compare_exchange")
        found = irregular.compare_exchange(self, index, expected, value)
        if settings.strict:
            comm.fence()
        return found

    def index_plan(self, indices) -> "irregular.IndexPlan":
        """Collective: inspect an index pattern once, for repeated gather / scatter / update."""
        collective.folded("{0}.index_plan(...)", self)               # agreed in the plan's exchange
        return irregular.index_plan(self, indices)

    def update(self, indices, values, op: str = "add") -> None:
        """Collective: ``A[i] op= v`` for every locale's (index, value) pairs, repeats included.
        ``op``: ``"add"``, ``"multiply"``, ``"min"``, ``"max"``, ``"xor"``, ``"or"``, ``"and"``
        or ``"replace"``.  ``np.add.at(A, idx, v)`` (and ``multiply``, ``minimum``,
        ``maximum``, the bitwise and logical ufuncs) runs as
        this update: each locale passes its own ``idx`` and ``v``, and every locale's
        contributions are applied once (the PGAS meaning, unlike a global-view statement)."""
        collective.folded(f"{{0}}.update(..., op={op!r})", self)     # agreed in update's exchange
        engine.before_write(self, None)
        irregular.update(self, indices, values, op)

    def gather(self, indices) -> np.ndarray:
        """Collective: the values at this locale's indices (or index plan), in order."""
        if isinstance(indices, irregular.IndexPlan):  # messages between peers only, as a ghost update
            collective.exchanging("{0}.gather(plan)", self, args=(indices.number,))
        else:
            collective.folded("{0}.gather(...)", self)               # agreed in the plan's exchange
        return irregular.gather(self, indices)

    def scatter(self, indices, values) -> None:
        """Collective: ``A[i] = v`` for every locale's pairs (last value wins on repeats)."""
        collective.folded("{0}.scatter(...)", self)                  # agreed in update's exchange
        engine.before_write(self, None)
        irregular.scatter(self, indices, values)

    # -- element-wise operations on whole arrays --------------------------
    def __bool__(self) -> bool:
        """NumPy's truth value: that of the one element of a size-1 array (collective read);
        ValueError otherwise, as NumPy (``if A > 1:`` on a larger array is ambiguous)."""
        if self.size != 1:
            what = "an empty array" if self.size == 0 else "an array with more than one element"
            raise ValueError(f"The truth value of {what} is ambiguous ({self.label}): use np.any(A) or "
                             "np.all(A) (collective, the same on every locale)")
        return bool(self[(0,) * self.ndim])

    def _no_scalar(self, *_):
        raise TypeError(f"only 0-dimensional arrays can be converted to Python scalars ({self.label}): "
                        "read one element with A[i, j] (collective) or A.get(i, j) (one-sided)")

    __float__ = __int__ = __complex__ = __index__ = _no_scalar

    def __array_function__(self, func, types, args, kwargs):
        return npapi.array_function(func, types, args, kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        return npapi.ufunc(ufunc, method, inputs, out, kwargs, _elementwise)

    def _astype(self, dtype) -> "DistArray":
        """Collective: a copy converted to ``dtype`` (same distribution); see ``astype``."""
        collective.folded("{0}.astype(...)", self, args=(str(dtype),))   # agreed as the result is made
        res = DistArray._create(self.layout, check_dtype(dtype))

        def cast(_):
            res.local[...] = self.local
        fperr.run(cast, None)                  # a cast's error (nan to int) raises on every locale
        return res

    def copy(self) -> "DistArray":
        """Collective: a copy with the same distribution."""
        return self._astype(self.dtype)

    # -- sorting: bodies in pgas.array.sorting.sort -------------------------
    def sort(self, axis=-1, kind=None, order=None) -> None:
        """Collective: sort in place, stably (see :func:`pgas.sort`)."""
        from .sorting.sort import sort_inplace

        sort_inplace(self, axis, kind, order)

    def argsort(self, axis=-1, kind=None, order=None) -> "DistArray":
        """Collective: the stable sorting indices (see :func:`pgas.argsort`)."""
        from .sorting.sort import argsort

        return argsort(self, axis, kind, order)


def _elementwise(ufunc, method, inputs, out, kwargs):
    """A plain element-wise ufunc call: local on arrays of one layout, else a statement."""
    if engine.capturing and not engine.tracing() and ufunc.nout == 1:
        return engine.ufunc(ufunc, method, inputs, out, kwargs)   # recorded as the expression it builds
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
        _local_call(ufunc, args, tuple(o.local for o in outs), kwargs)
        comm.statement_done()
        return outs[0] if len(outs) == 1 else outs
    probe = ufunc(*[np.empty(0, x.dtype) if isinstance(x, DistArray) else x for x in inputs], **kwargs)
    probe = probe if isinstance(probe, tuple) else (probe,)
    for p in probe:
        check_dtype(p.dtype, f"pgas arrays (the result of np.{ufunc.__name__})")
    res = tuple(DistArray._create(layout, p.dtype) for p in probe)
    _local_call(ufunc, args, tuple(r.local for r in res), kwargs)
    return res[0] if len(res) == 1 else res


def _local_call(ufunc, args, outs, kwargs) -> None:
    """``ufunc(*args, out=outs)`` on local parts.  An integer power may fail on some
    locales only (a negative exponent), so the locales agree first."""
    if ufunc is np.power and fperr.integer_loop(ufunc, args, kwargs):
        e = args[1]
        if isinstance(e, np.ndarray) and e.ndim:
            bad = comm.allreduce(np.int32(e.dtype.kind == "i" and e.size > 0 and e.min() < 0), "max")
        else:
            bad = np.asarray(e).dtype.kind == "i" and e < 0
        if bad:
            raise ValueError("Integers to negative integer powers are not allowed.")
    fperr.run(lambda _: ufunc(*args, out=outs, **kwargs), None)     # np.errstate raise: every locale



engine.register_array(DistArray)

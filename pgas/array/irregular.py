"""Irregular access to a DistArray: remote updates, aggregated gather / scatter, atomics.

These are the bodies of the ``DistArray`` methods of the same names; each
takes the array as its first argument and talks only through :mod:`pgas.comm`.

One-sided (SPMD) operations move one message, or none when the element is local:

- ``update_one(A, index, value, op)`` — a read-modify-write at the owner
  (MPI accumulate): the UPC paper's one-way update, one message instead of a
  get and a put (``pg.config(oneway=False)`` makes it, and ``update``, round
  trips instead, and ``pg.config(aggregate=False)`` makes ``update`` move a message
  per record: :mod:`pgas.array.ablated`);
- ``fetch_add(A, index, v)`` and ``compare_exchange(A, index, expected, v)``.

Collective operations — every locale passes its own indices, any number,
repeats allowed, values an array of the same length or one scalar for all —
move one message per (source, target) pair each way (point-to-point, empty ones
included, :func:`pgas.comm.exchange`: no collective, and the same messages carry
whether each locale's input was good, so errors are still raised everywhere alike):

- ``update(A, indices, values, op)``: repeats are combined at the source, then
  (offset, value) records go to each owner in one message and are applied there
  in locale order (:mod:`pgas.array.apply`, compiled with numba when installed);
  integer ops that are exact, associative and commutative (``add, xor, or, and,
  min, max``) on a 1-D array skip the combining (the same bits: RandomAccess's
  blocks are bucketed in one compiled pass, :func:`_bucket_1d`);
- ``gather(A, indices)``: offsets go out, values come back;
- ``scatter(A, indices, values)``: ``update`` with ``op="replace"``.

Indices: for a 1-D array an int array of global indices; for an n-D array a
tuple of ``ndim`` int arrays (one per dimension) or an ``(k, ndim)`` int array
of index rows.  Negative indices count from the end, as in NumPy.

Inspector / executor: ``plan = index_plan(A, indices)`` (``A.index_plan``)
does the bucketing and sends each owner, once, the offsets it will serve.  Pass
the plan instead of the indices to ``gather``, ``scatter`` or ``update`` and
only values travel: one message per locale pair, no index traffic, no
re-bucketing.  A plan serves every array of the same shape and distribution.

Ops: ``add, xor, or, and, min, max, replace`` on integer arrays; ``add, min,
max, replace`` on floats; ``add, replace`` on complex; ``xor, or, and,
replace`` on bool.  ``replace`` with repeated indices keeps the last value:
the last position on a locale, and among locales the one with the highest
number.  Errors (index out of range, values of the wrong length or dtype, an op
the dtype lacks) are raised on every locale alike before anything is applied.

A CG-style loop makes its plan once::

    plan = p.index_plan(columns)          # collective, once
    for it in range(25):
        q_local = local_matrix @ p.gather(plan)
"""

from __future__ import annotations

import functools
import itertools
import weakref

import numpy as np

from .. import comm
from ..exec import fperr, settings, workers
from . import ablated, apply, counting

_UFUNCS = apply.UFUNCS
_OPS_BY_KIND = {"i": ("add", "multiply", "xor", "or", "and", "min", "max", "replace"),
                "u": ("add", "multiply", "xor", "or", "and", "min", "max", "replace"),
                "f": ("add", "multiply", "min", "max", "replace"),
                "c": ("add", "multiply", "replace"),
                "b": ("xor", "or", "and", "replace")}
_MPI_OPS = {"add": "sum", "multiply": "prod", "min": "min", "max": "max", "replace": "replace",
            "xor": "bxor", "or": "bor", "and": "band"}
_MPI_BOOL_OPS = {"xor": "lxor", "or": "lor", "and": "land", "replace": "replace"}


def check_op(A, op: str) -> None:
    """Raise (on every locale alike: ``op`` and the dtype are replicated) if ``op`` cannot update ``A``."""
    if op not in _UFUNCS:
        raise ValueError(f"{A.label}: unknown update op {op!r} (one of {', '.join(_UFUNCS)})")
    if op not in _OPS_BY_KIND[A.dtype.kind]:
        raise TypeError(f"{A.label}: op {op!r} is not defined for {A.dtype} "
                        f"(ops for {A.dtype}: {', '.join(_OPS_BY_KIND[A.dtype.kind])})")


# -- one-sided ---------------------------------------------------------------
def _target(A, index) -> tuple[int, int]:
    """(owner, flat local offset) of one element; IndexError naming the array if out of range."""
    loc = A.layout.locate(index) or A._locate_slow(index)
    if loc is None:
        raise IndexError(f"{A.label}: {index!r} does not name one element")
    if loc[0] != A._me:
        comm.await_target(loc[0])        # never race with a statement still running there
    return loc


def _scalar_value(A, value):
    """One value for an update of ``A``: the same-kind rule of the batch operations (a float
    into an int array is a TypeError), then NumPy's range check (2**40 into int32 raises)."""
    if np.ndim(value) != 0:
        raise ValueError(f"{A.label}: expected one value, got shape {np.shape(value)}")
    if not np.can_cast(_weak_type(A, value), A.dtype, "same_kind"):
        raise TypeError(f"{A.label}: cannot update {A.dtype} elements with {np.result_type(value)} value {value!r}")
    return A._element(value, None)


def _weak_type(A, value) -> np.dtype:
    """The dtype ``value`` counts as when stored in ``A``: a Python scalar is weak, as in NumPy's
    promotion (2 into uint8 is fine, 2.5 into an int array is a float); others are their own."""
    if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
        return np.result_type(A.dtype, value)
    return np.result_type(value)


def update_one(A, index, value, op: str = "add") -> None:
    """One-sided, asynchronous ``A[index] = A[index] op value`` at the owner, atomically, in
    one message, as the XL UPC runtime's remote update: it returns at once and completes at
    this locale's next synchronisation (``pg.barrier()``, which also makes it visible to the
    other locales, or a statement on ``A``).  Updates of one element from many locales
    combine atomically, in any order."""
    check_op(A, op)
    target, off = _target(A, index)
    if not settings.get("oneway"):                 # pg.config(oneway=False): a get and a compare-and-swap
        ablated.update_one(A, target, off, _scalar_value(A, value), op)
        return
    A._win.accumulate_async(target, off, _scalar_value(A, value), _mpi_op(A, op))


def _mpi_op(A, op: str) -> str:
    """The MPI accumulate op of update ``op`` on ``A``'s dtype."""
    return (_MPI_BOOL_OPS if A.dtype.kind == "b" else _MPI_OPS)[op]


def fetch_add(A, index, value):
    """One-sided atomic ``old = A[index]; A[index] += value``; returns ``old`` (one message)."""
    if A.dtype.kind not in "iuf":
        raise TypeError(f"{A.label}: fetch_add needs an integer or float array, not {A.dtype}")
    target, off = _target(A, index)
    return A._win.fetch_and_op(target, off, _scalar_value(A, value), "sum")


def compare_exchange(A, index, expected, value):
    """One-sided atomic: if ``A[index] == expected`` store ``value``; returns the value found
    (the exchange happened iff it equals ``expected``).  Integer and bool arrays; one message."""
    if A.dtype.kind not in "iub":
        raise TypeError(f"{A.label}: compare_exchange needs an integer or bool array, not {A.dtype}")
    target, off = _target(A, index)
    return A._win.compare_and_swap(target, off, _scalar_value(A, expected), _scalar_value(A, value))


# -- index normalisation and local inspection ----------------------------------
def _index_arrays(A, indices) -> tuple[np.ndarray, ...]:
    """Per-dimension int64 arrays of in-range non-negative global indices (raises on bad input)."""
    if isinstance(indices, tuple):
        cols = [np.asarray(c) for c in indices]
        if len(cols) != A.ndim:
            raise IndexError(f"{A.label}: {len(cols)} index arrays given for {A.ndim} dimensions")
    else:
        arr = np.asarray(indices)
        if arr.ndim == 1 and A.ndim == 1:
            cols = [arr]
        elif arr.ndim == 2 and arr.shape[1] == A.ndim:
            cols = list(arr.T)
        else:
            raise IndexError(f"{A.label}: indices of shape {arr.shape}: give a 1-D array for a 1-D array, "
                             f"a tuple of {A.ndim} index arrays or a (k, {A.ndim}) array")
    out = []
    for d, c in enumerate(cols):
        if c.ndim != 1 or len(c) != len(cols[0]):
            raise IndexError(f"{A.label}: index arrays must be 1-D and of one length, got shapes "
                             f"{[np.shape(x) for x in cols]}")
        if c.size and c.dtype.kind not in "iu":
            raise IndexError(f"{A.label}: indices must be integers, got {c.dtype}")
        n = A.shape[d]
        if c.dtype.kind == "u" and c.size and int(c.max()) >= n:       # before the cast wraps it negative
            raise IndexError(f"{A.label}: index {int(c.max())} is out of bounds for axis {d} with size {n}")
        c = c.astype(np.int64, copy=False)
        bad = (c < -n) | (c >= n)
        if bad.any():
            k = int(np.argmax(bad))
            raise IndexError(f"index {int(c[k])} (position {k}) is out of bounds for {A.label} "
                             f"(axis {d} has size {n})")
        out.append(np.where(c < 0, c + n, c))
    return tuple(out)


def _locate_1d(A, indices):
    """``(owners, local offsets)`` of int64 indices into a 1-D array without ghost cells in
    one compiled pass (:func:`counting.locate_1d`), or None: then (other shapes, dtypes,
    NumPy mode, an index out of range) the general path does it and raises on bad input."""
    if (A.ndim != 1 or A.layout.ghosts or type(indices) is not np.ndarray or indices.ndim != 1
            or indices.dtype != np.int64 or not indices.size):
        return None
    m = A.layout.maps[0]
    return counting.locate_1d(indices, A.shape[0], m.b, m.p)


class _Pattern:
    """This locale's half of an inspector: its indices bucketed by owner and deduplicated.

    ``offsets`` holds the distinct (owner, local offset) targets grouped by owner,
    ``counts[r]`` how many go to locale ``r``; ``slot[i]`` is the entry of index
    ``i``; ``first`` / ``last`` the positions of each entry's first / last occurrence.
    Made in O(n) (:mod:`pgas.array.counting`: a hash pass for the repeats, a counting
    pass for the owners), without sorting when numba is installed.
    """

    def __init__(self, A, indices) -> None:
        P = A.layout.num_locales
        fast = _locate_1d(A, indices)
        if fast is not None:
            owners, local = fast
            self.n = len(owners)
        else:
            cols = _index_arrays(A, indices)
            self.n = len(cols[0])
            owners = np.asarray(A.layout.owners(cols), dtype=np.int64).reshape(-1)
            local = np.asarray(A.layout.local_flat(cols, owners), dtype=np.int64).reshape(-1)
        # padded storage offsets (ghost cells) reach past A.size: the key's width covers them
        width = max(A.size, 1) if not A.layout.ghosts else int(np.prod([n + 2 * g for n, g in zip(A.shape, A.layout.ghosts)]))
        self.offsets, self.counts, self.slot, self.first, self.last, self.repeats = counting.inspect(
            owners, local, width, P)
        self._bounds = np.cumsum(self.counts)[:-1]

    def split(self, data: np.ndarray) -> list[np.ndarray]:
        """``data`` (one entry per distinct target, in ``offsets`` order) cut per owner."""
        edges = [0, *self._bounds.tolist(), len(data)]
        return [data[a:b] for a, b in zip(edges[:-1], edges[1:])]


_plans = itertools.count()


class IndexPlan:
    """An inspected index pattern (make with ``A.index_plan(indices)``, collective).

    Holds this locale's bucketing of its indices and, for every other locale,
    the local offsets this locale serves it.  Passing the plan to ``gather``,
    ``scatter`` or ``update`` moves only values.  Valid for every array of the
    same shape and distribution.  ``number`` counts plans made (the same on every
    locale): collective checking tells plans apart by it.
    """

    def __init__(self, A, pattern: _Pattern, served: list[np.ndarray]) -> None:
        self.number = next(_plans)          # the same on every locale: plans are made collectively
        self.layout_key = A.layout.key
        self.pattern = pattern
        self.served = served
        self._gathering = None
        self._runs: dict = {}              # dtype -> _GatherRun: the persistent messages of repeated gathers
        self._checked = None

    def __len__(self) -> int:
        """The number of indices this locale passed."""
        return self.pattern.n

    def __copy__(self) -> IndexPlan:
        """A plan of the same pattern with messages of its own (a copy sharing the
        original's persistent requests would read stale buffers once the original is
        collected and its requests freed)."""
        new = object.__new__(IndexPlan)
        new.number, new.layout_key, new.pattern, new.served = self.number, self.layout_key, self.pattern, self.served
        new._gathering, new._runs, new._checked = self._gathering, {}, self._checked
        return new

    def __deepcopy__(self, memo) -> IndexPlan:
        return self.__copy__()

    def gathering(self) -> _Gathering:
        """What every gather by this plan reuses (made at the first, :class:`_Gathering`)."""
        if self._gathering is None:
            self._gathering = _Gathering(self.pattern, self.served, comm.here())
        return self._gathering

    def gather(self, flat: np.ndarray) -> np.ndarray:
        """The values at this plan's indices of flat storage ``flat`` (an array's, synchronised
        by the caller), by this plan's persistent messages for ``flat``'s dtype (made at the
        first gather of that dtype, freed with the plan)."""
        run = self._runs.get(flat.dtype)
        if run is None:
            run = self._runs[flat.dtype] = _GatherRun(self.gathering(), flat.dtype)
            weakref.finalize(self, comm.free_handles, run.free)     # (on MPI's thread)
        return run(flat)

    def check(self, A) -> None:
        if A.layout is self._checked:
            return
        if A.layout.key != self.layout_key:
            raise ValueError(f"{A.label}: this index plan was made for another shape or distribution")
        self._checked = A.layout            # layouts are immutable: the next check by this one is free


class _Gathering:
    """A plan's gather, in terms of its peers only: ``recvs``, ``(owner, start, stop)`` in the
    buffer of distinct values (``size`` long, owners in locale order) for each other
    locale this one reads from; ``sends``, ``(locale, source)`` for each other locale
    served, ``source`` a slice of the storage where the offsets it is served are
    consecutive (one copy, no index lookup), else the offsets; ``mine``, ``(source,
    start, stop)`` of this locale's own part or None; ``identity``, whether the buffer
    is already the result (each index distinct and in owner order, as sorted indices
    of a Block array).  Made once in O(P) (the plan's per-locale counts); a gather then
    touches only the peers."""

    __slots__ = ("recvs", "sends", "mine", "size", "identity", "slot")

    def __init__(self, pattern: _Pattern, served: list[np.ndarray], me: int) -> None:
        counts = np.asarray(pattern.counts, dtype=np.int64)
        ends = np.cumsum(counts)
        self.size = int(ends[-1]) if len(ends) else 0
        self.recvs, self.mine = [], None
        for r in np.flatnonzero(counts).tolist():
            a, b = int(ends[r] - counts[r]), int(ends[r])
            if r == me:
                self.mine = (_run(served[me]), a, b)
            else:
                self.recvs.append((r, a, b))
        self.sends = [(r, _run(offs)) for r, offs in enumerate(served) if r != me and len(offs)]
        self.slot = slot = pattern.slot
        self.identity = bool(len(slot) == len(pattern.offsets) and np.array_equal(slot, np.arange(len(slot))))

    def once(self, flat: np.ndarray) -> np.ndarray:
        """One gather from ``flat`` (a plan made for it alone): plain messages."""
        out = np.empty(self.size, flat.dtype)
        mine = self.mine

        def local():
            if mine is not None:
                out[mine[1]:mine[2]] = flat[mine[0]]
        # copies (a slice's too): what goes out is the array as it was here
        comm.exchange_known([(r, flat[src] if type(src) is not slice else flat[src].copy()) for r, src in self.sends],
                            [(r, out[a:b]) for r, a, b in self.recvs], local)
        return out if self.identity else out[self.slot]


class _GatherRun:
    """One dtype's repeated gathers by a plan: the buffer of distinct values, a send buffer
    per locale served, and their persistent messages (:class:`pgas.comm.KnownExchange`)."""

    def __init__(self, g: _Gathering, dtype) -> None:
        self.g = g
        self.out = np.empty(g.size, dtype)
        self.sends = [(src, np.empty(src.stop - src.start if type(src) is slice else len(src), dtype))
                      for _, src in g.sends]
        self.msgs = (comm.KnownExchange([(r, buf) for (r, _), (_, buf) in zip(g.sends, self.sends)],
                                        [(r, self.out[a:b]) for r, a, b in g.recvs])
                     if g.sends or g.recvs else None)
        self.mine = None if g.mine is None else (g.mine[0], self.out[g.mine[1]:g.mine[2]])
        self.identity, self.slot = g.identity, g.slot

    def __call__(self, flat: np.ndarray) -> np.ndarray:
        for src, buf in self.sends:     # copies: what goes out is the array as it was here
            if type(src) is slice:
                buf[...] = flat[src]
            else:
                _take(flat, src, buf)                   # offsets in range (the plan's)
        msgs = self.msgs
        if msgs is not None:
            msgs.start()
        mine = self.mine
        if mine is not None:
            src, part = mine
            if type(src) is slice:
                part[...] = flat[src]
            else:
                _take(flat, src, part)
        if msgs is not None:
            msgs.wait()
        return self.out.copy() if self.identity else self.out[self.slot]

    def free(self) -> None:
        if self.msgs is not None:
            self.msgs.free()


def _take(flat: np.ndarray, src: np.ndarray, out: np.ndarray) -> None:
    """``out[:] = flat[src]`` (offsets in range), split over the locale's threads when large
    (:mod:`pgas.exec.workers`; NumPy's ``take`` releases the GIL)."""
    k = workers.ways(len(src), len(src))
    if k < 2:
        np.take(flat, src, out=out, mode="clip")
        return
    workers.run([(_TAKE, (flat, src[a:b], None, out[a:b])) for a, b in workers.bounds(len(src), k)])


_TAKE = functools.partial(np.take, mode="clip")


def _run(offsets: np.ndarray):
    """``offsets`` as a slice if they are consecutive (``k, k + 1, ...``), else themselves."""
    if len(offsets) and int(offsets[-1]) - int(offsets[0]) == len(offsets) - 1 and (
            len(offsets) == 1 or bool(np.all(np.diff(offsets) == 1))):
        return slice(int(offsets[0]), int(offsets[-1]) + 1)
    return offsets


def attempt(fn):
    """``(fn(), None)``, or ``(None, error)`` for the errors bad input raises (the
    exchange that follows agrees on them, so every locale raises alike)."""
    try:
        return fn(), None
    except (IndexError, ValueError, TypeError, OverflowError) as e:
        return None, e


def index_plan(A, indices) -> IndexPlan:
    """Collective: inspect ``indices`` once (bucket, deduplicate, tell each owner what it serves)."""
    pattern, err = attempt(lambda: _Pattern(A, indices))
    send = pattern.split(pattern.offsets) if err is None else _nothing(np.int64)
    served = comm.exchange(send, np.int64, err)
    return IndexPlan(A, pattern, served)


def _nothing(dtype) -> list[np.ndarray]:
    """Empty parts for every locale (what a locale that failed sends)."""
    return [np.empty(0, dtype)] * comm.num_locales()


def _values(A, values, n: int) -> np.ndarray:
    """``values`` as ``n`` elements of ``A``'s dtype (a scalar is repeated); raises on a mismatch."""
    shape = np.shape(values)
    if shape not in ((), (n,)):
        raise ValueError(f"{A.label}: {n} indices but values of shape {shape}")
    if not n:
        return np.empty(0, A.dtype)
    return np.broadcast_to(A._cast(values), (n,))


@fperr.agreeing              # a cast or ufunc.at error raises on every locale
def update(A, indices, values, op: str = "add", broadcast: bool = False, error: BaseException | None = None) -> None:
    """Collective: ``A[i] = A[i] op v`` for every (index, value) pair of every locale, repeats included.
    ``indices`` may be an :class:`IndexPlan`.  One message to each owner the indices
    name (:func:`pgas.comm.exchange`), which also agrees on errors, so bad input raises
    on every locale alike, and (in the folding mode of collective checking) on the calls
    folded since the last agreement, this one among them (:func:`pgas.array.collective.folded`):
    no synchronisation of its own.  A bad ``op`` (or a plan made for another array) is
    such an error too, raised once the exchange has found the call the same everywhere.
    No barrier at the end: one-sided operations towards a locale wait for its updates
    to be applied (``comm.statement_done``), as after a statement.  ``broadcast``:
    ``indices`` and ``values`` are ``ufunc.at``'s (:func:`at_operands`).  ``error``: this
    locale's error from working out ``indices`` and ``values`` (a caller's, which then
    passes None for both), raised alike the same way."""
    bad = error
    if bad is None:
        try:
            check_op(A, op)
        except (ValueError, TypeError) as e:
            bad = e
    if isinstance(indices, IndexPlan):
        bad = bad if bad is not None else attempt(lambda: indices.check(A))[1]
        pattern = indices.pattern
        vals, err = (None, bad) if bad is not None else attempt(lambda: _values(A, values, pattern.n))
        send = pattern.split(apply.combine(pattern, vals, op)) if err is None else _nothing(A.dtype)
        if not (settings.get("oneway") and settings.get("aggregate")):   # round trips or a message per record
            comm.check.agree_history(error=err)      # (the call was only folded)
            ablated.update(A, pattern.split(pattern.offsets), send, op, _mpi_op(A, op))
            comm.statement_done()
            return
        A._win.complete()                            # my one-sided operations, done before any locale goes on
        received = comm.exchange(send, A.dtype, err)
        served = indices.served
    else:
        rec = _record_dtype(A.dtype)
        records, err = (None, bad) if bad is not None else \
            attempt(lambda: _records(A, *(at_operands(A, indices, values) if broadcast else (indices, values)),
                                      op, rec))
        if not (settings.get("oneway") and settings.get("aggregate")):   # round trips or a message per record
            comm.check.agree_history(error=err)
            ablated.update(A, [r["off"] for r in records], [r["val"] for r in records], op, _mpi_op(A, op))
            comm.statement_done()
            return
        A._win.complete()
        parts = comm.exchange(records if err is None else _nothing(rec), rec, err)
        served, received = [p["off"] for p in parts], [p["val"] for p in parts]
    A._win.sync()
    apply.apply(A._storage, served, received, op)
    A._win.sync()
    comm.statement_done()


def at_operands(A, indices, values) -> tuple:
    """``ufunc.at(A, indices, values)``'s operands as ``update``'s: for a 1-D array an int
    array of any shape, for an n-D one a tuple of n int arrays, broadcast together; the
    values broadcast to the indices' shape; both flattened."""
    if isinstance(indices, tuple):
        if len(indices) != A.ndim:
            raise IndexError(f"{A.label}: ufunc.at on a {A.ndim}-D array takes {A.ndim} index arrays "
                             f"(one per dimension), got {len(indices)}")
        arrays = np.broadcast_arrays(*(np.asarray(i) for i in indices))
    elif A.ndim != 1:
        raise IndexError(f"{A.label}: ufunc.at on a {A.ndim}-D array takes a tuple of {A.ndim} index arrays "
                         "(one per dimension): pgas updates elements, not whole rows")
    else:
        arrays = [np.asarray(indices)]
    if any(a.dtype.kind not in "iu" for a in arrays):
        raise IndexError(f"{A.label}: ufunc.at's indices must be integer arrays, got "
                         f"{', '.join(str(a.dtype) for a in arrays)} (slices and masks: use a statement)")
    shape = arrays[0].shape
    flat = [a.astype(np.int64).ravel() for a in arrays]
    vals = np.asarray(values)
    vals = vals if vals.ndim == 0 else np.ascontiguousarray(np.broadcast_to(vals, shape)).ravel()
    return (flat[0] if A.ndim == 1 else tuple(flat)), vals


_RECORDS: dict = {}


def _record_dtype(dtype) -> np.dtype:
    """The (offset, value) record of ``update`` messages for ``dtype`` (made once: a structured
    dtype costs microseconds to build)."""
    rec = _RECORDS.get(dtype)
    if rec is None:
        rec = _RECORDS[dtype] = np.dtype([("off", np.int64), ("val", dtype)])
    return rec


def _records(A, indices, values, op, rec) -> list[np.ndarray]:
    """This locale's (local offset, combined value) records, one part per owner."""
    fast = _bucket_1d(A, indices, values, op)
    if fast is not None:
        offs, vals, counts = fast
        records = np.empty(len(offs), dtype=rec)
        records["off"] = offs
        records["val"] = vals
        parts, a = [], 0
        for c in counts.tolist():
            parts.append(records[a:a + c])
            a += c
        return parts
    pattern = _Pattern(A, indices)
    vals = _values(A, values, pattern.n)
    records = np.empty(len(pattern.offsets), dtype=rec)
    records["off"] = pattern.offsets
    records["val"] = apply.combine(pattern, vals, op)
    return pattern.split(records)


#: Ops and dtype kinds whose updates need not be combined at the source: exact, associative
#: and commutative (integers wrap), so applying the repeats one by one at the owner gives
#: the same bits as combining them first.
_UNCOMBINED = {"add": "iu", "multiply": "iu", "xor": "iub", "or": "iub", "and": "iub", "min": "iu", "max": "iu"}


def _bucket_1d(A, indices, values, op):
    """``(offsets, values, counts)`` grouped by owner, repeats kept, in one compiled pass
    (:func:`counting.bucket_1d`) for int64 indices into a 1-D array without ghost cells
    with values an array of its dtype and an op of :data:`_UNCOMBINED`; else None (the
    general path: other input, NumPy mode, an index out of range, which it raises)."""
    if (A.dtype.kind not in _UNCOMBINED.get(op, "") or A.ndim != 1 or A.layout.ghosts
            or type(indices) is not np.ndarray or indices.ndim != 1 or indices.dtype != np.int64
            or not indices.size or type(values) is not np.ndarray or values.dtype != A.dtype
            or values.shape != indices.shape):
        return None
    m = A.layout.maps[0]
    if m.p != A.layout.num_locales:
        return None
    return counting.bucket_1d(indices, values, A.shape[0], m.b, m.p)


def scatter(A, indices, values, error: BaseException | None = None) -> None:
    """Collective: ``A[i] = v`` for every pair; with repeats the last value wins (see module doc).
    ``error``: as :func:`update`'s."""
    update(A, indices, values, "replace", error=error)


def gather(A, indices) -> np.ndarray:
    """Collective: the values at this locale's ``indices`` (or :class:`IndexPlan`), in order.
    One message per (requester, owner) pair each way (only the reply with a plan, by
    persistent requests kept with the plan; a locale's work then grows with the locales
    it reads from and serves, not with the locale count).  Like a statement, it reads
    what earlier statements, updates and scatters wrote; one-sided writes of other
    locales need a ``pg.barrier()`` first."""
    plan = indices if isinstance(indices, IndexPlan) else index_plan(A, indices)
    plan.check(A)
    A._win.complete()
    A._win.sync()
    if plan is indices:
        return plan.gather(A._storage)
    return plan.gathering().once(A._storage)

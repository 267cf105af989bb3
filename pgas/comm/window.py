"""RMA windows holding array storage (``MPI.Win.Allocate``, passive target, ``Lock_all``).

A :class:`Window` is allocated collectively and lives in one ``Lock_all``
epoch until it is freed.  Offsets and strides are in elements of the
window's dtype.  Every transfer method is one message (one MPI call) towards
one target, whatever the number of regions or indices it moves; transfers
to this locale's own window are memory copies and are not counted.

Freeing is collective in MPI but garbage collection is not, so a released
window is only marked; windows released on every locale are freed together
at the next allocation (:func:`collect`).
"""

from __future__ import annotations

import atexit
import itertools
import weakref

import numpy as np

from . import collectives, epochs, process, runtime, trace, waits
from .counters import record

_ids = itertools.count()
_live: dict[int, "Window"] = {}
_released: set[int] = set()
_pool: dict = {}
POOL_LIMIT = 64                 # released windows kept for reuse ...
POOL_WEIGHT = 1 << 30           # ... and their total weight (global bytes)
_region_types: dict = {}
ASYNC_STAGE = 16384             # asynchronous updates in flight per window before a flush


def _region_type(dtype, counts: tuple, strides: tuple):
    """Committed MPI datatype of a strided box (element counts/strides, C order), cached."""
    key = (np.dtype(dtype).str, counts, strides)
    t = _region_types.get(key)
    if t is None:
        base = process.mpi_type(dtype)
        item = np.dtype(dtype).itemsize
        t = base
        for n, s in zip(reversed(counts), reversed(strides)):
            nt = t.Create_hvector(int(n), 1, int(s) * item)
            if t is not base:
                t.Free()
            t = nt
        if t is base:
            t = base.Dup()
        t.Commit()
        if len(_region_types) >= 4096:          # varied boxes (ISx-style): do not grow forever
            for old in _region_types.values():
                old.Free()
            _region_types.clear()
        _region_types[key] = t
    return t


_structs: dict = {}
STRUCT_CACHE = 1024             # committed multi-box datatypes kept (plans reuse theirs every run)


def _regions_type(dtype, regions):
    """One committed datatype for several boxes ``(offset, counts, strides)``, in order;
    cached (bounded: the oldest are freed first)."""
    key = (np.dtype(dtype).str, tuple((int(o), tuple(c), tuple(s)) for o, c, s in regions))
    t = _structs.get(key)
    if t is not None:
        return t
    MPI = process.mpi()
    item = np.dtype(dtype).itemsize
    types = [_region_type(dtype, tuple(c), tuple(s)) for _, c, s in key[1]]
    t = MPI.Datatype.Create_struct([1] * len(regions), [o * item for o, _, _ in key[1]], types)
    t.Commit()
    if len(_structs) >= STRUCT_CACHE:
        old = next(iter(_structs))
        _structs.pop(old).Free()
    _structs[key] = t
    return t


class Window:
    """A collectively allocated RMA window of ``size`` elements of ``dtype`` on this locale.

    Use :func:`allocate`, which reuses released windows of the same key."""

    def __init__(self, size: int, dtype, key=None) -> None:
        MPI = process.mpi()
        self.dtype = np.dtype(dtype)
        self.size = int(size)
        self.key = key
        self.weight = 0
        self.in_use = True
        self.pending = False            # operations started without a flush (see complete())
        self._stage = None              # values of asynchronous accumulates in flight
        self._held = {}                 # target -> origin buffers of writes not yet flushed
        self._staged = 0
        self.mpi_type = process.mpi_type(self.dtype)
        item = self.dtype.itemsize
        self.win = MPI.Win.Allocate(max(self.size, 1) * item, item, comm=runtime.comm_argument("Win.Allocate"))
        self.win.Lock_all()
        self.id = next(_ids)
        self.me = process.here()
        if not _live and self.id == 0:
            atexit.register(free_all)
        _live[self.id] = self
        runtime.register_window(self)
        self.local = self._view()
        self._one = np.empty(1, dtype=self.dtype)
        self._one_spec = [self._one, self.mpi_type]

    def _view(self, on_release=None) -> np.ndarray:
        buf = np.frombuffer(self.win.tomemory(), dtype=np.uint8)
        if on_release is not None:
            # every view of the result has ``buf`` as its base (NumPy stops collapsing
            # base chains at an array whose base is not an array), so this fires only
            # when the last view is gone
            weakref.finalize(buf, on_release, self.id)
        return buf[: self.size * self.dtype.itemsize].view(self.dtype)

    def storage(self) -> np.ndarray:
        """A fresh flat ndarray over this locale's part for the window's user: the window is
        released once it and every view of it are gone, so memory is never reused under a
        live view.  (``self.local``, the window's own view, does not hold it.)"""
        return self._view(_released.add)

    # -- synchronisation -------------------------------------------------
    def sync(self) -> None:
        """Make local stores and remote RMA on this window consistent (MPI_Win_sync)."""
        t0 = trace.on and trace.now()
        self.win.Sync()
        if t0:
            trace.add("mpi", "MPI_Win_sync", t0)

    def flush(self, target: int | None = None) -> None:
        """Complete outstanding operations towards ``target`` (all targets if None)."""
        t0 = trace.on and trace.now()
        if target is None:
            self.win.Flush_all()
            self.pending = False
            self._held.clear()
        else:
            self.win.Flush(target)
            self._held.pop(target, None)
        if t0:
            trace.add("mpi", "MPI_Win_flush" if target is not None else "MPI_Win_flush_all", t0,
                      None if target is None else {"peers": [target]})

    def _hold(self, target: int, buf: np.ndarray) -> None:
        """Keep the origin buffer of a write started without a flush alive until the flush of
        ``target``: MPI may read it only then (on a network, not on shared memory), and
        the buffer is often a temporary (a cast or contiguous copy made here, or the
        caller's) that would otherwise be freed and reused first."""
        self._held.setdefault(target, []).append(buf)

    def complete(self) -> None:
        """Complete every operation started here without a flush (asynchronous updates),
        at this locale's next synchronisation."""
        if self.pending:
            self.flush()

    # -- contiguous and strided transfers -------------------------------
    def get(self, target: int, offset: int, out: np.ndarray, counts=None, strides=None, flush: bool = True) -> None:
        """Read into contiguous ``out`` from ``target``: ``out.size`` elements at ``offset``,
        or the strided box ``counts``/``strides`` starting there.  Completes before returning,
        or with ``flush=False`` at :meth:`flush` of ``target``."""
        if target == self.me:
            (out if counts is None else out.reshape(counts))[...] = self._box(offset, counts, strides, out)
            return
        self.win.Get([out, self.mpi_type], target, self._target(offset, counts, strides, out.size))
        if flush:
            self.win.Flush(target)
        record(target, out.nbytes)

    def get1(self, target: int, offset: int):
        """One element of ``target`` at ``offset`` (one message; the fast path of scalar reads)."""
        self.win.Get(self._one_spec, target, offset)
        self.win.Flush(target)
        record(target, self.dtype.itemsize)
        return self._one[0]

    def put(self, target: int, offset: int, data: np.ndarray, counts=None, strides=None, flush: bool = True) -> None:
        """Write contiguous ``data`` to ``target`` at ``offset`` (or into a strided box); completes,
        or with ``flush=False`` at :meth:`flush` of ``target`` (``data`` must stay unchanged until then)."""
        data = np.ascontiguousarray(data, dtype=self.dtype)
        if target == self.me:
            self._box(offset, counts, strides, data)[...] = data.reshape(counts) if counts else data
            return
        self.win.Put([data, self.mpi_type], target, self._target(offset, counts, strides, data.size))
        if flush:
            self.win.Flush(target)
        else:
            self._hold(target, data)
        record(target, data.nbytes)

    def get_regions(self, target: int, regions, out: np.ndarray, flush: bool = True) -> None:
        """Read several boxes ``(offset, counts, strides)`` of ``target`` into ``out``
        back to back, in one message.  With ``flush=False`` the read is only started:
        ``out`` is filled after :meth:`flush` (so many reads can be in flight at once)."""
        self._regions(self.win.Get, target, regions, out, flush)

    def put_regions(self, target: int, regions, data: np.ndarray, flush: bool = True) -> None:
        """Write ``data`` into several boxes of ``target`` in one message (completed by
        :meth:`flush` when ``flush=False``; ``data`` must not change until then)."""
        self._regions(self.win.Put, target, regions, np.ascontiguousarray(data, dtype=self.dtype), flush, True)

    def accumulate_regions(self, target: int, regions, data: np.ndarray, op: str = "sum",
                           flush: bool = True) -> None:
        """Combine ``data`` into several boxes of ``target`` with ``op``, in one message."""
        data = np.ascontiguousarray(data, dtype=self.dtype)
        self._regions(lambda o, t, tt: self.win.Accumulate(o, t, tt, op=_op(op)), target, regions, data, flush,
                      True)

    def _regions(self, call, target, regions, buf, flush=True, write=False):
        if regions:
            t0 = trace.on and trace.now()
            got = call([buf, self.mpi_type], target, [0, 1, _regions_type(self.dtype, regions)])
            if flush:
                self.win.Flush(target)
            elif write:
                self._hold(target, buf)
            if target != self.me:
                record(target, buf.nbytes)
            if t0:
                trace.add("mpi", "MPI RMA regions" + (" + flush" if flush else ""), t0,
                          {"peers": [target], "bytes": buf.nbytes})
            return got

    # -- pipelined transfers: one contiguous operation per run -----------
    def get_runs(self, target: int, offsets, lengths, out: np.ndarray, burst: int = 0, requests=None) -> None:
        """Read runs ``offsets[k]``/``lengths[k]`` of ``target`` into ``out``, one get per run, completed by
        :meth:`flush` (or the Rget requests appended to ``requests``); ``burst`` > 0 flushes every ``burst``."""
        self._runs(self.win.Rget if requests is not None else self.win.Get, target, offsets, lengths, out,
                   burst, requests)

    def put_runs(self, target: int, offsets, lengths, data: np.ndarray, burst: int = 0, op: str | None = None) -> None:
        """Write (with ``op``: accumulate) ``data`` into runs of ``target``, one operation each, till :meth:`flush`."""
        call = self.win.Put if op is None else (lambda o, t, tt, mop=_op(op): self.win.Accumulate(o, t, tt, op=mop))
        buf = np.ascontiguousarray(data, dtype=self.dtype)
        self._runs(call, target, offsets, lengths, buf, burst)
        self._hold(target, buf)

    def _runs(self, call, target, offsets, lengths, buf, burst=0, requests=None) -> None:
        t, pos, k = self.mpi_type, 0, 0
        t0 = trace.on and trace.now()
        for o, n in zip(offsets.tolist(), lengths.tolist()):
            got = call([buf[pos:pos + n], t], target, [o, n, t])
            if requests is not None:
                requests.append(got)
            pos, k = pos + n, k + 1
            if burst and k % burst == 0 and requests is None:
                self.win.Flush(target)
        if target != self.me:
            record(target, buf.nbytes, k)
        if t0:
            trace.add("mpi", "MPI RMA runs", t0, {"peers": [target], "bytes": buf.nbytes, "operations": k})

    def get_regions_req(self, target: int, regions, out: np.ndarray):
        """Start reading several boxes of ``target`` into ``out`` in one message; returns its request."""
        return self._regions(self.win.Rget, target, regions, out, flush=False)

    def _xfer(self, call, target, ttype, buf) -> None:
        """One RMA call moving contiguous ``buf`` against target datatype ``ttype`` (freed here)."""
        try:
            call([buf, self.mpi_type], target, [0, 1, ttype])
            self.win.Flush(target)
        finally:
            ttype.Free()
        if target != self.me:
            record(target, buf.nbytes)

    # -- element-wise indexed transfers ----------------------------------
    def get_indexed(self, target: int, offsets: np.ndarray, out: np.ndarray) -> None:
        """Read the elements at ``offsets`` of ``target`` into ``out``, in one message."""
        self._regions_indexed(self.win.Get, target, offsets, out)

    def put_indexed(self, target: int, offsets: np.ndarray, data: np.ndarray) -> None:
        """Write ``data`` to distinct ``offsets`` of ``target``, in one message."""
        self._regions_indexed(self.win.Put, target, offsets, np.ascontiguousarray(data, dtype=self.dtype))

    def accumulate_indexed(self, target: int, offsets: np.ndarray, data: np.ndarray, op: str = "sum") -> None:
        """Combine ``data`` into distinct ``offsets`` of ``target`` with ``op``, in one message."""
        data = np.ascontiguousarray(data, dtype=self.dtype)
        self._regions_indexed(lambda o, t, tt: self.win.Accumulate(o, t, tt, op=_op(op)), target, offsets, data)

    def _regions_indexed(self, call, target, offsets, buf) -> None:
        if len(offsets):
            self._xfer(call, target, self._indexed(offsets), buf)

    def _indexed(self, offsets):
        disp = np.asarray(offsets, dtype=np.int64) * self.dtype.itemsize      # byte displacements (MPI_Aint)
        t = self.mpi_type.Create_hindexed_block(1, disp.tolist())
        t.Commit()
        return t

    # -- single-element atomics ------------------------------------------
    def accumulate(self, target: int, offset: int, value, op: str = "sum") -> None:
        """Atomically combine one element at ``target``/``offset`` with ``value`` (one message)."""
        data = value if isinstance(value, np.ndarray) and value.dtype == self.dtype else np.asarray([value], self.dtype)
        self.win.Accumulate([data, self.mpi_type], target, offset, op=_op(op))
        self.win.Flush(target)
        if target != self.me:
            record(target, data.nbytes)

    def accumulate_async(self, target: int, offset: int, value: np.ndarray, op: str = "sum") -> None:
        """Start ``accumulate`` of one element without waiting for it: it completes at this
        locale's next synchronisation (:meth:`complete`: a barrier, or a statement on the
        array).  The value is staged in a bounded buffer that is flushed when full."""
        if self._stage is None:
            self._stage = np.empty(ASYNC_STAGE, dtype=self.dtype)
        if self._staged == ASYNC_STAGE:
            self.flush()
        if not self.pending:
            self._staged = 0
        k = self._staged
        self._stage[k] = value[0] if isinstance(value, np.ndarray) else value
        self.win.Accumulate([self._stage[k:k + 1], self.mpi_type], target, offset, op=_op(op))
        self._staged = k + 1
        self.pending = True
        if target != self.me:
            record(target, self.dtype.itemsize)

    def fetch_and_op(self, target: int, offset: int, value, op: str = "sum"):
        """Atomically combine and return the previous value (one message)."""
        data = np.asarray([value], dtype=self.dtype)
        res = np.empty(1, dtype=self.dtype)
        self.win.Fetch_and_op([data, self.mpi_type], [res, self.mpi_type], target, offset, op=_op(op))
        self.win.Flush(target)
        if target != self.me:
            record(target, data.nbytes)
        return res[0]

    def compare_and_swap(self, target: int, offset: int, expected, value):
        """Atomically store ``value`` if the element equals ``expected``; return the old value."""
        data = np.asarray([value], dtype=self.dtype)
        cmp = np.asarray([expected], dtype=self.dtype)
        res = np.empty(1, dtype=self.dtype)
        self.win.Compare_and_swap([data, self.mpi_type], [cmp, self.mpi_type], [res, self.mpi_type], target, offset)
        self.win.Flush(target)
        if target != self.me:
            record(target, data.nbytes)
        return res[0]

    # -- helpers ---------------------------------------------------------
    def _target(self, offset, counts, strides, n):
        if counts is None:
            return [int(offset), int(n), self.mpi_type]
        return [int(offset), 1, _region_type(self.dtype, tuple(counts), tuple(strides))]

    def _box(self, offset, counts, strides, like):
        if counts is None:
            return self.local[offset:offset + like.size]
        item = self.dtype.itemsize
        return np.lib.stride_tricks.as_strided(self.local[offset:], shape=tuple(counts),
                                               strides=tuple(s * item for s in strides))

    def _free(self) -> None:
        self.win.Unlock_all()
        self.local = None
        self.win.Free()

    def free(self) -> None:
        """Collective: free this window now, outside the pool (a window its maker never
        releases, as ``pgas calibrate``'s scratch window)."""
        _live.pop(self.id, None)
        _released.discard(self.id)
        self.in_use = False
        self._free()


_OPS: dict = {}


def _op(name: str):
    """The MPI reduction op called ``name`` (sum, prod, min, max, band, bor, bxor, land, lor,
    lxor, replace, no_op)."""
    if not _OPS:
        MPI = process.mpi()
        _OPS.update({"sum": MPI.SUM, "add": MPI.SUM, "prod": MPI.PROD, "min": MPI.MIN, "max": MPI.MAX,
                     "band": MPI.BAND, "bor": MPI.BOR, "bxor": MPI.BXOR, "land": MPI.LAND, "lor": MPI.LOR,
                     "lxor": MPI.LXOR, "replace": MPI.REPLACE, "no_op": MPI.NO_OP})
    return _OPS[name]


def allocate(size: int, dtype, key, weight: int = 0, collected: bool = False) -> Window:
    """Collective: a window of ``size`` elements, reusing one released on every locale under the
    same ``key`` (a value equal on all locales, e.g. the array layout and dtype).  ``weight``
    (equal on all locales, e.g. the global byte count) bounds what the pool keeps.
    The pool is the same on every locale, so a hit needs no communication.  ``collected``:
    the caller has just collected (:func:`collect` with the words an agreement carried),
    so this makes no collection of its own."""
    if not collected and not _pool.get(key):
        collect()
    pooled = _pool.get(key)
    if pooled:
        win = pooled.pop()
    else:
        win = Window(size, dtype, key)
        win.weight = weight
    win.in_use = True
    return win


#: Sweeps that ride on :func:`collect`'s agreement (see :func:`on_collect`).
_sweeps: list = []


def on_collect(sweep) -> None:
    """Register ``sweep``, an object of a layer above with ``count()`` (how many items it
    may drop, meant to be the same on every locale), ``flags()`` (a uint8 per item: 1
    where this locale would drop it) and ``drop(flags)`` (the flags agreed by every
    locale: 1 where each would).  :func:`collect` agrees on them in its own reduction
    where they fit (:func:`carried`), else with one more where there are items; where the
    counts differ between locales nothing is dropped."""
    _sweeps.append(sweep)


_HALF = (1 << 32) - 1


def _state() -> tuple[list, list]:
    """What a collection decides on: the live windows in use, in id order (the same on every
    locale: windows are made, pooled and freed collectively), and each sweep's count."""
    return [wid for wid in sorted(_live) if _live[wid].in_use], [sw.count() for sw in _sweeps]


def carried(width: int) -> np.ndarray:
    """This locale's words of a collection that rides in another reduction, ``width`` uint64
    words or'ed bitwise over locales (an agreement of collective calls,
    :func:`pgas.comm.check.agree_history`'s ``carry``; :func:`collect` reads the result):
    per count (the windows in use, then each sweep's items) a word ``c | ~c << 32``, so
    that counts that differ between locales show; then, where they all fit, one bit per
    window and sweep item, set where this locale still holds it (a window not released
    here, an item this locale would not drop): a bit left clear by every locale is
    released (dropped) everywhere.  Its size does not grow with the locale count."""
    ids, counts = _state()
    head = 1 + len(counts)
    w = np.zeros(width, dtype=np.uint64)
    for k, c in enumerate([len(ids), *counts]):
        c = min(c, _HALF)
        w[k] = c | ((~c & _HALF) << 32)
    if len(ids) + sum(counts) <= 64 * (width - head):
        held = [np.fromiter((wid not in _released for wid in ids), dtype=np.uint8, count=len(ids))]
        held += [1 - np.asarray(sw.flags(), dtype=np.uint8) for sw, c in zip(_sweeps, counts) if c]
        bits = np.packbits(np.concatenate(held), bitorder="little")
        w.view(np.uint8)[8 * head:8 * head + len(bits)] = bits
    return w


def _read(got: np.ndarray, ids: list, counts: list):
    """The decisions in words :func:`carried` made, or'ed over locales: per window in use
    whether every locale released it, and per sweep the flags every locale agreed on (None
    where it has no items); None where some count differs or the bits did not fit."""
    head = 1 + len(counts)
    for k, c in enumerate([len(ids), *counts]):
        lo, hi = int(got[k]) & _HALF, int(got[k]) >> 32
        if lo & hi or lo != min(c, _HALF):
            return None
    if len(ids) + sum(counts) > 64 * (len(got) - head):
        return None
    held = np.unpackbits(got[head:].view(np.uint8), bitorder="little")
    gone = 1 - held[:len(ids) + sum(counts)]
    drops, at = [], len(ids)
    for c in counts:
        drops.append(gone[at:at + c] if c else None)
        at += c
    return gone[:len(ids)].astype(bool), drops


def _reduced(ids: list, counts: list):
    """:func:`_read`'s decisions by a reduction of their own (one allreduce (min) of a
    released-or-not byte per window and the counts, one more per sweep with items where
    the counts agree): its size grows with the windows, never with the locale count.  At
    one locale, this locale's own state (no reduction)."""
    released = np.fromiter((wid in _released for wid in ids), dtype=np.int64, count=len(ids))
    if process.num_locales() == 1:
        return released.astype(bool), [np.asarray(sw.flags(), dtype=np.uint8) if c else None
                                        for sw, c in zip(_sweeps, counts)]
    mine = np.concatenate([released, np.asarray(counts, dtype=np.int64), -np.asarray(counts, dtype=np.int64)])
    got = collectives.allreduce(mine, "min")
    drops = []
    for k, (sw, c) in enumerate(zip(_sweeps, counts)):
        low, high = int(got[len(ids) + k]), -int(got[len(ids) + len(counts) + k])
        drops.append(collectives.allreduce(sw.flags(), "min") if low == high and low else None)
    return got[:len(ids)].astype(bool), drops


def collect(got: np.ndarray | None = None) -> None:
    """Collective: pool the windows every locale has released (in id order); free the
    oldest pooled ones beyond ``POOL_LIMIT``; drop the registered sweeps' items every
    locale would drop (:func:`on_collect`).  The pool is the same on every locale.

    ``got``: the words of :func:`carried` or'ed over locales by a reduction the caller
    made (an agreement: the collection then costs no collective of its own); without it,
    or where they could not decide (counts differ, or the bits did not fit), a reduction
    of its own decides (:func:`_reduced`; none at one locale)."""
    if not _live:
        return
    ids, counts = _state()
    decided = None if got is None else _read(got, ids, counts)
    everywhere, drops = decided if decided is not None else _reduced(ids, counts)
    for sw, flags in zip(_sweeps, drops):
        if flags is not None:
            sw.drop(flags)
    for wid, gone in zip(ids, everywhere):
        if not gone:
            continue
        _released.discard(wid)
        win = _live[wid]
        win.in_use = False
        _pool.setdefault(win.key, []).append(win)
    pooled = sorted((w for ws in _pool.values() for w in ws), key=lambda w: w.id)
    total = sum(w.weight for w in pooled)
    while pooled and (len(pooled) > POOL_LIMIT or total > POOL_WEIGHT):
        win = pooled.pop(0)
        total -= win.weight
        _live.pop(win.id)
        _pool[win.key].remove(win)
        win._free()


def free_all() -> None:
    """Collective: free every live window (at normal exit, before MPI finalises)."""
    for wid in sorted(_live):
        _live.pop(wid)._free()
    _released.clear()
    _pool.clear()
    epochs._epochs.close()


def wait_requests(requests) -> None:
    """Complete request-based transfers (``get_runs(..., requests=)``, ``get_regions_req``)."""
    waits.wait([r for r in requests if r is not None])

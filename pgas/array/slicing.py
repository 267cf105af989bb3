"""One-sided bulk transfers of basic slices (``A.get(key)`` / ``A.put(key, v)``).

Each dimension's selected range is cut, with the statement planner's own
per-dimension arithmetic (:func:`pgas.layout.var_segments`), into segments on
which the owner is constant and the local index affine: a *lattice*
``k = k0 + u + T*t``.  A product of one lattice per dimension is a strided box
both in the owner's local storage and in the result, so each owning locale's
part is a few boxes moved in ONE message (one derived datatype), and a few
strided views when it is local.  The work depends on the number of blocks
crossed in one period of the distribution, never on the slice length.
"""

from __future__ import annotations

import itertools

import numpy as np

from .. import comm
from ..layout import c_strides, var_segments
from .index import basic_index


def _dim_lattices(m, r: range):
    """Per owner coordinate along one dimension, its lattices
    ``((k0, len, ntiles, T), (l0, local step, local step per tile))``."""
    T, segs = var_segments(r.start, r.step, len(r), [(1, 0, m)])
    by_owner: dict[int, list] = {}
    for k0, n, nt in segs:
        g0 = r.start + r.step * k0
        lat = ((k0, n, nt, T), (int(m.local_index(g0)), r.step, r.step * T // m.p))
        by_owner.setdefault(int(m.owner(g0)), []).append(lat)
    return by_owner


def _plan(A, key):
    """``(result shape, full shape, [(locale, [(out box, local box), ...]), ...])`` where a box
    is ``(offset, counts, strides)`` in elements over the dims ``(t_0, u_0, t_1, u_1, ...)``."""
    sel, out_shape = basic_index(key, A.shape, A)
    full = tuple(len(r) for r in sel)
    per_dim = [_dim_lattices(m, r) for m, r in zip(A.layout.maps, sel)]
    OS = c_strides(full)
    parts = []
    for coords in itertools.product(*[sorted(d) for d in per_dim]):
        target = int(A.layout.locale_of(coords))
        S = A.layout.storage_strides(target)          # window offsets: ghost cells count
        base = A.layout.storage_base(target)
        boxes = []
        for lats in itertools.product(*[d[c] for d, c in zip(per_dim, coords)]):
            ooff, loff = 0, base
            counts, ostr, lstr = [], [], []
            for ((k0, n, nt, T), (l0, lu, lt)), os_, s in zip(lats, OS, S):
                ooff += k0 * os_
                loff += l0 * s
                counts += [nt, n]
                ostr += [T * os_, os_]
                lstr += [lt * s, lu * s]
            boxes.append(((ooff, tuple(counts), tuple(ostr)), (loff, tuple(counts), tuple(lstr))))
        parts.append((target, boxes))
    return out_shape, full, parts


def _view(flat: np.ndarray, box) -> np.ndarray:
    offset, counts, strides = box
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:], shape=counts, strides=tuple(s * item for s in strides))


class Pending:
    """A one-sided transfer in flight, from ``A.get_async`` or ``A.put_async`` (UPC's
    ``upc_memget_nb``, Global Arrays' ``NbGet``): ``wait()`` completes it and returns
    the value read (None for a put).  Until then a get's result is not there and a
    put's source must not be relied on to be sent."""

    __slots__ = ("_finish", "_value", "_done")

    def __init__(self, finish) -> None:
        self._finish, self._value, self._done = finish, None, False

    def wait(self):
        """Complete the transfer (once; later calls return the same value)."""
        if not self._done:
            self._value = self._finish()
            self._finish, self._done = None, True
        return self._value

    @property
    def done(self) -> bool:
        """True once :meth:`wait` has completed the transfer."""
        return self._done


def start_get(A, key) -> Pending:
    """Start a one-sided read of a basic slice (or one element) of ``A``: every remote
    owner's part is in flight at once, one message each."""
    loc = A.layout.locate(key) or A._locate_slow(key)
    if loc is not None:
        owner, flat = loc
        if owner == A._me:
            value = A._storage[flat]
            return Pending(lambda: value)
        one = np.empty(1, dtype=A.dtype)
        comm.await_target(owner)
        A._win.get(owner, flat, one, flush=False)
        return Pending(lambda: _flushed(A, [owner], lambda: one[0]))
    out_shape, full, parts = _plan(A, key)
    out = np.empty(full, dtype=A.dtype)
    flat = out.reshape(-1)
    remote = []
    for target, boxes in parts:
        if target == A._me:
            for obox, lbox in boxes:
                _view(flat, obox)[...] = _view(A._storage, lbox)
            continue
        buf = np.empty(sum(int(np.prod(lb[1])) for _, lb in boxes), dtype=A.dtype)
        comm.await_target(target)
        A._win.get_regions(target, [lb for _, lb in boxes], buf, flush=False)
        remote.append((target, boxes, buf))

    def finish():
        for target, boxes, buf in remote:
            A._win.flush(target)
            pos = 0
            for obox, _ in boxes:
                n = int(np.prod(obox[1]))
                _view(flat, obox)[...] = buf[pos:pos + n].reshape(obox[1])
                pos += n
        return out.reshape(out_shape)

    return Pending(finish)


def _flushed(A, targets, value):
    """Flush ``targets``, then return ``value()`` (read only once the transfer is complete)."""
    for t in targets:
        A._win.flush(t)
    return value()


def get_slice(A, key) -> np.ndarray:
    """One-sided read of a basic slice of ``A``: one message per remote owning locale."""
    return start_get(A, key).wait()


def start_put(A, key, value) -> Pending:
    """Start a one-sided write of ``value`` (broadcast) into a basic slice or one element
    of ``A``: one message per remote owner, all in flight at once."""
    loc = A.layout.locate(key) or A._locate_slow(key)
    if loc is not None:
        data = A._element(value, key)
        owner, flat = loc
        if owner == A._me:
            A._storage[flat] = data[0]
            return Pending(lambda: None)
        comm.await_target(owner)
        A._win.put(owner, flat, data, flush=False)
        return Pending(lambda: _flushed(A, [owner], lambda: None))
    out_shape, full, parts = _plan(A, key)
    value = A._cast(value)
    try:
        value = np.ascontiguousarray(np.broadcast_to(value, out_shape)).reshape(-1)
    except ValueError:
        raise ValueError(f"{A.label}: cannot put a value of shape {value.shape} into {key!r} "
                         f"of shape {out_shape}") from None
    sent = []
    for target, boxes in parts:
        if target == A._me:
            for obox, lbox in boxes:
                _view(A._storage, lbox)[...] = _view(value, obox)
            continue
        data = np.concatenate([_view(value, obox).reshape(-1) for obox, _ in boxes])
        comm.await_target(target)
        A._win.put_regions(target, [lb for _, lb in boxes], data, flush=False)
        sent.append((target, data))          # the buffer stays alive until the flush
    return Pending(lambda: _flushed(A, [t for t, _ in sent], lambda: None))


def put_slice(A, key, value) -> None:
    """One-sided write of ``value`` (broadcast to the slice) into a basic slice of ``A``."""
    start_put(A, key, value).wait()

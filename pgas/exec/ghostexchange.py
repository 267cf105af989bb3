"""Ghost-cell exchanges: fill the ghost cells from their owners, or add them into the owners.

:func:`update` fills every ghost cell of this locale from the owner of the global
index it mirrors, in ONE exchange: one message per neighbour (all the faces, edges
and corners that neighbour supplies, as one multi-region get straight out of its
window), no copy of the interior.  :func:`accumulate` is the reverse: it adds what
this locale wrote into its ghost cells to the owners' elements (one accumulate per
neighbour) and zeroes the ghost cells.  Both record nothing the caller must check
(the front end, ``A.update_ghosts()``, checks the call and counts the write).

:class:`Compiled` is :func:`update` compiled per array: the first call with given
``(periodic, corners)`` plans its exchange (:func:`pgas.exec.ghostplan.exchange_plan`,
cached per layout) and makes, once:

- per neighbour that supplies ghost cells, a persistent receive straight into
  the padded block (one struct datatype over the ghost regions, no buffer, no
  unpacking) and a persistent one-int64 notice carrying its write version;
- per neighbour that reads this locale's elements, a persistent send of those
  elements straight out of the storage (no packing) and of this locale's
  version;
- the views of the periodic wrap onto this locale itself (moved in one call,
  :class:`pgas.exec.copies.Copies`), and the mask of the filled cells.

Every later call with the same arguments starts those requests, copies the
wrap, and waits: no notice round trip, no one-sided get, no planning.  The data
message itself says the owner's data is ready; a completed send says the reader
holds it.  Tags are apart from the statements' and the compiled groups'.
See ``docs/polyshift.md``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .. import comm
from ..comm.p2p import RegionType, Transfers
from .copies import Copies
from .ghostplan import exchange_plan, pieces, region, slices

#: Tags of the one-sided exchanges' notices (apart from the statements' 11-14).
READY, DONE = 21, 22
#: Offset of the compiled exchanges' tags above :data:`pgas.comm.p2p.TAG` (data, version).
TAGS = (200, 201)


def _padded(A) -> np.ndarray:
    """This locale's padded block of ``A`` (an array with ghost cells)."""
    return A.store.storage.reshape(A.layout.storage_shape(comm.here()))


def update(A, periodic: tuple, corners: bool) -> None:
    """Collective over the neighbours: fill every ghost cell of ``A`` by one-sided gets
    (``periodic``: one bool per dimension)."""
    L, me, win = A.layout, comm.here(), A.store.window
    by_source, readers = exchange_plan(L, me, periodic, corners)
    block = _padded(A)
    sources = sorted(q for q in by_source if q != me)
    win.complete()
    win.sync()
    st = A.store.ghost
    ready, seen = comm.expect_values(sources, READY, 1)
    done = comm.expect(readers, DONE)
    sent = comm.notify_values(readers, READY, np.array([st.version]))
    comm.wait(ready)
    bufs = []
    for q in sources:
        parts = by_source[q]
        buf = np.empty(sum(math.prod(hi - lo for lo, hi in ob) for ob, _ in parts), dtype=A.dtype)
        win.get_regions(q, [region(L, q, ob) for ob, _ in parts], buf, flush=False)
        bufs.append(buf)
    for q in sources:
        win.flush(q)
    sent += comm.notify(sources, DONE)
    for ob, db in by_source.get(me, []):                  # periodic wrap onto this locale itself
        block[slices(db)] = block[slices(tuple((lo + g, hi + g) for (lo, hi), g in zip(ob, L.ghosts)))]
    for q, buf in zip(sources, bufs):
        k = 0
        for ob, db in by_source[q]:
            shape = tuple(hi - lo for lo, hi in ob)
            block[slices(db)] = buf[k:k + math.prod(shape)].reshape(shape)
            k += math.prod(shape)
    mask = np.zeros(block.shape, dtype=bool)
    for parts in by_source.values():
        for _, db in parts:
            mask[slices(db)] = True
    st.mask, st.seen = mask.reshape(-1), {q: int(v) for q, v in zip(sources, seen[:, 0])}
    st.writes, st.barriers = A.store.writes, comm.barrier_count()
    comm.wait(done)
    comm.wait(sent)
    comm.statement_done()


def accumulate(A, periodic: tuple, corners: bool, op: str) -> None:
    """Collective over the neighbours: add (``op``) every ghost cell's value of ``A`` into
    the element it mirrors, on its owner, then set the ghost cells to zero."""
    L, me, win = A.layout, comm.here(), A.store.window
    by_target, writers = exchange_plan(L, me, periodic, corners)
    block = _padded(A)
    targets = sorted(by_target)
    win.complete()
    win.sync()
    ready = comm.expect([q for q in targets if q != me], READY)
    done = comm.expect(writers, DONE)
    sent = comm.notify(writers, READY)
    comm.wait(ready)
    for q in targets:
        parts = by_target[q]
        data = np.concatenate([block[slices(db)].reshape(-1) for _, db in parts])
        win.accumulate_regions(q, [region(L, q, ob) for ob, _ in parts], data, op, flush=True)
    sent += comm.notify([q for q in targets if q != me], DONE)
    comm.wait(done)
    win.sync()
    for parts in by_target.values():
        for _, db in parts:
            block[slices(db)] = 0
    comm.wait(sent)
    comm.statement_done()


# -- the compiled exchange -------------------------------------------------------------
@lru_cache(maxsize=256)
def structure(layout, periodic: tuple, corners: bool):
    """Pure: ``(recvs, sends, wraps, mask)`` of this locale: per source ``(q, regions in
    my storage)``, per reader ``(q, regions of my storage it reads)``, the self wraps
    ``(dest box, source box)`` in my padded block, and the flat filled mask."""
    me = comm.here()
    by_source, readers = exchange_plan(layout, me, periodic, corners)
    S = layout.storage_strides(me)
    recvs = []
    for q in sorted(x for x in by_source if x != me):
        regions = [(sum(s * lo for s, (lo, _) in zip(S, db)), tuple(hi - lo for lo, hi in db), S)
                   for _, db in by_source[q]]
        recvs.append((q, regions))
    sends = [(q, [region(layout, me, ob) for o, ob, _ in pieces(layout, q, periodic, corners) if o == me])
             for q in readers]
    g = layout.ghosts
    wraps = [(db, tuple((lo + w, hi + w) for (lo, hi), w in zip(ob, g))) for ob, db in by_source.get(me, [])]
    mask = np.zeros(layout.storage_shape(me), dtype=bool)
    for parts in by_source.values():
        for _, db in parts:
            mask[tuple(slice(lo, hi) for lo, hi in db)] = True
    mask = mask.reshape(-1)
    mask.setflags(write=False)
    return recvs, sends, wraps, mask


class Compiled:
    """One array's compiled ghost exchange for one ``(periodic, corners)``."""

    def __init__(self, A, periodic: tuple, corners: bool) -> None:
        self.args = (periodic, corners)
        recvs, sends, wraps, self.mask = structure(A.layout, periodic, corners)
        self.sources = [q for q, _ in recvs]
        self.seen = np.zeros((len(recvs), 1), dtype=np.int64)
        self.version = np.zeros(1, dtype=np.int64)
        self.types = []
        self.xfer = Transfers()
        storage = A.store.storage
        for k, (q, regions) in enumerate(recvs):
            t = RegionType(A.dtype, regions)
            self.types.append(t)
            self.xfer.recv_regions(q, storage, t, TAGS[0])
            self.xfer.recv(q, self.seen[k], TAGS[1])
        for q, regions in sends:
            t = RegionType(A.dtype, regions)
            self.types.append(t)
            self.xfer.send(q, storage, t, TAGS[0])
            self.xfer.send_values(q, self.version, TAGS[1])
        block = _padded(A)
        self.wraps = Copies([(block[slices(db)], block[slices(sb)]) for db, sb in wraps])

    def run(self, A) -> None:
        """Fill the ghost cells (collective over the neighbours)."""
        st = A.store.ghost
        A.store.window.complete()
        A.store.window.sync()
        self.version[0] = st.version
        self.xfer.start()
        self.wraps()                             # the periodic wrap onto this locale, one call
        self.xfer.wait_all()                     # receives and sends in one polling loop
        st.mask, st.seen = self.mask, {q: int(v) for q, v in zip(self.sources, self.seen[:, 0])}
        st.writes, st.barriers = A.store.writes, comm.barrier_count()
        comm.statement_done()

    def free(self) -> None:
        self.xfer.free()
        for t in self.types:
            t.free()
        self.types = []

    def __del__(self) -> None:                   # the array is gone: its MPI handles too (on MPI's thread)
        comm.free_handles(self.free)


def update_compiled(A, periodic: tuple, corners: bool) -> None:
    """Collective over the neighbours: :func:`update` by ``A``'s compiled exchange."""
    st = A.store.ghost
    c = st.compiled
    if c is None or c.args != (periodic, corners):
        if c is not None:
            c.free()
        c = st.compiled = Compiled(A, periodic, corners)
    c.run(A)

"""``update_ghosts`` compiled per array: persistent two-sided transfers (see docs/polyshift.md).

The first ``A.update_ghosts(periodic, corners)`` of an array plans its exchange
(:func:`pgas.array.ghosts.exchange_plan`, cached per layout) and makes, once:

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
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import comm
from ..comm.p2p import RegionType, Transfers

#: Offset of the ghost exchanges' tags above :data:`pgas.comm.p2p.TAG` (data, version).
TAGS = (200, 201)


@lru_cache(maxsize=256)
def structure(layout, periodic: tuple, corners: bool):
    """Pure: ``(recvs, sends, wraps, mask)`` of this locale: per source ``(q, regions in
    my storage)``, per reader ``(q, regions of my storage it reads)``, the self wraps
    ``(dest box, source box)`` in my padded block, and the flat filled mask."""
    from .ghosts import _pieces, _region, exchange_plan
    me = comm.here()
    by_source, readers = exchange_plan(layout, me, periodic, corners)
    S = layout.storage_strides(me)
    recvs = []
    for q in sorted(x for x in by_source if x != me):
        regions = [(sum(s * lo for s, (lo, _) in zip(S, db)), tuple(hi - lo for lo, hi in db), S)
                   for _, db in by_source[q]]
        recvs.append((q, regions))
    sends = [(q, [_region(layout, me, ob) for o, ob, _ in _pieces(layout, q, periodic, corners) if o == me])
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
        from .ghosts import _sl, padded
        self.args = (periodic, corners)
        recvs, sends, wraps, self.mask = structure(A.layout, periodic, corners)
        self.sources = [q for q, _ in recvs]
        self.seen = np.zeros((len(recvs), 1), dtype=np.int64)
        self.version = np.zeros(1, dtype=np.int64)
        self.types = []
        self.xfer = Transfers()
        storage = A._storage
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
        block = padded(A)
        from ..exec.copies import Copies
        self.wraps = Copies([(block[_sl(db)], block[_sl(sb)]) for db, sb in wraps])

    def run(self, A) -> None:
        """Fill the ghost cells (collective over the neighbours)."""
        st = A._ghost
        A._win.complete()
        A._win.sync()
        self.version[0] = st.version
        self.xfer.start()
        self.wraps()                             # the periodic wrap onto this locale, one call
        self.xfer.wait_all()                     # receives and sends in one polling loop
        st.mask, st.seen = self.mask, {q: int(v) for q, v in zip(self.sources, self.seen[:, 0])}
        st.writes, st.barriers = A._writes, comm.barrier_count()
        comm.statement_done()

    def free(self) -> None:
        self.xfer.free()
        for t in self.types:
            t.free()
        self.types = []

    def __del__(self) -> None:                   # the array is gone: its MPI handles too
        try:
            self.free()
        except Exception:                        # an interrupted run's active request: leave it
            pass


def update(A, periodic: tuple, corners: bool) -> None:
    """Collective over the neighbours: ``A.update_ghosts`` by its compiled exchange."""
    st = A._ghost
    c = st.compiled
    if c is None or c.args != (periodic, corners):
        if c is not None:
            c.free()
        c = st.compiled = Compiled(A, periodic, corners)
    c.run(A)

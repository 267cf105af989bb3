"""What the chunked formats (zarr, HDF5) share: which blocks each locale moves, and the
chunk-aligned copy made when a distribution's blocks are too small to be chunks.

pgas's BlockCyclic blocks (Block is one block per locale) become the file's chunks,
so every chunk has one owner and no two locales touch one chunk.  Where the blocks
are too small to be useful chunks (Cyclic, small BlockCyclic blocks: under
:data:`MIN_CHUNK` elements), or the requested chunks do not fit inside the blocks,
the array goes through one copy (one statement) to ``BlockCyclic(chunks)``.
"""

from __future__ import annotations

import itertools
import json
import math
import zlib

import numpy as np

from .. import comm
from ..array.creation.constructors import empty
from ..array.creation.layouts import new_layout as _layout
from ..array.core import DistArray
from ..layout import Block, BlockCyclic

#: Blocks of fewer elements are not used as chunks directly.
MIN_CHUNK = 4096


def _boxes(layout, locale: int):
    """This locale's blocks: (global slices, local slices) per block."""
    per_dim = []
    for m, q in zip(layout.maps, layout.coords(locale)):
        per_dim.append([(slice(s, min(s + m.b, m.n)), slice(k * m.b, k * m.b + min(m.b, m.n - s)))
                        for k, s in enumerate(m.block_starts(q))])
    for combo in itertools.product(*per_dim):
        yield tuple(c[0] for c in combo), tuple(c[1] for c in combo)


def big_blocks(layout, shape) -> bool:
    """Whether ``layout``'s blocks are big enough to move one by one (at least
    :data:`MIN_CHUNK` elements, or whole axes)."""
    return math.prod(layout.blocks) >= MIN_CHUNK or all(b >= n for b, n in zip(layout.blocks, shape))


def _chunked(layout, shape) -> tuple[int, ...]:
    """Default chunks: the blocks, or Block's blocks when the blocks are too small."""
    if big_blocks(layout, shape):
        return tuple(min(b, max(n, 1)) for b, n in zip(layout.blocks, shape))
    return tuple(min(b, max(n, 1)) for b, n in zip(_layout(shape, Block()).blocks, shape))


def aligned(A: DistArray, chunks) -> DistArray:
    """Collective: ``A`` itself when each of its blocks is a whole number of ``chunks`` (or
    covers its axis), else a copy of ``A`` in ``BlockCyclic(chunks)``."""
    if any(b % c and b < n for b, c, n in zip(A.layout.blocks, chunks, A.shape)):
        src = empty(A.shape, A.dtype, BlockCyclic(chunks))
        src[...] = A
        return src
    return A


def direct_layout(shape, dist, chunks):
    """``(layout, direct)``: the layout to read chunks into, and whether it is ``dist``'s own
    (else ``BlockCyclic(chunks)``, to be copied to ``dist`` after reading)."""
    layout = _layout(shape, dist)
    if big_blocks(layout, shape):
        return layout, True
    return _layout(shape, BlockCyclic(chunks)), False


#: Attribute (JSON) in which :func:`pgas.to_zarr` and :func:`pgas.to_hdf5` keep the
#: CRC-32 of each writing locale's blocks, checked by the readers.
CRC_ATTR = "pgas_crc32"


def _crc_of_blocks(layout, locale: int, block) -> int:
    """CRC-32 of ``locale``'s blocks in ``layout``, in :func:`_boxes` order, each block's
    elements in C order; ``block(glob, loc)`` gives one block."""
    crc = 0
    if math.prod(layout.shape):
        for glob, loc in _boxes(layout, locale):
            crc = zlib.crc32(np.ascontiguousarray(block(glob, loc)), crc)
    return crc


def block_sums(src: DistArray) -> dict:
    """Collective: the checksums of ``src`` as written block by block (:data:`CRC_ATTR`):
    its layout and the CRC-32 of each locale's blocks."""
    L = src.layout
    crcs = comm.allgather(_crc_of_blocks(L, comm.here(), lambda glob, loc: src.local[loc]))
    return {"algorithm": "crc32", "shape": list(L.shape), "grid": list(L.grid), "blocks": list(L.blocks),
            "crc32": crcs}


def check_block_sums(name: str, sums, tmp: DistArray, read) -> None:
    """Collective: check ``tmp`` (just read from ``name``) against the checksums ``sums``
    (:func:`block_sums`, as JSON text; None: nothing to check).  Where ``tmp`` has the
    writer's layout each locale sums its own storage; else locale ``j`` reads back the
    blocks of writing locales ``j, j + num_locales(), ...`` with ``read(glob)``, one
    block at a time.  A mismatch is raised as ValueError on every locale alike."""
    if sums is None:
        return
    err, bad = None, []
    try:
        d = json.loads(sums)
        shape, grid, blocks, crcs = tuple(d["shape"]), tuple(d["grid"]), tuple(d["blocks"]), list(d["crc32"])
        p = math.prod(grid)
        if d["algorithm"] != "crc32" or len(crcs) != p or shape != tuple(tmp.shape):
            raise ValueError("does not describe this array")
    except (ValueError, KeyError, TypeError) as e:
        err = ValueError(f"{name}: attribute {CRC_ATTR!r} is not valid pgas checksums ({e}); delete it to read "
                         f"the data unchecked")
    if err is None:
        me, q = comm.here(), comm.num_locales()
        L = tmp.layout
        try:
            if p == q and (tuple(L.shape), tuple(L.grid), tuple(L.blocks)) == (shape, grid, blocks):
                if _crc_of_blocks(L, me, lambda glob, loc: tmp.local[loc]) != crcs[me]:
                    bad.append(me)
            else:
                saved = BlockCyclic(blocks, grid=grid).bind(shape, p)
                for k in range(me, p, q):
                    if _crc_of_blocks(saved, k, lambda glob, loc: read(glob)) != crcs[k]:
                        bad.append(k)
        except Exception as e:        # noqa: BLE001 - raised on every locale below
            err = e
    comm.agree(err)
    bad = sorted(k for mine in comm.allgather(bad) for k in mine)
    if bad:
        raise ValueError(f"{name}: checksum mismatch in the blocks written by locale{'s' if len(bad) > 1 else ''} "
                         f"{', '.join(map(str, bad[:8]))}{' ...' if len(bad) > 8 else ''} of {p} (blocks of "
                         f"{blocks} over a {'x'.join(map(str, grid))} grid): the data is damaged, or was changed "
                         f"by another tool (then delete the attribute {CRC_ATTR!r})")

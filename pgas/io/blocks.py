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
import math

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

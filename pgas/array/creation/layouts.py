"""The layout a new array gets, and the global flat index of each element a locale owns."""

from __future__ import annotations

import numpy as np

from ... import comm
from ...layout import Block, Distribution
from ..ghosts import check_ghosts


def new_layout(shape, dist: Distribution | None, ghosts=None):
    """The layout of a new array of ``shape`` distributed by ``dist`` (Block by default) over
    every locale, with ``ghosts`` ghost cells (Block only) if given."""
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    dist = Block() if dist is None else dist
    if not isinstance(dist, Distribution):
        raise TypeError(f"dist must be pg.Block(), pg.Cyclic() or pg.BlockCyclic(b), got {dist!r}")
    layout = dist.bind(shape, comm.num_locales())
    return layout if ghosts is None else check_ghosts(ghosts, layout)


def owned_flat(layout, locale: int) -> np.ndarray:
    """The C-order global flat index of each element ``locale`` owns, in its local
    storage order (an increasing int64 array, since owned indices increase per dimension)."""
    owned = layout.owned(locale)
    flat = np.zeros((1,) * layout.ndim, dtype=np.int64)
    stride = 1
    for d in range(layout.ndim - 1, -1, -1):
        shape = [1] * layout.ndim
        shape[d] = len(owned[d])
        flat = flat + owned[d].astype(np.int64).reshape(shape) * stride
        stride *= layout.shape[d]
    return np.broadcast_to(flat, layout.local_shape(locale)).reshape(-1)

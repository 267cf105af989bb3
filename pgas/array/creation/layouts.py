"""The layout a new array gets, and the global flat index of each element a locale owns."""

from __future__ import annotations

import numpy as np

from ... import comm
from ...layout import Block, Distribution
from ...layout.boxes import BOX, boxes
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


def owned_flat(layout, locale: int, key=None) -> np.ndarray:
    """The C-order global flat index of each element ``locale`` owns, in its local
    storage order (an increasing int64 array, since owned indices increase per dimension);
    with ``key``, of its local box ``key`` only (see :func:`owned_box`)."""
    owned = layout.owned(locale) if key is None else owned_box(layout, locale, key)
    flat = np.zeros((1,) * layout.ndim, dtype=np.int64)
    stride = 1
    for d in range(layout.ndim - 1, -1, -1):
        shape = [1] * layout.ndim
        shape[d] = len(owned[d])
        flat = flat + owned[d].astype(np.int64).reshape(shape) * stride
        stride *= layout.shape[d]
    return np.broadcast_to(flat, tuple(len(o) for o in owned)).reshape(-1)


def owned_box(layout, locale: int, key) -> tuple[np.ndarray, ...]:
    """Per dimension, the global indices of ``locale``'s local box ``key`` (slices of the
    leading local axes, as :func:`pgas.layout.boxes.boxes` makes; the other axes whole):
    ``layout.owned(locale)`` cut to the box, without making the whole of a long dimension."""
    shape = layout.local_shape(locale)
    out = []
    for d, (m, c) in enumerate(zip(layout.maps, layout.coords(locale))):
        local = np.arange(*key[d].indices(shape[d])) if d < len(key) else np.arange(shape[d])
        out.append(m.global_index(c, local))
    return tuple(out)


def fill(local: np.ndarray, values, most: int | None = None) -> None:
    """Fill ``local`` in place box by box (:func:`pgas.layout.boxes.boxes`): ``values(key)`` gives
    what ``local[key]`` gets, so no temporary is larger than one box."""
    for key in boxes(local.shape, BOX if most is None else most):
        local[key] = values(key)

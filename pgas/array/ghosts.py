"""Ghost cells: a padded local block in the array's window, filled from the neighbours.

An array made with ``ghosts=(g0, g1, ...)`` (Block distribution) stores on each
locale its block padded by ``g_d`` cells on both sides of dimension ``d``, in its
MPI window.  ``A.local`` is the interior (a view, not contiguous);
``A.local_with_ghosts`` the whole padded block (a view).  Every other path sees
only the interior: the layout's storage offsets (:meth:`Layout.storage_base`,
``storage_strides``) place elements in the padded block, so statements and
one-sided access find them there.

``A.update_ghosts(periodic=False, corners=True)`` fills every ghost cell from the
owner of the global index it mirrors, in ONE exchange (one message per neighbour);
``A.accumulate_ghosts()`` is the reverse (:mod:`pgas.exec.ghostexchange` runs both).
Statements never write ghost cells.  They READ them, instead of fetching, where a
remote footprint lies inside the cells the last ``update_ghosts`` filled and those
are provably current (:class:`pgas.exec.ghosts.GhostState`,
:mod:`pgas.exec.ghostread`).  See ``docs/polyshift.md``.
"""

from __future__ import annotations

import numpy as np

from .. import comm
from ..exec import ghostexchange
from ..exec.ghosts import wrote
from . import engine
from .collective import exchanging

#: ``update_ghosts`` by persistent two-sided transfers compiled per array
#: (:class:`pgas.exec.ghostexchange.Compiled`); False: plan and get one-sided every call.
COMPILED = True


def dense_only(A):
    """Raise: ``A`` has ghost cells and the operation needs dense local storage."""
    raise NotImplementedError(f"{A.label} has ghost cells, and this operation needs dense local storage: "
                              "run it on a copy without ghosts, pg.asarray(A, dist=pg.Block())")


def check_ghosts(ghosts, layout):
    """``ghosts`` as one non-negative width per dimension (an int means every dimension);
    ghost cells need a Block distribution."""
    g = (ghosts,) * layout.ndim if isinstance(ghosts, (int, np.integer)) else tuple(ghosts)
    if len(g) != layout.ndim or not all(isinstance(x, (int, np.integer)) and x >= 0 for x in g):
        raise ValueError(f"ghosts must be one non-negative integer per dimension ({layout.ndim}), got {ghosts!r}")
    if any(g) and layout.dist.kind != "block":
        raise ValueError(f"ghost cells need a Block distribution (neighbours in the global index are "
                         f"neighbours on the locale grid), got {layout.dist}")
    return layout.with_ghosts(g)


def interior(storage: np.ndarray, layout) -> np.ndarray:
    """The interior view of this locale's padded storage."""
    me = comm.here()
    block = storage.reshape(layout.storage_shape(me))
    return block[tuple(slice(g, g + n) for g, n in zip(layout.ghosts, layout.local_shape(me)))]


def padded(A) -> np.ndarray:
    """``A.local_with_ghosts``: this locale's padded block (the interior if no ghosts)."""
    if not A.layout.ghosts:
        return A._local
    return A._storage.reshape(A.layout.storage_shape(A._me))


def readonly(A, ghosts: bool) -> np.ndarray:
    """A read-only view of this locale's interior (``ghosts``: padded) block, over a
    read-only buffer of the storage (so it cannot be made writable)."""
    flat = np.frombuffer(memoryview(A._storage.view(np.uint8)).toreadonly(), dtype=A.dtype)
    if not A.layout.ghosts:
        return flat.reshape(A._local.shape)
    block = flat.reshape(A.layout.storage_shape(A._me))
    if ghosts:
        return block
    return block[tuple(slice(g, g + n) for g, n in zip(A.layout.ghosts, A._local.shape))]


def _periodic(periodic, ndim: int):
    key = (periodic, ndim) if isinstance(periodic, (bool, tuple)) else None
    hit = _PERIODIC.get(key) if key is not None else None
    if hit is None:
        hit = _periodic_of(periodic, ndim)
        if key is not None and len(_PERIODIC) < 64:
            _PERIODIC[key] = hit
    return hit


_PERIODIC: dict = {}            # (periodic argument, ndim): its normalised tuple (errors are not kept)


def _periodic_of(periodic, ndim: int):
    p = (periodic,) * ndim if isinstance(periodic, (bool, np.bool_, int)) else tuple(periodic)
    if len(p) != ndim:
        raise ValueError(f"periodic must be a bool or one bool per dimension ({ndim}), got {periodic!r}")
    return tuple(bool(x) for x in p)


# -- the exchanges ----------------------------------------------------------------------
def update_ghosts(A, periodic=False, corners: bool = True) -> None:
    """Collective over the neighbours: fill every ghost cell of ``A`` (see the module text)."""
    periodic = _periodic(periodic, A.ndim)
    exchanging("{0}.update_ghosts()", A, args=(periodic, bool(corners)))
    if not A.layout.ghosts:
        return
    if COMPILED:
        ghostexchange.update_compiled(A, periodic, bool(corners))
    else:
        ghostexchange.update(A, periodic, bool(corners))


def accumulate_ghosts(A, periodic=False, corners: bool = True, op: str = "sum") -> None:
    """Collective over the neighbours: add (``op``) every ghost cell's value into the element
    it mirrors, on its owner, then set the ghost cells to zero."""
    periodic = _periodic(periodic, A.ndim)
    exchanging("{0}.accumulate_ghosts()", A, args=(periodic, bool(corners), op))
    if not A.layout.ghosts:
        return
    engine.before_write(A, None)              # a collective write: the ghost cells stop being current
    ghostexchange.accumulate(A, periodic, bool(corners), op)


class GhostMethods:
    """The ghost-cell members of :class:`pgas.DistArray`."""

    __slots__ = ()

    @property
    def ghosts(self) -> tuple[int, ...]:
        """Ghost width per dimension (all 0 without ghost cells)."""
        return self.layout.ghosts or (0,) * self.ndim

    @property
    def local_with_ghosts(self) -> np.ndarray:
        """This locale's block padded with its ghost cells, a view of its window storage
        (``A.local`` is its interior).  Fill the ghosts with :meth:`update_ghosts`.
        Taking this view counts as a write (as ``A.local`` does): statements stop
        reading the ghost cells it may change, and those mirroring its interior on
        the neighbours, until the next ``update_ghosts``."""
        wrote(self)
        return padded(self)

    @property
    def local_readonly(self) -> np.ndarray:
        """This locale's elements as a READ-ONLY NumPy view of its window storage (the
        interior, with ghost cells): for reading, unlike ``A.local`` it is no write, so
        the ghost cells that mirror it stay current.  Writing through it raises, and so
        does making it writable (``setflags(write=True)``): it views a read-only buffer.
        The values are this locale's current ones whenever read."""
        return readonly(self, False)

    @property
    def local_with_ghosts_readonly(self) -> np.ndarray:
        """:attr:`local_with_ghosts` as a READ-ONLY view: reading the ghost cells the last
        :meth:`update_ghosts` filled (a stencil's neighbours) ends no ghost currency."""
        return readonly(self, True)

    def invalidate_ghosts(self) -> None:
        """Local (this locale only, no message): say that this locale wrote its block or
        its ghost cells through a NumPy view kept from before the last
        :meth:`update_ghosts`; statements then fetch instead of reading the ghost cells
        that mirror this block (on every neighbour) or this locale's own ghost cells."""
        wrote(self)

    def update_ghosts(self, periodic=False, corners: bool = True) -> None:
        """Collective: fill every ghost cell from its owner, one message per neighbour.

        Parameters
        ----------
        periodic : bool or sequence of bool, optional
            Per dimension (or for all): wrap around the global edges; where not
            periodic, ghost cells outside the array are left as they are.
        corners : bool, optional
            Fill the edge and corner ghost regions too (needed by 9- and 27-point
            stencils), not only the faces.
        """
        update_ghosts(self, periodic, corners)

    def accumulate_ghosts(self, periodic=False, corners: bool = True, op: str = "sum") -> None:
        """Collective: combine (``op``: an MPI accumulate op, default ``"sum"``) the values
        written into this locale's ghost cells into the elements they mirror on their
        owners, then set those ghost cells to zero (one message per neighbour)."""
        accumulate_ghosts(self, periodic, corners, op)

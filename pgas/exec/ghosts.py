"""Ghost-cell state the engine reads: when this locale's ghost cells of an array are current.

An array made with ``ghosts=(g0, g1, ...)`` stores on each locale its block padded
by ghost cells (``A.local_with_ghosts``).  ``A.update_ghosts()`` fills them
(:mod:`pgas.exec.ghostexchange`) and records here which cells it filled and the
counts that say when they stop being current; statements then read them instead
of fetching (:mod:`pgas.exec.ghostread`).  See ``docs/polyshift.md``.
"""

from __future__ import annotations

from .. import comm


class StaleGhosts(RuntimeError):
    """Under ``pg.config(check=True)``: a statement's ghost-cell read differed from the
    owner's elements (a write through a NumPy view of ``A.local`` kept from before the
    last ``update_ghosts``)."""


class GhostState:
    """Per array and locale: when this locale's ghost cells are current.

    ``version`` counts this locale's possible writes to its own block outside
    statements (``A.local`` / ``A.local_with_ghosts`` taken, a one-sided write
    from here, ``A.invalidate_ghosts()``); owners send it to their readers in each
    statement's READY notice.  ``update_ghosts`` records ``mask`` (the padded cells
    it filled), ``seen`` (each source's version then), and the array's
    collective-write count and the barrier count.  The cells are current while
    neither count moved, ``mask`` was not dropped here, and (checked per statement)
    the owner's version is still the one seen."""

    __slots__ = ("version", "mask", "seen", "writes", "barriers", "compiled")

    def __init__(self) -> None:
        self.compiled = None                    # the compiled exchange (pgas.exec.ghostexchange.Compiled)
        self.version = 0
        self.mask = None
        self.seen: dict = {}
        self.writes = self.barriers = -1

    def touch(self) -> None:
        """This locale may write its block or its ghost cells outside statements."""
        self.version += 1
        self.mask = None


def wrote(A) -> None:
    """Hook of every one-sided write, and of taking ``A.local``: ``A``'s ghost cells here
    stop being current, and its owners' readers see a new version."""
    if A.store.ghost is not None:
        A.store.ghost.touch()


def current(A):
    """The flat mask of this locale's current ghost cells of ``A``, or None."""
    st = A.store.ghost
    if st is None or st.mask is None or st.writes != A.store.writes or st.barriers != comm.barrier_count():
        return None
    return st.mask

"""What the engine runs over: one distributed array's record on this locale.

A :class:`pgas.DistArray` holds one :class:`Store` (its ``store``); the engine reads
and writes an array only through it: the layout and dtype, the flat local storage
(with ghost cells, the padded block) inside the array's MPI window, the ghost-cell
state (:class:`pgas.exec.ghosts.GhostState`, None without ghost cells) and the count
of collective writes (lazy expressions and ghost-cell currency compare it).
"""

from __future__ import annotations


class Store:
    """One distributed array's storage record on this locale (see the module text)."""

    __slots__ = ("dtype", "ghost", "layout", "storage", "window", "writes")

    def __init__(self, layout, dtype, window, ghost) -> None:
        self.layout = layout
        self.dtype = dtype
        self.window = window
        self.storage = window.storage()          # flat; with ghost cells, the padded block
        self.ghost = ghost
        self.writes = 0                          # collective writes seen

"""The zero-byte notices that synchronise a statement with its peers, and the window sync
around them (see :mod:`pgas.exec.run` for the protocol; :mod:`pgas.exec.group` shares it
among the statements of a group)."""

from __future__ import annotations

#: Tags of the synchronisation notices of one statement: an owner's data is ready, a
#: reader is done reading, an owner's readers are done (a writer may write back), a
#: writer is done writing back.
READY, DONE_READ, WRITE_OK, DONE_WRITE = 11, 12, 13, 14


def sync_windows(wins) -> None:
    """Complete this locale's asynchronous updates of each window, and sync it (its stores
    visible to the peers, theirs to it)."""
    for w in wins:
        w.complete()
        w.sync()

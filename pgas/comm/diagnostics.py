"""Communication diagnostics: messages and payload bytes per (source, target) pair.

A *message* is one communication operation a locale starts towards another
locale (a get, put, accumulate, atomic or send; a derived-datatype transfer is
one message).  Operations on a locale's own memory are not counted.  Counting
costs one boolean test per operation when off.
"""

from __future__ import annotations

import numpy as np

from . import runtime

_on = False
_msgs: np.ndarray | None = None
_bytes: np.ndarray | None = None


def record(target: int, nbytes: int, count: int = 1) -> None:
    """Count ``count`` messages of ``nbytes`` payload bytes in all from here to ``target``."""
    if _on:
        _msgs[target] += count
        _bytes[target] += nbytes


def enabled() -> bool:
    return _on


class CommDiagnostics:
    """Context manager (collective on entry and exit) that counts this locale's messages.

    On exit, ``matrix[s, t]`` is the number of messages locale ``s`` started
    towards ``t``, ``byte_matrix`` the payload bytes; ``messages`` and ``bytes``
    are their totals.  All are identical on every locale.

    >>> with pg.comm_diagnostics() as d:          # doctest: +SKIP
    ...     x = A.get(5)
    >>> d.messages                                # doctest: +SKIP
    1
    """

    def __init__(self) -> None:
        self.matrix: np.ndarray | None = None
        self.byte_matrix: np.ndarray | None = None

    def __enter__(self) -> "CommDiagnostics":
        global _on, _msgs, _bytes
        if _on:
            raise RuntimeError("comm_diagnostics() blocks do not nest")
        runtime.barrier()
        P = runtime.num_locales()
        _msgs = np.zeros(P, dtype=np.int64)
        _bytes = np.zeros(P, dtype=np.int64)
        _on = True
        return self

    def __exit__(self, *exc) -> None:
        global _on
        _on = False
        if exc[0] is not None:
            return
        runtime.barrier()
        rows = runtime.allgather((_msgs, _bytes))
        self.matrix = np.array([r[0] for r in rows])
        self.byte_matrix = np.array([r[1] for r in rows])

    @property
    def messages(self) -> int:
        """Total messages between distinct locales."""
        return int(self.matrix.sum())

    @property
    def bytes(self) -> int:
        """Total payload bytes between distinct locales."""
        return int(self.byte_matrix.sum())

    def __repr__(self) -> str:
        if self.matrix is None:
            return "CommDiagnostics(<running>)"
        return f"CommDiagnostics(messages={self.messages}, bytes={self.bytes})"

    def report(self) -> str:
        """A short table: messages and bytes sent per locale."""
        lines = ["locale  messages_sent  bytes_sent"]
        for s in range(len(self.matrix)):
            lines.append(f"{s:>6}  {int(self.matrix[s].sum()):>13}  {int(self.byte_matrix[s].sum()):>10}")
        lines.append(f" total  {self.messages:>13}  {self.bytes:>10}")
        return "\n".join(lines)


def comm_diagnostics() -> CommDiagnostics:
    """Count messages and bytes between locales inside a ``with`` block (collective)."""
    return CommDiagnostics()

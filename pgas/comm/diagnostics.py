"""Communication diagnostics: messages and payload bytes per (source, target) pair.

A *message* is one communication operation a locale starts towards another
locale (a get, put, accumulate, atomic or send; a derived-datatype transfer is
one message).  Operations on a locale's own memory are not counted.
Collectives that move array data count one message per (sender, receiver) pair
with data: ``to_numpy``, the broadcast of a collective scalar read, the
exchanges of ``update``/``gather``/``scatter``, every gather
(:func:`~pgas.comm.collectives.allgatherv`: a sort's or a quantile selection's
samples).  Reductions of data (``allreduce(..., data=True)``: a selection's
counts, a sort's bucket sizes) count the messages of a binomial tree, ``2 (P - 1)``
of the reduced size (:func:`~pgas.comm.collectives.record_tree`).  Synchronisation
and scalar reductions (barriers, ``sum``, ``max``, the agreement on errors) are not
messages.  Synchronisation is counted apart: ``syncs`` are the point-to-point
notices a statement exchanges with its peers (zero-byte messages), ``barriers``
the global barriers entered (per locale: the same on every locale), ``collectives``
the other global collective operations entered (reductions, agreements of
collective calls, gathers, broadcasts, an exchange's consensus): with barriers,
the points where every locale waits for the slowest.  Under the
ablation switches of ``pg.config`` two more counts tell what they changed:
``local_window_accesses`` (``privatise=False``) and ``affinity_tests`` /
``affine_iterations`` (``forall=False``).  Counting
costs one boolean test per operation when off.
"""

from __future__ import annotations

import numpy as np

from . import check, collectives, counters, process


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
        self.sync_counts: np.ndarray | None = None
        self.barrier_counts: np.ndarray | None = None
        self.collective_counts: np.ndarray | None = None
        self.largest_bytes = 0
        self.ablation_matrix: np.ndarray | None = None

    def __enter__(self) -> "CommDiagnostics":
        if counters.enabled():
            raise RuntimeError("comm_diagnostics() blocks do not nest")
        if check.enabled:
            check.collective("start of a pg.comm_diagnostics() block")
        elif check.folding:
            check.agree_history("start of a pg.comm_diagnostics() block", frame=check.call_site())
        collectives.barrier()
        counters.start(process.num_locales())
        return self

    def __exit__(self, *exc) -> None:
        msgs, nbytes, syncs, barriers = counters.stop()
        calls = counters.collectives()
        if exc[0] is not None:
            return
        if check.enabled:
            check.collective("end of a pg.comm_diagnostics() block")
        elif check.folding:
            check.agree_history("end of a pg.comm_diagnostics() block", frame=check.call_site())
        collectives.barrier()
        rows = collectives.allgather((msgs, nbytes, syncs, barriers, counters.largest(), counters.ablation_counts(),
                                      calls))
        self.ablation_matrix = np.array([r[5] for r in rows], dtype=np.int64).reshape(len(rows), 3)
        self.largest_bytes = int(max(r[4] for r in rows))      # the largest single message, any locale
        self.matrix = np.array([r[0] for r in rows])
        self.byte_matrix = np.array([r[1] for r in rows])
        self.sync_counts = np.array([r[2] for r in rows])
        self.barrier_counts = np.array([r[3] for r in rows])
        self.collective_counts = np.array([r[6] for r in rows])

    def _done(self) -> np.ndarray:
        if self.matrix is None:
            raise RuntimeError("comm_diagnostics: no counts (the block is still running or ended with an exception)")
        return self.matrix

    @property
    def messages(self) -> int:
        """Total messages between distinct locales."""
        return int(self._done().sum())

    @property
    def bytes(self) -> int:
        """Total payload bytes between distinct locales."""
        self._done()
        return int(self.byte_matrix.sum())

    @property
    def syncs(self) -> int:
        """Point-to-point synchronisation notices sent, all locales together."""
        self._done()
        return int(self.sync_counts.sum())

    @property
    def barriers(self) -> int:
        """Global barriers entered, the most of any locale (a barrier is entered by all)."""
        self._done()
        return int(self.barrier_counts.max())

    @property
    def collectives(self) -> int:
        """Global collective operations other than barriers entered, the most of any locale
        (reductions, agreements of collective calls, gathers, broadcasts, the consensus
        that ends a sparse exchange)."""
        self._done()
        return int(self.collective_counts.max())

    @property
    def local_window_accesses(self) -> int:
        """One-sided operations locales made on their own memory through its window, all
        locales together (only under ``pg.config(privatise=False)``; not messages)."""
        self._done()
        return int(self.ablation_matrix[:, 0].sum())

    @property
    def affinity_tests(self) -> int:
        """Per-iteration ownership tests, all locales together (only under
        ``pg.config(forall=False)``: every locale tests every iteration of a statement)."""
        self._done()
        return int(self.ablation_matrix[:, 1].sum())

    @property
    def affine_iterations(self) -> int:
        """Iterations that passed an affinity test, all locales together."""
        self._done()
        return int(self.ablation_matrix[:, 2].sum())

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

"""Message counters behind :func:`pgas.comm.comm_diagnostics` (imports nothing of pgas: every
transfer in the comm layer calls :func:`record`)."""

from __future__ import annotations

import numpy as np

_on = False
_msgs: np.ndarray | None = None
_bytes: np.ndarray | None = None
_syncs = 0
_barriers = 0
_collectives = 0
_largest = 0
_local = 0
_tests = 0
_affine = 0


def record(target: int, nbytes: int, count: int = 1) -> None:
    """Count ``count`` messages of ``nbytes`` payload bytes in all from here to ``target``."""
    global _largest
    if _on:
        _msgs[target] += count
        _bytes[target] += nbytes
        if count and nbytes > _largest * count:
            _largest = -(-nbytes // count)          # a record of several messages: their mean, rounded up


def record_each(nbytes: np.ndarray, sent: np.ndarray) -> None:
    """Count one message of ``nbytes[r]`` payload bytes to every locale ``r`` where ``sent[r]``
    (NumPy arrays of one entry per locale: no Python loop over locales)."""
    global _largest
    if _on:
        _msgs[sent] += 1
        _bytes[sent] += nbytes[sent]
        if sent.any():
            _largest = max(_largest, int(nbytes[sent].max()))


def record_sync(count: int = 1) -> None:
    """Count ``count`` point-to-point synchronisation notices sent from here."""
    global _syncs
    if _on:
        _syncs += count


def record_barrier() -> None:
    """Count one global barrier entered here."""
    global _barriers
    if _on:
        _barriers += 1


def record_collective() -> None:
    """Count one global collective operation other than a barrier entered here (a reduction,
    an agreement of collective calls, a gather, a broadcast, an exchange's consensus)."""
    global _collectives
    if _on:
        _collectives += 1


def collectives() -> int:
    """Global collective operations other than barriers this locale entered since :func:`start`."""
    return _collectives


def record_local(count: int = 1) -> None:
    """Count ``count`` one-sided operations a locale made on its own memory through its
    window (``pg.config(privatise=False)``; never messages)."""
    global _local
    if _on:
        _local += count


def record_affinity(tested: int, passed: int) -> None:
    """Count ``tested`` per-iteration affinity tests, ``passed`` of them owned here
    (``pg.config(forall=False)``)."""
    global _tests, _affine
    if _on:
        _tests += tested
        _affine += passed


def ablation_counts() -> tuple[int, int, int]:
    """This locale's local window accesses, affinity tests and iterations that passed them."""
    return _local, _tests, _affine


def enabled() -> bool:
    return _on


def start(num_locales: int) -> None:
    """Start counting from zero."""
    global _on, _msgs, _bytes, _syncs, _barriers, _collectives, _largest, _local, _tests, _affine
    _syncs = _barriers = _collectives = _largest = _local = _tests = _affine = 0
    _msgs = np.zeros(num_locales, dtype=np.int64)
    _bytes = np.zeros(num_locales, dtype=np.int64)
    _on = True


def stop() -> tuple[np.ndarray, np.ndarray, int, int]:
    """Stop counting; this locale's messages and bytes per target, its synchronisation
    notices and its global barriers."""
    global _on
    _on = False
    return _msgs, _bytes, _syncs, _barriers


def largest() -> int:
    """Payload bytes of the largest message sent from here since :func:`start`."""
    return _largest

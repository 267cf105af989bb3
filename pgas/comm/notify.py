"""Zero-byte (or few-word) notices between peers on the notices' communicator: how
statements synchronise point to point instead of globally."""

from __future__ import annotations

import numpy as np

from . import trace
from .counters import record_sync
from .process import mpi
from .runtime import _notices

_EMPTY = np.zeros(1, dtype=np.uint8)


def notify(targets, tag: int) -> list:
    """Start a zero-byte notice with ``tag`` to each of ``targets``; returns the requests.
    Notices between two locales with one tag arrive in the order sent (MPI's
    non-overtaking rule), which is what lets statements pair them up."""
    if not targets:
        return []
    t0 = trace.on and trace.now()
    c, byte = _notices(), mpi().BYTE
    record_sync(len(targets))
    reqs = [c.Isend([_EMPTY, 0, byte], t, tag) for t in targets]
    if t0:
        trace.add("mpi", f"MPI_Isend notice ({trace.tag_name(tag)})", t0, {"peers": list(targets)})
    return reqs


def expect(sources, tag: int) -> list:
    """Post the receipt of one notice with ``tag`` from each of ``sources``."""
    if not sources:
        return []
    t0 = trace.on and trace.now()
    c, byte = _notices(), mpi().BYTE
    reqs = [c.Irecv([_EMPTY, 0, byte], s, tag) for s in sources]
    if t0:
        trace.add("mpi", f"MPI_Irecv notice ({trace.tag_name(tag)})", t0, {"peers": list(sources)})
    return reqs


def notify_values(targets, tag: int, values: np.ndarray) -> list:
    """As :func:`notify`, but each notice carries ``values`` (a few int64: an array's write
    versions); the receiver posts :func:`expect_values` with the same count."""
    if not targets:
        return []
    t0 = trace.on and trace.now()
    c, t = _notices(), mpi().INT64_T
    values = np.ascontiguousarray(values, dtype=np.int64)
    record_sync(len(targets))
    reqs = [c.Isend([values, t], r, tag) for r in targets]
    if t0:
        trace.add("mpi", f"MPI_Isend notice ({trace.tag_name(tag)})", t0, {"peers": list(targets)})
    return reqs


def expect_values(sources, tag: int, count: int):
    """Post the receipt of one notice of ``count`` int64 with ``tag`` from each of
    ``sources``; returns ``(requests, buffer)``, row ``k`` of the buffer being what
    ``sources[k]`` sent (valid once the requests completed)."""
    buf = np.zeros((len(sources), count), dtype=np.int64)
    if not sources:
        return [], buf
    t0 = trace.on and trace.now()
    c, t = _notices(), mpi().INT64_T
    reqs = [c.Irecv([buf[k], t], s, tag) for k, s in enumerate(sources)]
    if t0:
        trace.add("mpi", f"MPI_Irecv notice ({trace.tag_name(tag)})", t0, {"peers": list(sources)})
    return reqs, buf

"""Remote updates with the one-way or the aggregation optimisation turned off
(``pg.config(oneway=False)`` or ``pg.config(aggregate=False)``).

Normally ``update_one`` is one one-way message (an MPI accumulate the owner applies)
and ``update`` sends each owner one message of records it applies.  With the XL UPC
runtime's update optimisation off (``oneway=False``), a remote update is what a
runtime without it does: read the element, modify it at the source, write it back,
two messages and a round trip instead of one message.  With aggregation off
(``aggregate=False``), ``update`` moves one message per record instead of one per
owner.  Results stay what the optimised updates give:

- :func:`update_one` (``oneway=False``): a get, then a compare-and-swap of the new
  value that succeeds only if the element still holds what was read (repeated, from
  what it found, when another locale updated it meanwhile), so concurrent updates of
  one element are never lost.  Integer and bool arrays; float and complex ones have
  no MPI compare-and-swap, so there the write is a plain put and concurrent updates
  of one element from several locales may be lost, as with the get and put of an
  unoptimised runtime.
- :func:`update`: sources take turns (``2P - 1`` rounds, a barrier between rounds: in
  round ``k`` source ``s`` serves owner ``k - s``), so every owner sees its sources one
  at a time in locale order, exactly the order in which it would apply their records.
  A source reads the elements it updates on an owner in one get, combines its records
  into them and writes them back in one put (``oneway=False``); or, with
  ``aggregate=False``, moves each record in a message of its own: an accumulate
  (a get and a put with ``oneway=False``).  Its own elements it updates in place.
"""

from __future__ import annotations

import numpy as np

from .. import comm
from ..exec import settings
from . import apply

_ONE = np.zeros(1, np.int64)


def update_one(A, target: int, off: int, value, op: str) -> None:
    """``A``'s element ``off`` of locale ``target`` op= ``value`` by a get and a
    compare-and-swap (a put for float and complex arrays)."""
    win = A._win
    win.complete()                                  # my earlier one-way updates first
    old = np.empty(1, dtype=A.dtype)
    win.get(target, off, old)
    value = np.asarray(value, dtype=A.dtype).reshape(1)
    while True:
        new = old.copy()
        apply.apply(new, [_ONE], [value], op)
        if A.dtype.kind not in "iub":
            win.put(target, off, new)
            return
        found = win.compare_and_swap(target, off, old[0], new[0])
        if found == old[0]:
            return
        old[0] = found


def update(A, offsets: list[np.ndarray], values: list[np.ndarray], op: str, mpi_op: str) -> None:
    """Collective: apply this locale's records (``offsets[o]``, ``values[o]``: local offsets
    and values for owner ``o``, in order, repeats allowed) owner by owner, the owners'
    turns in locale order (see the module's docstring); ``mpi_op``: ``op``'s MPI
    accumulate op (per-record messages with ``oneway`` on)."""
    P, me, win = comm.num_locales(), comm.here(), A._win
    oneway, aggregate = settings.get("oneway"), settings.get("aggregate")
    win.complete()
    win.sync()
    for k in range(2 * P - 1):
        o = k - me
        if 0 <= o < P and len(offsets[o]):
            if o == me:
                apply.apply(A._storage, [offsets[o]], [values[o]], op)
            elif aggregate:                       # one get and one put
                uniq, pos = np.unique(offsets[o], return_inverse=True)
                cur = np.empty(len(uniq), dtype=A.dtype)
                win.get_indexed(o, uniq, cur)
                apply.apply(cur, [pos.astype(np.int64).reshape(-1)], [values[o]], op)
                win.put_indexed(o, uniq, cur)
            else:                                 # a message per record (two without one-way updates)
                vals = np.ascontiguousarray(values[o], dtype=A.dtype)
                for off, v in zip(offsets[o].tolist(), range(len(vals))):
                    if oneway:
                        win.accumulate(o, off, vals[v:v + 1], mpi_op)
                    else:
                        cur = np.empty(1, dtype=A.dtype)
                        win.get(o, off, cur)
                        apply.apply(cur, [_ONE], [vals[v:v + 1]], op)
                        win.put(o, off, cur)
        comm.barrier()
        win.sync()

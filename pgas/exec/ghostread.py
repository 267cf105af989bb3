"""Statements reading ghost cells instead of fetching (see docs/polyshift.md).

A fetch of a ghosted array ``A`` from owner ``r`` is *served from ghost cells*
when every element it names lies in a cell of this locale's padded block that
the last ``A.update_ghosts()`` filled (:func:`positions`: the element's global
index, placed in this block, or else its periodic image one axis length away,
lands inside it and in the filled mask: a filled cell outside the array was
filled by a periodic wrap, so it holds that image), and those
cells are provably current:

- no collective write of ``A`` and no global barrier since that update (both
  counts are replicated, :func:`pgas.exec.ghosts.current`), and this locale
  took no ``A.local`` / ``A.local_with_ghosts`` view since;
- the owner's write version, which the owner sends in the statement's READY
  notice (``len(ghosted(low))`` int64 instead of zero bytes), is the one it sent
  in that update's notice: the owner took no ``A.local`` view and made no
  one-sided write since.

Then the message buffer is filled by a local copy out of the ghost cells and no
message moves.  The notices stay exactly as the plan says (a served fetch still
gets its READY and sends its DONE_READ), so the decision never desynchronises
the peers.  Under ``pg.config(check=True)`` served fetches are ALSO fetched and
compared, and a difference raises :class:`pgas.exec.ghosts.StaleGhosts` on
every locale.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import comm
from ..plan.transfers import expand
from .ghosts import StaleGhosts, current


def ghosted(low) -> list:
    """The distinct arrays with ghost cells of a lowered statement, in slot order
    (replicated: from the layouts alone)."""
    out, seen = [], set()
    for a in low.arrays:
        if a.store.ghost is not None and id(a) not in seen:
            seen.add(id(a))
            out.append(a)
    return out


def versions(arrs) -> np.ndarray:
    """This locale's write versions of ``arrs``, for its READY notices."""
    return np.array([a.store.ghost.version for a in arrs], dtype=np.int64)


#: Padded-block positions per (plan, fetch), bounded like the plan cache.
_cache: OrderedDict = OrderedDict()
CACHE = 1024


def positions(low, plan, k: int, me: int | None = None):
    """Flat positions, in ``me``'s padded block (default: the plan's locale), of the
    elements of fetch ``k`` in message-buffer order, or None if one lies outside it."""
    me = plan.locale if me is None else me
    key = (id(plan), k, me)
    hit = _cache.get(key)
    if hit is not None and hit[0] is plan:
        return hit[1]
    m = plan.fetches[k]
    L = low.arrays[m.slot].layout
    pos = _positions(L, m, me)
    _cache[key] = (plan, pos)
    if len(_cache) > CACHE:
        _cache.popitem(last=False)
    return pos


def _positions(L, m, me: int):
    if not L.ghosts or not hasattr(m, "regions"):
        return None
    offs = np.concatenate([expand(*r) for r in m.regions]) if m.regions else np.empty(0, np.int64)
    rs, ms = L.storage_shape(m.peer), L.storage_shape(me)
    if offs.size == 0 or offs.min() < 0 or offs.max() >= np.prod(rs):
        return None
    coords = np.unravel_index(offs, rs)
    mine = []
    for d, (c, g) in enumerate(zip(coords, L.ghosts)):
        c = c - g                                            # r's interior index
        if c.min() < 0 or c.max() >= L.local_shape(m.peer)[d]:
            return None
        p = c + (L.coords(m.peer)[d] - L.coords(me)[d]) * L.blocks[d] + g
        if p.min() < 0 or p.max() >= ms[d]:             # its periodic image, where a wrap may fill it
            n = L.shape[d]
            p = np.where(p < 0, p + n, np.where(p >= ms[d], p - n, p))
            if p.min() < 0 or p.max() >= ms[d]:
                return None
        mine.append(p)
    return np.ravel_multi_index(tuple(mine), ms)


def serve(low, plan, sources, vers, arrs=None) -> dict:
    """``{fetch index: buffer}``: the fetches of ``plan`` served from current ghost cells,
    given the versions ``vers[k]`` each of ``sources[k]`` sent (one per array of ``arrs``,
    default :func:`ghosted`; a group's notices carry those of all its statements)."""
    arrs = ghosted(low) if arrs is None else arrs
    slot = {id(a): j for j, a in enumerate(arrs)}
    sent = {q: row for q, row in zip(sources, vers)}
    out = {}
    for k, m in enumerate(plan.fetches):
        A = low.arrays[m.slot]
        mask = current(A)
        if mask is None or A.store.ghost.seen.get(m.peer) != int(sent[m.peer][slot[id(A)]]):
            continue
        pos = positions(low, plan, k)
        if pos is not None and mask[pos].all():
            out[k] = A.store.storage[pos]
    return out


def verify(low, plan, served: dict, bufs) -> StaleGhosts | None:
    """Under check mode: the first served fetch whose ghost copy differs from what was
    fetched, as an error (None if all agree)."""
    for k, buf in served.items():
        got = bufs[k]
        if not np.array_equal(buf, got, equal_nan=buf.dtype.kind in "fc"):
            m = plan.fetches[k]
            A = low.arrays[m.slot]
            return StaleGhosts(f"{A.label}: the ghost cells of locale {comm.here()} that mirror locale "
                               f"{m.peer}'s elements differ from them, though no write through pgas was "
                               "seen since update_ghosts(): a NumPy view of A.local (or A.local_with_ghosts) "
                               "kept from before update_ghosts() was written through.  Call "
                               "A.update_ghosts() again after such writes, or A.invalidate_ghosts() on the "
                               "locale that wrote")
    return None


def explain(low, plan, at: int, live: bool):
    """For ``pg.explain``: ``(notes, served)``: per fetch index a line saying whether it
    is served from ghost cells, and how many are.  ``live``: the plan is this locale's
    at the arrays' real locale count, so the ghost cells' present state is known."""
    notes, served = {}, 0
    for k, m in enumerate(plan.fetches):
        A = low.arrays[m.slot]
        if A.layout.ghosts is None or not any(A.layout.ghosts) or positions(low, plan, k, at) is None:
            continue
        name = A.name or "the array"
        if not live:
            notes[k] = (f"inside {name}'s ghost width: served from ghost cells (no message) while "
                        "current after update_ghosts()")
            continue
        mask = current(A) if A.store.ghost is not None else None
        if mask is not None and m.peer in A.store.ghost.seen and mask[positions(low, plan, k, at)].all():
            notes[k] = ("served from ghost cells, current since update_ghosts(): no message "
                        "(fetched after all if the owner wrote since: its version comes with its READY notice)")
            served += 1
        else:
            why = "not filled by the last update_ghosts()" if mask is not None else \
                "no update_ghosts() since the last write, barrier or A.local view"
            notes[k] = f"inside {name}'s ghost width, but fetched: ghost cells {why}"
    return notes, served

"""Ghost cells: a padded local block in the array's window, filled from the neighbours.

An array made with ``ghosts=(g0, g1, ...)`` (Block distribution) stores on each
locale its block padded by ``g_d`` cells on both sides of dimension ``d``, in its
MPI window.  ``A.local`` is the interior (a view, not contiguous);
``A.local_with_ghosts`` the whole padded block (a view).  Every other path sees
only the interior: the layout's storage offsets (:meth:`Layout.storage_base`,
``storage_strides``) place elements in the padded block, so statements and
one-sided access find them there.

``A.update_ghosts(periodic=False, corners=True)`` fills every ghost cell from the
owner of the global index it mirrors, in ONE exchange: one message per
neighbour (all the faces, edges and corners that neighbour supplies, as one
multi-region get straight out of its window), no copy of the interior.
``A.accumulate_ghosts()`` is the reverse: it adds what this locale wrote into its
ghost cells to the owners' elements (one accumulate per neighbour) and zeroes
the ghost cells.  Statements never write ghost cells.  They READ them, instead of
fetching, where a remote footprint lies inside the cells the last ``update_ghosts``
filled and those are provably current (:class:`GhostState`,
:mod:`pgas.exec.ghostread`).  See ``docs/polyshift.md``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .. import comm

#: Tags of the ghost exchange notices (apart from the statements' 11-14).
READY, DONE = 21, 22
#: ``update_ghosts`` by persistent two-sided transfers compiled per array
#: (:mod:`pgas.array.ghostfast`); False: plan and get one-sided every call.
COMPILED = True


class StaleGhosts(RuntimeError):
    """Under ``pg.config(check=True)``: a statement's ghost-cell read differed from the
    owner's elements (a write through a NumPy view of ``A.local`` kept from before the
    last ``update_ghosts``)."""


class GhostState:
    """Per array and locale: when this locale's ghost cells are current.

    ``version`` counts this locale's possible writes to its own block outside
    statements (``A.local`` / ``A.local_with_ghosts`` taken, a one-sided write
    from here, :meth:`GhostMethods.invalidate_ghosts`); owners send it to their
    readers in each statement's READY notice.  ``update_ghosts`` records ``mask``
    (the padded cells it filled), ``seen`` (each source's version then), and the
    array's collective-write count and the barrier count.  The cells are current
    while neither count moved, ``mask`` was not dropped here, and (checked per
    statement) the owner's version is still the one seen."""

    __slots__ = ("version", "mask", "seen", "writes", "barriers", "compiled")

    def __init__(self) -> None:
        self.compiled = None                    # the compiled exchange (pgas.array.ghostfast)
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
    if A._ghost is not None:
        A._ghost.touch()


def current(A):
    """The flat mask of this locale's current ghost cells of ``A``, or None."""
    st = A._ghost
    if st is None or st.mask is None or st.writes != A._writes or st.barriers != comm.barrier_count():
        return None
    return st.mask


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


# -- the exchange plan (pure) ---------------------------------------------------------
def _pieces(layout, r: int, periodic, corners: bool) -> list:
    """``[(owner, local box of the owner, box in r's padded block)]`` for every ghost cell
    of locale ``r``; boxes are ``((lo, hi), ...)`` per dimension."""
    ls = layout.local_shape(r)
    if not all(ls):
        return []
    g = layout.ghosts
    coords = layout.coords(r)
    starts = [c * b for c, b in zip(coords, layout.blocks)]
    out = []
    for side in itertools.product((-1, 0, 1), repeat=layout.ndim):
        if not any(side) or (not corners and sum(1 for s in side if s) > 1):
            continue
        if any(s and not g[d] for d, s in enumerate(side)):
            continue
        # per dimension: global range mirrored and its position in the padded block
        dims = []
        for d, s in enumerate(side):
            n, lo = layout.shape[d], starts[d]
            if s == 0:
                dims.append([(lo, lo + ls[d], g[d])])
            elif s < 0:
                dims.append(_wrap(lo - g[d], lo, n, 0, periodic[d]))
            else:
                dims.append(_wrap(lo + ls[d], lo + ls[d] + g[d], n, g[d] + ls[d], periodic[d]))
        for combo in itertools.product(*dims):
            for owner, obox, dbox in _split(layout, combo):
                out.append((owner, obox, dbox))
    return out


def _wrap(a: int, b: int, n: int, dest: int, periodic: bool) -> list:
    """Global range [a, b) as in-range pieces ``(lo, hi, dest)``; out-of-range parts wrap
    around when periodic and are dropped (left as they are) otherwise."""
    out = []
    for lo in range(a, b):
        gi = lo % n if periodic else lo
        if not 0 <= gi < n:
            continue
        if out and out[-1][1] == gi and out[-1][2] + (out[-1][1] - out[-1][0]) == dest + lo - a:
            out[-1] = (out[-1][0], gi + 1, out[-1][2])
        else:
            out.append((gi, gi + 1, dest + lo - a))
    return out


def _split(layout, combo) -> list:
    """A global box (per dim ``(lo, hi, dest)``) split by Block owner."""
    per_dim = []
    for d, (lo, hi, dest) in enumerate(combo):
        b, parts, x = layout.blocks[d], [], lo
        while x < hi:
            q = x // b
            y = min(hi, (q + 1) * b)
            parts.append((q, (x - q * b, y - q * b), (dest + x - lo, dest + y - lo)))
            x = y
        per_dim.append(parts)
    out = []
    for parts in itertools.product(*per_dim):
        owner = layout.locale_of([int(p[0]) for p in parts])
        out.append((owner, tuple(p[1] for p in parts), tuple(p[2] for p in parts)))
    return out


def _region(layout, r: int, box) -> tuple:
    """A box of locale ``r``'s interior as a storage region ``(offset, counts, strides)``."""
    S = layout.storage_strides(r)
    off = layout.storage_base(r) + sum(s * lo for s, (lo, _) in zip(S, box))
    return off, tuple(hi - lo for lo, hi in box), S


def _neighbours(layout, r: int) -> list:
    """Locales whose ghost cells may mirror ``r``'s elements (grid distance bounded by the
    ghost widths over the block sizes), without ``r``."""
    coords = layout.coords(r)
    ranges = []
    for d, (c, p) in enumerate(zip(coords, layout.grid)):
        b = max(1, layout.blocks[d])
        empty = p - -(-layout.shape[d] // b)                # trailing locales owning nothing
        k = min(p - 1, -(-layout.ghosts[d] // b) + 1 + max(empty, 0))
        ranges.append(sorted({(c + j) % p for j in range(-k, k + 1)}))
    return [q for q in (layout.locale_of(list(c)) for c in itertools.product(*ranges)) if q != r]


def exchange_plan(layout, me: int, periodic, corners: bool):
    """``(by_source, readers)``: this locale's ghost pieces grouped by owner, and the
    locales that read this locale's elements into their ghost cells."""
    by_source: dict = {}
    for owner, obox, dbox in _pieces(layout, me, periodic, corners):
        by_source.setdefault(owner, []).append((obox, dbox))
    readers = [q for q in _neighbours(layout, me)
               if any(o == me for o, _, _ in _pieces(layout, q, periodic, corners))]
    return by_source, readers


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
_checked = _update = None
def update_ghosts(A, periodic=False, corners: bool = True) -> None:
    """Collective over the neighbours: fill every ghost cell of ``A`` (see the module text)."""
    global _checked, _update
    if _update is None:                         # imported once (a per-call import costs microseconds)
        from .collective import checked as _checked
        from .ghostfast import update as _update
    periodic = _periodic(periodic, A.ndim)
    _checked("{0}.update_ghosts()", A, args=(periodic, bool(corners)))
    L, me, win = A.layout, A._me, A._win
    if not L.ghosts:
        return
    if COMPILED:
        _update(A, periodic, bool(corners))
        return
    by_source, readers = exchange_plan(L, me, periodic, bool(corners))
    block = padded(A)
    sources = sorted(q for q in by_source if q != me)
    win.complete()
    win.sync()
    st = A._ghost
    ready, seen = comm.expect_values(sources, READY, 1)
    done = comm.expect(readers, DONE)
    sent = comm.notify_values(readers, READY, np.array([st.version]))
    comm.wait(ready)
    bufs = []
    for q in sources:
        parts = by_source[q]
        buf = np.empty(sum(math.prod(hi - lo for lo, hi in ob) for ob, _ in parts), dtype=A.dtype)
        win.get_regions(q, [_region(L, q, ob) for ob, _ in parts], buf, flush=False)
        bufs.append(buf)
    for q in sources:
        win.flush(q)
    sent += comm.notify(sources, DONE)
    for ob, db in by_source.get(me, []):                  # periodic wrap onto this locale itself
        block[_sl(db)] = block[_sl(tuple((lo + g, hi + g) for (lo, hi), g in zip(ob, L.ghosts)))]
    for q, buf in zip(sources, bufs):
        k = 0
        for ob, db in by_source[q]:
            shape = tuple(hi - lo for lo, hi in ob)
            block[_sl(db)] = buf[k:k + math.prod(shape)].reshape(shape)
            k += math.prod(shape)
    mask = np.zeros(block.shape, dtype=bool)
    for parts in by_source.values():
        for _, db in parts:
            mask[_sl(db)] = True
    st.mask, st.seen = mask.reshape(-1), {q: int(v) for q, v in zip(sources, seen[:, 0])}
    st.writes, st.barriers = A._writes, comm.barrier_count()
    comm.wait(done)
    comm.wait(sent)
    comm.statement_done()


def accumulate_ghosts(A, periodic=False, corners: bool = True, op: str = "sum") -> None:
    """Collective over the neighbours: add (``op``) every ghost cell's value into the element
    it mirrors, on its owner, then set the ghost cells to zero."""
    from .collective import checked
    periodic = _periodic(periodic, A.ndim)
    checked("{0}.accumulate_ghosts()", A, args=(periodic, bool(corners), op))
    L, me, win = A.layout, A._me, A._win
    if not L.ghosts:
        return
    from .engine import before_write
    before_write(A, None)                     # a collective write: the ghost cells stop being current
    by_target, writers = exchange_plan(L, me, periodic, bool(corners))
    block = padded(A)
    targets = sorted(by_target)
    win.complete()
    win.sync()
    ready = comm.expect([q for q in targets if q != me], READY)
    done = comm.expect(writers, DONE)
    sent = comm.notify(writers, READY)
    comm.wait(ready)
    for q in targets:
        parts = by_target[q]
        data = np.concatenate([block[_sl(db)].reshape(-1) for _, db in parts])
        win.accumulate_regions(q, [_region(L, q, ob) for ob, _ in parts], data, op, flush=True)
    sent += comm.notify([q for q in targets if q != me], DONE)
    comm.wait(done)
    win.sync()
    for parts in by_target.values():
        for _, db in parts:
            block[_sl(db)] = 0
    comm.wait(sent)
    comm.statement_done()


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


def _sl(box) -> tuple:
    return tuple(slice(lo, hi) for lo, hi in box)

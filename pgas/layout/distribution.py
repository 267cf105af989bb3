"""Distributions (Block, Cyclic, BlockCyclic) and their binding to a shape.

A distribution is a recipe: a block rule per dimension and, optionally, a
locale grid.  Binding it to an array shape and a locale count gives a
:class:`Layout`: the grid, one :class:`DimMap` per dimension and each
locale's local shape.  Locales are laid on the grid in row-major order, so
locale ``r`` sits at grid coordinates ``np.unravel_index(r, grid)``.

Block-cyclic ownership of global index ``(i_0, ..., i_{d-1})``::

    coord_k = (i_k // b_k) % grid_k          locale = ravel(coord, grid)

Cyclic 8 x 8 over a 2 x 2 grid (locale numbers)::

    0 1 0 1 0 1 0 1
    2 3 2 3 2 3 2 3
    0 1 0 1 ...
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache

import numpy as np

from .dimmap import DimMap, _ceil_div

MAX_NDIM = 4


class DistributionError(ValueError):
    """A distribution that cannot be bound to the given shape or locales."""


def grids(p: int, ndim: int) -> list[tuple[int, ...]]:
    """Every grid of ``ndim`` extents whose product is ``p``, in lexicographic order.

    >>> grids(4, 2)
    [(1, 4), (2, 2), (4, 1)]
    """
    if ndim == 1:
        return [(p,)]
    return [(d,) + g for d in range(1, p + 1) if p % d == 0 for g in grids(p // d, ndim - 1)]


@lru_cache(maxsize=256)
def default_grid(p: int, ndim: int) -> tuple[int, ...]:
    """The most nearly square grid of ``ndim`` dimensions with product ``p`` (smallest
    ratio of largest to smallest extent, as MPI_Dims_create), larger extents first.

    >>> default_grid(4, 2), default_grid(6, 2), default_grid(8, 3), default_grid(5, 2), default_grid(72, 2)
    ((2, 2), (3, 2), (2, 2, 2), (5, 1), (9, 8))
    """
    if ndim == 0:
        return ()
    return min((g for g in grids(p, ndim) if list(g) == sorted(g, reverse=True)), key=lambda g: g[0] / g[-1])


@lru_cache(maxsize=1024)
def square_grid(shape: tuple[int, ...], p: int, fixed: tuple | None = None) -> tuple[int, ...]:
    """The grid of ``p`` locales over an array of ``shape`` whose blocks are most nearly
    square (cubic): the fewest elements on the faces that border another locale's block,
    then the smallest ratio of the largest to the smallest block extent (the CM-200's
    geometry manager).  ``fixed``: an extent per dimension, or None where it is chosen
    (``(None, 1)`` keeps dimension 1 whole on every locale, as a SERIAL axis).

    >>> square_grid((64, 64), 4), square_grid((1024, 16), 4), square_grid((8, 8, 8), 8)
    ((2, 2), (4, 1), (2, 2, 2))
    >>> square_grid((64, 64, 64), 4, (None, None, 1))
    (2, 2, 1)
    """
    fixed = fixed or (None,) * len(shape)
    best = None
    for g in grids(p, len(shape)):
        if any(f is not None and f != x for f, x in zip(fixed, g)):
            continue
        local = [_ceil_div(n, x) for n, x in zip(shape, g)]
        faces = sum(math.prod(local[:d] + local[d + 1:]) for d, x in enumerate(g) if x > 1)
        cost = (faces, max(local) / max(1, min(local)), tuple(-x for x in g))
        if best is None or cost < best[0]:
            best = (cost, g)
    if best is None:
        raise DistributionError(f"grid {fixed}: no grid of {p} locales has these extents")
    return best[1]


@dataclass(frozen=True)
class Distribution:
    """Base of the distribution recipes made by ``Block``, ``Cyclic`` and ``BlockCyclic``;
    ``bind`` turns one into a :class:`Layout` for a shape and a locale count."""

    kind: str
    block: tuple[int, ...] | None = None
    grid: tuple[int, ...] | None = None

    def _blocks(self, shape, grid) -> tuple[int, ...]:
        if self.kind == "block":
            return tuple(max(1, _ceil_div(n, p)) for n, p in zip(shape, grid))
        if self.kind == "cyclic":
            return (1,) * len(shape)
        blk = self.block
        if len(blk) == 1:
            blk = blk * len(shape)
        if len(blk) != len(shape):
            raise DistributionError(
                f"BlockCyclic block {self.block} has {len(self.block)} sizes for an array of shape {tuple(shape)}")
        return blk

    def bind(self, shape, num_locales: int) -> "Layout":
        """Bind to a global ``shape`` over ``num_locales`` locales (cached: equal inputs give one Layout)."""
        shape = tuple(shape)
        if not all(_is_int(n) for n in shape):
            raise DistributionError(f"shape {shape}: extents must be integers")
        return _bind(self, tuple(int(n) for n in shape), int(num_locales))

    def _bind(self, shape: tuple[int, ...], num_locales: int) -> "Layout":
        ndim = len(shape)
        if not 1 <= ndim <= MAX_NDIM:
            raise DistributionError(f"arrays of shape {shape}: {ndim} dimensions, pgas supports 1 to {MAX_NDIM}")
        if any(n < 0 for n in shape):
            raise DistributionError(f"negative extent in shape {shape}")
        grid = self.grid
        if grid is None:
            grid = default_grid(num_locales, ndim)
        elif grid == "square":
            grid = square_grid(shape, num_locales)
        elif None in grid and len(grid) == ndim:
            grid = square_grid(shape, num_locales, grid)
        if len(grid) != ndim:
            raise DistributionError(f"{self}: grid {grid} has {len(grid)} dimensions, array shape {shape} has {ndim}")
        if math.prod(grid) != num_locales:
            raise DistributionError(f"{self}: grid {grid} has {math.prod(grid)} locales, but there are {num_locales}")
        blocks = self._blocks(shape, grid)
        return Layout(shape, grid, blocks, self)

    def __repr__(self) -> str:
        g = "" if self.grid is None else f"grid={self.grid!r}"
        if self.kind == "block-cyclic":
            b = self.block[0] if len(self.block) == 1 else self.block
            return f"BlockCyclic({b}{', ' + g if g else ''})"
        return f"{self.kind.capitalize()}({g})"


@lru_cache(maxsize=1024)
def _bind(dist: Distribution, shape: tuple[int, ...], num_locales: int) -> "Layout":
    return dist._bind(shape, num_locales)


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _check_grid(grid):
    if grid is None:
        return None
    if isinstance(grid, str):
        if grid != "square":
            raise DistributionError(f"grid {grid!r}: a grid is a tuple of extents, None or 'square'")
        return grid
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    if not grid or any(g is not None and (not _is_int(g) or g < 1) for g in grid):
        raise DistributionError(f"grid {grid}: every grid extent must be a positive integer (or None: chosen)")
    return tuple(None if g is None else int(g) for g in grid)


def Block(grid=None) -> Distribution:
    """One contiguous block per locale in each dimension (``b = ceil(n / p)``).

    ``grid``: the locale grid, a tuple of extents; None (the most nearly square grid
    of locales, whatever the array's shape); ``"square"`` (the grid whose blocks are
    most nearly square for the array's shape, :func:`square_grid`: the fewest elements
    on faces between locales, as the CM-200 placed subgrids for shifts); or a tuple with
    None where the extent is chosen that way (``(None, 1)``: dimension 1 not split).
    The same values work for ``Cyclic`` and ``BlockCyclic``."""
    return Distribution("block", None, _check_grid(grid))


def Cyclic(grid=None) -> Distribution:
    """Indices dealt round-robin over the locales of each dimension (``b = 1``)."""
    return Distribution("cyclic", None, _check_grid(grid))


def BlockCyclic(block, grid=None) -> Distribution:
    """Blocks of ``block`` indices dealt round-robin; ``block`` is an int or one per dimension."""
    blk = tuple(block) if isinstance(block, (tuple, list)) else (block,)
    if not blk or any(not _is_int(b) or b < 1 for b in blk):
        raise DistributionError(f"BlockCyclic block size must be a positive integer, got {block!r}")
    return Distribution("block-cyclic", tuple(int(b) for b in blk), _check_grid(grid))


@dataclass(frozen=True)
class Layout:
    """A distribution bound to a shape: grid, per-dimension maps, local shapes.

    An array's ``A.layout``.  Global index ``g`` of a dimension with block size
    ``b`` over ``p`` locales of the grid belongs to grid coordinate
    ``(g // b) % p`` and sits at local index ``(g // (b * p)) * b + g % b``.

    Attributes
    ----------
    shape : tuple of int
        The global shape.
    grid : tuple of int
        Locales per dimension; their product is the locale count.  Locale ``r``
        sits at grid coordinates ``np.unravel_index(r, grid)``.
    blocks : tuple of int
        Block size per dimension: ``ceil(n / p)`` for Block, 1 for Cyclic, the
        given size for BlockCyclic.
    dist : Distribution
        The recipe this layout was bound from.
    ghosts : tuple of int
        Ghost-cell width per dimension (``()`` for none): each locale's storage is
        its block padded by that many cells on both sides (see ``storage_shape``,
        ``storage_strides``, ``storage_base``); local indices stay unpadded.

    Examples
    --------
    >>> L = BlockCyclic(2).bind((8, 8), 4)
    >>> L.grid, L.blocks, L.owner((3, 5)), L.local_shape(0)
    ((2, 2), (2, 2), 2, (4, 4))
    >>> L.owned(0)[0]
    array([0, 1, 4, 5])
    """

    shape: tuple[int, ...]
    grid: tuple[int, ...]
    blocks: tuple[int, ...]
    dist: Distribution
    ghosts: tuple[int, ...] = ()      # ghost width per dimension: storage is padded (see storage_shape)

    def __hash__(self) -> int:
        """The fields' hash, computed once (plans are cached by layouts)."""
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.shape, self.grid, self.blocks, self.dist, self.ghosts))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}     # str hashes differ by process

    def with_ghosts(self, ghosts) -> "Layout":
        """This layout with each locale's storage padded by ``ghosts[d]`` cells on both
        sides of dimension ``d`` (all zero: no padding)."""
        g = tuple(int(x) for x in ghosts)
        return dataclasses.replace(self, ghosts=g if any(g) else ())

    def storage_shape(self, locale: int) -> tuple[int, ...]:
        """Shape of ``locale``'s storage: the local shape plus the ghost cells."""
        return tuple(n + 2 * g for n, g in zip(self.local_shape(locale), self.ghosts or (0,) * self.ndim))

    def storage_strides(self, locale: int) -> tuple[int, ...]:
        """C-order element strides of ``locale``'s storage."""
        s, out = 1, []
        for n in reversed(self.storage_shape(locale)):
            out.append(s)
            s *= n
        return tuple(reversed(out))

    def storage_base(self, locale: int) -> int:
        """Offset of local element ``(0, ..., 0)`` in ``locale``'s storage (0 without ghosts)."""
        if not self.ghosts:
            return 0
        return sum(s * g for s, g in zip(self.storage_strides(locale), self.ghosts))

    @cached_property
    def maps(self) -> tuple[DimMap, ...]:
        return tuple(DimMap(n, p, b) for n, p, b in zip(self.shape, self.grid, self.blocks))

    @cached_property
    def _tables(self) -> tuple:
        return tuple((m.n, m.p, m.b, m.period, tuple(m.local_size(q) for q in range(m.p))) for m in self.maps)

    def locate(self, key) -> tuple[int, int] | None:
        """``(owner, offset in the owner's flat local storage)`` of the element named by
        ``key`` (an int or a tuple of ints, negative ones counting from the end), or None
        if ``key`` is anything else or out of range.  Plain integer arithmetic: the fast
        path of scalar access.

        >>> L = Cyclic().bind((4, 6), 4)
        >>> L.locate((3, 5)), L.locate((-1, -1)), L.locate((4, 0)), L.locate((0, slice(None)))
        ((3, 5), (3, 5), None, None)
        """
        tables = self._tables
        if self.ghosts:
            return self._locate_ghosts(key)
        if type(key) is int and len(tables) == 1:
            n, p, b, period, _ = tables[0]
            g = key + n if key < 0 else key
            return ((g // b) % p, (g // period) * b + g % b) if 0 <= g < n else None
        if type(key) is not tuple:
            key = (key,)
        if len(key) != len(tables):
            return None
        owner = flat = 0
        for g, (n, p, b, period, sizes) in zip(key, tables):
            if type(g) is not int:
                if not isinstance(g, np.integer):
                    return None
                g = int(g)
            if g < 0:
                g += n
            if not 0 <= g < n:
                return None
            q = (g // b) % p
            owner = owner * p + q
            flat = flat * sizes[q] + (g // period) * b + g % b
        return owner, flat

    def _locate_ghosts(self, key):
        key = key if type(key) is tuple else (key,)
        if len(key) != self.ndim or not all(isinstance(g, (int, np.integer)) and not isinstance(g, (bool, np.bool_))
                                            for g in key):
            return None
        idx = tuple(int(g) + n if g < 0 else int(g) for g, n in zip(key, self.shape))
        if not all(0 <= g < n for g, n in zip(idx, self.shape)):
            return None
        owner = self.owner(idx)
        flat = self.storage_base(owner) + sum(s * l for s, l in zip(self.storage_strides(owner), self.local_index(idx)))
        return owner, flat

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def like(self, ndim: int) -> "Distribution":
        """The distribution of an ``ndim``-dimensional result made from an array of this
        layout: the same kind, on the same grid when the dimensions agree, else on the
        default grid (a per-dimension block size is cut to its first entry)."""
        d = self.dist
        if self.ndim == ndim:
            return dataclasses.replace(d, grid=self.grid)
        block = d.block
        if block is not None and len(block) not in (1, ndim):
            block = (block[0],)
        return dataclasses.replace(d, block=block, grid=None)

    @property
    def num_locales(self) -> int:
        return math.prod(self.grid)

    @property
    def key(self) -> tuple:
        """A hashable value equal for equal layouts (same owner and storage offset of every
        element)."""
        return (self.shape, self.grid, self.blocks) + ((self.ghosts,) if self.ghosts else ())

    @cache
    def coords(self, locale: int) -> tuple[int, ...]:
        """Grid coordinates of ``locale``."""
        return tuple(int(c) for c in np.unravel_index(locale, self.grid))

    def locale_of(self, coords) -> int:
        """Locale number at grid coordinates ``coords``; vectorised over arrays of coords."""
        if all(type(c) is int for c in coords):       # the planner's scalar case, without NumPy
            r = 0
            for c, p in zip(coords, self.grid):
                r = r * p + c
            return r
        return np.ravel_multi_index(tuple(coords), self.grid)

    @cache
    def local_shape(self, locale: int) -> tuple[int, ...]:
        return tuple(m.local_size(c) for m, c in zip(self.maps, self.coords(locale)))

    def owner(self, index) -> int:
        """Locale owning the global ``index`` (a tuple of in-range non-negative ints)."""
        return int(self.locale_of([m.owner(g) for m, g in zip(self.maps, index)]))

    def local_index(self, index) -> tuple[int, ...]:
        """Position of global ``index`` in its owner's local storage."""
        return tuple(int(m.local_index(g)) for m, g in zip(self.maps, index))

    def global_index(self, locale: int, local) -> tuple[int, ...]:
        """Global index of local element ``local`` on ``locale``."""
        return tuple(int(m.global_index(c, l)) for m, c, l in zip(self.maps, self.coords(locale), local))

    def owned(self, locale: int) -> tuple[np.ndarray, ...]:
        """Per dimension, ``locale``'s owned global indices in local storage order; the
        locale's local array holds ``G[np.ix_(*owned)]``."""
        return tuple(m.owned(c) for m, c in zip(self.maps, self.coords(locale)))

    def owned_key(self, locale: int):
        """An index of the global array selecting ``locale``'s elements in local storage
        order: basic slices for Block and Cyclic dimensions, ``np.ix_`` arrays otherwise."""
        parts = []
        for m, q in zip(self.maps, self.coords(locale)):
            starts = m.block_starts(q)
            if len(starts) <= 1:
                s = starts.start if len(starts) else 0
                parts.append(slice(s, min(s + m.b, m.n)) if len(starts) else slice(0, 0))
            elif m.b == 1:
                parts.append(slice(q, m.n, m.p))
            else:
                parts.append(m.owned(q))
        if all(isinstance(k, slice) for k in parts):
            return tuple(parts)
        return np.ix_(*[np.arange(k.start, k.stop, k.step or 1) if isinstance(k, slice) else k for k in parts])

    def owned_ranges(self, locale: int) -> tuple[list[range], ...]:
        """Per dimension, the owned set as strided ranges (their product is the owned box set)."""
        return tuple(m.owned_ranges(c) for m, c in zip(self.maps, self.coords(locale)))

    def owners(self, indices: tuple[np.ndarray, ...]) -> np.ndarray:
        """Owning locale of each global index, given per-dimension index arrays."""
        return self.locale_of([m.owner(g) for m, g in zip(self.maps, indices)])

    def local_flat(self, indices: tuple[np.ndarray, ...], owners: np.ndarray | None = None) -> np.ndarray:
        """Flat (C-order) offset of each global index in its owner's local storage (with
        ghost cells, in the padded storage)."""
        if owners is None:
            owners = self.owners(indices)
        coords = np.unravel_index(owners, self.grid) if len(self.grid) else ()
        flat = np.zeros(np.shape(indices[0]), dtype=np.int64)
        pad = self.ghosts or (0,) * self.ndim
        for d, (m, g) in enumerate(zip(self.maps, indices)):
            sizes = np.array([m.local_size(q) + 2 * pad[d] for q in range(m.p)], dtype=np.int64)
            flat = flat * sizes[coords[d]] + m.local_index(g) + pad[d]
        return flat

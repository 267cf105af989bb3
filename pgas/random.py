"""Reproducible distributed random numbers: the same seed gives the same global
array on any locale count and any distribution.

    rng = pg.random.default_rng(42)
    X = rng.random((1000, 1000), dist=pg.Cyclic())
    p = rng.permutation(10**6)

How: counter-based generation with NumPy's ``Philox``.  The seed gives the
Philox key (through ``np.random.SeedSequence``).  Elements are numbered by
their C-order global flat index and cut into chunks of :data:`CHUNK`; chunk
``c`` of the ``k``-th call on a generator is drawn by a fresh
``np.random.Generator(Philox(key=key, counter=[0, c, 0, k]))``, so its values
depend only on (seed, call number, chunk), never on who draws it.  Each draw
inside a chunk advances only the lowest counter word, so chunks never overlap.

Every method is **exact**: the global array is bit-identical on 1, 2, 3, 4 ...
locales and for every distribution, including ``standard_normal`` and
``integers`` whose NumPy algorithms consume a varying number of raw draws
(each chunk starts from its own counter), for a given NumPy version (NumPy
may change its Generator's distribution algorithms between versions, NEP 19;
``random`` and ``integers`` of the raw Philox stream have been stable).
The values are **not** those of
``np.random.default_rng(seed)`` (a different bit generator and chunking);
:func:`reference` computes the same global array in one process, with NumPy only.

Work: a locale whose elements lie in few chunks (Block along the first
dimension, say) draws those chunks itself (no messages).  Otherwise (Cyclic,
or a grid split along a later dimension) the chunks are dealt out in equal
contiguous runs, each locale draws its run and the values go to their owners,
with their offsets there, in exchanges (:func:`pgas.comm.exchange`) of
:data:`ROUND` chunks from each locale, so no locale
draws more than about ``n / P + CHUNK`` values, nor holds more than a round's
values and offsets at once.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from . import comm
from .array.creation.layouts import new_layout as _layout, owned_flat
from .array.collective import checked
from .array.core import DistArray
from .array.index import check_dtype
from .layout.boxes import box_shape, boxes

#: Elements per chunk of the global flat index (a fixed constant: changing it changes every value).
CHUNK = 1 << 14
#: Chunks a locale draws for other locales per all-to-all exchange (bounds the memory of dealing).
ROUND = 4

__all__ = ["Generator", "default_rng", "reference", "CHUNK"]


def default_rng(seed=None) -> "Generator":
    """A :class:`Generator` seeded by ``seed`` (an int >= 0 or a sequence of them).

    Parameters
    ----------
    seed : int or sequence of int, optional
        With None, locale 0 draws fresh entropy and shares it, so the generator is
        still the same on every locale.

    Returns
    -------
    Generator
    """
    if seed is None:
        checked("pg.random.default_rng()")
        seed = comm.bcast(np.random.SeedSequence().entropy, 0)
    return Generator(seed)


def _key(seed) -> np.ndarray:
    return np.random.SeedSequence(seed).generate_state(2, np.uint64)


def _draw(key, call: int, chunk: int, count: int, method: str, args: tuple, dtype) -> np.ndarray:
    """The first ``count`` values of chunk ``chunk`` of call ``call`` (NumPy only)."""
    g = np.random.Generator(np.random.Philox(key=key, counter=np.array([0, chunk, 0, call], dtype=np.uint64)))
    if method == "integers":
        return g.integers(*args, size=count, dtype=dtype, endpoint=False)
    if method in ("random", "standard_normal"):
        return getattr(g, method)(size=count, dtype=dtype)
    return getattr(g, method)(*args, size=count).astype(dtype, copy=False)


def _values(key, call, flat: np.ndarray, n: int, method, args, dtype) -> np.ndarray:
    """The values at the sorted global flat indices ``flat`` (chunk by chunk, bounded memory)."""
    out = np.empty(len(flat), dtype=dtype)
    if not len(flat):
        return out
    chunks = np.unique(flat // CHUNK)
    edges = np.searchsorted(flat, np.append(chunks, chunks[-1] + 1) * CHUNK)
    for c, lo, hi in zip(chunks, edges[:-1], edges[1:]):
        count = min(CHUNK, n - int(c) * CHUNK)
        vals = _draw(key, call, int(c), count, method, args, dtype)
        out[lo:hi] = vals[flat[lo:hi] - int(c) * CHUNK]
    return out


def reference(seed, calls: int, shape, method: str = "random", *args, dtype=None) -> np.ndarray:
    """The global array that call number ``calls`` (0 for the first) of
    ``default_rng(seed).method(*args, size=shape)`` gives, computed in one process
    with NumPy only (for tests and for checking results outside pgas)."""
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    n = math.prod(shape)
    dtype = np.dtype(dtype if dtype is not None else (np.int64 if method == "integers" else np.float64))
    return _values(_key(seed), calls, np.arange(n, dtype=np.int64), n, method, args, dtype).reshape(shape)


class Generator:
    """A distributed random generator; make one with :func:`default_rng`.

    Every method is collective and returns a :class:`~pgas.DistArray` of the
    requested ``size`` and ``dist`` (Block by default) that is the same global
    array whatever the locale count and distribution.  Consecutive calls give
    different arrays.  Values differ from ``np.random.default_rng(seed)``'s.
    """

    def __init__(self, seed) -> None:
        self._key = _key(seed)
        self._calls = 0

    def __repr__(self) -> str:
        return f"pgas.random.Generator(Philox, calls={self._calls})"

    def _generate(self, size, dist, dtype, method: str, args: tuple) -> DistArray:
        layout = _layout(size, dist)
        a = DistArray._create(layout, dtype)
        call = self._calls
        self._calls += 1
        n = math.prod(layout.shape)
        me, P = comm.here(), comm.num_locales()
        nchunks = -(-n // CHUNK)
        keys = list(boxes(a.local.shape))            # the local block by boxes: bounded temporaries
        touched, last = 0, -1
        for key in keys:                             # chunks the (increasing) owned flat indices touch
            got = np.unique(owned_flat(layout, me, key) // CHUNK)
            touched += len(got) - (got[0] == last)
            last = got[-1]
        mine = touched * CHUNK <= 2 * a.local.size + 2 * CHUNK       # drawing my own chunks costs at most ~2x
        if P == 1 or comm.allreduce(np.int64(mine), "min"):
            for key in keys:
                a.local[key] = _values(self._key, call, owned_flat(layout, me, key), n, method, args,
                                       a.dtype).reshape(box_shape(a.local.shape, key))
        else:                                        # my run of chunks, ROUND chunks per exchange
            c0, c1 = nchunks * me // P, nchunks * (me + 1) // P
            longest = -(-nchunks // P)                 # chunks in the longest run: the same
            for k in range(-(-longest // ROUND)):      # count of exchanges on every locale
                lo, hi = min(c0 + k * ROUND, c1), min(c0 + (k + 1) * ROUND, c1)
                self._deal(a, call, np.arange(lo * CHUNK, min(hi * CHUNK, n), dtype=np.int64), method, args)
        comm.barrier([a.store.window])
        return a

    def _deal(self, a, call: int, mine: np.ndarray, method: str, args: tuple) -> None:
        """Collective: draw the values at the global flat indices ``mine`` and send each to
        its owner, with its offset there, in one exchange (:func:`pgas.comm.exchange`: up
        to its dense limit no collective at all, beyond it one consensus; ``mine`` may be
        empty here)."""
        layout, P = a.layout, comm.num_locales()
        rec = np.empty(len(mine), dtype=[("offset", np.int64), ("value", a.dtype)])
        rec["value"] = _values(self._key, call, mine, math.prod(layout.shape), method, args, a.dtype)
        owners = layout.owners(np.unravel_index(mine, layout.shape))
        rec["offset"] = layout.local_flat(np.unravel_index(mine, layout.shape), owners)
        order = np.argsort(owners, kind="stable")
        rec = rec[order]
        cuts = np.searchsorted(owners[order], np.arange(P + 1))
        for got in comm.exchange([rec[cuts[r]:cuts[r + 1]] for r in range(P)], rec.dtype):
            a._flat_local[got["offset"]] = got["value"]

    def random(self, size, dtype=float, dist=None) -> DistArray:
        """Floats uniform on ``[0, 1)`` (``dtype`` float64 or float32)."""
        dtype = _float_dtype(dtype, "random")
        return self._generate(size, dist, dtype, "random", ())

    def standard_normal(self, size, dtype=float, dist=None) -> DistArray:
        """Standard normal floats (``dtype`` float64 or float32)."""
        dtype = _float_dtype(dtype, "standard_normal")
        return self._generate(size, dist, dtype, "standard_normal", ())

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float, dist=None) -> DistArray:
        """Normal floats with mean ``loc`` and standard deviation ``scale`` (scalars)."""
        loc, scale = _scalar(loc, "loc"), _scalar(scale, "scale")
        if scale < 0:
            raise ValueError(f"normal: scale must be >= 0, got {scale}")
        return self._generate(_size(size), dist, _float_dtype(dtype, "normal"), "normal", (loc, scale))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float, dist=None) -> DistArray:
        """Floats uniform on ``[low, high)`` (scalars)."""
        low, high = _scalar(low, "low"), _scalar(high, "high")
        return self._generate(_size(size), dist, _float_dtype(dtype, "uniform"), "uniform", (low, high))

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint: bool = False, dist=None) -> DistArray:
        """Integers uniform on ``[low, high)`` (``[0, low)`` if ``high`` is None;
        ``[low, high]`` with ``endpoint``), as ``np.random.Generator.integers``."""
        if high is None:
            low, high = 0, low
        try:
            low, high = operator.index(low), operator.index(high)
        except TypeError:
            raise TypeError(f"integers: low and high must be integers, got {low!r}, {high!r}") from None
        high += bool(endpoint)
        dtype = check_dtype(dtype, "pg.random integers")
        if dtype.kind not in "ib":
            raise TypeError(f"integers: dtype must be an integer type, got {dtype}")
        info = np.iinfo(dtype) if dtype.kind == "i" else None
        lo_ok, hi_ok = (0, 2) if info is None else (info.min, info.max + 1)
        if not (lo_ok <= low < high <= hi_ok):
            raise ValueError(f"integers: need {lo_ok} <= low < high <= {hi_ok} for {dtype}, got low={low}, high={high}")
        return self._generate(_size(size), dist, dtype, "integers", (low, high))

    def permutation(self, n, dist=None) -> DistArray:
        """A random permutation of ``0 .. n - 1`` (int64), the same on any locale count:
        random 64-bit keys ranked by the distributed stable sort (:func:`pgas.argsort`)."""
        try:
            n = operator.index(n)
        except TypeError:
            raise TypeError(f"permutation takes an int n, got {type(n).__name__}") from None
        if n < 0:
            raise ValueError(f"permutation: n must be >= 0, got {n}")
        from .array.sorting.sort import argsort

        keys = self.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, n)
        return argsort(keys, dist=dist)


def _size(size):
    if size is None:
        raise TypeError("pg.random methods need size= (a shape): there are no scalar draws")
    return size


def _float_dtype(dtype, what):
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise TypeError(f"{what}: dtype must be float64 or float32, got {dt}")
    return dt


def _scalar(x, what):
    if np.ndim(x) != 0 or isinstance(x, DistArray):
        raise TypeError(f"{what} must be a scalar, got {type(x).__name__}")
    return float(x)

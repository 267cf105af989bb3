"""A fixed list of local moves ``dst[...] = src``, run again and again (a compiled group's).

A compiled shift group (:mod:`pgas.exec.shiftgroup`) makes its task views once
per binding; a run then moves each pair.  With NumPy that is one assignment per
pair (about a microsecond each, however small), so a polyshift's cost grew with
the shifts it carries.  :class:`Copies` runs the whole list in ONE call of a
numba kernel (:mod:`pgas.exec.copykernel`) where it can: every move becomes a
row ``[dst, src, extents, dst strides, src strides]`` (element units, adjacent
dimensions merged) into one NumPy view spanning the memory of all the arrays
involved (made from the lowest address; only the rows' elements are touched,
and the pairs' views keep that memory alive).

It does so where every pair has one native numeric dtype whose elements are
aligned, sources are views or scalars, and ``pg.config(fuse=...)`` allows:
``True`` after the first run, ``"auto"`` after :data:`AFTER` runs (numba's
start-up, about a second of CPU in a process, must pay for itself), or
:data:`fuse.FUSE_AFTER` runs once numba is loaded anyway; ``False`` never.
Otherwise, and without numba, the pairs are assigned with NumPy.
"""

from __future__ import annotations

import sys

import numpy as np

from ..comm import trace
from . import settings

#: Runs of one list before ``fuse="auto"`` starts numba for it (when not loaded yet).
AFTER = 4096
#: Runs before ``fuse="auto"`` uses the kernel when numba is loaded already.
AFTER_LOADED = 3
_KINDS = "biufc"

#: Moves of at most this many elements go to the kernel (larger ones: NumPy's copy loops,
#: whose per-call cost no longer matters), when there are at least :data:`FEW` of them.
SMALL = 1024
FEW = 3

#: Lists run by the kernel (a counter, for tests).
stats = {"kernel": 0}


class Copies:
    """The moves ``[(dst, src), ...]`` (``dst`` a NumPy view, ``src`` a view of the same
    shape or a scalar), run in list order by calling the object."""

    __slots__ = ("pairs", "runs", "kernel", "args", "rest")

    def __init__(self, pairs) -> None:
        self.pairs = self.rest = list(pairs)
        self.runs = 0
        small = sum(1 for dst, _ in self.pairs if dst.size <= SMALL)
        self.kernel = None if small >= FEW else False     # None: not decided; False: NumPy
        self.args = None

    def __call__(self) -> None:
        t0 = trace.on and trace.now()
        if self.kernel:
            self.kernel(*self.args)
        elif self.kernel is None:
            self.runs += 1
            if self.runs > 1 and self._ready():
                self._compile()
        for dst, src in self.rest:
            dst[...] = src
        if t0:
            trace.add("kernel", "local moves", t0, {"moves": len(self.pairs)})

    def __len__(self) -> int:
        return len(self.pairs)

    def _ready(self) -> bool:
        mode = settings.get("fuse")
        if mode is False:
            return False
        if mode is True:
            return True
        return self.runs >= (AFTER_LOADED if "numba" in sys.modules else AFTER)

    def _compile(self) -> None:
        small = [(d, s) for d, s in self.pairs if d.size <= SMALL]
        table = None if _entangled(self.pairs, small) else _table(small)
        self.kernel = False
        if table is None:
            return
        from .fuse import load_numba
        if load_numba() is None:
            return
        from .copykernel import run_table
        run_table(*table)                             # compiles or loads (moves of this run: done twice)
        self.args = table
        self.kernel = run_table
        self.rest = [(d, s) for d, s in self.pairs if d.size > SMALL]
        stats["kernel"] += 1


def _overlap(a, b) -> bool:
    """Whether views ``a`` and ``b`` share an element (scalars share nothing; 0-d views are
    views)."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return False
    return np.may_share_memory(a, b) and np.shares_memory(a, b)


def _entangled(pairs, small) -> bool:
    """Whether the kernel could move other values than NumPy's assignments in list order.

    NumPy copies a move whose source overlaps its destination as if through a
    buffer, the kernel element by element; and the kernel runs the small moves
    before the large ones (``rest``), so a large move may not touch what a small
    one reads or writes.  No path builds such lists today (compiled groups move
    from sources into other arrays, ghost wraps from the interior into ghost
    cells); this keeps it so if one ever does.
    """
    for d, s in small:
        if _overlap(d, s) and not (d.__array_interface__ == s.__array_interface__):
            return True
    large = [(d, s) for d, s in pairs if d.size > SMALL]
    return any(_overlap(ld, v) or _overlap(ls, d)
               for ld, ls in large for d, s in small for v in (d, s))


def _span(views, dtype):
    """``(low address, element count)`` of the memory holding every view's elements."""
    lo, hi = None, None
    for v in views:
        a = v.__array_interface__["data"][0]
        neg = sum(min(0, (n - 1) * s) for n, s in zip(v.shape, v.strides))
        pos = sum(max(0, (n - 1) * s) for n, s in zip(v.shape, v.strides))
        lo = a + neg if lo is None else min(lo, a + neg)
        hi = a + pos + dtype.itemsize if hi is None else max(hi, a + pos + dtype.itemsize)
    return lo, -(-(hi - lo) // dtype.itemsize)


class _Memory:
    """An ``__array_interface__`` over ``count`` elements of ``dtype`` from address ``low``."""

    def __init__(self, low: int, count: int, dtype) -> None:
        self.__array_interface__ = {"data": (low, False), "shape": (count,), "typestr": dtype.str, "version": 3}


def _merge(shape, dstr, sstr):
    """Extents and strides without extent-1 dimensions, adjacent ones merged where both
    stride patterns allow."""
    dims = [(n, d, s) for n, d, s in zip(shape, dstr, sstr) if n != 1]
    out = []
    for n, d, s in dims:
        if out and out[-1][1] == n * d and out[-1][2] == n * s:
            m = out.pop()
            out.append((m[0] * n, d, s))
        else:
            out.append((n, d, s))
    return out or [(1, 0, 0)]


def _table(pairs):
    """``(memory view, rows, constants)`` for :func:`pgas.exec.copykernel.run_table`, or
    None where a pair does not qualify."""
    dtype = pairs[0][0].dtype
    if dtype.kind not in _KINDS or not dtype.isnative:
        return None
    views, consts = [], []
    for dst, src in pairs:
        if dst.dtype != dtype or not dst.size:
            return None
        if isinstance(src, np.ndarray) and src.ndim:
            if src.dtype != dtype or src.shape != dst.shape:
                return None
            views.append(src)
        elif isinstance(src, np.ndarray):
            return None                                 # a 0-d view: its value may change between runs
        elif np.ndim(src) == 0:
            c = np.empty((), dtype=dtype)
            c[...] = src                                # NumPy's own conversion, as the assignment
            consts.append(c[()])
        else:
            return None
        views.append(dst)
    item = dtype.itemsize
    low, count = _span(views, dtype)
    rows, k = [], 0
    for dst, src in pairs:
        da = dst.__array_interface__["data"][0] - low
        if isinstance(src, np.ndarray) and src.ndim:
            sa, sstr = src.__array_interface__["data"][0] - low, src.strides
        else:
            k += 1
            sa, sstr = -k * item, (0,) * dst.ndim
        strides = list(dst.strides) + list(sstr)
        if da % item or sa % item or any(s % item for s in strides):
            return None
        rows.append((da // item, sa // item, _merge(dst.shape, [s // item for s in dst.strides],
                                                    [s // item for s in sstr])))
    D = max(len(m) for _, _, m in rows)
    table = np.zeros((len(rows), 2 + 3 * D), dtype=np.int64)
    for r, (da, sa, m) in enumerate(rows):
        m = [(1, 0, 0)] * (D - len(m)) + m
        table[r, 0], table[r, 1] = da, sa
        for d, (n, ds, ss) in enumerate(m):
            table[r, 2 + d], table[r, 2 + D + d], table[r, 2 + 2 * D + d] = n, ds, ss
    mem = np.asarray(_Memory(low, count, dtype))
    return mem, table, np.array(consts if consts else [0], dtype=dtype)

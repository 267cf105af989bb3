"""A locale's part of a whole-array reduction over its threads (:mod:`pgas.exec.workers`).

``A.sum()``, ``A.prod()``, ``A.min()`` and ``A.max()`` first reduce each locale's
block with NumPy.  With ``pg.config(threads=N)`` and a block of at least
:data:`pgas.exec.workers.SPLIT_MIN` elements, that local reduction is split
into fixed parts reduced by NumPy at once on the locale's threads and combined
in a fixed order, so that the result is the one NumPy's own call gives, bit for
bit, at every thread count:

- integer and bool data (every operation, any partition: integer addition and
  multiplication wrap around exactly) and the ``min``/``max`` of floats (NaN
  propagates from any part; NumPy's own choice between ``0.0`` and ``-0.0`` when
  both are present follows its vector loops, so a minimum or maximum of zeros
  of both signs may come back with either sign);
- float ``sum`` of a C-contiguous block: NumPy sums it pairwise (halves cut at a
  multiple of 8 elements, summed recursively, down to blocks of 128), so the
  parts are the top levels of that same tree, each summed by NumPy and added as
  NumPy adds them: equal to NumPy's pairwise sum exactly.

Anything else is reduced by NumPy in one call, as at one thread: a float ``prod``
(its result depends on the order of its multiplications), a ``float16`` sum (NumPy
adds its pairwise parts in float32 and rounds once, at the end), a float ``sum`` of a
block that is not C-contiguous (NumPy's iterator then sums buffered chunks whose
bounds depend on the layout), a ``dtype=`` that casts to float, complex data.
"""

from __future__ import annotations

import functools

import numpy as np

from ...exec import fperr, workers

#: NumPy's pairwise summation: blocks of at most this many elements are summed by its unrolled loop.
PAIRWISE_BLOCK = 128


def local(fn, op: str, x: np.ndarray, kw: dict, ways: int | None = None):
    """``fn(x, **kw)``: NumPy's reduction ``op`` ("sum", "prod", "min", "max") of a
    locale's block, split over the locale's threads where it is large and the result
    stays NumPy's (see the module's docstring).  ``ways``: the number of parts (default:
    :func:`pgas.exec.workers.ways`)."""
    if ways is None:
        if workers.count() < 2:
            return fn(x, **kw)
        ways = workers.ways(x.size, x.size)
    if ways < 2 or x.ndim == 0 or x.size < 2 * ways:
        return fn(x, **kw)
    kind = x.dtype.kind
    cast = kw.get("dtype") is not None and np.dtype(kw["dtype"]) != x.dtype
    if kind in "biu" and not (cast and np.dtype(kw["dtype"]).kind not in "biu"):
        return _any_order(fn, x, kw, ways)
    if kind != "f" or cast:
        return fn(x, **kw)
    if op in ("min", "max"):
        return _any_order(fn, x, kw, ways)
    if op != "sum":
        return fn(x, **kw)
    if x.flags.c_contiguous and x.dtype.itemsize >= 4:     # (float16: NumPy adds its parts in float32)
        return _pairwise(x.reshape(-1), ways)
    return fn(x, **kw)


def _any_order(fn, x, kw, ways):
    """An associative and commutative reduction: parts along the first axis (or, with
    too few rows, of the flattened block), combined by ``fn``."""
    if x.shape[0] < ways:
        if not x.flags.c_contiguous:
            return fn(x, **kw)
        x = x.reshape(-1)
    part = functools.partial(fn, **kw)
    return _reduced([(part, (x[a:b],)) for a, b in workers.bounds(x.shape[0], ways)],
                    lambda parts: part(np.asarray(parts)))


def _reduced(calls, combine):
    """``combine(results)`` of ``calls`` run at once (:func:`pgas.exec.workers.run`), each
    part and the combining with NumPy's floating-point errors collected, not reported
    (:func:`pgas.exec.fperr.quietly`), then each category met reported once, as NumPy's
    one call reports it (each part warned: four warnings at four threads)."""
    got = workers.run([(fperr.quietly, (fn, args)) for fn, args in calls])
    res, flags = fperr.quietly(combine, ([r for r, _ in got],))
    for _, f in got:
        flags |= f
    fperr.report_reduced(flags)
    return res


def cuts(n: int, depth: int) -> list[tuple[int, int]]:
    """The leaves ``(start, stop)`` of NumPy's pairwise summation tree of ``n`` elements cut
    ``depth`` levels down (a part of at most :data:`PAIRWISE_BLOCK` is not cut), in order."""
    if depth == 0 or n <= PAIRWISE_BLOCK:
        return [(0, n)]
    half = n // 2
    half -= half % 8
    return cuts(half, depth - 1) + [(half + a, half + b) for a, b in cuts(n - half, depth - 1)]


def _pairwise(flat, ways):
    """NumPy's pairwise sum of a contiguous 1-D array, its top levels' leaves on the threads."""
    depth = max(1, (ways - 1).bit_length())
    leaves = cuts(flat.shape[0], depth)
    zero = flat.dtype.type(0)

    def combine(parts):
        sums = iter(parts)

        def tree(n, d):                  # the tree as cuts() made it, each leaf's sum in turn
            if d == 0 or n <= PAIRWISE_BLOCK:
                return next(sums)
            half = n // 2
            half -= half % 8
            return tree(half, d - 1) + tree(n - half, d - 1)
        return zero + tree(flat.shape[0], depth)     # (NumPy starts from 0: -0.0 sums to 0.0)
    return _reduced([(np.sum, (flat[a:b],)) for a, b in leaves], combine)


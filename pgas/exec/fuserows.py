"""Row kernels: a fused task as loops over rows, the inner loop contiguous where it can be.

A task's views come from the planner as 2 axes per loop variable (block and
position in the block), most of them of length 1, and the arrays numba gets
from them have its generic strided layout: every element's address is worked
out from runtime strides, and LLVM does not vectorise the loop.  This module
first *canonicalises* the loop nest of a task (the written view and every
operand view): axes of length 1 are dropped and neighbouring axes merged
where every view steps through them as one (``stride[d] == stride[d+1] *
shape[d+1]``).  Every box task then runs as a *row kernel*, one compiled call:
each view is passed as a flat one-dimensional C-contiguous array (its local
storage or message buffer, else one made from its first element), the offset of
its first element and its strides in elements.  Along the innermost axis a view
is contiguous (``"c"``: stride 1), constant (``"s"``: stride 0, a broadcast
operand) or strided (``"t"``: any other stride, as a border column of a 2-D
locale grid has, or a reversed or transposed view).  Per row, the kernel takes
the contiguous views' rows as slices (numba types them C-contiguous) and indexes
the strided ones by their inner stride, in one simple loop that LLVM vectorises
when every row is contiguous or constant.  An operand that is the written view
itself (same first element and strides: ``x[s] = x[s] - ...``) is read through
the output's row (``"o"``), so the written and read rows are one array and the
loop still vectorises.  The kind of each view is part of the kernel's source, so
a row-contiguous task's kernel is the same whatever strided tasks a statement
also has.

The loop body is the same expression as the generic kernel's (the same
operations in the same order on every element), so the values are identical
bit for bit.  Tasks whose views do not fit (an operand with no flat buffer and
strides that are negative or not a multiple of its itemsize, a written view that
repeats elements along its row) keep the generic kernel (:mod:`pgas.exec.fuse`),
on the canonical axes.
"""

from __future__ import annotations

import math
import re

import numpy as np
from numpy.lib.stride_tricks import as_strided

_LEAF = re.compile(r"c(\d+)\[IDX\]")


def canonical(shape, strides):
    """``(shape, strides per operand)`` of the loop nest after dropping length-1 axes and
    merging axes every operand steps through as one; ``strides``: per operand its
    strides (elements) over ``shape``.  A task of no elements keeps one axis of length 0."""
    axes = [d for d, n in enumerate(shape) if n != 1]
    if any(shape[d] == 0 for d in axes):
        return (0,), [(0,) for _ in strides]
    dims = [int(shape[d]) for d in axes]
    strides = [[s[d] for d in axes] for s in strides]
    d = len(dims) - 2
    while d >= 0:
        if all(s[d] == s[d + 1] * dims[d + 1] for s in strides):
            dims[d] *= dims[d + 1]
            del dims[d + 1]
            for s in strides:
                s[d] = s[d + 1]
                del s[d + 1]
        d -= 1
    if not dims:
        return (1,), [(0,) for _ in strides]
    return tuple(dims), [tuple(s) for s in strides]


def spec(v, shape):
    """``(flat, offset, strides)`` of an array operand broadcast to ``shape``: a flat
    one-dimensional C-contiguous array holding it, its first element's offset in it and
    its strides in elements; None when it has negative or unaligned strides."""
    v = v if v.shape == tuple(shape) else np.broadcast_to(v, shape)
    size = v.itemsize
    if any(x < 0 or x % size for x in v.strides):
        return None
    el = tuple(x // size for x in v.strides)
    if v.flags.c_contiguous:
        return v.reshape(-1), 0, el
    span = sum((n - 1) * x for n, x in zip(v.shape, el)) + 1
    return as_strided(v, (span,), (size,)), 0, el


def address(ctx, v, shape):
    """A leaf's (or, with ``v`` None, the in-place target's) :func:`spec`;
    an access's straight from its flat buffer and plan offsets, without a view."""
    if isinstance(v, int) or v is None:
        k = ctx.plan.stmt.write if v is None else v
        flat, off, strides = ctx.address(k)
        if flat is None or flat.ndim != 1 or not flat.flags.c_contiguous:
            return spec(ctx.access(k), shape)
        return flat, off, tuple(strides)
    return spec(np.asarray(v), shape)


def layout(shape, specs, memo=None):
    """``(shape, kinds, specs)`` for a row kernel over ``specs`` (see :func:`spec`; the
    written elements first), or None when they do not fit one (see the module's
    docstring).  ``kinds[k]``: ``"c"`` contiguous inner axis, ``"s"`` constant along it,
    ``"t"`` strided along it, ``"o"`` the written elements themselves (``k > 0``); the
    specs returned have the outer strides of the canonical loop nest (a ``"t"`` view's
    inner stride after them).  ``memo`` (a dict): what was found for
    the same shape, offsets, strides and sharing of the output's buffer, reused."""
    if any(x is None for x in specs):
        return None
    if not all(x[0].ndim == 1 and x[0].flags.c_contiguous for x in specs):
        return None
    if memo is None:
        return _layout(shape, specs)
    f0 = specs[0][0]
    key = (tuple(shape), tuple([(x[1], x[2], x[0] is f0) for x in specs]))
    got = memo.get(key, _MISS)
    if got is _MISS:
        lay = _layout(shape, specs)
        if len(memo) >= MEMO:
            memo.clear()
        memo[key] = got = None if lay is None else (lay[0], lay[1], [x and x[2] for x in lay[2]])
        return lay
    if got is None:
        return None
    dims, kinds, outer = got
    return dims, kinds, [None if s is None else (x[0], x[1], s) for x, s in zip(specs, outer)]


_MISS = object()
#: Row layouts a program keeps (see :func:`layout`); the memo starts again when full.
MEMO = 256


def _layout(shape, specs):
    dims, strides = canonical(shape, [x[2] for x in specs])
    if dims[-1] == 0:
        return None
    kinds, out = [], []
    f0, o0 = specs[0][:2]
    for k, ((flat, off, _), s) in enumerate(zip(specs, strides)):
        if k == 0 and s[-1] == 0 < dims[-1] - 1:
            return None                 # (the written elements must not repeat along the row)
        if k and flat is f0 and off == o0 and s == strides[0]:
            kinds.append("o")
            out.append(None)
        elif s[-1] in (0, 1):
            kinds.append("c" if s[-1] else "s")
            out.append((flat, off, s[:-1]))
        else:
            kinds.append("t")           # a strided row: its inner stride after the outer ones
            out.append((flat, off, s))
    return dims, tuple(kinds), out


def source(code: str, params, kinds, nouter: int, helpers: str) -> str:
    """A row kernel's module source: ``kernel(dims, out, bo, so, c0, b0, s0, ...)``
    (array leaves as flat array, offset and strides; constants alone).  ``code`` is the generic
    kernel's expression (leaves as ``cK[IDX]``), ``params`` its leaves' kinds
    (``"arr"`` or ``"const"``), ``kinds`` the layout's kinds (written view first).  A
    contiguous row (``"c"``) is a slice of its flat array, so the loop over it vectorises; a
    strided one (``"t"``, its strides one longer: the inner stride last) is indexed
    element by element."""
    arrays = [k for k, (p, _) in enumerate(params) if p == "arr"]
    kind = dict(zip(arrays, kinds[1:]))
    args = ["dims", "out", "bo", "so"]
    for k, (p, _) in enumerate(params):
        args += [f"c{k}", f"b{k}", f"s{k}"] if p == "arr" and kind[k] != "o" else [f"c{k}"]
    lines = [helpers, "", "@njit(cache=True, error_model='numpy', nogil=True)",
             f"def kernel({', '.join(args)}):", "    n = dims[-1]"]
    live = [k for k in arrays if kind[k] != "o"]
    strided = kinds[0] == "t"
    if strided:
        lines.append(f"    to = so[{nouter}]")
    lines += [f"    t{k} = s{k}[{nouter}]" for k in live if kind[k] == "t"]
    ind = "    "
    for d in range(nouter):
        lines.append(f"{ind}for i{d} in range(dims[{d}]):")
        ind += "    "
        lines.append(f"{ind}bo_{d} = bo{f'_{d - 1}' if d else ''} + i{d} * so[{d}]")
        for k in live:        # (b{k}_{d}: leaf 1's offset at depth 0 is not leaf 10's argument b10)
            prev = f"b{k}_{d - 1}" if d else f"b{k}"
            lines.append(f"{ind}b{k}_{d} = {prev} + i{d} * s{k}[{d}]")
    last = (lambda b: f"{b}_{nouter - 1}") if nouter else (lambda b: b)
    row = f"out[{last('bo')} + j * to]" if strided else "ro[j]"
    if not strided:
        lines.append(f"{ind}ro = out[{last('bo')}:{last('bo')} + n]")
    for k in live:
        b = last(f"b{k}")
        if kind[k] == "c":
            lines.append(f"{ind}r{k} = c{k}[{b}:{b} + n]")
        elif kind[k] == "s":
            lines.append(f"{ind}r{k} = c{k}[{b}]")
    lines.append(f"{ind}for j in range(n):")

    def leaf(m):
        k = int(m.group(1))
        return {"o": row, "c": f"r{k}[j]", "s": f"r{k}", "t": f"c{k}[{last(f'b{k}')} + j * t{k}]"}[kind[k]]
    lines.append(f"{ind}    {row} = {_LEAF.sub(leaf, code)}")
    return "\n".join(lines) + "\n"


def arguments(specs, params, vals):
    """The row kernel's arguments after ``dims`` and the output's flat array, offset and
    strides: per leaf its flat array, offset and strides, or its converted constant."""
    args, it = [], iter(range(1, len(specs)))
    for (p, d), v in zip(params, vals):
        if p == "arr":
            k = next(it)
            args += specs[0][:1] if specs[k] is None else specs[k]   # None: read through the output
        else:
            args.append(np.array(v, dtype=d)[()])
    return args


def offsets(params, kinds) -> tuple:
    """Where a row kernel's arguments (see :func:`source`) hold each view's first-element
    offset: per view read through its own buffer (the written view first) ``(position of
    its offset, position of its outer strides, its step along the inner axis: 1
    contiguous, 0 constant, None strided, whose inner stride is the last of its strides)``,
    for :func:`cut`.  Kept in step with :func:`source`'s parameters."""
    arrays = [k for k, (p, _) in enumerate(params) if p == "arr"]
    kind = dict(zip(arrays, kinds[1:]))
    step = {"c": 1, "s": 0, "t": None}
    got, pos = [(2, 3, step[kinds[0]])], 4
    for k, (p, _) in enumerate(params):
        if p == "arr" and kind[k] != "o":
            got.append((pos + 1, pos + 2, step[kind[k]]))
            pos += 3
        else:
            pos += 1
    return tuple(got)


def measure(args) -> tuple[int, int]:
    """``(elements, outer iterations)`` of a row kernel's call."""
    dims = args[0]
    return math.prod(dims), dims[0]


def cut(where, args, start: int, stop: int) -> list:
    """A row kernel's arguments ``args`` restricted to iterations ``start:stop`` of its
    outermost axis (rows of the outer loop, or elements of the row when there is no
    outer loop): the same buffers, each offset moved on (``where``: :func:`offsets`)."""
    got = list(args)
    dims = args[0]
    got[0] = (stop - start,) + tuple(dims[1:])
    outer = len(dims) > 1
    for o, s, step in where:
        got[o] = args[o] + start * (args[s][0] if outer or step is None else step)
    return got

"""``np.pad`` on distributed arrays.

The result is a new DistArray distributed as the input's kind; the input goes into
its middle with one statement, then each axis's two margins are written in turn, as
NumPy does (so a later axis's margins cover the corners an earlier axis wrote):

- ``"constant"`` (``constant_values``, per axis and side as in NumPy), ``"empty"``:
  a fill statement per margin;
- ``"edge"``: each margin a broadcast of the first / last plane;
- ``"wrap"``, ``"reflect"``, ``"symmetric"`` (``reflect_type="even"``): each margin a
  slice statement from the padded array itself (a reversed slice for the mirrors),
  for pad widths up to the axis's length (NumPy repeats the pattern beyond it).

Other modes, wider mirrors and ``reflect_type="odd"`` compute with NumPy on the
gathered array (every locale holds a copy for a moment) and say so in a warning.
Collective; anything not distributed is NumPy's own ``np.pad``.
"""

from __future__ import annotations

import numpy as np

from ..comm.userwarn import GatherWarning, warn
from .operands import distributed

_BY_STATEMENTS = ("constant", "empty", "edge", "wrap", "reflect", "symmetric")


def _pairs(value, nd: int, what: str):
    """NumPy's broadcasting of ``pad_width`` / ``constant_values`` to ``nd`` (before, after) pairs."""
    v = np.asarray(value)
    try:
        return np.broadcast_to(v, (nd, 2)).tolist()
    except ValueError:
        raise ValueError(f"{what} of shape {v.shape} cannot be broadcast to ({nd}, 2)") from None


def _axis(d: int, s: slice, inner: tuple) -> tuple:
    """Axis ``d`` sliced by ``s``: the earlier axes whole (their margins written), the later
    ones their interior ``inner`` only (margins still to write), as NumPy's own order."""
    return (slice(None),) * d + (s,) + inner[d + 1:]


def _mirror(width: int, n: int, mode: str) -> bool:
    """Whether margins of ``width`` on an axis of ``n`` are one slice statement each."""
    if mode == "wrap":
        return width <= n
    if mode == "reflect":
        return width <= n - 1
    return width <= n                      # symmetric


def _margins(R, d: int, inner: tuple, b: int, a: int, n: int, mode: str, cv) -> None:
    """Write axis ``d``'s margins (``b`` before, ``a`` after an interior of ``n``) of ``R``."""
    if mode == "empty":
        return
    lo, hi = slice(0, b), slice(b + n, b + n + a)
    if mode == "constant":
        if b:
            R[_axis(d, lo, inner)] = cv[d][0]
        if a:
            R[_axis(d, hi, inner)] = cv[d][1]
        return
    if mode == "edge":
        src_lo, src_hi = slice(b, b + 1), slice(b + n - 1, b + n)
    elif mode == "wrap":
        src_lo, src_hi = slice(n, n + b), slice(b, b + a)
    elif mode == "reflect":                          # R[b - k] = R[b + k], R[b + n - 1 + k] = R[b + n - 1 - k]
        src_lo, src_hi = slice(2 * b, b, -1), slice(b + n - 2, b + n - 2 - a if b + n - 2 - a >= 0 else None, -1)
    else:                                            # symmetric: R[b - k] = R[b + k - 1], and at the end alike
        src_lo = slice(2 * b - 1, b - 1 if b >= 1 else None, -1)
        src_hi = slice(b + n - 1, b + n - 1 - a if b + n - 1 - a >= 0 else None, -1)
    if b:
        R[_axis(d, lo, inner)] = R[_axis(d, src_lo, inner)]
    if a:
        R[_axis(d, hi, inner)] = R[_axis(d, src_hi, inner)]


def pad(array, pad_width, mode="constant", **kwargs):
    """Collective on distributed ``array``: NumPy's ``pad`` (a new DistArray)."""
    if not distributed(array):
        return np.pad(array, pad_width, mode, **kwargs)
    from .creation.constructors import empty
    from .axes import result_dist
    from .operands import as_view

    v = as_view(array)
    nd = v.ndim
    widths = _pairs(pad_width, nd, "pad_width")
    if any(int(w) != w or w < 0 for pair in widths for w in pair):
        raise ValueError(f"pad_width must hold non-negative whole numbers, got {pad_width!r}")
    widths = [(int(b), int(a)) for b, a in widths]
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}
    extra = set(kwargs) - allowed.get(mode, set())
    odd = kwargs.get("reflect_type", "even") != "even"
    by_statements = (isinstance(mode, str) and mode in _BY_STATEMENTS and not extra and not odd
                     and all(_mirror(max(b, a), n, mode) for (b, a), n in zip(widths, v.shape)
                             if mode in ("wrap", "reflect", "symmetric") and (b or a)))
    if not by_statements:
        if isinstance(mode, str) and mode in _BY_STATEMENTS and extra:
            raise ValueError(f"unsupported keyword arguments for mode {mode!r}: {sorted(extra)}")
        from .creation.conversion import asarray
        warn(f"np.pad(mode={mode!r}) of {v.base.label} gathers the array to every locale and pads it with NumPy",
             GatherWarning)
        return asarray(np.pad(v.to_numpy(), widths, mode, **kwargs))
    if mode in ("wrap", "reflect", "symmetric") and any(n == 0 and (b or a) for (b, a), n in zip(widths, v.shape)):
        raise ValueError("can't extend empty axis 0 using modes other than 'constant' or 'empty'")
    cv = _pairs(kwargs.get("constant_values", 0), nd, "constant_values")
    shape = tuple(n + b + a for n, (b, a) in zip(v.shape, widths))
    R = empty(shape, v.dtype, result_dist(v.base.layout, nd))
    inner = tuple(slice(b, b + n) for n, (b, _) in zip(v.shape, widths))
    if v.size:
        R[inner] = v
    for d, ((b, a), n) in enumerate(zip(widths, v.shape)):
        if b or a:
            _margins(R, d, inner, b, a, n, mode, cv)
    return R


NUMPY_FUNCTIONS = {np.pad: pad}

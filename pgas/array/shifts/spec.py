"""Shift arguments: ``(shift, axis)`` and ``(shift, axis, boundary)`` normalised into
:class:`Spec` records, with NumPy's and Fortran's errors, and the checks of ``out=``."""

from __future__ import annotations

import operator

import numpy as np

from .. import engine
from ..core import DistArray
from ..expr import Lazy
from ..index import convert
from ..view import View, select

#: The shift kinds: circular (CSHIFT) and end-off (EOSHIFT).
KINDS = ("cshift", "eoshift")


def as_axis(axis, ndim: int, fn: str) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{fn}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{fn}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim


def as_shift(shift, fn: str) -> int:
    try:
        return operator.index(shift)
    except TypeError:
        raise TypeError(f"{fn}: the shift must be an integer, got {shift!r}") from None


def _boundary(A: DistArray, boundary, axis: int, fn: str):
    """The boundary as a statement operand: a scalar, a NumPy array or a DistArray of the
    shape of ``A`` without ``axis`` (rank one less), broadcast along ``axis``."""
    want = A.shape[:axis] + A.shape[axis + 1:]
    if not engine.is_array(boundary) and isinstance(boundary, Lazy):    # a view or an expression
        from ..creation.conversion import asarray

        boundary = asarray(boundary)
    if engine.is_array(boundary):
        if boundary.shape != want:
            raise ValueError(f"{fn}: a boundary array must have shape {want} (the array's shape without axis "
                             f"{axis}), got {boundary.shape}")
        _cast(boundary.dtype, A, fn)
        return select(boundary, (slice(None),) * axis + (None,))
    b = np.asarray(boundary)
    if b.ndim == 0:
        if not _python_fits(boundary, A.dtype):      # Python scalars are weak (NumPy 2): 0 fits bool
            _cast(b.dtype, A, fn)
        return convert(boundary, A.dtype, A)[()]
    if b.shape != want:
        raise ValueError(f"{fn}: a boundary array must have shape {want} (the array's shape without axis "
                         f"{axis}), got {b.shape}")
    _cast(b.dtype, A, fn)
    return np.expand_dims(b, axis).astype(A.dtype)


def _python_fits(x, dtype) -> bool:
    """Whether Python scalar ``x`` goes into ``dtype`` by kind, as NumPy 2 treats Python
    scalars (its value is range-checked by ``convert``): a bool or int into any numeric
    dtype, a float into floating or complex ones, a complex into complex ones."""
    kind = np.dtype(dtype).kind
    if type(x) in (bool, int):
        return kind in "biufc" and (kind != "b" or x in (0, 1))
    if type(x) is float:
        return kind in "fc"
    return type(x) is complex and kind == "c"


def _cast(dtype, A, fn: str) -> None:
    if not np.can_cast(dtype, A.dtype, "same_kind"):
        raise TypeError(f"{fn}: cannot cast a boundary of dtype {np.dtype(dtype)} to the array's "
                        f"{A.dtype} (rule 'same_kind')")


class Spec:
    """One normalised shift: ``kind`` (``"cshift"`` or ``"eoshift"``), ``shift``, ``axis``
    and the boundary operand (end-off only)."""

    __slots__ = ("kind", "shift", "axis", "boundary", "raw")

    def __init__(self, kind, shift, axis, boundary, raw) -> None:
        self.kind, self.shift, self.axis, self.boundary, self.raw = kind, shift, axis, boundary, raw

    def key(self) -> tuple:
        b = self.boundary
        bk = ("array", b.base.shape, b.base.dtype.str) if isinstance(b, View) else (
            ("np", b.shape, b.tobytes()) if isinstance(b, np.ndarray) else ("scalar", b))
        return (self.kind, self.shift, self.axis, bk if self.kind == "eoshift" else None)

    def __repr__(self) -> str:
        extra = f", boundary={self.raw!r}" if self.kind == "eoshift" and np.ndim(self.raw) == 0 else ""
        return f"{self.kind}(shift={self.shift}, axis={self.axis}{extra})"


def parse(A: DistArray, shifts, fn: str = "pg.pshift") -> list[Spec]:
    """Normalise ``shifts``: ``(shift, axis)`` circular, ``(shift, axis, boundary)`` end-off."""
    if not engine.is_array(A):
        raise TypeError(f"{fn}: the source must be a DistArray, got {type(A).__name__}")
    if isinstance(shifts, tuple) and shifts and not isinstance(shifts[0], (tuple, list)):
        shifts = [shifts]
    out = []
    for s in shifts:
        if not isinstance(s, (tuple, list)) or len(s) not in (2, 3):
            raise TypeError(f"{fn}: each shift is (shift, axis) for a circular shift or (shift, axis, boundary) "
                            f"for an end-off one, got {s!r}")
        sh, ax = as_shift(s[0], fn), as_axis(s[1], A.ndim, fn)
        if len(s) == 2:
            out.append(Spec("cshift", sh, ax, None, None))
        else:
            out.append(Spec("eoshift", sh, ax, _boundary(A, s[2], ax, fn), s[2]))
    if not out:
        raise ValueError(f"{fn}: no shifts given")
    return out


def sources(A, fn: str) -> tuple[list, bool]:
    """The source arrays of a shift call and whether several were given: ``A`` itself, or
    a list or tuple of distinct DistArrays (a polyshift of several sources)."""
    if not isinstance(A, (list, tuple)):
        if not engine.is_array(A):
            raise TypeError(f"{fn}: the source must be a DistArray, got {type(A).__name__}")
        return [A], False
    if not A:
        raise ValueError(f"{fn}: no source arrays given")
    for S in A:
        if not engine.is_array(S):
            raise TypeError(f"{fn}: the sources must be DistArrays, got {type(S).__name__}")
    if len({id(S) for S in A}) != len(A):
        raise ValueError(f"{fn}: the sources must be distinct arrays")
    return list(A), True


def check_outs(srcs: list, out, count: int, fn: str, several: bool) -> list:
    """The destinations, one list of ``count`` per source: new arrays like each source, or
    ``out`` (for several sources, one sequence per source).  Every destination is a DistArray
    of its source's shape, dtype and distribution, all distinct; a destination may be a
    source (in place: every shift reads the sources as they were before the call)."""
    if out is None:
        return [[DistArray._create(S.layout, S.dtype) for _ in range(count)] for S in srcs]
    if not several:
        return [check_out(srcs[0], out, count, fn)]
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != len(srcs):
        raise ValueError(f"{fn}: out must hold one sequence of destinations per source ({len(srcs)}), "
                         f"got {len(outs)}")
    res = [check_out(S, o, count, fn, distinct=False) for S, o in zip(srcs, outs)]
    if len({id(R) for row in res for R in row}) != count * len(srcs):
        raise ValueError(f"{fn}: the outputs must be distinct arrays")
    return res


def check_out(A: DistArray, out, count: int, fn: str, distinct: bool = True) -> list:
    """The destinations: new arrays like ``A``, or ``out`` (a sequence of ``count`` distinct
    DistArrays of A's shape, dtype and distribution; ``A`` itself among them shifts in place)."""
    if out is None:
        return [DistArray._create(A.layout, A.dtype) for _ in range(count)]
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != count:
        raise ValueError(f"{fn}: out must hold one array per shift ({count}), got {len(outs)}")
    for R in outs:
        if not engine.is_array(R):
            raise TypeError(f"{fn}: out must hold DistArrays, got {type(R).__name__}")
        if (R.shape, R.dtype, R.layout.key) != (A.shape, A.dtype, A.layout.key):
            raise ValueError(f"{fn}: output {R.label} with {R.dist} does not match the source {A.label} "
                             f"with {A.dist} (shape, dtype and distribution must be equal)")
    if distinct and len({id(R) for R in outs}) != len(outs):
        raise ValueError(f"{fn}: the outputs must be distinct arrays")
    return outs

"""The statements behind :mod:`pgas.array.shift`: shift specifications, their slice
statements, destination checks, and the plan templates of ``pg.pshift_setup``."""


from __future__ import annotations

import operator
from collections import OrderedDict

import numpy as np

from . import engine
from . import statements as stmts
from .collective import checked
from .core import DistArray
from .expr import Lazy
from .index import convert
from .view import View, select

#: The paper's five kinds, as this module names them.
KINDS = ("cshift", "eoshift")


def _axis(axis, ndim: int, fn: str) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{fn}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{fn}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim


def _shift(shift, fn: str) -> int:
    try:
        return operator.index(shift)
    except TypeError:
        raise TypeError(f"{fn}: the shift must be an integer, got {shift!r}") from None


def _boundary(A: DistArray, boundary, axis: int, fn: str):
    """The boundary as a statement operand: a scalar, a NumPy array or a DistArray of the
    shape of ``A`` without ``axis`` (rank one less), broadcast along ``axis``."""
    want = A.shape[:axis] + A.shape[axis + 1:]
    if not engine.is_array(boundary) and isinstance(boundary, Lazy):    # a view or an expression
        from .creation import asarray

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
        sh, ax = _shift(s[0], fn), _axis(s[1], A.ndim, fn)
        if len(s) == 2:
            out.append(Spec("cshift", sh, ax, None, None))
        else:
            out.append(Spec("eoshift", sh, ax, _boundary(A, s[2], ax, fn), s[2]))
    if not out:
        raise ValueError(f"{fn}: no shifts given")
    return out


def _key(ndim: int, axis: int, lo: int, hi: int) -> tuple:
    return (slice(None),) * axis + (slice(lo, hi),) + (slice(None),) * (ndim - axis - 1)


def statements(A: DistArray, R: DistArray, spec: Spec) -> list:
    """The slice statements ``(target view, value)`` computing ``R = shift(A)``."""
    n, d, ax = A.shape[spec.axis], A.ndim, spec.axis
    whole = select(R, (Ellipsis,), for_write=True)
    if spec.kind == "cshift":
        k = spec.shift % n if n else 0
        if k == 0:
            return [(whole, View.whole(A))]
        return [(select(R, _key(d, ax, 0, n - k), True), select(A, _key(d, ax, k, n))),
                (select(R, _key(d, ax, n - k, n), True), select(A, _key(d, ax, 0, k)))]
    s, b = spec.shift, spec.boundary
    if s == 0:
        return [(whole, View.whole(A))]
    if abs(s) >= n:
        return [(whole, _fit(b, n, ax))]
    if s > 0:
        return [(select(R, _key(d, ax, 0, n - s), True), select(A, _key(d, ax, s, n))),
                (select(R, _key(d, ax, n - s, n), True), _fit(b, s, ax))]
    m = -s
    return [(select(R, _key(d, ax, m, n), True), select(A, _key(d, ax, 0, n - m))),
            (select(R, _key(d, ax, 0, m), True), _fit(b, m, ax))]


def _fit(b, count: int, axis: int):
    """The boundary over ``count`` positions along ``axis`` (views and NumPy arrays have
    extent 1 there and broadcast, as in NumPy)."""
    return b


def check_out(A: DistArray, out, count: int, fn: str) -> list:
    """The destinations: new arrays like ``A``, or ``out`` (a sequence of ``count`` distinct
    DistArrays of A's shape, dtype and distribution, none of them ``A``)."""
    if out is None:
        return [DistArray._create(A.layout, A.dtype) for _ in range(count)]
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != count:
        raise ValueError(f"{fn}: out must hold one array per shift ({count}), got {len(outs)}")
    for R in outs:
        if not engine.is_array(R):
            raise TypeError(f"{fn}: out must hold DistArrays, got {type(R).__name__}")
        if R is A:
            raise ValueError(f"{fn}: an output may not be the source array (shift into a new array, then swap)")
        if (R.shape, R.dtype, R.layout.key) != (A.shape, A.dtype, A.layout.key):
            raise ValueError(f"{fn}: output {R.label} with {R.dist} does not match the source {A.label} "
                             f"with {A.dist} (shape, dtype and distribution must be equal)")
    if len({id(R) for R in outs}) != len(outs):
        raise ValueError(f"{fn}: the outputs must be distinct arrays")
    return outs


#: Lowered and planned shifts without a plan (``pg.cshift``, ``pg.eoshift``, ``pg.pshift``,
#: ``np.roll``), per (layout, dtype, shifts): a repeated call neither lowers nor plans.
#: The entries hold stand-ins (no storage), never the arrays.  Bounded; the same calls
#: happen on every locale, so every locale holds the same keys.
_templates: OrderedDict = OrderedDict()
TEMPLATES = 256


def _template_key(A: DistArray, specs: list):
    """The cache key of a shift call, or None if a boundary is distributed (then it is
    lowered every call).  Scalars and NumPy boundaries enter by their bytes (so -0.0 and
    0.0, or two NaNs, are told apart exactly)."""
    out = []
    for s in specs:
        b = s.boundary
        if isinstance(b, View):
            return None
        if s.kind == "eoshift":
            arr = np.asarray(b)
            b = (arr.shape, arr.dtype.str, arr.tobytes())
        out.append((s.kind, s.shift, s.axis, b))
    return (A.layout.key, A.dtype.str, tuple(out))


def run(A: DistArray, specs: list, outs: list, header: str) -> None:
    """Collective: every shift of ``specs`` from ``A`` into ``outs``, one exchange."""
    key = _template_key(A, specs)
    if key is None:
        pairs = [p for spec, R in zip(specs, outs) for p in statements(A, R, spec)]
        checked(header + "({0})", A, args=tuple(s.key() for s in specs))
        stmts.run_group(pairs, header)
        return
    checked(header + "({0})", A, args=tuple(s.key() for s in specs))
    hit = _templates.get(key)
    if hit is None:
        src = _Proto(A, 0)
        src.name, src.label = A.name, A.label
        dests, items = setup_plans(src, specs)
        hit = _templates[key] = (src, dests, items, stmts.compile_group(items, keep=False))
        if len(_templates) > TEMPLATES:
            _templates.popitem(last=False)[1][3].free()
    else:
        _templates.move_to_end(key)
    src, dests, items, fast = hit
    rebind = {id(src): A, **{id(d): R for d, R in zip(dests, outs)}}
    stmts.run_planned(items, rebind, header, fast)


class _Proto:
    """A stand-in destination (metadata only, no storage) for planning at setup."""

    def __init__(self, A, k: int) -> None:
        self.layout, self.dtype, self.name = A.layout, A.dtype, f"R{k}"
        self.shape, self.ndim, self.label = A.shape, A.ndim, f"destination {k}"


def setup_plans(A: DistArray, specs: list) -> tuple[list, list]:
    """The stand-in destinations and this locale's lowered, planned statements of
    ``specs`` (pure: no communication)."""
    protos = [_Proto(A, k) for k in range(len(specs))]
    pairs = [p for R, spec in zip(protos, specs) for p in statements(A, R, spec)]
    return protos, stmts.plan_group(pairs)

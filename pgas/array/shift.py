"""Circular and end-off shifts (Fortran's CSHIFT and EOSHIFT) and the polyshift.

A shift is a pair of slice statements along one axis: ``cshift(A, s, axis)`` with
``0 < s < n`` is ``R[:n-s] = A[s:]; R[n-s:] = A[:s]``.  A polyshift is several
such statements, for several destinations, whose inter-locale data goes out in
ONE exchange phase (:meth:`pgas.exec.statement.Executor.run_group`): every
region one locale needs from one neighbour, over all the shifts, travels in one
message.  See ``docs/polyshift.md``.

Sign convention (Fortran): ``result[i] = A[i + shift]`` along the axis, so a
positive shift moves data towards LOWER indices; ``np.roll`` has the opposite
sign (``np.roll(a, s) == cshift(a, -s)``)::

    A                 = [0, 1, 2, 3, 4]
    cshift(A, 1)      = [1, 2, 3, 4, 0]       np.roll(A, -1)
    eoshift(A, 2)     = [2, 3, 4, 0, 0]
    eoshift(A, -1, 9) = [9, 0, 1, 2, 3]
"""

from __future__ import annotations

import operator

import numpy as np

from . import engine
from .collective import checked
from .core import DistArray
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
    if engine.is_array(boundary):
        if boundary.shape != want:
            raise ValueError(f"{fn}: a boundary array must have shape {want} (the array's shape without axis "
                             f"{axis}), got {boundary.shape}")
        _cast(boundary.dtype, A, fn)
        return select(boundary, (slice(None),) * axis + (None,))
    b = np.asarray(boundary)
    if b.ndim == 0:
        _cast(b.dtype, A, fn)
        return convert(boundary, A.dtype, A)[()]
    if b.shape != want:
        raise ValueError(f"{fn}: a boundary array must have shape {want} (the array's shape without axis "
                         f"{axis}), got {b.shape}")
    _cast(b.dtype, A, fn)
    return np.expand_dims(b, axis).astype(A.dtype)


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


def run(A: DistArray, specs: list, outs: list, header: str) -> None:
    """Collective: every shift of ``specs`` from ``A`` into ``outs``, one exchange."""
    pairs = [p for spec, R in zip(specs, outs) for p in statements(A, R, spec)]
    checked(header + "({0})", A, args=tuple(s.key() for s in specs))
    engine.executor().run_group(pairs, header)


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
    return protos, engine.executor().plan_group(pairs)


# -- public API ----------------------------------------------------------------
def cshift(A, shift, axis=0, *, out=None):
    """Collective: Fortran's CSHIFT, a circular shift: ``result[i] = A[(i + shift) % n]``
    along ``axis`` (``n = A.shape[axis]``).

    A positive shift moves the data towards lower indices, the opposite of
    ``np.roll`` (``np.roll(A, s, axis) == cshift(A, -s, axis)``).  Any integer
    shift works (taken modulo ``n``).  The data crossing locales moves in one
    exchange (one message per neighbouring locale pair).

    Parameters
    ----------
    A : DistArray
        The source, any rank, distribution and grid.
    shift : int
        The distance; negative shifts move data towards higher indices.
    axis : int, optional
        The axis to shift along (negative counts from the end).
    out : DistArray, optional
        Where to write the result: an array of A's shape, dtype and distribution,
        not ``A`` itself.

    Returns
    -------
    DistArray
        The shifted array (``out`` if given).

    Examples
    --------
    >>> A = pg.arange(5)                                # doctest: +SKIP
    >>> pg.cshift(A, 1).to_numpy()                      # doctest: +SKIP
    array([1, 2, 3, 4, 0])
    >>> np.roll(A, 1).to_numpy()                        # doctest: +SKIP
    array([4, 0, 1, 2, 3])
    """
    specs = parse(A, [(shift, axis)], "pg.cshift")
    outs = check_out(A, out, 1, "pg.cshift")
    run(A, specs, outs, "pg.cshift")
    return outs[0]


def eoshift(A, shift, axis=0, boundary=0, *, out=None):
    """Collective: Fortran's EOSHIFT, an end-off shift: ``result[i] = A[i + shift]`` along
    ``axis`` where ``0 <= i + shift < n``, else ``boundary``.

    Parameters
    ----------
    A : DistArray
        The source.
    shift : int
        The distance (positive: data moves towards lower indices and the boundary
        fills the last ``shift`` positions; negative: the first ``-shift``).
        ``abs(shift) >= n`` gives the boundary everywhere.
    axis : int, optional
        The axis to shift along.
    boundary : scalar, numpy.ndarray or DistArray, optional
        What enters at the end: a scalar (0 by default, or any value castable to
        A's dtype with rule ``same_kind``), or an array of A's shape without
        ``axis`` (rank one less), one value per line along ``axis``.
    out : DistArray, optional
        Where to write the result (as for :func:`cshift`).

    Returns
    -------
    DistArray
        The shifted array.

    Examples
    --------
    >>> pg.eoshift(pg.arange(5), 2).to_numpy()          # doctest: +SKIP
    array([2, 3, 4, 0, 0])
    >>> pg.eoshift(pg.arange(5), -1, boundary=9).to_numpy()   # doctest: +SKIP
    array([9, 0, 1, 2, 3])
    """
    specs = parse(A, [(shift, axis, boundary)], "pg.eoshift")
    outs = check_out(A, out, 1, "pg.eoshift")
    run(A, specs, outs, "pg.eoshift")
    return outs[0]


def pshift(A, shifts, *, out=None):
    """Collective: several circular and end-off shifts of ``A`` in one call, with all
    the data crossing locales moved in ONE exchange phase (the CM-200's PSHIFT).

    Parameters
    ----------
    A : DistArray
        The source.
    shifts : sequence of tuple
        ``(shift, axis)`` for a circular shift (:func:`cshift`) or
        ``(shift, axis, boundary)`` for an end-off one (:func:`eoshift`); any
        number, any axes, any distances.
    out : sequence of DistArray, optional
        One destination per shift (distinct, none of them ``A``, each of A's
        shape, dtype and distribution); new arrays if omitted.

    Returns
    -------
    list of DistArray
        The shifted arrays, in the order of ``shifts``.

    Notes
    -----
    Each locale sends at most one message to each locale it needs data from,
    however many shifts there are (the regions of all shifts are merged into one
    transfer), and moves each local element once.  For the same shifts repeated
    on arrays alike, :func:`pshift_setup` checks and plans once.

    Examples
    --------
    The eight neighbours of a rank-4 lattice (QCD):

    >>> U = pg.zeros((8, 8, 8, 8))                                   # doctest: +SKIP
    >>> nbrs = pg.pshift(U, [(s, ax) for ax in range(4) for s in (1, -1)])   # doctest: +SKIP
    """
    specs = parse(A, shifts, "pg.pshift")
    outs = check_out(A, out, len(specs), "pg.pshift")
    run(A, specs, outs, "pg.pshift")
    return outs


class PShiftPlan:
    """A polyshift set up once for arrays of one shape, dtype and distribution
    (:func:`pshift_setup`); call it as ``plan(A, out=None)``.  Free it with
    :meth:`free` or use it in a ``with`` block."""

    def __init__(self, A, shifts) -> None:
        self.specs = parse(A, shifts, "pg.pshift_setup")
        self.shape, self.dtype, self.layout = A.shape, A.dtype, A.layout
        self.label = f"{A.dtype} array of shape {A.shape} with {A.dist}"
        self._proto = A
        self._dests, self._items = setup_plans(A, self.specs)
        self._live = True

    def __call__(self, A, out=None):
        """Collective: run the shifts on ``A`` (like the prototype); see :func:`pshift`."""
        if not self._live:
            raise RuntimeError("pg.pshift_setup: this plan was freed")
        if not engine.is_array(A):
            raise TypeError(f"pshift plan: the source must be a DistArray, got {type(A).__name__}")
        if (A.shape, A.dtype, A.layout.key) != (self.shape, self.dtype, self.layout.key):
            raise ValueError(f"pshift plan: set up for a {self.label}, used on a {A.dtype} array of shape "
                             f"{A.shape} with {A.dist}: make a plan per shape, dtype and distribution")
        outs = check_out(A, out, len(self.specs), "pshift plan")
        checked("pshift plan({0})", A, args=tuple(s.key() for s in self.specs))
        rebind = {id(self._proto): A, **{id(d): R for d, R in zip(self._dests, outs)}}
        engine.executor().run_planned(self._items, rebind, "pg.pshift")
        return outs

    def free(self) -> None:
        """Release the plan (it cannot be used afterwards)."""
        self._live = False
        self.specs, self._items, self._dests, self._proto = [], [], [], None

    def __enter__(self) -> "PShiftPlan":
        return self

    def __exit__(self, *exc) -> None:
        self.free()

    def __repr__(self) -> str:
        state = "" if self._live else ", freed"
        return f"PShiftPlan({self.specs}, for a {self.label}{state})"


def pshift_setup(A, shifts) -> PShiftPlan:
    """Set up a polyshift once for every array of A's shape, dtype and distribution
    (the CM-200's PSHIFT_SETUP): the shifts are checked and planned once; run it
    with ``plan(B, out=None)``, free it with ``plan.free()`` or a ``with`` block.

    Parameters
    ----------
    A : DistArray
        A prototype array (its values are not used).
    shifts : sequence of tuple
        As for :func:`pshift`.

    Returns
    -------
    PShiftPlan

    Examples
    --------
    >>> with pg.pshift_setup(U, [(1, 0), (-1, 0)]) as plan:         # doctest: +SKIP
    ...     up, down = plan(U)
    """
    return PShiftPlan(A, shifts)

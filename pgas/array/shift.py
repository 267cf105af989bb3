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

import weakref

import numpy as np

from . import engine
from .collective import checked
from .shiftspec import _axis, _shift, check_out, parse, run, setup_plans

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
    :meth:`free` or use it in a ``with`` block.

    Its runs are compiled (:mod:`pgas.exec.shiftgroup`): persistent MPI transfers,
    and NumPy views of the arrays of the last call, which the plan holds (with
    their memory) until it runs on other arrays or is freed."""

    def __init__(self, A, shifts) -> None:
        self.specs = parse(A, shifts, "pg.pshift_setup")
        self.shape, self.dtype, self.layout = A.shape, A.dtype, A.layout
        self.label = f"{A.dtype} array of shape {A.shape} with {A.dist}"
        self._proto = A
        self._dests, self._items = setup_plans(A, self.specs)
        self._fast = engine.executor().compile_group(self._items)
        self._live = True
        self._args = tuple(s.key() for s in self.specs)
        self._last = ()                                # weak references to the last checked arrays
        self._order = None                             # see _key_order (None: not known yet; (): none)

    def __call__(self, A, out=None):
        """Collective: run the shifts on ``A`` (like the prototype); see :func:`pshift`."""
        if not self._live:
            raise RuntimeError("pg.pshift_setup: this plan was freed")
        last = self._last
        if last and isinstance(out, (list, tuple)) and last[0]() is A and len(out) == len(last) - 1 \
                and all(w() is R for w, R in zip(last[1:], out)):
            outs = list(out)                           # the arrays of the last call: checked then
            checked("pshift plan({0})", A, args=self._args)
            order = self._order
            if order:                                  # the compiled group's arrays, in its order
                arrays = (A, *outs)
                if engine.executor().rerun(self._fast, [arrays[k] for k in order]):
                    return outs
        else:
            outs = self._check(A, out)
            self._last = tuple(weakref.ref(a) for a in [A, *outs]) if isinstance(out, (list, tuple)) else ()
            checked("pshift plan({0})", A, args=self._args)
        rebind = {id(self._proto): A, **{id(d): R for d, R in zip(self._dests, outs)}}
        engine.executor().run_planned(self._items, rebind, "pg.pshift", self._fast)
        if self._order is None and self._fast.ok:
            self._order = self._key_order() or ()
        return outs

    def _key_order(self):
        """Per array of the compiled group (in its order), its place in ``(A, *out)``; None
        if the group holds another array (an end-off boundary), which the plan does not rebind."""
        place = {id(self._proto): 0, **{id(d): k + 1 for k, d in enumerate(self._dests)}}
        keys = self._fast.keys
        return [place[k] for k in keys] if all(k in place for k in keys) else None

    def _check(self, A, out) -> list:
        """The destinations, after checking ``A`` and ``out`` (errors alike everywhere)."""
        if not engine.is_array(A):
            raise TypeError(f"pshift plan: the source must be a DistArray, got {type(A).__name__}")
        if (A.shape, A.dtype, A.layout.key) != (self.shape, self.dtype, self.layout.key):
            raise ValueError(f"pshift plan: set up for a {self.label}, used on a {A.dtype} array of shape "
                             f"{A.shape} with {A.dist}: make a plan per shape, dtype and distribution")
        return check_out(A, out, len(self.specs), "pshift plan")

    def free(self) -> None:
        """Release the plan (it cannot be used afterwards)."""
        if self._live:
            self._fast.free()
        self._live = False
        self.specs, self._items, self._dests, self._proto, self._last = [], [], [], None, ()

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


def roll(a, shift, axis=None):
    """``np.roll`` through :func:`pgas.array.shift.cshift` (``np.roll(a, s, ax)`` is
    ``cshift(a, -s, ax)``): tuples of shifts and axes roll along each (repeated axes
    add up), ``axis=None`` rolls the flattened array (ravel, shift, reshape)."""
    from .shape import ravel, reshape
    if not engine.is_array(a):
        a = engine.materialise(a)
    if axis is None:
        if np.ndim(shift):
            raise ValueError("np.roll: with axis=None the shift must be one integer")
        if a.ndim == 1:
            return cshift(a, -_shift(shift, "np.roll"), 0)
        return reshape(cshift(ravel(a), -_shift(shift, "np.roll"), 0), a.shape)
    try:
        pairs = np.broadcast(np.asarray(shift), np.asarray(axis))
    except ValueError:
        raise ValueError(f"np.roll: shift {shift!r} and axis {axis!r} do not broadcast together") from None
    if pairs.nd > 1:
        raise ValueError("np.roll: shift and axis must be integers or 1-D sequences")
    total = [0] * a.ndim
    for s, ax in pairs:
        total[_axis(ax, a.ndim, "np.roll")] += _shift(s, "np.roll")
    out = None
    for ax, s in enumerate(total):
        if s or (out is None and ax == a.ndim - 1):
            out = cshift(a if out is None else out, -s, ax)
    return out


NUMPY_FUNCTIONS = {np.roll: roll}

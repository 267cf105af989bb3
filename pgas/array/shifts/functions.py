"""Circular and end-off shifts (Fortran's CSHIFT and EOSHIFT) and the polyshift.

A shift is a pair of slice statements along one axis: ``cshift(A, s, axis)`` with
``0 < s < n`` is ``R[:n-s] = A[s:]; R[n-s:] = A[:s]``.  A polyshift is several
such statements, for several destinations, whose inter-locale data goes out in
ONE exchange phase (:func:`pgas.array.statements.run_group`): every
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

import numpy as np

from .. import engine
from .spec import as_axis, as_shift, check_out, check_outs, parse, sources
from .statements import run


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
        Where to write the result: an array of A's shape, dtype and distribution;
        ``A`` itself shifts in place.

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
    run([A], [specs], [outs], "pg.cshift")
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
    run([A], [specs], [outs], "pg.eoshift")
    return outs[0]


def pshift(A, shifts, *, out=None):
    """Collective: several circular and end-off shifts of ``A`` in one call, with all
    the data crossing locales moved in ONE exchange phase (the CM-200's PSHIFT).

    Parameters
    ----------
    A : DistArray or sequence of DistArray
        The source, or several distinct sources (any shapes, dtypes and
        distributions): every shift is applied to each, and all their data
        crossing locales moves in the same single exchange.
    shifts : sequence of tuple
        ``(shift, axis)`` for a circular shift (:func:`cshift`) or
        ``(shift, axis, boundary)`` for an end-off one (:func:`eoshift`); any
        number, any axes, any distances.
    out : sequence of DistArray, optional
        One destination per shift (for several sources, one such sequence per
        source), each of its source's shape, dtype and distribution, all
        distinct; new arrays if omitted.  A destination may be a source: the
        shift is then done in place, and every shift reads the sources as they
        were before the call (``pg.pshift(A, [(1, 0)], out=[A])`` is
        ``A[...] = np.roll(A, -1, 0)``).

    Returns
    -------
    list of DistArray
        The shifted arrays, in the order of ``shifts``; for several sources, one
        such list per source.

    Notes
    -----
    Each locale sends at most one message to each locale it needs data from,
    however many shifts and sources there are (the regions of all shifts of all
    sources are merged into one transfer), and moves each local element once
    (an in-place source's local part twice: it is copied before it is
    overwritten, as the CM-200's PSHIFT did).  For the same shifts repeated on
    arrays alike, :func:`pshift_setup` checks and plans once.

    Examples
    --------
    The eight neighbours of a rank-4 lattice (QCD):

    >>> U = pg.zeros((8, 8, 8, 8))                                   # doctest: +SKIP
    >>> nbrs = pg.pshift(U, [(s, ax) for ax in range(4) for s in (1, -1)])   # doctest: +SKIP

    Two fields' neighbours in one exchange, and a shift in place:

    >>> (u_up, u_dn), (v_up, v_dn) = pg.pshift([u, v], [(1, 0), (-1, 0)])   # doctest: +SKIP
    >>> pg.pshift(u, [(1, 0)], out=[u])                                     # doctest: +SKIP
    """
    srcs, several = sources(A, "pg.pshift")
    specs = [parse(S, shifts, "pg.pshift") for S in srcs]
    outs = check_outs(srcs, out, len(specs[0]), "pg.pshift", several)
    run(srcs, specs, outs, "pg.pshift")
    return outs if several else outs[0]


def roll(a, shift, axis=None):
    """``np.roll`` through :func:`cshift` (``np.roll(a, s, ax)`` is
    ``cshift(a, -s, ax)``): tuples of shifts and axes roll along each (repeated axes
    add up), ``axis=None`` rolls the flattened array (ravel, shift, reshape)."""
    from ..shape import ravel, reshape
    if not engine.is_array(a):
        a = engine.materialise(a)
    if axis is None:
        if np.ndim(shift):
            raise ValueError("np.roll: with axis=None the shift must be one integer")
        if a.ndim == 1:
            return cshift(a, -as_shift(shift, "np.roll"), 0)
        return reshape(cshift(ravel(a), -as_shift(shift, "np.roll"), 0), a.shape)
    try:
        pairs = np.broadcast(np.asarray(shift), np.asarray(axis))
    except ValueError:
        raise ValueError(f"np.roll: shift {shift!r} and axis {axis!r} do not broadcast together") from None
    if pairs.nd > 1:
        raise ValueError("np.roll: shift and axis must be integers or 1-D sequences")
    total = [0] * a.ndim
    for s, ax in pairs:
        total[as_axis(ax, a.ndim, "np.roll")] += as_shift(s, "np.roll")
    out = None
    for ax, s in enumerate(total):
        if s or (out is None and ax == a.ndim - 1):
            out = cshift(a if out is None else out, -s, ax)
    return out


NUMPY_FUNCTIONS = {np.roll: roll}

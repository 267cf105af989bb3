"""``np.linalg.norm`` of distributed arrays, as whole-array and axis reductions.

NumPy's definitions, each written with pgas reductions (so a vector norm along
an axis moves what a ``sum`` / ``max`` along that axis moves):

- vector norms (a 1-D array, ``axis=int``, or ``axis=None`` with ``ord=None``
  on any shape): ``ord=None`` / ``2`` the square root of the sum of squared
  magnitudes, ``1`` the sum of magnitudes, ``inf`` / ``-inf`` the largest /
  smallest magnitude, ``0`` the count of non-zeros, any other number ``p``
  ``sum(|x|**p)**(1/p)``;
- matrix norms (a 2-D array with ``axis=None``, or ``axis=(r, c)``): ``None`` /
  ``'fro'`` the Frobenius norm, ``1`` / ``-1`` the largest / smallest column sum
  of magnitudes, ``inf`` / ``-inf`` the largest / smallest row sum.  ``2``,
  ``-2`` and ``'nuc'`` need singular values: NotImplementedError.

Bad arguments raise NumPy's own exception types (``axis`` not an int or tuple:
TypeError; a string order for vectors, more than two axes, duplicate axes:
ValueError; an axis out of range: AxisError).  Integer input is computed in
float64, as NumPy does.
"""

from __future__ import annotations

import operator

import numpy as np

from ..exec import fperr

_MATRIX_ORDS = (None, "fro", "f", 1, -1, np.inf, -np.inf)
_SVD_ORDS = (2, -2, "nuc")


def _axes(axis, ndim: int) -> tuple[int, ...] | None:
    """``axis`` as a tuple of normalised axes (NumPy's checks and errors), or None."""
    if axis is None:
        return None
    if not isinstance(axis, tuple):
        try:
            axis = (int(axis),)           # NumPy's conversion (axis=1.5 is axis 1)
        except Exception:                 # noqa: BLE001  (NumPy turns any failure into this TypeError)
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from None
    out = []
    for a in axis:
        try:
            a = operator.index(a)
        except TypeError:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from None
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    if len(out) == 2 and out[0] == out[1]:
        raise ValueError("Duplicate axes given.")
    if len(out) > 2 or not out:
        raise ValueError("Improper number of dimensions to norm.")
    return tuple(out)


def _value(x):
    from .expr import Lazy
    return x.eval() if isinstance(x, Lazy) else x


def _magnitude(x):
    return _value(np.absolute(x))


@fperr.agreeing              # a local part's error raises on every locale, so none waits
def norm(x, ord=None, axis=None, keepdims=False):
    """Collective: NumPy's ``linalg.norm``: vector norms over the whole array or one axis,
    matrix norms of a 2-D array or two axes (see :mod:`pgas.array.norms`).

    Parameters
    ----------
    x : DistArray, view or expression
    ord : None, int, float, inf, -inf, 'fro'
        Vector orders: any number; matrix orders: None, 'fro', 1, -1, inf, -inf.
    axis : None, int or tuple of two ints
    keepdims : bool

    Returns
    -------
    float (on every locale) or DistArray
        A scalar when every axis is reduced, else a DistArray over the kept axes.
    """
    from .core import DistArray
    from .linalg import _dist
    x = _dist(x)
    if not isinstance(x, DistArray):
        return np.linalg.norm(x, ord, axis, keepdims)
    axes = _axes(axis, x.ndim)
    if x.dtype.kind not in "fc":
        x = x.astype(np.float64)
    if axes is None:
        if ord is None:
            res = _two_norm(x, None)
        elif x.ndim == 1:
            res = _vector(x, ord, None)
        elif x.ndim == 2:
            res = _matrix(x, ord, (0, 1))
        else:
            raise ValueError("Improper number of dimensions to norm.")
        axes = tuple(range(x.ndim))
    elif len(axes) == 1:
        res = _vector(x, ord, axes[0])
    else:
        res = _matrix(x, ord, axes)
    if keepdims:
        shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
        res = _keep(res, shape)
    return res


def _keep(res, shape):
    """``res`` reshaped to ``shape`` (the reduced axes kept with extent 1)."""
    if isinstance(res, np.generic) or np.ndim(res) == 0:
        return np.asarray(res).reshape(shape)
    return res.reshape(shape)


def _two_norm(x, axis):
    """sqrt(sum(|x|^2)) over ``axis`` (all axes for None)."""
    mag = _magnitude(x) if x.dtype.kind == "c" else x
    sq = _value(mag * mag)
    return np.sqrt(sq.sum(axis=axis))


def _vector(x, ord, axis):
    """A vector norm of ``x`` along ``axis`` (the whole array for None)."""
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord is None or ord == 2:
        return _two_norm(x, axis)
    if ord == np.inf:
        return _magnitude(x).max(axis=axis, initial=0) if axis is None else _magnitude(x).max(axis=axis)
    if ord == -np.inf:
        return _magnitude(x).min(axis=axis)
    mag = _magnitude(x)
    if ord == 0:
        return _value(mag != 0).astype(mag.dtype).sum(axis=axis)
    if ord == 1:
        return mag.sum(axis=axis)
    try:
        p = float(ord)
    except (TypeError, ValueError):
        raise ValueError(f"Invalid norm order {ord!r} for vectors") from None
    return _value(mag ** p).sum(axis=axis) ** (1.0 / p)


def _matrix(x, ord, axes):
    """A matrix norm of ``x`` over ``axes = (row axis, column axis)``."""
    if x.ndim < 2:
        raise ValueError("Improper number of dimensions to norm.")
    if not isinstance(ord, str) and ord in _SVD_ORDS or ord == "nuc":
        raise NotImplementedError(f"norm(ord={ord!r}) of a matrix needs its singular values, which pgas does not "
                                  "compute: use np.linalg.norm(x.to_numpy(), ...) (or ord='fro', 1 or inf)")
    if isinstance(ord, str) and ord not in ("fro", "f") or not isinstance(ord, str) and ord not in _MATRIX_ORDS:
        raise ValueError("Invalid norm order for matrices.")
    row, col = axes
    if ord in (None, "fro", "f"):
        return _two_norm(x, axes)
    pick = "max" if ord > 0 else "min"
    if ord in (1, -1):
        if col > row:
            col -= 1
        return getattr(_magnitude(x).sum(axis=row), pick)(axis=col)
    if row > col:
        row -= 1
    return getattr(_magnitude(x).sum(axis=col), pick)(axis=row)


NUMPY_FUNCTIONS = {np.linalg.norm: norm}

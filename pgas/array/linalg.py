"""Linear algebra on distributed arrays: matrix products, dots, outer products (norms:
:mod:`pgas.array.norms`, also reached as ``pg.linalg.norm``).

Every function takes DistArrays of any distribution (views and lazy expressions
are materialised first; a plain NumPy operand is taken as replicated) and
returns NumPy's global result: a DistArray, or a scalar on every locale.

Communication (``p`` locales):

- ``A @ B`` (2-D): the result ``C`` has ``A``'s distribution kind and grid;
  each locale computes the block of ``C`` it owns (owner computes) with NumPy's
  BLAS ``matmul`` on panels: the rows of ``A`` and the columns of ``B`` it needs,
  fetched ``kb`` columns/rows at a time with one-sided strided gets (one message
  per owning locale per panel), ``kb`` chosen so a panel pair stays under
  :data:`PANEL_BYTES`.  On a ``pr x pc`` grid ``A`` moves ``pc`` times and ``B``
  ``pr`` times, as in SUMMA.
- matrix-vector and vector-matrix: each locale multiplies the matrix block it
  owns by the vector entries it needs (one get per owner), then one allreduce
  of the length-``M`` partial sums; the matrix never moves.
- 1-D dot: each locale fetches the entries of ``y`` matching its own ``x``,
  dots them, and one allreduce of the scalar.
"""

from __future__ import annotations

import numpy as np

from .. import comm
from ..exec import fperr
from .index import check_dtype
from . import collective
from .norms import norm  # noqa: F401  (pg.linalg.norm)

PANEL_BYTES = 32 * 2**20

_NO_BATCH = ("matmul of arrays with more than 2 dimensions (batched) is not supported: loop over the "
             "leading index with 2-D slices (C[k] = A[k] @ B[k])")


def _dist(x, like=None):
    """``x`` as a DistArray: views and expressions are materialised, a NumPy value is
    distributed (it must be the same on every locale, which from_numpy checks)."""
    from .core import DistArray
    from .creation.constructors import from_numpy
    from .expr import Lazy
    if isinstance(x, DistArray):
        return x
    if isinstance(x, Lazy):
        return x.eval()
    arr = np.asarray(x)
    if arr.ndim == 0:
        return arr
    return from_numpy(arr, dist=like.layout.like(arr.ndim) if like is not None else None)


def _operands(a, b, what: str):
    """Both operands as DistArrays (or 0-d NumPy values), the distributed one first chosen as the model."""
    from .core import DistArray
    from .expr import Lazy
    first = a if isinstance(a, (DistArray, Lazy)) else b
    model = _dist(first)
    a = model if a is first else _dist(a, model)
    b = model if b is first else _dist(b, model)
    return a, b


def _out_dtype(fn, a, b) -> np.dtype:
    dt = fn(np.ones((1,) * max(a.ndim, 1), a.dtype), np.ones((1,) * max(b.ndim, 1), b.dtype)).dtype
    return check_dtype(dt, "pgas arrays (result of a matrix product)")


def _sl(r: range) -> slice:
    return slice(r.start, r.stop, r.step)


def _order(ranges, owned: np.ndarray):
    """The permutation taking the concatenated ``ranges`` to the order of ``owned`` (the
    same index set in local storage order), or None when they already agree."""
    idx = np.concatenate([np.arange(r.start, r.stop, r.step) for r in ranges]) if ranges else owned[:0]
    if np.array_equal(idx, owned):
        return None
    order = np.argsort(idx, kind="stable")
    return order[np.searchsorted(idx[order], owned)]


def _fetch(x, key_ranges, axis: int, fixed, perm) -> np.ndarray:
    """``x[ranges, fixed]`` (axis 0) or ``x[fixed, ranges]`` (axis 1; for 1-D ``x`` just
    ``x[ranges]``), concatenated along ``axis`` and put in ``perm`` order: one one-sided
    get per range (and owner)."""
    parts = []
    for r in key_ranges:
        key = _sl(r) if fixed is None else (_sl(r), fixed) if axis == 0 else (fixed, _sl(r))
        parts.append(x.get(key))
    out = np.concatenate(parts, axis=axis)
    return out if perm is None else np.take(out, perm, axis=axis)


def _wins(*arrays):
    seen = []
    for a in arrays:
        if a._win not in seen:
            seen.append(a._win)
    return seen


def _matmul2(A, B, dtype):
    """2-D @ 2-D, owner computes with k-panels (see the module docstring)."""
    from .creation.constructors import empty
    M, K = A.shape
    N = B.shape[1]
    C = empty((M, N), dtype, A.layout.like(2))
    comm.barrier(_wins(A, B))
    me = comm.here()
    rows, cols = C.layout.owned_ranges(me)
    prow, pcol = (_order(r, o) for r, o in zip((rows, cols), C.layout.owned(me)))
    nr, nc = C.local.shape
    acc = np.zeros((nr, nc), dtype)
    if nr and nc and K:
        item = max(A.dtype.itemsize, B.dtype.itemsize)
        kb = int(max(1, min(K, PANEL_BYTES // (item * (nr + nc)))))
        for k0 in range(0, K, kb):
            ks = slice(k0, min(K, k0 + kb))
            part = np.matmul(_fetch(A, rows, 0, ks, prow), _fetch(B, cols, 1, ks, pcol))
            if dtype.kind == "b":
                acc |= part
            else:
                acc += part
    C.local[...] = acc
    comm.barrier(_wins(A, B, C))
    return C


def _reduce_partial(partial: np.ndarray, dtype):
    """Sum the locales' partial results (bool: any), on every locale."""
    if dtype.kind == "b":
        return comm.allreduce(partial.astype(np.int64), "sum") != 0
    return comm.allreduce(partial, "sum").astype(dtype, copy=False)


def _vec_result(total: np.ndarray, model, dtype):
    from .creation.constructors import empty
    y = empty(total.shape, dtype, model.layout.like(1))
    y.local[...] = total[y.layout.owned(comm.here())[0]]
    comm.barrier([y._win])
    return y


def _matvec(A, x, dtype, vec_first: bool):
    """``A @ x`` (or ``x @ A``): local block times the matching vector entries, one allreduce."""
    comm.barrier(_wins(A, x))
    me = comm.here()
    rows, cols = A.layout.owned_ranges(me)
    orows, ocols = A.layout.owned(me)
    n_out = A.shape[1] if vec_first else A.shape[0]
    partial = np.zeros(n_out, np.int64 if dtype.kind == "b" else dtype)
    if A.local.size:
        need, oneed = (rows, orows) if vec_first else (cols, ocols)
        xs = _fetch(x, need, 0, None, _order(need, oneed))
        local = A.local.astype(np.int64) if dtype.kind == "b" else A.local
        xs = xs.astype(np.int64) if dtype.kind == "b" else xs
        partial[ocols if vec_first else orows] = xs @ local if vec_first else local @ xs
    return _vec_result(_reduce_partial(partial, dtype), A, dtype)


def _dot1(x, y, dtype):
    """1-D dot product, a scalar on every locale."""
    comm.barrier(_wins(x, y))
    me = comm.here()
    (rows,) = x.layout.owned_ranges(me)
    part = np.zeros((), np.int64 if dtype.kind == "b" else dtype)
    if x.local.size:
        ys = _fetch(y, rows, 0, None, _order(rows, x.layout.owned(me)[0]))
        if dtype.kind == "b":
            part = np.int64(np.count_nonzero(x.local & ys))
        else:
            part = np.dot(x.local, ys).astype(dtype)
    return _reduce_partial(np.asarray(part), dtype)[()]


@fperr.agreeing              # a local part's error raises on every locale, so none waits
def matmul(a, b):
    """Collective: the matrix product ``a @ b`` (NumPy's ``matmul``) of distributed arrays.

    Parameters
    ----------
    a, b : DistArray, view, expression or NumPy array (replicated)
        1-D or 2-D operands; any distributions.

    Returns
    -------
    DistArray or scalar
        A DistArray with ``a``'s distribution kind (a scalar on every locale for two vectors).
    """
    collective.checked("np.matmul(...)", args=(collective.plain(a), collective.plain(b)))
    a, b = _operands(a, b, "matmul")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions (a scalar): use a * b")
    if a.ndim > 2 or b.ndim > 2:
        raise NotImplementedError(_NO_BATCH)
    ka, kb = a.shape[-1], b.shape[0]
    if ka != kb:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size {kb} is "
                         f"different from {ka}): shapes {a.shape} and {b.shape}")
    dtype = _out_dtype(np.matmul, a, b)
    if a.ndim == 2 and b.ndim == 2:
        return _matmul2(a, b, dtype)
    if a.ndim == 2:
        return _matvec(a, b, dtype, vec_first=False)
    if b.ndim == 2:
        return _matvec(b, a, dtype, vec_first=True)
    return _dot1(a, b, dtype)


def dot(a, b):
    """Collective: NumPy's ``dot`` of distributed arrays: :func:`matmul` for 1-D and 2-D
    operands, an element-wise product when one is a scalar.

    Parameters
    ----------
    a, b : DistArray, view, expression, NumPy array or scalar

    Returns
    -------
    DistArray or scalar
    """
    collective.checked("np.dot(...)", args=(collective.plain(a), collective.plain(b)))
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.multiply(a, b)
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        raise NotImplementedError("dot of arrays with more than 2 dimensions is not supported: " + _NO_BATCH)
    return matmul(a, b)


def vdot(a, b):
    """Collective: NumPy's ``vdot``: ``sum(conj(a) * b)`` over the flattened arrays, a
    scalar on every locale.

    Parameters
    ----------
    a, b : DistArray, view or expression of the same shape
    """
    collective.checked("np.vdot(...)", args=(collective.plain(a), collective.plain(b)))
    with np.errstate(all="ignore"):     # NumPy's vdot reports no floating-point errors
        return _vdot(a, b)


def _vdot(a, b):
    a, b = _operands(a, b, "vdot")
    if a.shape != b.shape:
        raise ValueError(f"vdot: cannot reshape arrays of shapes {a.shape} and {b.shape}: vdot needs the same size "
                         "(pgas: the same shape)")
    if a.ndim != 1:
        return _flat_vdot(a, b)
    ac = np.conjugate(a) if a.dtype.kind == "c" else a
    return _dot1(_dist(ac), b, _out_dtype(np.vdot, a, b))


def _flat_vdot(a, b):
    """vdot of N-D arrays of one shape: element-wise product and a whole-array sum."""
    dtype = _out_dtype(np.vdot, a, b)
    prod = np.conjugate(a) * b if a.dtype.kind == "c" else a * b
    prod = _dist(prod)
    if dtype.kind == "b":
        return np.bool_(prod.sum() != 0)
    return np.asarray(prod.sum(dtype=dtype)).astype(dtype)[()]


def inner(a, b):
    """Collective: NumPy's ``inner`` for 1-D operands (their dot product) or a scalar.

    Parameters
    ----------
    a, b : DistArray, view, expression or scalar
    """
    collective.checked("np.inner(...)", args=(collective.plain(a), collective.plain(b)))
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.multiply(a, b)
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        raise NotImplementedError("inner of arrays with more than 1 dimension is not supported: for 2-D use "
                                  "pg.matmul(A, B.T) once transposes are available, or A.to_numpy()")
    return matmul(a, b)


def outer(a, b):
    """Collective: NumPy's ``outer`` of two 1-D distributed arrays: a 2-D DistArray of
    ``a``'s distribution kind, computed as one statement ``a[:, None] * b[None, :]``.

    Parameters
    ----------
    a, b : 1-D DistArray, view, expression or NumPy array
    """
    collective.checked("np.outer(...)", args=(collective.plain(a), collective.plain(b)))
    a, b = _operands(a, b, "outer")
    if a.ndim != 1 or b.ndim != 1:
        raise NotImplementedError("outer of arrays that are not 1-D is not supported (NumPy flattens them): "
                                  "pass 1-D arrays")
    return np.multiply.outer(a, b)


NUMPY_FUNCTIONS = {np.matmul: matmul, np.dot: dot, np.vdot: vdot, np.inner: inner, np.outer: outer}

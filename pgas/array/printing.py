"""``repr`` and ``str`` of distributed arrays and views, as NumPy prints them.

Only the elements shown are moved: with NumPy's print options (``threshold``,
``edgeitems``), an array larger than ``threshold`` shows ``edgeitems`` indices
at each end of every long dimension, so each locale gathers those (one
aggregated :meth:`gather`, at most one message per locale pair each way) into
a small NumPy array that NumPy then formats with its own summarising rules.
Printing is therefore COLLECTIVE: call ``repr``/``str``/``print`` on every
locale alike (``if pg.here == 0: print(A)`` alone would wait forever; write
``s = repr(A)`` on every locale and print it on one).  Inside a ``forall`` body
the repr names the array without values and moves nothing.
"""

from __future__ import annotations

import numpy as np

from . import collective, irregular

_TYPELESS = tuple(np.dtype(t) for t in (np.float64, np.int64, np.bool_, np.complex128))


def _shown(n: int, summarise: bool, edge: int) -> np.ndarray:
    """Indices of one dimension that printing reads: all, or ``edge`` at each end plus one
    middle index that makes NumPy insert ``...`` there (it is never printed)."""
    if summarise and n > 2 * edge:
        return np.concatenate([np.arange(edge + 1), np.arange(n - edge, n)])
    return np.arange(n)


def shown_values(base, shape, M, c) -> tuple[np.ndarray, bool]:
    """Collective: the small array of the elements printing shows of the view ``(base, shape, M, c)``
    and whether NumPy must summarise it."""
    opts = np.get_printoptions()
    size = int(np.prod(shape))
    summarise = size > opts["threshold"]
    idx = [_shown(n, summarise, opts["edgeitems"]) for n in shape]
    small = tuple(len(i) for i in idx)
    grids = [g.reshape(-1) for g in np.meshgrid(*idx, indexing="ij")] if idx else []
    base_idx = tuple(np.asarray(sum(row[k] * grids[k] for k in range(len(row))) + ci, dtype=np.int64).reshape(-1)
                     for row, ci in zip(M, c))
    if not size:
        base_idx = tuple(np.empty(0, np.int64) for _ in M)
    # agreed first (not only folded, as a gather is): printing on one locale alone is a
    # newcomer's mistake, raised as a CollectiveMismatch on every locale at once
    collective.checked("printing {0}", base)
    return irregular.gather(base, base_idx).reshape(small), summarise


def _body(values: np.ndarray, summarise: bool, prefix: str, separator: str) -> str:
    with np.printoptions(threshold=0 if summarise else max(values.size, 1)):
        return np.array2string(values, separator=separator, prefix=prefix)


def array_repr(kind: str, base, shape, M, c, extra: str) -> str:
    """Collective: ``kind([...values...], dtype=..., extra)`` in NumPy's layout."""
    from . import engine
    if engine.tracing():
        return f"{kind}(shape={shape}, dtype={base.dtype}, {extra})"
    values, summarise = shown_values(base, shape, M, c)
    prefix = f"{kind}("
    if values.size == 0:
        return f"{prefix}[], shape={tuple(shape)}, dtype={base.dtype}, {extra})"
    body = _body(values, summarise, prefix, ", ")
    dtype = "" if base.dtype in _TYPELESS else f", dtype={base.dtype}"
    shape = f", shape={tuple(shape)}" if summarise else ""
    return f"{prefix}{body}{shape}{dtype}, {extra})"


def array_str(base, shape, M, c) -> str:
    """Collective: the values as NumPy's ``str`` shows them."""
    from . import engine
    if engine.tracing():
        return f"<distributed array of shape {tuple(shape)}>"
    values, summarise = shown_values(base, shape, M, c)
    return _body(values, summarise, "", " ")


def _identity_map(A):
    n = A.ndim
    return tuple(tuple(int(i == j) for j in range(n)) for i in range(n)), (0,) * n


def distarray_repr(A) -> str:
    """Collective: ``DistArray([[0., 1.], [2., 3.]], dist=Block(grid=(2, 1)))``."""
    M, c = _identity_map(A)
    extra = f"dist={A.dist}" + (f", name={A.name!r}" if A.name else "")
    return array_repr("DistArray", A, A.shape, M, c, extra)


def distarray_str(A) -> str:
    """Collective: the values as NumPy's ``str`` shows them."""
    M, c = _identity_map(A)
    return array_str(A, A.shape, M, c)


def view_repr(v) -> str:
    """Collective: ``View([...], base=<label>, dist=...)``; only the shown elements move."""
    return array_repr("View", v.base, v.shape, v.M, v.c, f"base={v.base.label}, dist={v.base.dist}")


def view_str(v) -> str:
    """Collective: the view's values as NumPy's ``str`` shows them."""
    return array_str(v.base, v.shape, v.M, v.c)

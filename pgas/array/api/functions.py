"""The standard's manipulation, set, sorting, searching, indexing and linear algebra functions.

Those pgas distributes run on distributed operands without gathering: ``permute_dims``,
``matrix_transpose``, ``flip``, ``moveaxis``, ``expand_dims`` (views), ``roll``, ``reshape``,
``concat``, ``stack``, ``where``, 2-D ``matmul``, ``astype`` and ``pad`` (pgas's own functions), and,
composed from pgas's distributed operations (:mod:`.composed`), ``broadcast_to``,
``broadcast_arrays``, ``repeat``, ``tile``, ``squeeze``, ``unstack`` (of 2-4 dimensions), ``take``,
``nonzero``, ``sort``, ``argsort``, ``searchsorted``, ``unique_all``, ``unique_counts``,
``unique_inverse``, ``unique_values``, ``vecdot`` (numeric) and ``tensordot`` (floating point),
for results of 1 to 4 dimensions (and 0-d reductions).  Other operands (and those the functions do
not cover: an ``unstack`` of a 1-D array into 0-d arrays, a result of more than 4 dimensions, an
integer ``tensordot``, a ``vecdot`` along a non-negative axis of operands of different dimensions,
which NumPy counts in each) are gathered to every locale (``to_numpy``, collective), NumPy computes the
result there and it is distributed again (:func:`.arrays.gathered`), with a
:class:`pgas.GatherWarning`; each function's docstring says which it does.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dtypes
from . import composed as _composed
from .arrays import MAX_NDIM, broadcast_distributed, dist, gathered, is_dist, wrap, wrap_all


def _promoting(name: str, npfunc, arrays_of):
    """``gathered(npfunc)`` that first checks the standard's promotion of ``arrays_of(args)``."""
    inner = gathered(npfunc, name)

    def impl(*args, **kwargs):
        _dtypes.result_type(*arrays_of(args))
        return inner(*args, **kwargs)
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = inner.__doc__
    impl.__signature__ = inner.__signature__
    return impl


def _sort(x, /, *, axis=-1, descending=False, stable=True):
    res = np.sort(x, axis=axis, kind="stable" if stable else None)
    return np.flip(res, axis=axis) if descending else res


def _argsort(x, /, *, axis=-1, descending=False, stable=True):
    if not descending:
        return np.argsort(x, axis=axis, kind="stable" if stable else None)
    n = x.shape[axis] if x.ndim else 1
    idx = np.flip(np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable"), axis=axis)
    return (n - 1 - idx).astype(np.int64)


def _nonzero(x, /):
    if np.ndim(x) == 0:
        raise ValueError("nonzero is not defined for 0-d arrays")
    return tuple(i.astype(np.int64) for i in np.nonzero(x))


def _searchsorted(x1, x2, /, *, side="left", sorter=None):
    return np.searchsorted(x1, x2, side=side, sorter=sorter).astype(np.int64)


def _where(condition, x1, x2, /):
    return np.where(condition, x1, x2)


def _take(x, indices, /, *, axis=None):
    if axis is None and np.ndim(x) != 1:
        raise ValueError("take needs axis= for arrays of more than one dimension")
    return np.take(x, indices, axis=axis)


def _squeeze(x, /, axis):
    return np.squeeze(x, axis=axis)


def _reshape(x, /, shape, *, copy=None):
    return np.reshape(x, shape, copy=copy)


def _unique(npfunc):
    def impl(x, /):
        return npfunc(x)
    return impl


_GATHERED = {
    "broadcast_arrays": lambda *arrays: list(np.broadcast_arrays(*arrays)),
    "broadcast_to": lambda x, /, shape: np.broadcast_to(x, shape),
    "expand_dims": lambda x, /, axis=0: np.expand_dims(x, axis),
    "flip": lambda x, /, *, axis=None: np.flip(x, axis=axis),
    "moveaxis": lambda x, source, destination, /: np.moveaxis(x, source, destination),
    "permute_dims": lambda x, /, axes: np.permute_dims(x, axes),
    "repeat": lambda x, repeats, /, *, axis=None: np.repeat(x, repeats, axis=axis),
    "reshape": _reshape,
    "roll": lambda x, /, shift, *, axis=None: np.roll(x, shift, axis=axis),
    "squeeze": _squeeze,
    "tile": lambda x, repetitions, /: np.tile(x, repetitions),
    "unstack": lambda x, /, *, axis=0: tuple(np.unstack(x, axis=axis)),
    "unique_all": _unique(np.unique_all),
    "unique_counts": _unique(np.unique_counts),
    "unique_inverse": _unique(np.unique_inverse),
    "unique_values": _unique(np.unique_values),
    "sort": _sort,
    "argsort": _argsort,
    "nonzero": _nonzero,
    "take": _take,
    "matrix_transpose": lambda x, /: np.matrix_transpose(x),
}

FUNCTIONS = {name: gathered(f, name) for name, f in _GATHERED.items()}
#: Functions whose operands the standard promotes: which arguments are the operands.
_OPERANDS = {"concat": lambda a: a[0], "stack": lambda a: a[0], "searchsorted": lambda a: a[:2],
             "tensordot": lambda a: a[:2], "vecdot": lambda a: a[:2]}
FUNCTIONS.update({
    "concat": _promoting("concat", lambda arrays, /, *, axis=0: np.concat(arrays, axis=axis), _OPERANDS["concat"]),
    "stack": _promoting("stack", lambda arrays, /, *, axis=0: np.stack(arrays, axis=axis), _OPERANDS["stack"]),
    "searchsorted": _promoting("searchsorted", _searchsorted, _OPERANDS["searchsorted"]),
    "tensordot": _promoting("tensordot", lambda x1, x2, /, *, axes=2: np.tensordot(x1, x2, axes=axes),
                            _OPERANDS["tensordot"]),
    "vecdot": _promoting("vecdot", lambda x1, x2, /, *, axis=-1: np.vecdot(x1, x2, axis=axis),
                         _OPERANDS["vecdot"]),
})
_where_gathered = _promoting("where", _where, lambda a: a[1:3])
_matmul_gathered = _promoting("matmul", lambda x1, x2, /: np.matmul(x1, x2), lambda a: a[:2])


def where(condition, x1, x2, /):
    """Collective: ``x1`` where ``condition`` is true, else ``x2``.  On distributed operands (or
    scalars), broadcast included, each locale computes its part; NumPy array operands of some
    dimensions are gathered with them."""
    arrays = [a for a in (x1, x2) if not _dtypes.is_python_scalar(a)]
    if arrays:
        _dtypes.result_type(*arrays)
    ops = (condition, x1, x2)
    if broadcast_distributed(ops):
        scal = [a[()] if isinstance(a, np.ndarray) else a for a in ops]
        return wrap(np.where(*[dist(a) for a in scal]))
    return _where_gathered(condition, x1, x2)


def matmul(x1, x2, /):
    """Collective: the matrix product.  Distributed (pgas's matmul) for two distributed 1-D or 2-D
    floating-point operands of one data type; other operands are gathered to every locale."""
    if (is_dist(x1) and is_dist(x2) and x1.ndim == x2.ndim == 2 and x1.dtype == x2.dtype
            and x1.dtype.kind in "fc" and x1.shape[1] == x2.shape[0] and min(x1.shape + x2.shape) > 0):
        return wrap(np.matmul(dist(x1), dist(x2)))
    return _matmul_gathered(x1, x2)


def astype(x, dtype, /, *, copy=True, device=None):
    """Collective: ``x`` converted to ``dtype``; a distributed ``x`` is converted where it lies."""
    from . import device as _device
    _device.check(device)
    dtype = np.dtype(dtype)
    if not copy and x.dtype == dtype:
        return x
    if is_dist(x):
        return dist(x).astype(dtype)
    return wrap(np.asarray(x).astype(dtype))


def pad(x, /, pad_width, mode="constant", **kwargs):
    """Collective: ``x`` padded as NumPy's ``pad`` (not in the standard; array-api-extra and xarray
    call it).  Distributed for ``"constant"``, ``"edge"``, ``"wrap"``, ``"reflect"`` and
    ``"symmetric"`` (:mod:`pgas.array.padding`); other modes gather to every locale."""
    if is_dist(x):
        return wrap(np.pad(dist(x), pad_width, mode, **kwargs))
    return wrap(np.pad(np.asarray(x), pad_width, mode, **kwargs))


FUNCTIONS.update({"where": where, "matmul": matmul, "astype": astype, "pad": pad})


def _distributing(name: str, run, ndim_of):
    """The namespace function ``name``: ``run(*args, **kwargs)`` with pgas's distributed functions
    when its array operands are all distributed and the result has at most 4 dimensions
    (``ndim_of(args, kwargs)``), else the gathered version."""
    fallback = FUNCTIONS[name]

    def impl(*args, **kwargs):
        arrays = args[0] if name in ("concat", "stack") else args[:1]
        if (arrays and all(is_dist(a) for a in arrays)
                and 1 <= ndim_of(args, kwargs) <= MAX_NDIM and all(dist(a).size for a in arrays)):
            if name in ("concat", "stack"):
                _dtypes.result_type(*arrays)
            return wrap(run(*args, **kwargs))
        return fallback(*args, **kwargs)
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = (f"Collective: ``{name}`` of the array API standard.  Distributed (pgas's own "
                    f"``np.{name}``, no gathering) for distributed operands; others gather "
                    "(as :mod:`.functions` says).")
    impl.__signature__ = getattr(fallback, "__signature__", None)
    return impl


def _ndim(args, kwargs) -> int:
    return args[0].ndim


def _reshaped(x, /, shape, *, copy=None):
    if copy is False:
        raise ValueError("reshape(copy=False): a distributed reshape always copies")
    return np.reshape(x, shape)


_DISTRIBUTED = {
    "permute_dims": (lambda x, /, axes: np.transpose(x, axes), _ndim),
    "matrix_transpose": (lambda x, /: np.swapaxes(x, -1, -2), _ndim),
    "flip": (lambda x, /, *, axis=None: np.flip(x, axis=axis), _ndim),
    "moveaxis": (lambda x, source, destination, /: np.moveaxis(x, source, destination), _ndim),
    "roll": (lambda x, /, shift, *, axis=None: np.roll(x, shift, axis=axis), _ndim),
    "expand_dims": (lambda x, /, axis=0: np.expand_dims(x, axis), lambda a, k: a[0].ndim + 1),
    "reshape": (_reshaped, lambda a, k: len(a[1] if len(a) > 1 else k["shape"])),
    "concat": (lambda arrays, /, *, axis=0: np.concatenate([dist(a) for a in arrays], axis=axis),
               lambda a, k: 1 if k.get("axis", 0) is None else a[0][0].ndim),
    "stack": (lambda arrays, /, *, axis=0: np.stack([dist(a) for a in arrays], axis=axis),
              lambda a, k: a[0][0].ndim + 1),
}
FUNCTIONS.update({name: _distributing(name, run, nd) for name, (run, nd) in _DISTRIBUTED.items()})


def _composing(name: str, run):
    """The namespace function ``name``: ``run`` (:mod:`.composed`, distributed) where it applies, else
    the gathered version.  ``tensordot`` and ``vecdot`` get the operands' promoted type as ``dtype``."""
    fallback = FUNCTIONS[name]

    def impl(*args, **kwargs):
        extra = {}
        if name in _OPERANDS:
            dtype = _dtypes.result_type(*_OPERANDS[name](args))
            if name in ("tensordot", "vecdot"):
                extra["dtype"] = np.dtype(dtype)
        res = run(*args, **kwargs, **extra)
        return fallback(*args, **kwargs) if res is None else wrap_all(res)
    impl.__name__ = impl.__qualname__ = name
    summary = run.__doc__.split("\n\n")[0].strip()
    impl.__doc__ = (f"Collective: ``{name}`` of the array API standard.  Distributed, no gathering, for "
                    f"distributed operands: {summary}  Others gather (as :mod:`.functions` says).")
    impl.__signature__ = getattr(fallback, "__signature__", None)
    return impl


FUNCTIONS.update({name: _composing(name, run) for name, run in _composed.FUNCTIONS.items()})

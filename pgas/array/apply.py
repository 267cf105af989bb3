"""The local half of ``update``: combining repeated indices, and applying updates to storage.

- :func:`combine`: one value per distinct target of a locale's indices, repeats
  combined with the op in position order (as ``ufunc.at`` applies them);
- :func:`apply`: the (offset, value) records each locale sent, applied to this
  locale's storage in locale order.

Both end in ``target[idx[k]] = target[idx[k]] op vals[k]`` for ``k`` in order
(``ufunc.at``'s semantics).  With numba installed (the ``fast`` extra) that loop
is compiled, one small kernel per op (numba specialises it per dtype; the
machine code is kept on disk beside the generated module, as
:mod:`pgas.exec.fuse` does for statement kernels); else, and for the ops and
dtypes the kernels leave out, NumPy does it (``ufunc.at`` for the repeats, one
fancy-indexed ``ufunc`` call per locale's records, whose offsets are distinct).
Results are bit-identical either way: every step is one integer operation or
one IEEE addition, in the same order.  Compiled: ``add`` on integers and
float32/float64, ``xor``/``or``/``and`` on integers and bool, ``min``/``max``
on integers.  Left to NumPy: float ``min``/``max`` (NaN and signed-zero rules),
complex and float16 data, ``replace`` (one fancy-indexed store already).

``pg.config(fuse=...)`` selects as for statements: ``False`` never compiles,
``True`` always (when numba is there), ``"auto"`` once this process has applied
:data:`pgas.exec.fuse.FUSE_MIN` elements through these paths (a short script
never starts numba; a loop of small updates, RandomAccess's, soon does).

With ``pg.config(threads=N)``, a compiled application of many records into a large
target is split over the locale's threads by target range (:func:`_at`), each element's
updates still in record order.
"""

from __future__ import annotations

import numpy as np

from ..exec import fperr, fuse, fusecode, workers
from . import counting

UFUNCS = {"add": np.add, "multiply": np.multiply, "xor": np.bitwise_xor, "or": np.bitwise_or,
          "and": np.bitwise_and, "min": np.minimum, "max": np.maximum, "replace": None}
#: The dtype kinds each op's kernel takes (others go to NumPy).
COMPILED = {"add": "iuf", "multiply": "iuf", "xor": "iub", "or": "iub", "and": "iub", "min": "iu", "max": "iu"}
_EXPR = {"add": "t[o] + v[k]", "multiply": "t[o] * v[k]", "xor": "t[o] ^ v[k]", "or": "t[o] | v[k]",
         "and": "t[o] & v[k]", "min": "min(t[o], v[k])", "max": "max(t[o], v[k])"}

_SRC = "import numpy as np\nfrom numba import njit\n" + "".join(f'''

@njit(cache=True, nogil=True)
def at_{op}(t, idx, v):
    for k in range(idx.size):
        o = idx[k]
        t[o] = {expr}

@njit(cache=True, nogil=True)
def at_{op}_in(t, idx, v, lo, hi):
    for k in range(idx.size):
        o = idx[k]
        if lo <= o and o < hi:
            t[o] = {expr}
''' for op, expr in _EXPR.items())

_compiled = None


def _kernel(op: str, dtype: np.dtype, n: int):
    """The compiled ``at_<op>`` for ``dtype``, or None (NumPy does it): without numba, with
    ``pg.config(fuse=False)``, for an op/dtype left out, or under ``"auto"`` before
    :func:`pgas.array.counting.hot`."""
    global _compiled
    if (dtype.kind not in COMPILED.get(op, "") or dtype == np.float16 or fperr.numpy_only
            or not counting.hot(n)):     # np.errstate raise: NumPy's ufunc.at reports errors
        return None
    if _compiled is None:
        if fuse.load_numba() is None:
            return None
        _compiled = fusecode.load_module(_SRC, "apply")
    return getattr(_compiled, f"at_{op}")


def at(target: np.ndarray, idx: np.ndarray, vals: np.ndarray, op: str) -> None:
    """``target[idx[k]] = target[idx[k]] op vals[k]`` for every ``k`` in order (``idx`` may
    repeat); ``target``, ``vals`` of one dtype, ``target`` 1-D and writable."""
    kern = _kernel(op, target.dtype, len(idx))
    if kern is not None:
        _at(kern, op, target, np.ascontiguousarray(idx, dtype=np.int64), np.ascontiguousarray(vals, dtype=target.dtype))
    elif len(idx):
        UFUNCS[op].at(target, idx, vals)


def _at(kern, op: str, t, idx, v) -> None:
    """``kern(t, idx, v)``; with the locale's threads (:mod:`pgas.exec.workers`), at least
    :data:`~pgas.exec.workers.SPLIT_MIN` updates into a target as large are split by
    target: each thread reads every record and applies those whose offset falls in its
    range of ``t``, in record order, so every element sees its updates in the same order
    as one thread applies them (the values are the same bit for bit).  The floating-point
    errors met (an overflowing float ``add``) are reported as NumPy's ``ufunc.at`` reports
    them (:func:`pgas.exec.fperr.compiled`: a RuntimeWarning by default)."""
    k = workers.ways(min(len(idx), t.size), t.size)
    if k < 2:
        fperr.compiled(kern, (t, idx, v))
        return
    part = getattr(_compiled, f"at_{op}_in")
    fperr.compiled(workers.run, ([(part, (t, idx, v, a, b)) for a, b in workers.bounds(t.size, k)],))


def combine(pattern, values: np.ndarray, op: str) -> np.ndarray:
    """One value per distinct target of ``pattern`` (an inspected index pattern), in its
    ``offsets`` order: repeats combined with ``op`` in position order."""
    if op == "replace":
        return values[pattern.last]
    out = values[pattern.first]            # a copy (fancy indexing)
    if len(pattern.repeats):
        at(out, pattern.slot[pattern.repeats], values[pattern.repeats], op)
    return out


def apply(flat: np.ndarray, offsets: list[np.ndarray], values: list[np.ndarray], op: str) -> None:
    """Apply each locale's records to ``flat``, in locale order, each locale's in order (offsets
    may repeat within a locale's, except for ``replace``: see :func:`pgas.array.irregular._bucket_1d`).
    Several locales' records (but ``replace``'s, where the last locale's value of an offset
    must win) are applied as one, joined in locale order: the same order, one kernel call."""
    if op != "replace" and len(offsets) > 1:
        some = [k for k in range(len(offsets)) if len(offsets[k])]
        if len(some) > 1:
            offsets = [np.concatenate([offsets[k] for k in some])]
            values = [np.concatenate([values[k] for k in some])]
    for offs, vals in zip(offsets, values):
        if not len(offs):
            continue
        if op == "replace":
            flat[offs] = vals
            continue
        kern = _kernel(op, flat.dtype, len(offs))
        if kern is not None:
            _at(kern, op, flat, offs, vals)
        else:
            UFUNCS[op].at(flat, offs, vals)

"""Index normalisation for scalar and basic-slice access (pure; no MPI)."""

from __future__ import annotations

import numpy as np

#: The element types with a matching MPI datatype (windows, transfers, accumulate and atomics).
SUPPORTED_DTYPES = tuple(np.dtype(t) for t in (bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                               np.uint32, np.uint64, np.float32, np.float64, np.complex64,
                                               np.complex128))


def check_dtype(dtype, what: str = "pgas arrays") -> np.dtype:
    """``dtype`` as a NumPy dtype, if pgas arrays can hold it.

    >>> check_dtype(np.float16)
    Traceback (most recent call last):
    ...
    TypeError: dtype float16 is not supported by pgas arrays: MPI has no float16 datatype (use float32)
    """
    dt = np.dtype(dtype)
    if dt not in SUPPORTED_DTYPES:
        if dt == np.float16:
            raise TypeError(f"dtype float16 is not supported by {what}: MPI has no float16 datatype (use float32)")
        names = ", ".join(str(d) for d in SUPPORTED_DTYPES)
        raise TypeError(f"dtype {dt} is not supported by {what} (supported: {names})")
    return dt


def convert(value, dtype, label, same_kind: bool = False) -> np.ndarray:
    """``value`` as an array of ``dtype`` by NumPy's assignment rule, the one rule of every
    write path: Python values (scalars, lists) are converted exactly as NumPy converts
    them (``2**40`` into int32 raises OverflowError, ``1j`` into float TypeError); NumPy
    arrays and scalars are cast as NumPy's assignment casts them.  With ``same_kind``
    (batch and one-sided writes) a value of another kind (float into int) is a TypeError.

    >>> convert([1, 2], np.int32, "A")
    array([1, 2], dtype=int32)
    """
    dtype = np.dtype(dtype)
    arr = np.asarray(value)
    if same_kind and arr.dtype != dtype and not np.can_cast(arr.dtype, dtype, casting="same_kind"):
        if not (arr.ndim == 0 and np.can_cast(np.min_scalar_type(arr), dtype, "same_kind")):
            raise TypeError(f"{name(label)}: cannot store {arr.dtype} values in a {dtype} array")
    if isinstance(value, np.integer) and dtype.kind in "iu":
        value = int(value)            # NumPy range-checks an integer scalar as it does a Python int
    elif isinstance(value, (np.ndarray, np.generic)):
        return arr.astype(dtype, copy=False)
    try:
        return np.array(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as e:
        shown = repr(value) if arr.size <= 8 else f"values of shape {arr.shape}"
        raise type(e)(f"{name(label)}: cannot store {shown} in a {dtype} array: {e}") from None


def name(label) -> str:
    """How an error names the array: ``label`` itself, or its ``.label`` (computed only
    when an error is raised, so hot paths pass the array)."""
    return label if isinstance(label, str) else label.label


def describe_key(k) -> str:
    """``repr(k)`` for plain index values; only the type name for anything else (the repr of a
    distributed array is collective, and an error may be raised on one locale alone)."""
    plain = (int, float, complex, str, slice, type(None), type(Ellipsis), np.generic, np.ndarray, tuple, list)
    return repr(k) if isinstance(k, plain) else f"a {type(k).__name__}"


def _is_int(k) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def scalar_index(key, shape: tuple[int, ...], label) -> tuple[int, ...] | None:
    """The in-range non-negative index tuple if ``key`` names one element, else None.

    >>> scalar_index((1, -1), (3, 4), "array 'A' of shape (3, 4)")
    (1, 3)
    >>> scalar_index((slice(None), 0), (3, 4), "A") is None
    True
    """
    key = key if isinstance(key, tuple) else (key,)
    if not all(_is_int(k) for k in key):
        return None
    if len(key) != len(shape):
        if len(key) > len(shape):
            raise IndexError(f"too many indices for {name(label)}: {len(key)} given for {len(shape)} dimensions")
        return None
    return tuple(_wrap(int(k), n, d, key, shape, label) for d, (k, n) in enumerate(zip(key, shape)))


def _wrap(k: int, n: int, d: int, key, shape, label) -> int:
    if not -n <= k < n:
        raise IndexError(f"index {key} is out of bounds for {name(label)} (axis {d} has size {n})")
    return k % n


def basic_index(key, shape: tuple[int, ...], label) -> tuple[list[range], tuple[int, ...]]:
    """Per-dimension ranges of global indices selected by a key of ints and slices (and
    Ellipsis), and the shape of the result (integer positions dropped).

    >>> basic_index((slice(1, None, 2), -1), (5, 3), "A")
    ([range(1, 5, 2), range(2, 3)], (2,))
    """
    key = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in key):
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        fill = len(shape) - (len(key) - 1)
        key = key[:i] + (slice(None),) * fill + key[i + 1:]
    if len(key) > len(shape):
        raise IndexError(f"too many indices for {name(label)}: {len(key)} given for {len(shape)} dimensions")
    key = key + (slice(None),) * (len(shape) - len(key))
    sel, out = [], []
    for d, (k, n) in enumerate(zip(key, shape)):
        if _is_int(k):
            g = _wrap(int(k), n, d, key, shape, label)
            sel.append(range(g, g + 1))
        elif isinstance(k, slice):
            r = range(*k.indices(n))
            sel.append(r)
            out.append(len(r))
        else:
            raise IndexError(f"{name(label)}: one-sided get/put take integers and slices, "
                             f"got {describe_key(k)}")
    return sel, tuple(out)

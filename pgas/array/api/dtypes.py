"""Data types of the array API standard and its type promotion.

The standard's promotion is NumPy's within a kind (booleans; integers, signed and unsigned; real and
complex floating point), without value-based casting.  Across kinds (booleans with numbers, integers
with floating point, ``uint64`` with a signed integer) the standard leaves the result to the library:
here it is NumPy's (``int64`` with ``float64`` is ``float64``), as in NumPy, CuPy and Dask, which
libraries such as xarray rely on; ``can_cast`` keeps the standard's within-kind rule.  Python scalars
take the array's type (NumPy's own rule).
"""

from __future__ import annotations

import builtins

import numpy as np

bool = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float32, float64 = np.dtype(np.float32), np.dtype(np.float64)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

#: Every data type by its standard name.
DTYPES = {"bool": bool, "int8": int8, "int16": int16, "int32": int32, "int64": int64, "uint8": uint8,
          "uint16": uint16, "uint32": uint32, "uint64": uint64, "float32": float32, "float64": float64,
          "complex64": complex64, "complex128": complex128}

#: NumPy dtype kinds of each kind name of ``isdtype``.
KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
         "real floating": "f", "complex floating": "c", "numeric": "iufc"}

#: Which kinds promote together (the standard's promotion graph's connected parts).
_FAMILY = {"b": "b", "i": "int", "u": "int", "f": "float", "c": "float"}


def is_python_scalar(x) -> builtins.bool:
    """Whether ``x`` is a Python ``bool``, ``int``, ``float`` or ``complex`` (not a NumPy scalar, which has a dtype)."""
    return isinstance(x, (builtins.bool, int, float, complex)) and not isinstance(x, np.generic)


def _dtype(x) -> np.dtype:
    if hasattr(x, "dtype") and not isinstance(x, (type, np.dtype)):
        return np.dtype(x.dtype)
    if x is None or isinstance(x, (builtins.bool, int, float, complex, str)):
        raise TypeError(f"{x!r} is not a data type of the array API standard")
    dt = np.dtype(x)
    if dt not in DTYPES.values():
        raise TypeError(f"{dt} is not a data type of the array API standard")
    return dt


def isdtype(dtype, kind) -> builtins.bool:
    """Whether ``dtype`` is of ``kind``: a data type, a kind name (``"integral"``, ...) or a tuple of them."""
    dt = _dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dt, k) for k in kind)
    if isinstance(kind, str):
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; kinds are {', '.join(KINDS)}")
        return dt.kind in KINDS[kind]
    return dt == _dtype(kind)


def promote(a, b) -> np.dtype:
    """The promotion of two data types: the standard's within a kind, NumPy's across kinds
    (where the standard has no rule)."""
    try:
        return standard_promote(a, b)
    except TypeError:
        return np.promote_types(a, b)


def standard_promote(a, b) -> np.dtype:
    """The standard's promotion of two data types; TypeError where it has no rule."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    if _FAMILY[a.kind] != _FAMILY[b.kind]:
        raise TypeError(f"the array API standard does not promote {a} with {b} (mixed kinds): "
                        "convert one with astype first")
    res = np.promote_types(a, b)
    if res.kind == "f" and a.kind in "iu":
        raise TypeError(f"the array API standard does not promote {a} with {b} (uint64 with a signed "
                        "integer): convert one with astype first")
    return res


def result_type(*arrays_and_dtypes) -> np.dtype:
    """The data type that operands of these arrays and data types promote to (the standard's rules)."""
    if not arrays_and_dtypes:
        raise ValueError("at least one array or dtype is required")
    scalars = [x for x in arrays_and_dtypes if is_python_scalar(x)]
    dtypes = [_dtype(x) for x in arrays_and_dtypes if not is_python_scalar(x)]
    if not dtypes:
        raise ValueError("at least one array or dtype is required")
    res = dtypes[0]
    for d in dtypes[1:]:
        res = promote(res, d)
    for s in scalars:
        res = np.result_type(res, s)
    return res


def can_cast(from_, to, /) -> builtins.bool:
    """Whether ``from_`` (a data type or an array) casts to ``to`` by the standard's promotion rules."""
    a, b = _dtype(from_), _dtype(to)
    try:
        return standard_promote(a, b) == b
    except TypeError:
        return False


class FInfo:
    """Machine limits of a floating-point data type, as Python floats (the standard's ``finfo`` object)."""

    def __init__(self, dtype: np.dtype) -> None:
        info = np.finfo(dtype)
        self.dtype = np.dtype(info.dtype)
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.smallest_normal = float(info.smallest_normal)

    def __repr__(self) -> str:
        return (f"finfo(dtype={self.dtype}, bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, "
                f"smallest_normal={self.smallest_normal})")


def finfo(type, /) -> FInfo:
    """Machine limits of a floating-point data type (or an array's), as Python floats."""
    return FInfo(_dtype(type))


def iinfo(type, /):
    """Machine limits of an integer data type (or an array's): NumPy's ``iinfo``."""
    return np.iinfo(_dtype(type))

"""The Python array API standard (2023.12) over pgas's distributed arrays: ``pgas.array_api``.

Libraries that dispatch on ``x.__array_namespace__()`` (scikit-learn, SciPy, einops, xarray) reach
this namespace from a DistArray.  Its arrays are DistArrays (1 to 4 dimensions) and, for 0-d results
and more dimensions, NumPy arrays that every locale holds alike (:mod:`.arrays`).  Every function is
collective: call it on every locale in the same order.  Element-wise functions (broadcasting
included), reductions, creation, 2-D floating-point ``matmul`` and the manipulation, searching, set,
sorting and indexing functions (:mod:`.functions`, :mod:`.composed`) run distributed; the rest gather
their operands to every locale, compute with NumPy there and distribute the result (each function's
docstring says which).  Type promotion follows the standard (:mod:`.dtypes`); the device is the locale grid
(:mod:`.device`).  See ``docs/array_api.md``.
"""

from __future__ import annotations

import math as _math

from . import creation as _creation
from . import elementwise as _elementwise
from . import extensions as _extensions
from . import functions as _functions
from . import reductions as _reductions
from .device import LOCALES, Device, to_device
from .dtypes import (DTYPES, bool, can_cast, complex64, complex128, finfo, float32, float64, iinfo,  # noqa: F401
                     int8, int16, int32, int64, isdtype, result_type, uint8, uint16, uint32, uint64)
from .info import __array_namespace_info__

__array_api_version__ = "2023.12"

e, pi, inf, nan = _math.e, _math.pi, _math.inf, _math.nan
newaxis = None

_CREATION = ("arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like", "linspace",
             "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like")
globals().update({n: getattr(_creation, n) for n in _CREATION})
globals().update(_elementwise.FUNCTIONS)
globals().update(_reductions.FUNCTIONS)
globals().update(_functions.FUNCTIONS)
linalg = _extensions.linalg(_functions.FUNCTIONS)
fft = _extensions.fft()
lib = _extensions.lib()
globals().update(_extensions.numpy_names(_functions.FUNCTIONS))    # not the standard's: not in __all__

__all__ = (["__array_api_version__", "__array_namespace_info__", "e", "pi", "inf", "nan", "newaxis", "LOCALES",
            "Device", "to_device", "linalg", "fft", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]
           + list(DTYPES) + list(_CREATION) + list(_elementwise.FUNCTIONS) + list(_reductions.FUNCTIONS)
           + list(_functions.FUNCTIONS))

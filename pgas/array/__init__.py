"""Distributed arrays: storage, constructors, scalar and one-sided access, ufuncs, reductions.

This package is also callable: ``pg.array(x, dtype=None, copy=True, dist=None)`` is
:func:`pgas.array.creation.conversion.array` (NumPy's ``np.array``), while ``pg.array.view`` and the
other submodules stay reachable as attributes.
"""

import sys
import types

from .creation.constructors import arange, empty, eye, from_numpy, full, identity, linspace, ones, zeros
from .core import DistArray
from .reductions.functions import (all, amax, amin, any, argmax, argmin, count_nonzero, cumprod, cumsum, max, mean,
                                   min, prod, std, sum, var)
from .creation.conversion import array, asarray, copyto, redistribute
from .creation.like import empty_like, full_like, ones_like, zeros_like
from .shape import (concatenate, expand_dims, flatten, flip, hstack, moveaxis, ravel, reshape, squeeze, stack,
                    swapaxes, transpose, vstack)

__all__ = ["DistArray", "arange", "empty", "from_numpy", "full", "ones", "zeros", "max", "mean", "min", "prod", "sum",
           "all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumprod", "cumsum", "std", "var",
           "concatenate", "expand_dims", "flatten", "flip", "hstack", "moveaxis", "ravel", "reshape", "squeeze",
           "stack", "swapaxes", "transpose", "vstack", "asarray", "copyto", "empty_like", "eye", "full_like",
           "identity", "linspace", "ones_like", "redistribute", "zeros_like"]


class _CallableModule(types.ModuleType):
    """The ``pgas.array`` module, callable as ``pg.array(x, ...)`` (NumPy's ``np.array``)."""

    def __call__(self, *args, **kwargs):
        return array(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

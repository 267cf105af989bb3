"""Distributed arrays: storage, constructors, scalar and one-sided access, ufuncs, reductions."""

from .construct import arange, empty, from_numpy, full, ones, zeros
from .core import DistArray
from .reduce import (all, amax, amin, any, argmax, argmin, count_nonzero, cumprod, cumsum, max, mean, min, prod,
                     std, sum, var)
from .shape import (concatenate, expand_dims, flatten, flip, hstack, moveaxis, ravel, reshape, squeeze, stack,
                    swapaxes, transpose, vstack)

__all__ = ["DistArray", "arange", "empty", "from_numpy", "full", "ones", "zeros", "max", "mean", "min", "prod", "sum",
           "all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumprod", "cumsum", "std", "var",
           "concatenate", "expand_dims", "flatten", "flip", "hstack", "moveaxis", "ravel", "reshape", "squeeze",
           "stack", "swapaxes", "transpose", "vstack"]

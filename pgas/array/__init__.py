"""Distributed arrays: storage, constructors, scalar and one-sided access, ufuncs, reductions."""

from .construct import arange, empty, from_numpy, full, ones, zeros
from .core import DistArray
from .reduce import max, mean, min, prod, sum

__all__ = ["DistArray", "arange", "empty", "from_numpy", "full", "ones", "zeros", "max", "mean", "min", "prod", "sum"]

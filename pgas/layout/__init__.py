"""Pure index arithmetic of distributions: no MPI here."""

from .dimmap import DimMap
from .distribution import (MAX_NDIM, Block, BlockCyclic, Cyclic, Distribution, DistributionError, Layout,
                           default_grid, grids, square_grid)
from .segments import c_strides, var_segments

__all__ = ["DimMap", "Distribution", "DistributionError", "Layout", "Block", "Cyclic", "BlockCyclic",
           "default_grid", "grids", "square_grid", "MAX_NDIM", "c_strides", "var_segments"]

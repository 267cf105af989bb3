"""pgas: partitioned-global-address-space distributed arrays for Python on MPI.

Write a stencil, a sort or a linear-algebra kernel once in a global view;
run it as one process per locale (``pgas run -n 4 script.py``).  ``pg.here``
and ``pg.num_locales`` are this locale's number and the locale count.
"""

from . import comm
from .array import (
    DistArray,
    arange,
    empty,
    from_numpy,
    full,
    max,
    mean,
    min,
    ones,
    prod,
    sum,
    zeros,
)
from .array import (all, amax, amin, any, argmax, argmin, concatenate, count_nonzero, cumprod, cumsum, expand_dims,
                    flatten, flip, hstack, moveaxis, ravel, reshape, squeeze, stack, std, swapaxes, transpose, var,
                    vstack)
from .array import asarray, copyto, empty_like, eye, full_like, identity, linspace, ones_like, redistribute, zeros_like
from .array.expr import TraceError, where
from .array.engine import PendingExpressionWarning, StaleExpression
from .array import linalg
from .array.linalg import dot, matmul, outer, vdot
from .array.norms import norm
from .array.creation.fromlocal import from_local, fromfunction
from .array.sorting.sort import argsort, sort
from .array.sorting.unique import unique
from .array.sorting.searchsorted import searchsorted
from .comm import CollectiveMismatch, CommDiagnostics, LocaleError, comm_diagnostics
from .comm.check import barrier
from .comm.userwarn import GatherWarning
from .comm.trace import Trace, trace
from .layout import Block, BlockCyclic, Cyclic, Distribution, DistributionError
from .exec import config, explain
from .array.statements import forall
from .array.lock import Lock
from .array.step import compile  # noqa: A004 (pg.compile, as jax.jit: the module's, not the builtin)
from .array.expr import CaptureError
from . import random
from .io import Checkpoint, checkpoint, from_hdf5, from_zarr, load, open_dataarray, restore, save, to_hdf5, to_zarr

__version__ = "0.1.0"

__all__ = [
    "here", "num_locales", "barrier", "Block", "Cyclic", "BlockCyclic", "Distribution", "DistributionError",
    "DistArray", "zeros", "ones", "empty", "full", "arange", "from_numpy", "sum", "prod", "min", "max", "mean",
    "comm_diagnostics", "CommDiagnostics", "trace", "Trace", "LocaleError", "CollectiveMismatch",
    "GatherWarning", "where", "TraceError", "compile", "CaptureError", "StaleExpression", "PendingExpressionWarning", "forall", "explain", "config", "linalg", "matmul", "dot", "vdot", "outer", "norm",
    "all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumprod", "cumsum", "std", "var",
    "concatenate", "expand_dims", "flatten", "flip", "hstack", "moveaxis", "ravel", "reshape", "squeeze", "stack",
    "swapaxes", "transpose", "vstack", "array", "asarray", "copyto", "empty_like", "eye", "full_like", "identity",
    "linspace", "ones_like", "redistribute", "zeros_like",
    "Lock", "from_local", "fromfunction", "random", "sort", "argsort", "unique", "searchsorted", "save", "load",
    "to_zarr", "from_zarr", "open_dataarray", "to_hdf5", "from_hdf5", "checkpoint", "restore", "Checkpoint",
]

from .array.shifts.functions import cshift, eoshift, pshift  # noqa: E402
from .array.shifts.plan import PShiftPlan, pshift_setup  # noqa: E402
__all__ += ["cshift", "eoshift", "pshift", "pshift_setup", "PShiftPlan"]


def __getattr__(name: str):
    """``pg.here`` and ``pg.num_locales`` are read from the runtime on each access."""
    if name == "here":
        return comm.here()
    if name == "num_locales":
        return comm.num_locales()
    if name == "array_api":                  # the array API standard's namespace, imported on first use
        from .array import api
        return api
    raise AttributeError(f"module 'pgas' has no attribute {name!r}")

from .exec.ghosts import StaleGhosts  # noqa: E402
__all__ += ["StaleGhosts"]

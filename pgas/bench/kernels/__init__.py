"""The paper's Figure 11 kernels written with pgas statements, each with a serial
NumPy reference.

A kernel is a :class:`Kernel`: ``setup(n, dist)`` makes its distributed state
(a dict of DistArrays), ``step(state, t)`` runs one time step of statements,
``reference(n, steps)`` computes the same with NumPy and ``result(state)``
names the arrays to compare.  ``paper`` is the input size of Figure 11,
``tiny`` a size for tests and ``bench`` the size ``pgas bench stmt`` uses by
default: the paper's, except mvt at 1000 (at 4000 its baseline would send
about 4.8e7 one-element messages per step).

>>> sorted(KERNELS)
['fdtd-2d', 'folding', 'jacobi1D', 'jacobi2D', 'mvt', 'pascal', 'stencil9']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import linear, stencils


@dataclass(frozen=True)
class Kernel:
    """One benchmark kernel; see the module docstring."""

    name: str
    setup: Callable
    step: Callable
    reference: Callable
    result: tuple[str, ...]
    paper: int
    tiny: int
    description: str
    bench: int = 0

    @property
    def bench_size(self) -> int:
        return self.bench or self.paper


KERNELS: dict[str, Kernel] = {k.name: k for k in [
    Kernel("jacobi1D", stencils.jacobi1d_setup, stencils.jacobi1d_step, stencils.jacobi1d_ref, ("A",),
           10000, 37, "1-D Jacobi stencil"),
    Kernel("jacobi2D", stencils.jacobi2d_setup, stencils.jacobi2d_step, stencils.jacobi2d_ref, ("A",),
           400, 13, "2-D Jacobi stencil (5 points)"),
    Kernel("stencil9", stencils.stencil9_setup, stencils.stencil9_step, stencils.stencil9_ref, ("A",),
           400, 13, "9-point stencil"),
    Kernel("fdtd-2d", stencils.fdtd_setup, stencils.fdtd_step, stencils.fdtd_ref, ("ex", "ey", "hz"),
           1000, 11, "2-D finite-difference time domain"),
    Kernel("mvt", linear.mvt_setup, linear.mvt_step, linear.mvt_ref, ("x1", "x2"),
           4000, 9, "matrix-vector product and transpose", bench=1000),
    Kernel("folding", linear.folding_setup, linear.folding_step, linear.folding_ref, ("A",),
           50400, 96, "strided sum of consecutive elements"),
    Kernel("pascal", linear.pascal_setup, linear.pascal_step, linear.pascal_ref, ("A", "B"),
           100000, 41, "rows of Pascal's triangle"),
]}

__all__ = ["Kernel", "KERNELS"]

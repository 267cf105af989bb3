"""The paper's Figure 11 kernels written with pgas statements, each with a serial
NumPy reference.

A kernel is a :class:`Kernel`: ``setup(n, dist)`` makes its distributed state
(a dict of DistArrays), ``step(state, t)`` runs one time step of statements,
``reference(n, steps)`` computes the same with NumPy and ``result(state)``
names the arrays to compare.  ``paper`` is the input size of Figure 11,
``tiny`` a size for tests and ``bench`` the size ``pgas bench stmt`` uses by
default: the paper's, except where the baseline (one message per remote
element) would send millions of messages per step: mvt at 1000 (at 4000
about 4.8e7), 2mm, trmm and syrk at 64, covariance, correlation and cholesky
at 128, fdtd-apml at 32 (``pgas bench stmt --size 0.25`` on 4 locales: about
1.3e6 baseline messages per step for covariance at 128).  ``chunk`` is Figure 11's last
column, the paper's maximum elements per follower-iterator chunk (Cyclic, and
Block-Cyclic where the paper ran it); ``kind`` is ``"iterative"`` (a time step
that advances the state) or ``"restart"`` (each step redoes the whole kernel
from its input, as a factorisation must).  ``setup`` takes any size ``n``
(every extent of the kernel) and any :class:`~pgas.Distribution`.

>>> sorted(KERNELS)  # doctest: +NORMALIZE_WHITESPACE
['2mm', 'cholesky', 'correlation', 'covariance', 'fdtd-2d', 'fdtd-apml', 'folding', 'fw', 'jacobi1D',
 'jacobi2D', 'lu', 'mvt', 'pascal', 'stencil9', 'syrk', 'trmm']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import apml, linear, stencils
from . import polybench as pb


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
    chunk: tuple[int, ...] = ()
    kind: str = "iterative"

    @property
    def bench_size(self) -> int:
        return self.bench or self.paper


KERNELS: dict[str, Kernel] = {k.name: k for k in [
    Kernel("2mm", pb.mm2_setup, pb.mm2_step, pb.mm2_ref, ("D",), 128, 7, "2 matrix multiplications", bench=64,
           chunk=(4,)),
    Kernel("fw", pb.fw_setup, pb.fw_step, pb.fw_ref, ("path",), 64, 9, "Floyd-Warshall shortest paths",
           chunk=(2,)),
    Kernel("trmm", pb.trmm_setup, pb.trmm_step, pb.trmm_ref, ("B",), 128, 9, "triangular matrix multiply",
           bench=64, chunk=(8,)),
    Kernel("correlation", pb.corr_setup, pb.corr_step, pb.corr_ref, ("corr", "data"), 512, 8,
           "correlation matrix", bench=128, chunk=(16,), kind="restart"),
    Kernel("covariance", pb.cov_setup, pb.cov_step, pb.cov_ref, ("cov", "data"), 512, 8, "covariance matrix",
           bench=128, chunk=(16,), kind="restart"),
    Kernel("cholesky", pb.chol_setup, pb.chol_step, pb.chol_ref, ("A",), 256, 8, "Cholesky decomposition",
           bench=128, chunk=(16,), kind="restart"),
    Kernel("lu", pb.lu_setup, pb.lu_step, pb.lu_ref, ("A",), 128, 8, "LU decomposition", chunk=(8,),
           kind="restart"),
    Kernel("mvt", linear.mvt_setup, linear.mvt_step, linear.mvt_ref, ("x1", "x2"),
           4000, 9, "matrix-vector product and transpose", bench=1000, chunk=(250,)),
    Kernel("syrk", pb.syrk_setup, pb.syrk_step, pb.syrk_ref, ("C",), 128, 8, "symmetric rank-k update",
           bench=64, chunk=(8,)),
    Kernel("fdtd-2d", stencils.fdtd_setup, stencils.fdtd_step, stencils.fdtd_ref, ("ex", "ey", "hz"),
           1000, 11, "2-D finite-difference time domain", chunk=(16000,)),
    Kernel("fdtd-apml", apml.setup, apml.step, apml.reference, ("Hz", "Bza"), 64, 5,
           "FDTD with an anisotropic perfectly matched layer", bench=32, chunk=(4,)),
    Kernel("jacobi1D", stencils.jacobi1d_setup, stencils.jacobi1d_step, stencils.jacobi1d_ref, ("A",),
           10000, 37, "1-D Jacobi stencil", chunk=(124, 249)),
    Kernel("jacobi2D", stencils.jacobi2d_setup, stencils.jacobi2d_step, stencils.jacobi2d_ref, ("A",),
           400, 13, "2-D Jacobi stencil (5 points)", chunk=(2600,)),
    Kernel("stencil9", stencils.stencil9_setup, stencils.stencil9_step, stencils.stencil9_ref, ("A",),
           400, 13, "9-point stencil", chunk=(2613,)),
    Kernel("pascal", linear.pascal_setup, linear.pascal_step, linear.pascal_ref, ("A", "B"),
           100000, 41, "rows of Pascal's triangle", chunk=(1563, 781)),
    Kernel("folding", linear.folding_setup, linear.folding_step, linear.folding_ref, ("A",),
           50400, 96, "strided sum of consecutive elements", chunk=(394,)),
]}

#: The kernels ``pgas bench stmt`` ran before all sixteen existed (its default set).
ORIGINAL = ("jacobi1D", "jacobi2D", "stencil9", "fdtd-2d", "mvt", "folding", "pascal")

__all__ = ["Kernel", "KERNELS", "ORIGINAL"]

"""Collective MPI-IO of block-cyclic distributed data (the only I/O layer that touches MPI).

The file holds a dense global array (C order unless ``fortran`` is set)
starting at byte ``offset``.  Each locale's part is described to MPI by a
*darray* file view (``MPI_Type_create_darray`` with ``DISTRIBUTE_CYCLIC`` and
block ``b`` per dimension, row-major process grid): exactly pgas's
block-cyclic layout, whose local storage (blocks concatenated in increasing
order per dimension, C order) is the darray's local array.  The reads and
writes are collective (``MPI_File_read_all`` / ``write_all``): the MPI
library's two-phase I/O moves the data through fixed-size collective buffers,
so no locale holds more than its block plus those buffers.
"""

from __future__ import annotations

import numpy as np

from .process import here, mpi, num_locales
from .runtime import comm


def _filetype(MPI, etype, shape, grid, blocks, fortran: bool):
    order = MPI.ORDER_FORTRAN if fortran else MPI.ORDER_C
    ft = etype.Create_darray(num_locales(), here(), list(shape), [MPI.DISTRIBUTE_CYCLIC] * len(shape),
                             list(blocks), list(grid), order)
    return ft.Commit()


def _transfer(path: str, write: bool, offset: int, shape, grid, blocks, local: np.ndarray,
              fortran: bool = False) -> None:
    MPI = mpi()
    buf = local.reshape(-1, order="A").view(np.uint8) if local.size else np.zeros(0, np.uint8)
    etype = MPI.BYTE.Create_contiguous(local.dtype.itemsize).Commit()
    ftype = _filetype(MPI, etype, shape, grid, blocks, fortran)
    amode = MPI.MODE_WRONLY if write else MPI.MODE_RDONLY
    fh = MPI.File.Open(comm(), path, amode)
    try:
        fh.Set_view(offset, etype, ftype, "native")
        spec = [buf, local.size, etype]
        if write:
            fh.Write_all(spec)
        else:
            fh.Read_all(spec)
    finally:
        fh.Close()
        ftype.Free()
        etype.Free()


def write_darray(path: str, offset: int, shape, grid, blocks, local: np.ndarray) -> None:
    """Collective: write each locale's ``local`` (its C-order block-cyclic storage of the
    global ``shape`` over ``grid`` with ``blocks``) into the existing file ``path`` at
    byte ``offset`` onward.  Errors are raised as ``mpi4py.MPI.Exception``."""
    _transfer(path, True, offset, shape, grid, blocks, np.ascontiguousarray(local))


def read_darray(path: str, offset: int, shape, grid, blocks, out: np.ndarray, fortran: bool = False) -> None:
    """Collective: fill each locale's ``out`` (contiguous; Fortran-ordered if ``fortran``,
    for a file stored in Fortran order) from ``path`` at byte ``offset`` onward."""
    if not (out.flags.f_contiguous if fortran else out.flags.c_contiguous):
        raise ValueError("read_darray needs a contiguous output buffer")
    _transfer(path, False, offset, shape, grid, blocks, out, fortran)

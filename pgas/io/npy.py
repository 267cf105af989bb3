"""Parallel ``.npy`` files: :func:`save` and :func:`load` with no full copy anywhere.

Locale 0 writes (or reads) the header with plain Python; the data moves by
collective MPI-IO (:mod:`pgas.comm.io`), each locale writing or reading only
its own blocks through a block-cyclic file view.  The file is byte-identical
to ``np.save`` of the global array, so ``np.load`` reads it, and any ``.npy``
file of a supported dtype (written by NumPy, or by pgas at any locale count)
loads into any distribution.
"""

from __future__ import annotations

import io
import os

import numpy as np

from .. import comm
from ..array.creation.constructors import empty
from ..array.creation.layouts import new_layout as _layout
from ..array.core import DistArray
from ..array.index import check_dtype
from ..comm.io import read_darray, write_darray
from ..layout import Block, Distribution
from .blocks import big_blocks


def _header(shape, dtype) -> bytes:
    """The ``.npy`` header ``np.save`` writes for a C-ordered array of ``shape`` and ``dtype``."""
    d = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": tuple(shape)}
    buf = io.BytesIO()
    write = getattr(np.lib.format, "_write_array_header", None)
    if write is not None:
        write(buf, d, None)               # NumPy's own choice of format version, as np.save
    else:                                 # pragma: no cover - NumPy without the private helper
        try:
            np.lib.format.write_array_header_1_0(buf, d)
        except ValueError:
            buf = io.BytesIO()
            np.lib.format.write_array_header_2_0(buf, d)
    return buf.getvalue()


def _path(path) -> str:
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    return path


def save(path, A: DistArray) -> None:
    """Collective: write ``A`` to the ``.npy`` file ``path``, as ``np.save(path, A.to_numpy())``.

    Parameters
    ----------
    path : str or os.PathLike
        The same on every locale, on a file system every locale sees.  Unlike
        ``np.save`` no ``.npy`` suffix is added.
    A : DistArray
        Any supported dtype and distribution.

    Notes
    -----
    Locale 0 writes the header; every locale then writes its own blocks in one
    collective ``MPI_File_write_all``.  Extra memory per locale: the MPI
    library's collective buffers only (no copy of ``A.local``).  Where ``A``'s
    blocks are tiny (Cyclic, small BlockCyclic blocks) MPI-IO would list every
    element of such a file view in its own memory (a whole file's worth for a
    Cyclic array, measured), so ``A`` goes out in strips of rows instead: each
    strip is copied to a Block array of about :data:`STRIP_BYTES` per locale
    (one statement) and written, a contiguous range of the file.
    """
    if not isinstance(A, DistArray):
        raise TypeError(f"pg.save takes a DistArray, got {type(A).__name__} (use np.save for NumPy arrays)")
    path = _path(path)
    header = _header(A.shape, A.dtype)
    err = None
    if comm.here() == 0:
        try:
            with open(path, "wb") as f:
                f.write(header)
                if A.size:
                    f.truncate(len(header) + A.size * A.dtype.itemsize)
        except OSError as e:
            err = e
    comm.agree(err)
    if A.size and big_blocks(A.layout, A.shape):
        _collective(write_darray, path, len(header), A.layout, A.local)
    elif A.size:
        strips = {}                       # one Block array per strip length (at most two)
        for start, stop in _strips(A.shape, A.dtype.itemsize):
            if stop - start not in strips:
                strips[stop - start] = empty((stop - start,) + A.shape[1:], A.dtype, Block())
            strip = strips[stop - start]
            strip[...] = A[start:stop]
            _collective(write_darray, path, len(header) + start * _row_bytes(A.shape, A.dtype.itemsize),
                        strip.layout, strip.local)


#: Per-locale bytes of one strip when tiny blocks go through Block strips.
STRIP_BYTES = 1 << 20


def _row_bytes(shape, itemsize: int) -> int:
    return int(np.prod(shape[1:], dtype=np.int64)) * itemsize


def _strips(shape, itemsize: int):
    """``(start, stop)`` row ranges of about :data:`STRIP_BYTES` per locale (at least a row)."""
    rows = max(1, comm.num_locales() * STRIP_BYTES // max(1, _row_bytes(shape, itemsize)))
    return [(r, min(r + rows, shape[0])) for r in range(0, shape[0], rows)]


def _collective(fn, path, offset, layout, buf, **kw) -> None:
    err = None
    try:
        fn(path, offset, layout.shape, layout.grid, layout.blocks, buf, **kw)
    except Exception as e:                # noqa: BLE001 - MPI errors, raised on every locale below
        err = OSError(f"{path}: {e}")
    comm.agree(err)



def _read_header(path: str):
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"{path}: .npy format version {version} is not supported (1.0 and 2.0 are)")
        offset = f.tell()
        size = os.fstat(f.fileno()).st_size
    if dtype.hasobject or dtype.fields is not None:
        raise TypeError(f"{path}: dtype {dtype} cannot be loaded into a pgas array")
    check_dtype(dtype.newbyteorder("=") if dtype.byteorder != "|" else dtype)
    need = offset + int(np.prod(shape)) * dtype.itemsize
    if size < need:
        raise ValueError(f"{path}: file has {size} bytes, but its header describes {need}")
    return tuple(shape), bool(fortran), dtype.str, offset


def load(path, dist: Distribution | None = None, name: str | None = None) -> DistArray:
    """Collective: read the ``.npy`` file ``path`` into a DistArray with distribution ``dist``.

    Parameters
    ----------
    path : str or os.PathLike
        The same on every locale.
    dist : Distribution, optional
        Block (the default), Cyclic or BlockCyclic; any of them reads any file.
    name : str, optional
        How errors name the array.

    Returns
    -------
    DistArray

    Notes
    -----
    Locale 0 reads the header and shares it; every locale reads its own blocks
    in one collective ``MPI_File_read_all`` straight into its storage.  Files in
    Fortran order take one extra local-block buffer; distributions with tiny
    blocks read in strips of rows, each into a Block array of about
    :data:`STRIP_BYTES` per locale, then copied into place (see :func:`save`);
    big-endian files are
    byte-swapped in place.  Errors (missing file, bad header, unsupported dtype,
    truncated data) are raised on every locale alike.
    """
    path = _path(path)
    info = None
    if comm.here() == 0:
        try:
            info = _read_header(path)
        except Exception as e:            # noqa: BLE001 - shared below, raised on every locale
            info = e
    info = comm.bcast(info if not isinstance(info, Exception) else (type(info).__name__, str(info)), 0)
    if len(info) == 2:
        kind, text = info
        raise {"FileNotFoundError": FileNotFoundError, "TypeError": TypeError}.get(kind, ValueError)(text)
    shape, fortran, dstr, offset = info
    if not shape:
        raise ValueError(f"{path}: holds a 0-d array; pgas arrays have at least one dimension")
    file_dtype = np.dtype(dstr)
    native = file_dtype.newbyteorder("=") if file_dtype.byteorder != "|" else file_dtype
    A = DistArray._create(_layout(shape, dist), native, name)
    if A.size and not big_blocks(A.layout, shape) and not fortran:
        strips = {}
        for start, stop in _strips(shape, native.itemsize):
            if stop - start not in strips:
                strips[stop - start] = DistArray._create(_layout((stop - start,) + shape[1:], Block()), native, name)
            strip = strips[stop - start]
            _collective(read_darray, path, offset + start * _row_bytes(shape, native.itemsize), strip.layout,
                        strip.local)
            if not file_dtype.isnative:
                strip.local.byteswap(inplace=True)
            comm.barrier([strip._win])
            A[start:stop] = strip
        return A
    if A.size:
        buf = np.empty(A.local.shape, native, order="F") if fortran else A.local
        _collective(read_darray, path, offset, A.layout, buf, fortran=fortran)
        if fortran:
            A.local[...] = buf
        if not file_dtype.isnative:
            A.local.byteswap(inplace=True)
    comm.barrier([A._win])
    return A

"""zarr v3 stores: :func:`to_zarr` and :func:`from_zarr`, each chunk moved by the locale
that owns it (needs the optional ``zarr>=3``: ``pip install pgas[io]``).

Chunks and blocks: pgas's BlockCyclic blocks (Block is one block per locale)
become the zarr chunks, so every chunk has one owner, which encodes and writes
it; no two locales ever touch one chunk.  Where the distribution's blocks are
too small to be useful chunks (Cyclic, small BlockCyclic blocks: under
:data:`MIN_CHUNK` elements), or the caller asks for chunks that do not fit
inside the blocks, the array is first copied (one pgas statement, one extra
local block per locale) to ``BlockCyclic(chunks)``, whose blocks are the chunks.
Reading does the same in reverse: each locale reads whole chunks into a
chunk-aligned layout, copied to the requested distribution if it differs.

Locale 0 writes the array metadata; the store must be one every locale sees
(a path on a shared file system, or an object-store URL).
"""

from __future__ import annotations

import os

import numpy as np

from .. import comm
from ..array.creation.constructors import empty
from ..array.core import DistArray
from ..array.index import check_dtype
from ..layout import Distribution
from .blocks import MIN_CHUNK, _boxes, _chunked, aligned, direct_layout  # noqa: F401 - MIN_CHUNK documented here


def _zarr():
    try:
        import zarr
    except ImportError:
        raise ImportError("pg.to_zarr / pg.from_zarr need zarr >= 3: pip install 'pgas[io]' (or pip install zarr)") from None
    if int(zarr.__version__.split(".")[0]) < 3:
        raise ImportError(f"pg.to_zarr / pg.from_zarr need zarr >= 3, found {zarr.__version__}: pip install -U zarr")
    return zarr


def _store(store):
    return os.fspath(store) if isinstance(store, os.PathLike) else store


def to_zarr(A: DistArray, store, chunks=None, overwrite: bool = True, **kwargs) -> None:
    """Collective: write ``A`` as a zarr v3 array at ``store``, each chunk by its owner.

    Parameters
    ----------
    A : DistArray
    store : str, os.PathLike or zarr StoreLike
        Seen by every locale alike (a shared path or URL).
    chunks : tuple of int, optional
        Chunk shape; by default ``A``'s blocks (see the module notes).
    overwrite : bool, optional
        Replace an existing array (default True).
    **kwargs
        Passed to ``zarr.create_array`` (``compressors=``, ``attributes=`` ...).

    Notes
    -----
    Chunks that fit inside ``A``'s blocks (each block size a multiple of the
    chunk size) are written straight from ``A.local``; otherwise ``A`` is copied
    to ``BlockCyclic(chunks)`` first (one statement).
    """
    if not isinstance(A, DistArray):
        raise TypeError(f"pg.to_zarr takes a DistArray, got {type(A).__name__}")
    zarr = _zarr()
    store = _store(store)
    chunks = _chunked(A.layout, A.shape) if chunks is None else tuple(int(c) for c in np.atleast_1d(chunks))
    if len(chunks) != A.ndim or any(c < 1 for c in chunks):
        raise ValueError(f"to_zarr: chunks {chunks} must be {A.ndim} positive sizes for {A.label}")
    src = aligned(A, chunks)
    err = None
    if comm.here() == 0:
        try:
            zarr.create_array(store, shape=A.shape, chunks=chunks, dtype=A.dtype, fill_value=0,
                              overwrite=overwrite, **kwargs)
        except Exception as e:            # noqa: BLE001 - raised on every locale below
            err = e
    comm.agree(err)
    err = None
    try:
        z = zarr.open_array(store, mode="r+")
        if src.size:
            for glob, loc in _boxes(src.layout, comm.here()):
                z[glob] = src.local[loc]
    except Exception as e:                # noqa: BLE001
        err = e
    comm.agree(err)


def from_zarr(store, dist: Distribution | None = None, name: str | None = None) -> DistArray:
    """Collective: read the zarr array at ``store`` into a DistArray with distribution ``dist``.

    Parameters
    ----------
    store : str, os.PathLike or zarr StoreLike
        Seen by every locale alike.
    dist : Distribution, optional
        Block by default.
    name : str, optional

    Returns
    -------
    DistArray

    Notes
    -----
    If ``dist``'s blocks hold at least :data:`MIN_CHUNK` elements each locale
    reads its own blocks; otherwise each reads whole chunks into
    ``BlockCyclic(chunks)`` and one statement copies that to ``dist``.
    """
    zarr = _zarr()
    store = _store(store)
    err, z = None, None
    try:
        z = zarr.open_array(store, mode="r")
        check_dtype(z.dtype)
        if z.ndim == 0:
            raise ValueError(f"{store}: holds a 0-d array; pgas arrays have at least one dimension")
    except Exception as e:                # noqa: BLE001
        err = e
    comm.agree(err)
    layout, direct = direct_layout(z.shape, dist, z.chunks)
    tmp = DistArray._create(layout, z.dtype, name)
    err = None
    try:
        if tmp.size:
            for glob, loc in _boxes(tmp.layout, comm.here()):
                tmp.local[loc] = z[glob]
    except Exception as e:                # noqa: BLE001
        err = e
    comm.agree(err)
    comm.barrier([tmp._win])
    if direct:
        return tmp
    out = empty(z.shape, z.dtype, dist, name)
    out[...] = tmp
    return out

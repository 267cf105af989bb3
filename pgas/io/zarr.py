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

import itertools
import json
import os

import numpy as np

from .. import comm
from ..array.creation.constructors import empty
from ..array.collective import checked
from ..array.core import DistArray
from ..array.index import check_dtype
from ..layout import Distribution
from .atomic import agree_synced, fsync_path, fsync_tree, replace, target
from .blocks import (  # noqa: F401 - MIN_CHUNK documented here
    CRC_ATTR,
    MIN_CHUNK,
    _boxes,
    _chunked,
    aligned,
    block_sums,
    check_block_sums,
    direct_layout,
)


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
        Or an ``xarray.DataArray`` whose data is a DistArray: written as a zarr group that
        ``xarray.open_zarr`` reads, with its coordinates (:mod:`pgas.io.labelled`;
        ``chunks`` only).
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

    A store that is a directory path is written as a new directory beside it,
    whose files every locale fsyncs; only once every locale has succeeded does it
    replace the old store (:mod:`pgas.io.atomic`), so a write that fails leaves
    the previous store whole and raises the same error on every locale.  Other
    stores (URLs, store objects) and ``overwrite=False`` onto an existing path
    are written in place.  The CRC-32 of each locale's blocks is kept in the
    attribute ``pgas_crc32`` and checked by :func:`from_zarr`.
    """
    if type(A).__name__ == "DataArray" and type(A).__module__.startswith("xarray"):
        from .labelled import to_zarr as dataarray_to_zarr
        return dataarray_to_zarr(A, store, chunks)
    checked("pg.to_zarr({0})", A, args=(str(store),))
    if not isinstance(A, DistArray):
        raise TypeError(f"pg.to_zarr takes a DistArray, got {type(A).__name__}")
    zarr = _zarr()
    store = _store(store)
    chunks = _chunked(A.layout, A.shape) if chunks is None else tuple(int(c) for c in np.atleast_1d(chunks))
    if len(chunks) != A.ndim or any(c < 1 for c in chunks):
        raise ValueError(f"to_zarr: chunks {chunks} must be {A.ndim} positive sizes for {A.label}")
    src = aligned(A, chunks)
    attributes = dict(kwargs.pop("attributes", None) or {})
    attributes[CRC_ATTR] = json.dumps(block_sums(src))

    def write(path, fsync: bool) -> None:
        """Collective: the array at ``path``; with ``fsync``, each locale's chunk files and
        locale 0's metadata fsynced and every locale's success agreed."""
        err = None
        if comm.here() == 0:
            try:
                zarr.create_array(path, shape=A.shape, chunks=chunks, dtype=A.dtype, fill_value=0,
                                  overwrite=overwrite, attributes=attributes, **kwargs)
            except Exception as e:            # noqa: BLE001 - raised on every locale below
                err = e
        comm.agree(err)
        err = None
        try:
            z = zarr.open_array(path, mode="r+")
            if src.size:
                for glob, loc in _boxes(src.layout, comm.here()):
                    z[glob] = src.local[loc]
        except Exception as e:                # noqa: BLE001
            err = e
        if fsync:
            agree_synced(path, err, lambda: _fsync_written(z, path, src))
        else:
            comm.agree(err)

    if _local(store) and (not os.path.lexists(store) or (overwrite and os.path.isdir(target(store)))):
        replace(store, lambda tmp: write(tmp, True))
    else:                                     # a URL or store object, or a path zarr may refuse: in place
        write(store, False)


def _local(store) -> bool:
    """Whether ``store`` names a directory of the local (or shared) file system."""
    return isinstance(store, str) and "://" not in store


def _fsync_written(z, path: str, src: DistArray) -> None:
    """fsync the chunk files this locale wrote into the store directory ``path`` (and, on
    locale 0, the array metadata)."""
    if comm.here() == 0:                      # zarr.json (v3), .zarray and .zattrs (v2)
        for entry in os.scandir(path):
            if entry.is_file():
                fsync_path(entry.path)
    if not src.size:
        return
    encoding = getattr(z.metadata, "chunk_key_encoding", None)
    if encoding is None:                      # a zarr v2 array: every file of the store
        fsync_tree(path)
        return
    grid = z.shards or z.chunks
    encode = encoding.encode_chunk_key
    for glob, _ in _boxes(src.layout, comm.here()):
        ranges = [range(s.start // c, -(-s.stop // c)) for s, c in zip(glob, grid)]
        for coords in itertools.product(*ranges):
            f = os.path.join(path, *encode(coords).split("/"))
            if os.path.exists(f):             # chunks equal to the fill value are not written
                fsync_path(f)


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

    The checksums :func:`to_zarr` left (attribute ``pgas_crc32``) are checked:
    each locale sums the blocks it read if they are the writer's, or else reads
    back the blocks of some writing locales; a mismatch is raised as ValueError
    on every locale, naming the writing locales whose blocks differ.
    """
    checked("pg.from_zarr(...)", args=(str(store), repr(dist), name))
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
    check_block_sums(str(store), z.attrs.get(CRC_ATTR), tmp, lambda glob: z[glob])
    comm.barrier([tmp.store.window])
    if direct:
        return tmp
    out = empty(z.shape, z.dtype, dist, name)
    out[...] = tmp
    return out

"""HDF5 via h5py: :func:`to_hdf5` and :func:`from_hdf5`, each block moved by its owner.

With a parallel (MPI-enabled) h5py build every locale opens the file together
(``driver="mpio"``) and writes or reads its own blocks as hyperslabs at once.  The
h5py wheels on PyPI are serial builds; a cluster user gets a parallel one with::

    HDF5_MPI=ON HDF5_DIR=/path/to/parallel-hdf5 CC=mpicc pip install --no-binary=h5py h5py

(``h5py.get_config().mpi`` must then be True).  With a serial h5py these
writing raises ``ImportError`` saying so, unless called with ``serial=True``:
then the locales take turns (locale 0 first, each opening the file after the
one before it has closed it), which moves the same blocks with the same bounded
memory but one locale at a time: correct, and slow at many locales.  Reading
works with either build (read-only opens coexist).

The dataset is contiguous unless ``chunks=`` is given; each locale writes its
blocks as hyperslabs, and blocks too small to be worth a hyperslab go through
one copy to ``BlockCyclic(chunks)`` first, as for zarr (:mod:`pgas.io.blocks`).
No locale ever holds more than its own blocks (plus that copy).
"""

from __future__ import annotations

import json
import os

import numpy as np

from .. import comm
from ..array.creation.constructors import empty
from ..array.creation.layouts import new_layout as _layout
from ..array.collective import checked
from ..array.core import DistArray
from ..array.index import check_dtype
from ..layout import Block
from .atomic import agree_synced, fsync_path, replace, target
from .blocks import (
    CRC_ATTR,
    _boxes,
    _chunked,
    aligned,
    block_sums,
    check_block_sums,
    direct_layout,
)

_HOW = ("HDF5_MPI=ON HDF5_DIR=/path/to/parallel-hdf5 CC=mpicc pip install --no-binary=h5py h5py "
        "(h5py.get_config().mpi must be True); or pass serial=True (the locales take turns: slow at "
        "many locales), or use pg.save / pg.load (.npy) or pg.to_zarr")
_TURN = 21          # notice tag: "your turn" in serial mode


def _h5py(serial: bool):
    """h5py, and whether it is a parallel build; ImportError when it cannot serve."""
    try:
        import h5py
    except ImportError:
        raise ImportError(f"pgas HDF5 I/O needs h5py (pip install 'pgas[io]'; for a parallel build: {_HOW})") from None
    parallel = bool(h5py.get_config().mpi)
    if not parallel and not serial:
        raise ImportError(f"pgas HDF5 I/O needs a parallel h5py; the installed h5py {h5py.__version__} "
                          f"is a serial build: {_HOW}")
    return h5py, parallel


def _each_in_turn(fn) -> None:
    """Collective: call ``fn()`` on locale 0, then 1, ...: each waits for the one before
    it (one notice), so only one locale has the file open at a time.  The notice says
    whether a locale before failed; if so the rest skip their turns, and every locale
    raises that first error alike."""
    me, p = comm.here(), comm.num_locales()
    err, failed = None, 0
    if me > 0:
        reqs, buf = comm.expect_values([me - 1], _TURN, 1)
        comm.wait(reqs)
        failed = int(buf[0, 0])
    if not failed:
        try:
            fn()
        except Exception as e:            # noqa: BLE001 - raised on every locale below
            err, failed = e, 1
    if me < p - 1:
        comm.wait(comm.notify_values([me + 1], _TURN, np.array([failed])))
    comm.agree(err)


def _open(h5py, parallel: bool, path, mode: str):
    if parallel:
        from ..comm import runtime
        return h5py.File(path, mode, driver="mpio", comm=runtime.comm())
    return h5py.File(path, mode)


def to_hdf5(A: DistArray, path, dataset: str = "data", *, chunks=None, serial: bool = False) -> None:
    """Collective: write ``A`` as dataset ``dataset`` of the HDF5 file ``path``, each block by
    its owner.

    Parameters
    ----------
    A : DistArray
    path : str or os.PathLike
        Seen by every locale alike (a shared file system).  Created if absent; an
        existing dataset of that name is replaced, other datasets are kept (copied
        into the new file, which then replaces the old one whole: see the Notes).
    dataset : str, optional
        The dataset's name (default ``"data"``; may contain ``/`` groups).
    chunks : tuple of int, optional
        HDF5 chunk shape.  By default the dataset is contiguous (no chunk cache, and
        parallel writers never share a chunk), and each locale writes its blocks as
        hyperslabs; blocks too small for that (see :mod:`pgas.io.blocks`) are first
        copied to ``BlockCyclic(Block's blocks)``.
    serial : bool, optional
        Allow a serial h5py: the locales write one after another (see the module notes).

    Raises
    ------
    ImportError
        h5py is missing, or is a serial build and ``serial`` is False.

    Notes
    -----
    The new file is written under a temporary name beside ``path`` (holding a copy
    of the other objects of ``path``, if it exists), fsynced by every locale and
    renamed onto ``path`` only once every locale has succeeded
    (:mod:`pgas.io.atomic`): a write that fails leaves the previous file whole and
    raises the same error on every locale.  The CRC-32 of each locale's blocks
    is kept in the dataset's attribute ``pgas_crc32`` and checked by
    :func:`from_hdf5`.
    """
    checked("pg.to_hdf5({0})", A, args=(str(path), dataset))
    if not isinstance(A, DistArray):
        raise TypeError(f"pg.to_hdf5 takes a DistArray, got {type(A).__name__}")
    h5py, parallel = _h5py(serial)
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    layout_chunks = chunks is None
    chunks = _chunked(A.layout, A.shape) if chunks is None else tuple(int(c) for c in np.atleast_1d(chunks))
    if len(chunks) != A.ndim or any(c < 1 for c in chunks):
        raise ValueError(f"to_hdf5: chunks {chunks} must be {A.ndim} positive sizes for {A.label}")
    src = aligned(A, chunks)
    sums = json.dumps(block_sums(src))
    replace(path, lambda tmp: _write(h5py, parallel, tmp, path, dataset, A, src,
                                      None if layout_chunks or not A.size else chunks, sums))


def _write(h5py, parallel: bool, tmp: str, path: str, dataset: str, A: DistArray, src: DistArray, chunks,
           sums: str) -> None:
    """Collective: the new file ``tmp``: what ``path`` holds (if it exists) except
    ``dataset``, and ``dataset`` written from ``src`` with its checksums ``sums``,
    every locale's part fsynced and every locale's success agreed."""
    err = None
    if comm.here() == 0:
        try:
            old = target(path)
            if os.path.exists(old):
                _copy_except(h5py, old, tmp, dataset)
            else:
                h5py.File(tmp, "w-").close()
        except Exception as e:            # noqa: BLE001 - raised on every locale below
            err = e
    comm.agree(err)

    def create(f) -> None:
        if dataset in f:
            del f[dataset]
        f.create_dataset(dataset, shape=A.shape, dtype=A.dtype, chunks=chunks).attrs[CRC_ATTR] = sums

    def write(f) -> None:
        ds = f[dataset]
        if src.size:
            for glob, loc in _boxes(src.layout, comm.here()):
                ds[glob] = src.local[loc]

    err = None
    if parallel:                      # metadata calls are collective, writes independent
        try:
            with _open(h5py, True, tmp, "a") as f:
                create(f)
                write(f)
        except Exception as e:        # noqa: BLE001
            err = e
        agree_synced(tmp, err)
        return

    def turn() -> None:
        with _open(h5py, False, tmp, "a") as f:
            if comm.here() == 0:
                create(f)
            write(f)
        fsync_path(tmp)

    _each_in_turn(turn)


def _copy_except(h5py, src_path: str, dst_path: str, dataset: str) -> None:
    """Make the HDF5 file ``dst_path`` hold everything of ``src_path`` but ``dataset``
    (copied object by object, so the replaced dataset's space is not carried over)."""
    skip = [p for p in dataset.split("/") if p]
    with h5py.File(src_path, "r") as src, h5py.File(dst_path, "w-") as dst:
        _copy_group(h5py, src, dst, skip)


def _copy_group(h5py, src, dst, skip) -> None:
    for k, v in src.attrs.items():
        dst.attrs[k] = v
    for name in src:
        link = src.get(name, getlink=True)
        if skip and name == skip[0]:
            if len(skip) == 1:
                continue                  # the dataset being replaced
            if isinstance(link, h5py.HardLink) and isinstance(src[name], h5py.Group):
                _copy_group(h5py, src[name], dst.create_group(name), skip[1:])
                continue
        if isinstance(link, (h5py.SoftLink, h5py.ExternalLink)):
            dst[name] = link
        else:
            src.copy(name, dst, name=name)


def from_hdf5(path, dataset: str = "data", dist=None, name: str | None = None):
    """Collective: read dataset ``dataset`` of the HDF5 file ``path`` into a DistArray with
    distribution ``dist`` (Block by default), each block by its owner.

    Parameters
    ----------
    path : str or os.PathLike
    dataset : str, optional
    dist : Distribution, optional
    name : str, optional

    Returns
    -------
    DistArray

    Notes
    -----
    Reading needs no parallel build: read-only opens coexist, so with a serial
    h5py every locale opens the file itself and reads its own blocks.

    The checksums :func:`to_hdf5` left (attribute ``pgas_crc32``) are checked as
    :func:`pgas.from_zarr` checks them; a mismatch is raised as ValueError on
    every locale.
    """
    checked("pg.from_hdf5(...)", args=(str(path), dataset, repr(dist), name))
    h5py, parallel = _h5py(True)
    path = os.fspath(path)
    err, meta = None, None
    try:
        with h5py.File(path, "r") as f:       # every locale reads the metadata (read-only opens coexist)
            if dataset not in f or not isinstance(f[dataset], h5py.Dataset):
                raise KeyError(f"{path}: no dataset {dataset!r}")
            ds = f[dataset]
            dt = ds.dtype if ds.dtype.isnative else ds.dtype.newbyteorder("=")   # HDF5 converts on reading
            sums = ds.attrs.get(CRC_ATTR)
            meta = (tuple(ds.shape), dt, ds.chunks, sums.decode() if isinstance(sums, bytes) else sums)
            check_dtype(meta[1])
            if not meta[0]:
                raise ValueError(f"{path}:{dataset} holds a 0-d array; pgas arrays have at least one dimension")
    except Exception as e:            # noqa: BLE001
        err = e
    comm.agree(err)
    shape, dtype, chunks, sums = meta
    layout, direct = direct_layout(shape, dist, chunks or _layout(shape, Block()).blocks)
    tmp = DistArray._create(layout, dtype, name)

    def read(f) -> None:
        ds = f[dataset]
        if tmp.size:
            for glob, loc in _boxes(tmp.layout, comm.here()):
                ds.read_direct(tmp.local, source_sel=glob, dest_sel=loc)     # no intermediate block

    err, f = None, None
    try:
        f = _open(h5py, parallel, path, "r")
        read(f)
    except Exception as e:            # noqa: BLE001
        err = e
    try:                              # the checksums are checked with the file open, to read blocks back
        comm.agree(err)
        check_block_sums(f"{path}:{dataset}", sums, tmp, lambda glob: np.asarray(f[dataset][glob], dtype))
    finally:
        if f is not None:
            f.close()
    comm.barrier([tmp.store.window])
    if direct:
        return tmp
    out = empty(shape, dtype, dist, name)
    out[...] = tmp
    return out


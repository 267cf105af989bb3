"""HDF5 via h5py: supported only with a parallel (MPI-enabled) h5py build.

A serial h5py cannot have several locales write one file, and funnelling the
array through one locale would need its full copy, which pgas's I/O avoids,
so without a parallel build these functions raise ``ImportError`` saying how
to get one::

    HDF5_MPI=ON HDF5_DIR=/path/to/parallel-hdf5 CC=mpicc pip install --no-binary=h5py h5py

(``h5py.get_config().mpi`` must then be True.)  Until then, use
:func:`pgas.save` / :func:`pgas.load` (``.npy``) or :func:`pgas.to_zarr`.
"""

from __future__ import annotations

_HOW = ("HDF5_MPI=ON HDF5_DIR=/path/to/parallel-hdf5 CC=mpicc pip install --no-binary=h5py h5py "
        "(h5py.get_config().mpi must be True); or use pg.save / pg.load (.npy) or pg.to_zarr")


def _parallel_h5py():
    try:
        import h5py
    except ImportError:
        raise ImportError(f"pgas HDF5 I/O needs a parallel h5py, and h5py is not installed: {_HOW}") from None
    if not h5py.get_config().mpi:
        raise ImportError(f"pgas HDF5 I/O needs a parallel h5py; the installed h5py {h5py.__version__} "
                          f"is a serial build: {_HOW}")
    return h5py


def to_hdf5(A, path, dataset: str = "data") -> None:
    """Collective: write ``A`` to dataset ``dataset`` of the HDF5 file ``path``.

    Raises
    ------
    ImportError
        Always, unless h5py is a parallel build (see the module notes); parallel
        HDF5 writing is not implemented yet either, so even then it raises
        ``NotImplementedError``.
    """
    _parallel_h5py()
    raise NotImplementedError("pgas HDF5 writing is not implemented yet: use pg.save (.npy) or pg.to_zarr")


def from_hdf5(path, dataset: str = "data", dist=None):
    """Collective: read dataset ``dataset`` of the HDF5 file ``path`` (see :func:`to_hdf5`).

    Raises
    ------
    ImportError
        Unless h5py is a parallel build; ``NotImplementedError`` even then.
    """
    _parallel_h5py()
    raise NotImplementedError("pgas HDF5 reading is not implemented yet: use pg.load (.npy) or pg.from_zarr")

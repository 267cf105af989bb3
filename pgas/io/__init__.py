"""Data in and out at scale: parallel ``.npy`` files (:func:`save`, :func:`load`), zarr v3
stores (:func:`to_zarr`, :func:`from_zarr`, needing ``pgas[io]``; xarray DataArrays too,
:func:`open_dataarray`) and HDF5 (:func:`to_hdf5`,
:func:`from_hdf5`: only with a parallel h5py), and checkpoints (:func:`checkpoint`,
:func:`restore`): a set of arrays and metadata committed as one."""

from .checkpoints import Checkpoint, checkpoint, restore
from .hdf5 import from_hdf5, to_hdf5
from .labelled import open_dataarray
from .npy import load, save
from .zarr import from_zarr, to_zarr

__all__ = ["Checkpoint", "checkpoint", "restore", "from_hdf5", "from_zarr", "load", "open_dataarray", "save", "to_hdf5", "to_zarr"]

"""Pieces of pgas.io that need no MPI: the .npy header and the HDF5 guidance."""

import io

import numpy as np
import pytest

from pgas.io import hdf5, npy


@pytest.mark.parametrize("shape", [(0,), (3,), (4, 5), (2, 3, 4), tuple(range(1, 5))])
@pytest.mark.parametrize("dtype", [bool, np.int32, np.int64, np.float32, np.float64, np.complex128])
def test_header_is_np_save_header(shape, dtype):
    x = np.zeros(shape, dtype)
    buf = io.BytesIO()
    np.save(buf, x)
    head = npy._header(shape, np.dtype(dtype))
    assert buf.getvalue()[:len(head)] == head
    assert len(buf.getvalue()) == len(head) + x.nbytes


def test_hdf5_says_how_to_get_parallel_h5py():
    try:
        import h5py
        parallel = h5py.get_config().mpi
    except ImportError:
        parallel = False
    with pytest.raises(NotImplementedError if parallel else ImportError, match="h5py|implemented"):
        hdf5.to_hdf5(None, "x.h5")
    with pytest.raises(NotImplementedError if parallel else ImportError, match="HDF5_MPI|implemented"):
        hdf5.from_hdf5("x.h5")

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


def test_hdf5_says_how_to_get_parallel_h5py(monkeypatch):
    h5py = pytest.importorskip("h5py")
    monkeypatch.setattr(h5py, "get_config", lambda: type("C", (), {"mpi": False})())
    with pytest.raises(ImportError, match="HDF5_MPI=ON.*serial=True"):
        hdf5._h5py(serial=False)
    assert hdf5._h5py(serial=True) == (h5py, False)

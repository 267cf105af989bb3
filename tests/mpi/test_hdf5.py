"""HDF5 round trips at any locale count and distribution (skipped without h5py).

With the serial h5py of PyPI the writes take turns (``serial=True``); the blocks each
locale moves are the same ones a parallel build moves at once.

Also: a big-endian dataset refused."""

import os

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")

from util import assert_matches, collective_verdict  # noqa: E402

import pgas as pg  # noqa: E402
from pgas.array.index import SUPPORTED_DTYPES  # noqa: E402

P = pg.num_locales
ME = pg.here
SERIAL = not h5py.get_config().mpi


@pytest.fixture
def path(tmp_path):
    return os.path.join(pg.comm.bcast(str(tmp_path) if ME == 0 else None, 0), "a.h5")


def dists(ndim):
    out = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3), pg.BlockCyclic(64)]
    if ndim == 2:
        out += [pg.Block(grid=g) for g in pg.layout.grids(P, 2)]
    return out


def _plain(path, name="data"):
    with h5py.File(path, "r") as f:
        return f[name][...]


@pytest.mark.parametrize("shape", [(0,), (9,), (300,), (70, 90), (5, 6, 7)])
def test_round_trip_every_distribution(path, shape):
    x = np.random.default_rng(1).standard_normal(shape)
    for src, dst in zip(dists(len(shape)), reversed(dists(len(shape)))):
        pg.to_hdf5(pg.from_numpy(x, dist=src), path, serial=SERIAL)
        pg.barrier()
        got = _plain(path)
        collective_verdict(got.shape == x.shape and np.array_equal(got, x), f"{src}: file content")
        assert_matches(pg.from_hdf5(path, dist=dst), x, rtol=0)


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES)
def test_dtypes_groups_and_other_datasets_kept(path, dtype):
    x = (np.arange(5000) % 7).astype(dtype)
    y = np.arange(12.0).reshape(3, 4)
    pg.to_hdf5(pg.from_numpy(y), path, "keep", serial=SERIAL)
    for chunks in [None, (333,)]:
        pg.to_hdf5(pg.from_numpy(x, dist=pg.BlockCyclic(200)), path, "g/x", chunks=chunks, serial=SERIAL)
        pg.barrier()
        with h5py.File(path, "r") as f:
            ok = f["g/x"].dtype == x.dtype and (chunks is None or f["g/x"].chunks == chunks)
        collective_verdict(ok, "dtype / chunks in the file")
        assert_matches(pg.from_hdf5(path, "g/x", dist=pg.Cyclic()), x, rtol=0)
    assert_matches(pg.from_hdf5(path, "keep"), y, rtol=0)


def test_reads_a_file_written_by_h5py(path):
    x = np.random.default_rng(2).integers(0, 100, (40, 30)).astype(np.int32)
    if ME == 0:
        with h5py.File(path, "w") as f:
            f.create_dataset("plain", data=x)                    # contiguous: no chunks
            f.create_dataset("chunked", data=x, chunks=(7, 11))
    pg.barrier()
    for name in ("plain", "chunked"):
        for dist in dists(2):
            assert_matches(pg.from_hdf5(path, name, dist=dist), x, rtol=0)


def test_errors_on_every_locale(path):
    pg.to_hdf5(pg.from_numpy(np.ones(5)), path, serial=SERIAL)
    with pytest.raises(KeyError, match="no dataset 'nope'"):
        pg.from_hdf5(path, "nope")
    with pytest.raises(TypeError, match="DistArray"):
        pg.to_hdf5(np.ones(3), path, serial=SERIAL)
    with pytest.raises(ValueError, match="chunks"):
        pg.to_hdf5(pg.from_numpy(np.ones(5)), path, chunks=(0,), serial=SERIAL)
    with pytest.raises((OSError, FileNotFoundError)):
        pg.from_hdf5(path + ".missing")
    if SERIAL:
        with pytest.raises(ImportError, match="parallel h5py"):
            pg.to_hdf5(pg.from_numpy(np.ones(5)), path)


def _attempt(f):
    """Run f on every locale; return (result, None) or (None, 'Type: message')."""
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001 - the finding is the exception itself
        return None, f"{type(e).__name__}: {e}"


def test_from_hdf5_big_endian_dataset_raises(tmp_path):
    # docs/data.md: pg.from_hdf5 reads a dataset into a DistArray. A float64 dataset stored
    # big-endian ('>f8', as h5py writes np.arange(10, dtype='>f8')) reads in NumPy/h5py as
    # [0., 1., ..., 9.]; pg.load of a big-endian .npy works, but pg.from_hdf5 raises
    # TypeError "dtype >f8 is not supported by pgas arrays" on every locale.
    import os

    import h5py

    from pgas import comm
    path = comm.bcast(str(tmp_path) if comm.here() == 0 else None, 0)
    f = os.path.join(path, "be.h5")
    if comm.here() == 0:
        os.makedirs(path, exist_ok=True)
        with h5py.File(f, "w") as h:
            h.create_dataset("be", data=np.arange(10, dtype=">f8"))
    comm.barrier()
    A, err = _attempt(lambda: pg.from_hdf5(f, "be", dist=pg.Cyclic()))
    collective_verdict(err is None, f"pg.from_hdf5 of a '>f8' dataset raised {err}")
    assert_matches(A, np.arange(10.0), check_dtype=False)

"""zarr v3 round trips at any locale count and distribution (skipped without zarr >= 3)."""

import os

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", minversion="3")

import pgas as pg  # noqa: E402
from pgas.array.index import SUPPORTED_DTYPES  # noqa: E402
from util import assert_matches, collective_verdict  # noqa: E402

P = pg.num_locales
ME = pg.here


@pytest.fixture
def store(tmp_path):
    return os.path.join(pg.comm.bcast(str(tmp_path) if ME == 0 else None, 0), "a.zarr")


def dists(ndim):
    out = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(3), pg.BlockCyclic(64)]
    if ndim == 2:
        out += [pg.Block(grid=g) for g in pg.layout.grids(P, 2)]
    return out


@pytest.mark.parametrize("shape", [(0,), (9,), (300,), (70, 90)])
def test_round_trip_every_distribution(store, shape):
    x = np.random.default_rng(1).standard_normal(shape)
    for src, dst in zip(dists(len(shape)), reversed(dists(len(shape)))):
        pg.to_zarr(pg.from_numpy(x, dist=src), store)
        z = zarr.open_array(store, mode="r")
        collective_verdict(z.shape == x.shape and np.array_equal(z[...], x), f"{src}: zarr content")
        assert_matches(pg.from_zarr(store, dist=dst), x, rtol=0)


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES)
def test_dtypes_and_explicit_chunks(store, dtype):
    x = (np.arange(5000) % 7).astype(dtype)
    for chunks in [None, (333,)]:
        pg.to_zarr(pg.from_numpy(x, dist=pg.BlockCyclic(200)), store, chunks=chunks)
        if chunks:
            collective_verdict(zarr.open_array(store, mode="r").chunks == chunks, "chunks")
        B = pg.from_zarr(store, dist=pg.Cyclic())
        assert_matches(B, x, rtol=0)


def test_reads_a_store_written_by_zarr(store):
    x = np.arange(12 * 17, dtype=np.int64).reshape(12, 17)
    if ME == 0:
        zarr.create_array(store, data=x, chunks=(5, 4), overwrite=True)
    pg.barrier()
    for dist in dists(2):
        assert_matches(pg.from_zarr(store, dist=dist), x, rtol=0)


def test_overwrite_leaves_no_stale_chunks(store):
    pg.to_zarr(pg.from_numpy(np.arange(1.0, 101.0), dist=pg.BlockCyclic(10)), store, chunks=(10,))
    pg.to_zarr(pg.zeros(100, dist=pg.BlockCyclic(10)), store, chunks=(10,))   # all-fill chunks are not written
    assert_matches(pg.from_zarr(store), np.zeros(100), rtol=0)


def test_errors_alike(store):
    with pytest.raises(Exception):
        pg.from_zarr(store + ".missing")
    with pytest.raises(ValueError, match="chunks"):
        pg.to_zarr(pg.zeros(4), store, chunks=(0,))
    with pytest.raises(TypeError, match="DistArray"):
        pg.to_zarr(np.zeros(3), store)

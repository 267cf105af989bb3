"""Data in and out with no full copy: from_local, fromfunction, and parallel .npy
save / load (byte-identical to np.save, any distribution, any locale count).

Also: .npy, zarr and HDF5 round trips for every distribution."""

import os

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg
from pgas import comm
from pgas.array.index import SUPPORTED_DTYPES
from pgas.layout import grids

P = pg.num_locales
ME = pg.here


def dists(ndim):
    out = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2), pg.BlockCyclic(5)]
    if ndim == 2:
        out += [d(grid=g) for g in pg.layout.grids(P, 2) for d in (pg.Block, lambda grid: pg.BlockCyclic(3, grid))]
    elif ndim == 3:
        out += [pg.Block(grid=(1, 1, P)), pg.BlockCyclic(2, grid=(1, P, 1))]
    return out


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, shape)
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (x + 1j * rng.integers(-5, 5, shape)).astype(dtype)
    return (x > 0) if dtype.kind == "b" else (x + (0.25 if dtype.kind == "f" else 0)).astype(dtype)


@pytest.fixture
def shared_dir(tmp_path):
    """One directory every locale sees: locale 0's tmp_path, broadcast."""
    return pg.comm.bcast(str(tmp_path) if ME == 0 else None, 0)


def on_zero(fn):
    """Run ``fn`` on locale 0 only; its error (if any) is raised on every locale."""
    err = None
    if ME == 0:
        try:
            fn()
        except Exception as e:            # noqa: BLE001
            err = e
    pg.comm.agree(err)


# -- from_local / fromfunction ----------------------------------------------
@pytest.mark.parametrize("shape", [(0,), (1,), (17,), (6, 5), (3, 4, 5)])
def test_from_local_round_trip(shape):
    x = sample(shape, np.float64)
    for dist in dists(len(shape)):
        ref = pg.from_numpy(x, dist=dist)
        block = x[np.ix_(*ref.layout.owned(ME))].copy()
        A = pg.from_local(block, shape, dist=dist)
        assert_matches(A, x, rtol=0)
        assert A.layout.key == ref.layout.key


def test_from_local_dtypes_and_empty_blocks():
    n = 2                                           # some locales own nothing when P > 2
    for dtype in SUPPORTED_DTYPES:
        x = sample((n,), dtype)
        layout = pg.Block().bind((n,), P)
        block = x[layout.owned(ME)[0]] if layout.local_shape(ME)[0] else np.empty(0)
        assert_matches(pg.from_local(block, n), x, rtol=0)
    A = pg.from_local(np.arange(3, dtype=np.int32)[: pg.Block().bind((3,), P).local_shape(ME)[0]]
                      if pg.Block().bind((3,), P).local_shape(ME)[0] else np.empty(0), 3, dtype=np.float32)
    collective_verdict(A.dtype == np.float32, "dtype=")


def test_from_local_errors_alike():
    shape = (P * 2 + 1,)
    good = pg.Block().bind(shape, P).local_shape(ME)
    bad = (good[0] + 1,) if ME == P - 1 else good
    with pytest.raises(ValueError, match=f"locale {P - 1} passed a block of shape"):
        pg.from_local(np.zeros(bad), shape)
    if P > 1:
        with pytest.raises(ValueError, match="different dtypes"):
            pg.from_local(np.zeros(good, dtype=np.int64 if ME == 0 else np.float64), shape)
    with pytest.raises(TypeError, match="not supported"):
        pg.from_local(np.zeros(good, dtype=np.float16), shape)


@pytest.mark.parametrize("shape", [(0,), (13,), (5, 6), (2, 3, 4)])
def test_fromfunction_matches_numpy(shape):
    def f(*idx):
        return sum((k + 1) * i for k, i in enumerate(idx))

    want = np.fromfunction(f, shape, dtype=int)
    for dist in dists(len(shape)):
        assert_matches(pg.fromfunction(f, shape, dist=dist, dtype=np.int64), want, rtol=0)
        assert_matches(pg.fromfunction(lambda *i: 2.5, shape, dist=dist), np.full(shape, 2.5), rtol=0)


def test_fromfunction_error_on_one_locale_reaches_all():
    def f(i):
        if len(i) and i[0] == 0:
            raise ZeroDivisionError("boom at 0")
        return i

    with pytest.raises((ZeroDivisionError, pg.LocaleError), match="boom at 0"):
        pg.fromfunction(f, 10)


# -- .npy save / load ----------------------------------------------------------
@pytest.mark.parametrize("shape,dtype", [(s, d) for s in [(0,), (23,), (7, 5)] for d in SUPPORTED_DTYPES]
                         + [((2, 3, 5), np.dtype(np.float64))])
def test_save_is_byte_identical_to_np_save(shared_dir, shape, dtype):
    x = sample(shape, dtype)
    mine, theirs = os.path.join(shared_dir, "pg.npy"), os.path.join(shared_dir, "np.npy")
    on_zero(lambda: np.save(theirs, x))
    for dist in dists(len(shape))[:4 if dtype == np.float64 else 2]:
        pg.save(mine, pg.from_numpy(x, dist=dist))
        same = open(mine, "rb").read() == open(theirs, "rb").read()
        collective_verdict(same, f"{dist}: file differs from np.save")
        back = np.load(mine)
        collective_verdict(back.dtype == x.dtype and np.array_equal(back, x), "np.load")


@pytest.mark.parametrize("shape", [(29,), (6, 7), (3, 4, 5)])
def test_load_any_distribution_from_any_writer(shared_dir, shape):
    """A file from np.save (as any locale count would write it) and one written by
    pg.save in one distribution, each read back in every other distribution."""
    x = sample(shape, np.float64, seed=5)
    path = os.path.join(shared_dir, "x.npy")
    on_zero(lambda: np.save(path, x))
    for dist in dists(len(shape)):
        assert_matches(pg.load(path, dist=dist), x, rtol=0)
    written = os.path.join(shared_dir, "w.npy")
    for src, dst in list(zip(dists(len(shape)), reversed(dists(len(shape)))))[:3]:
        pg.save(written, pg.from_numpy(x, dist=src))
        assert_matches(pg.load(written, dist=dst), x, rtol=0)


def test_load_fortran_order_big_endian_and_overwrite(shared_dir):
    x = sample((6, 7), np.float64, seed=2)
    f, b = os.path.join(shared_dir, "f.npy"), os.path.join(shared_dir, "b.npy")
    on_zero(lambda: (np.save(f, np.asfortranarray(x)), np.save(b, x.astype(">i4"))))
    for dist in dists(2):
        assert_matches(pg.load(f, dist=dist), x, rtol=0)
        B = pg.load(b, dist=dist)
        assert_matches(B, x.astype(np.int32), rtol=0)
    big = os.path.join(shared_dir, "big.npy")
    on_zero(lambda: np.save(big, np.arange(1000.0)))
    pg.save(big, pg.from_numpy(x))                 # overwriting a longer file truncates it
    collective_verdict(np.array_equal(np.load(big), x) and os.path.getsize(big) == os.path.getsize(f), "overwrite")


def test_npy_errors_alike(shared_dir):
    with pytest.raises(FileNotFoundError):
        pg.load(os.path.join(shared_dir, "missing.npy"))
    bad = os.path.join(shared_dir, "bad.npy")
    on_zero(lambda: open(bad, "wb").write(b"not an npy file at all"))
    with pytest.raises(ValueError):
        pg.load(bad)
    u8 = os.path.join(shared_dir, "f16.npy")
    on_zero(lambda: np.save(u8, np.arange(4, dtype=np.float16)))
    with pytest.raises(TypeError, match="not supported"):
        pg.load(u8)
    short = os.path.join(shared_dir, "short.npy")

    def truncated():
        np.save(short, np.arange(100.0))
        with open(short, "r+b") as fh:
            fh.truncate(200)
    on_zero(truncated)
    with pytest.raises(ValueError, match="bytes"):
        pg.load(short)
    scalar = os.path.join(shared_dir, "s.npy")
    on_zero(lambda: np.save(scalar, np.float64(3)))
    with pytest.raises(ValueError, match="0-d"):
        pg.load(scalar)
    with pytest.raises(OSError):
        pg.save(os.path.join(shared_dir, "no", "such", "dir.npy"), pg.zeros(3))
    with pytest.raises(TypeError, match="DistArray"):
        pg.save(os.path.join(shared_dir, "x.npy"), np.zeros(3))


me = pg.here


def _dists(nd):
    out = [pg.Block(), pg.Cyclic(), pg.BlockCyclic(2)]
    for i, g in enumerate(grids(P, nd)):             # one kind per grid, rotating
        out.append([pg.Block(g), pg.Cyclic(g), pg.BlockCyclic(3, g)][i % 3])
    return out


# ---------------------------------------------------------------------------
# 6. Files
# ---------------------------------------------------------------------------
@pytest.fixture
def folder(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("roundtrip")) if me == 0 else None
    return comm.bcast(path, 0) if P > 1 else path


@pytest.mark.parametrize("shape", [(0,), (5,), (2, 0), (3, 5), (2, 3, 2)])
def test_npy_zarr_hdf5_round_trips_for_every_distribution(shape, folder):
    for k, dt in enumerate([np.float64, np.int16, np.bool_, np.complex128]):
        a = (np.arange(int(np.prod(shape))) * 3 - 4).astype(dt).reshape(shape)
        for j, d in enumerate(_dists(len(shape))):
            A = pg.from_numpy(a, dist=d)
            p = os.path.join(folder, f"a{k}_{j}.npy")
            pg.save(p, A)
            assert_matches(pg.load(p, dist=pg.Cyclic() if len(shape) < 2 else pg.BlockCyclic(2)), a)
            ok = True
            if me == 0:
                b = np.load(p)
                ok = b.dtype == a.dtype and np.array_equal(b, a)
            collective_verdict(ok, "np.load of pg.save's file differs")
            if dt in (np.float64, np.int16) and j % 2 == 0:
                z = os.path.join(folder, f"z{k}_{j}.zarr")
                pg.to_zarr(A, z)
                assert_matches(pg.from_zarr(z, dist=pg.Cyclic()), a)
                h = os.path.join(folder, f"h{k}_{j}.h5")
                pg.to_hdf5(A, h, "x", serial=True)
                assert_matches(pg.from_hdf5(h, "x", dist=pg.Block()), a)

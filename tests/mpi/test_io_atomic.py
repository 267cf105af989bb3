"""A save that fails never destroys the file it was replacing.

For ``.npy`` (``pg.save``), HDF5 (``pg.to_hdf5``) and zarr (``pg.to_zarr``): a good
file is written, then a later save of other data to the same path fails (the file-size
limit is hit on every locale or on one, or an exception is raised on one locale after
its part is written).  Every locale must raise the same error, the old file must still
load with its old contents, and no temporary may be left beside it.
"""

import contextlib
import os
import re
import resource
import signal

import numpy as np
import pytest
from util import assert_matches, collective_verdict

import pgas as pg
import pgas.io.npy as npy_module

P = pg.num_locales
ME = pg.here
MIB = 1 << 20
FAULTS = ["fsize all", "fsize last", "raise on 0", "raise on last"]


@pytest.fixture
def shared_dir(tmp_path):
    """A fresh directory every locale sees: locale 0's tmp_path, broadcast."""
    return pg.comm.bcast(str(tmp_path) if ME == 0 else None, 0)


@contextlib.contextmanager
def file_size_limit(nbytes: int, on):
    """Files may not grow past ``nbytes`` on the locales ``on`` (writes fail with EFBIG:
    SIGXFSZ is ignored meanwhile).  Set inside the job, after MPI has made its own files."""
    if ME not in on:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old)


@contextlib.contextmanager
def raise_after(owner, attr: str, on: int):
    """On locale ``on``, ``owner.attr`` does its work, then raises RuntimeError (once):
    a fault in the middle of a save, after this locale's part went out."""
    if ME != on:
        yield
        return
    real = getattr(owner, attr)

    def faulty(*args, **kwargs):
        real(*args, **kwargs)
        raise RuntimeError("injected fault")

    setattr(owner, attr, faulty)
    try:
        yield
    finally:
        setattr(owner, attr, real)


def fail_alike(save, fault: str, inject) -> None:
    """Collective: ``save()`` under ``fault`` raises on every locale, with one message."""
    if fault.startswith("fsize"):
        ctx = file_size_limit(2 * MIB, range(P) if fault == "fsize all" else [P - 1])
        kinds = (OSError, RuntimeError, pg.LocaleError)   # h5py raises RuntimeError for EFBIG on closing
    else:
        ctx = inject(0 if fault == "raise on 0" else P - 1)
        kinds = (RuntimeError, OSError, pg.LocaleError)
    err = None
    with ctx:
        try:
            save()
        except Exception as e:            # noqa: BLE001 - checked on every locale below
            err = e
    collective_verdict(err is not None, "the failing save did not raise")
    collective_verdict(isinstance(err, kinds), lambda: f"raised {type(err).__name__}: {err}")
    # an error type that cannot also be a LocaleError (RuntimeError) reaches the other
    # locales as LocaleError("RuntimeError on locale k: <message>")
    texts = pg.comm.allgather(re.sub(r"^\w+ on locale \d+: ", "", str(err)))
    collective_verdict(len(set(texts)) == 1, f"locales raised different errors: {texts}")
    if fault.startswith("raise"):
        collective_verdict("injected fault" in str(err), str(err))


def no_leftovers(directory: str, want) -> None:
    """Collective: ``directory`` holds exactly the names ``want`` (no temporary)."""
    have = sorted(os.listdir(directory)) if ME == 0 else None
    have = pg.comm.bcast(have, 0)
    collective_verdict(have == sorted(want), f"directory holds {have}, want {sorted(want)}")


def old_new(seed: int = 0):
    rng = np.random.default_rng(seed)
    # 1 MiB, then 4 MiB per locale (at least 8 MiB): every locale's part passes the 2 MiB limit
    return rng.standard_normal(MIB // 8), rng.standard_normal(max(2, P) * 4 * MIB // 8)


@pytest.mark.parametrize("fault", FAULTS)
def test_npy_failed_save_keeps_old_file(shared_dir, fault):
    if fault == "fsize last" and P == 1:
        pytest.skip("same as 'fsize all' at one locale")
    old, new = old_new()
    path = os.path.join(shared_dir, "a.npy")
    pg.save(path, pg.from_numpy(old))
    A = pg.from_numpy(new)                                      # made before any limit is set
    fail_alike(lambda: pg.save(path, A), fault, lambda k: raise_after(npy_module, "write_darray", k))
    assert_matches(pg.load(path), old, rtol=0)
    ok = np.array_equal(np.load(path), old) if ME == 0 else True
    collective_verdict(ok, "np.load of the old file")
    no_leftovers(shared_dir, ["a.npy"])
    pg.save(path, A)                                            # and a good save still replaces it
    assert_matches(pg.load(path), new, rtol=0)
    no_leftovers(shared_dir, ["a.npy"])


@pytest.mark.parametrize("fault", FAULTS)
def test_hdf5_failed_save_keeps_old_file(shared_dir, fault):
    h5py = pytest.importorskip("h5py")
    serial = not h5py.get_config().mpi
    if fault == "fsize last" and P == 1:
        pytest.skip("same as 'fsize all' at one locale")
    old, new = old_new(1)
    path = os.path.join(shared_dir, "a.h5")
    keep = np.arange(12.0).reshape(3, 4)
    pg.to_hdf5(pg.from_numpy(keep), path, "keep", serial=serial)
    pg.to_hdf5(pg.from_numpy(old), path, serial=serial)
    A = pg.from_numpy(new)
    fail_alike(lambda: pg.to_hdf5(A, path, serial=serial), fault,
               lambda k: raise_after(h5py.Dataset, "__setitem__", k))
    assert_matches(pg.from_hdf5(path), old, rtol=0)
    assert_matches(pg.from_hdf5(path, "keep"), keep, rtol=0)
    no_leftovers(shared_dir, ["a.h5"])
    pg.to_hdf5(A, path, serial=serial)
    assert_matches(pg.from_hdf5(path), new, rtol=0)
    assert_matches(pg.from_hdf5(path, "keep"), keep, rtol=0)
    no_leftovers(shared_dir, ["a.h5"])


@pytest.mark.parametrize("fault", FAULTS)
def test_zarr_failed_save_keeps_old_store(shared_dir, fault):
    zarr = pytest.importorskip("zarr", minversion="3")
    if fault == "fsize last" and P == 1:
        pytest.skip("same as 'fsize all' at one locale")
    old, new = old_new(2)
    path = os.path.join(shared_dir, "a.zarr")
    pg.to_zarr(pg.from_numpy(old), path)
    A = pg.from_numpy(new)
    fail_alike(lambda: pg.to_zarr(A, path), fault, lambda k: raise_after(zarr.Array, "__setitem__", k))
    assert_matches(pg.from_zarr(path), old, rtol=0)
    no_leftovers(shared_dir, ["a.zarr"])
    pg.to_zarr(A, path)
    assert_matches(pg.from_zarr(path), new, rtol=0)
    no_leftovers(shared_dir, ["a.zarr"])


def test_save_into_missing_directory_leaves_nothing(shared_dir):
    with pytest.raises(OSError):
        pg.save(os.path.join(shared_dir, "no", "such", "x.npy"), pg.zeros(3))
    no_leftovers(shared_dir, [])


def test_save_keeps_mode_and_writes_through_a_symlink(shared_dir):
    real, link = os.path.join(shared_dir, "real.npy"), os.path.join(shared_dir, "link.npy")
    pg.save(real, pg.zeros(5))
    if ME == 0:
        os.chmod(real, 0o640)
        os.symlink("real.npy", link)
    pg.barrier()
    pg.save(link, pg.ones(7))
    ok = (os.path.islink(link) and np.array_equal(np.load(real), np.ones(7))
          and (os.stat(real).st_mode & 0o777) == 0o640) if ME == 0 else True
    collective_verdict(ok, "the symlink was replaced, or the mode changed")
    no_leftovers(shared_dir, ["link.npy", "real.npy"])

"""A save that fails never destroys the file it was replacing; a damaged .npy is refused.

For ``.npy`` (``pg.save``), HDF5 (``pg.to_hdf5``) and zarr (``pg.to_zarr``): a good
file is written, then a later save of other data to the same path fails (the file-size
limit is hit on every locale or on one, or an exception is raised on one locale after
its part is written).  Every locale must raise the same error, the old file must still
load with its old contents, and no temporary may be left beside it.

``pg.save`` also writes the CRC-32 of each locale's part beside the file
(``NAME.pgas.json``); ``pg.load`` refuses a file whose data no longer matches, or
whose header no longer matches the checksums, on every locale alike.
"""

import contextlib
import json
import os
import pathlib
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
    # locales as LocaleError("RuntimeError: <message> (on locale k)")
    texts = pg.comm.allgather(re.sub(r"^\w+Error: ", "", str(err)))
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
    no_leftovers(shared_dir, ["a.npy", "a.npy.pgas.json"])
    pg.save(path, A)                                            # and a good save still replaces it
    assert_matches(pg.load(path), new, rtol=0)
    no_leftovers(shared_dir, ["a.npy", "a.npy.pgas.json"])


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
    no_leftovers(shared_dir, ["link.npy", "real.npy", "real.npy.pgas.json"])


def on_zero(fn):
    """Run ``fn`` on locale 0 only; its error (if any) is raised on every locale."""
    err = None
    if ME == 0:
        try:
            fn()
        except Exception as e:            # noqa: BLE001
            err = e
    pg.comm.agree(err)


def damage_dists():
    return [pg.Block(), pg.Cyclic(), pg.BlockCyclic(5), pg.Block(grid=(1, P))]


@pytest.mark.parametrize("shape", [(37, 6), (2, 6)])
def test_npy_checksums_refuse_a_bit_flip(shared_dir, shape):
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    path = os.path.join(shared_dir, "a.npy")
    for src in damage_dists():
        pg.save(path, pg.from_numpy(x, dist=src))
        for dst in damage_dists():
            assert_matches(pg.load(path, dist=dst), x, rtol=0)
    sums = pg.comm.bcast(json.loads(pathlib.Path(path + ".pgas.json").read_text()) if ME == 0 else None, 0)
    collective_verdict(sums["algorithm"] == "crc32" and len(sums["parts"]) == min(P, shape[0]), str(sums))
    k = len(sums["parts"]) - 1                                  # the last part: rows held by the last locale
    r0, r1 = sums["parts"][k]["rows"]
    at = sums["offset"] + (r0 * shape[1] + 3) * 8 + 2

    on_zero(lambda: flip_byte(path, at))
    for dst in damage_dists():
        with pytest.raises(ValueError, match=rf"checksum mismatch in part {k} \(rows {r0}:{r1}, .*written by locale {k} of {P}"):
            pg.load(path, dist=dst)
    on_zero(lambda: flip_byte(path, at))                        # repaired: loads again
    assert_matches(pg.load(path, dist=pg.Cyclic()), x, rtol=0)


def test_npy_truncated_file_refused_and_rewritten_file_loads_with_a_warning(shared_dir):
    x = np.arange(300.0)
    path = os.path.join(shared_dir, "a.npy")
    pg.save(path, pg.from_numpy(x))

    def truncate():
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) - 8)
    on_zero(truncate)
    with pytest.raises(ValueError, match="bytes"):
        pg.load(path)
    on_zero(lambda: np.save(path, np.arange(10.0)))             # rewritten by another tool: NumPy's file loads
    with pytest.warns(UserWarning, match="was changed after pg.save wrote it"):
        assert_matches(pg.load(path), np.arange(10.0), rtol=0)
    pg.save(path, pg.from_numpy(x))                             # a header that no longer matches, file unchanged
    sums = json.loads(pathlib.Path(path + ".pgas.json").read_text()) if ME == 0 else None

    def other_shape():
        pathlib.Path(path + ".pgas.json").write_text(json.dumps({**sums, "shape": [301]}))
    on_zero(other_shape)
    with pytest.raises(ValueError, match="does not match its checksum file"):
        pg.load(path)
    on_zero(lambda: np.save(path, np.arange(10.0)))
    on_zero(lambda: os.remove(path + ".pgas.json"))             # without checksums: loaded as it is
    assert_matches(pg.load(path), np.arange(10.0), rtol=0)
    on_zero(lambda: pathlib.Path(path + ".pgas.json").write_text("{not json"))
    with pytest.raises(ValueError, match="not a pgas checksum file"):
        pg.load(path)


def flip_byte(path: str, at: int) -> None:
    """Flip one bit of ``path`` as a failing disk would: the file's times are kept."""
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0x10]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("fmt", ["hdf5", "zarr"])
def test_chunked_checksums_refuse_a_bit_flip(shared_dir, fmt):
    """The last element belongs to the last locale's block; a flipped bit there is named
    on loading, whether the reader sums its own blocks (Block) or reads them back."""
    n = max(P, 2) * 5000
    x = np.arange(n, dtype=np.float64)
    readers = [pg.Block(), pg.BlockCyclic(4096), pg.Cyclic()]
    if fmt == "hdf5":
        h5py = pytest.importorskip("h5py")
        path = os.path.join(shared_dir, "a.h5")
        pg.to_hdf5(pg.from_numpy(x), path, serial=not h5py.get_config().mpi)
        read = pg.from_hdf5

        def where():
            with h5py.File(path, "r") as f:
                return path, f["data"].id.get_offset() + (n - 1) * 8 + 3
    else:
        zarr = pytest.importorskip("zarr", minversion="3")
        path = os.path.join(shared_dir, "a.zarr")
        pg.to_zarr(pg.from_numpy(x), path, compressors=None)
        read = pg.from_zarr

        def where():
            z = zarr.open_array(path, mode="r")
            return os.path.join(path, "c", str((n - 1) // z.chunks[0])), ((n - 1) % z.chunks[0]) * 8 + 3
    for dist in readers:
        assert_matches(read(path, dist=dist), x, rtol=0)
    on_zero(lambda: flip_byte(*where()))
    for dist in readers:
        with pytest.raises(ValueError, match=rf"checksum mismatch in the blocks written by locale {P - 1} of {P}"):
            read(path, dist=dist)
    on_zero(lambda: flip_byte(*where()))
    assert_matches(read(path, dist=pg.Cyclic()), x, rtol=0)


def test_zarr_store_path_with_trailing_separator(shared_dir):
    pytest.importorskip("zarr", minversion="3")
    path = os.path.join(shared_dir, "t.zarr") + os.sep
    for k in range(2):
        pg.to_zarr(pg.arange(5000.0) + k, path)
        assert_matches(pg.from_zarr(path), np.arange(5000.0) + k, rtol=0)
    no_leftovers(shared_dir, ["t.zarr"])


CRASH = """
import os, sys
import numpy as np
import pgas as pg
import pgas.io.npy as npy

path = sys.argv[1]
real = npy.write_darray

def dies(*args, **kwargs):
    real(*args, **kwargs)
    if pg.here == pg.num_locales - 1:
        os._exit(3)                                   # this locale dies with its part written

A = pg.from_numpy(np.full(300_000, 7.0))
npy.write_darray = dies
pg.save(path, A)
"""


def test_npy_locale_dying_mid_save_keeps_old_file(shared_dir):
    """A job whose last locale dies while saving: the old file is still whole (a
    temporary may be left beside it)."""
    import subprocess
    import sys
    path = os.path.join(shared_dir, "a.npy")
    old = np.arange(1000.0)
    pg.save(path, pg.from_numpy(old))
    ok, why = True, ""
    if ME == 0:
        script = os.path.join(shared_dir, "crash.py")
        pathlib.Path(script).write_text(CRASH)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PMIX_", "HYDRA_", "MPIR_", "MPI_"))}
        env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(pg.__file__)), env.get("PYTHONPATH", "")])
        out = subprocess.run([sys.executable, "-m", "pgas.tools.cli", "run", "-n", "2", "--timeout", "120", script, path],
                             check=False, capture_output=True, text=True, timeout=200, env=env)
        ok = out.returncode == 3 and np.array_equal(np.load(path), old)      # 3: the locale died there
        why = f"rc {out.returncode}: {out.stdout[-2000:]} {out.stderr[-2000:]}"
    collective_verdict(ok, why)
    assert_matches(pg.load(path), old, rtol=0)                  # its checksums still match too


def test_zarr_replaced_without_an_atomic_exchange(shared_dir, monkeypatch):
    """Where renameat2(RENAME_EXCHANGE) is missing the old store is renamed aside first,
    then removed."""
    pytest.importorskip("zarr", minversion="3")
    from pgas.io import atomic
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    path = os.path.join(shared_dir, "a.zarr")
    for k in range(2):
        pg.to_zarr(pg.arange(5000.0) + k, path)
        assert_matches(pg.from_zarr(path), np.arange(5000.0) + k, rtol=0)
    no_leftovers(shared_dir, ["a.zarr"])

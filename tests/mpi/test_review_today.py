"""Hostile review of the features merged today (shifts, ghost cells, domains,
protocols, I/O): each test is one finding that failed on the code as merged (an error
where NumPy and the docs give a result), fixed since."""

import numpy as np
import pytest

import pgas as pg
from util import assert_matches, collective_verdict


def _attempt(f):
    """Run f on every locale; return (result, None) or (None, 'Type: message')."""
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001 - the finding is the exception itself
        return None, f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.uint64])
def test_eoshift_default_boundary_raises_for_bool_and_unsigned(dtype):
    # docs/polyshift.md: eoshift's boundary is "the constants 0 (the default)".
    # NumPy end-off shift of [1,1,1,1,1] by 1 with fill 0 gives [1,1,1,1,0] (False for bool).
    # pgas raises TypeError "cannot cast a boundary of dtype int64 to the array's bool/uint8
    # (rule 'same_kind')" on every locale, for the DEFAULT boundary (and for pshift (1, 0, 0)).
    a = np.ones(5, dtype=dtype)
    A = pg.from_numpy(a)
    R, err = _attempt(lambda: pg.eoshift(A, 1))
    collective_verdict(err is None, f"pg.eoshift(A, 1) on {np.dtype(dtype)} raised {err}")
    assert_matches(R, np.concatenate([a[1:], np.zeros(1, dtype)]))


def test_eoshift_boundary_that_is_a_view_raises():
    # docs/polyshift.md: the boundary may be "an array (NumPy or distributed) of the array's
    # shape without the shifted axis". A distributed row A[0] (a View) is such an array.
    # NumPy: end-off shift of a by 1 along axis 0 filling with a[0] -> rows a[1], a[2], a[3], a[0].
    # pgas raises TypeError "distributed expression: use .to_numpy() ..." on every locale
    # (a DistArray boundary works; a View of one does not).
    a = np.arange(12).reshape(4, 3)
    A = pg.from_numpy(a)
    R, err = _attempt(lambda: pg.eoshift(A, 1, 0, A[0]))
    collective_verdict(err is None, f"pg.eoshift(A, 1, 0, A[0]) raised {err}")
    assert_matches(R, np.concatenate([a[1:], a[:1]]))


def test_empty_like_of_ghosted_array_rejected_as_shift_output():
    # docs/polyshift.md's own pattern: nbrs = [pg.empty_like(phi) ...]; plan(phi, out=nbrs).
    # With a ghosted phi, empty_like/zeros_like drop the ghost widths (ghosts (0, 0)), and
    # every shift with out= raises ValueError "output float64 array of shape (4, 6) with
    # Block(grid=...) does not match the source float64 array of shape (4, 6) with Block(grid=...)"
    # -- the two descriptions printed are identical. Expected: the shift result, as with
    # NumPy's np.roll(phi, -1, 0).
    a = np.arange(24.0).reshape(4, 6)
    phi = pg.zeros((4, 6), ghosts=(1, 1))
    phi[...] = a
    out = pg.empty_like(phi)
    _, err = _attempt(lambda: pg.cshift(phi, 1, 0, out=out))
    collective_verdict(err is None, f"pg.cshift(phi, 1, 0, out=pg.empty_like(phi)) raised {err}; "
                                    f"empty_like ghosts={out.ghosts}, phi ghosts={phi.ghosts}")
    assert_matches(out, np.roll(a, -1, 0))


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

"""xarray DataArrays over DistArrays, and what xarray reaches through pgas: ``np.pad`` and
``sliding_window_view`` distributed, the array API namespace's distributed manipulation functions
(no gathering), NaN reductions, ``pg.GatherWarning``, and zarr stores that xarray reads
(``pg.to_zarr`` of a DataArray, ``pg.open_dataarray``); all against NumPy and xarray on NumPy."""

import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view
from util import a_dist, collective_verdict, same_as_numpy

import pgas as pg
from pgas import comm

xr = pytest.importorskip("xarray")
xp = pg.array_api


@st.composite
def pads(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    dist = draw(a_dist(ndim))
    mode = draw(st.sampled_from(["constant", "edge", "wrap", "reflect", "symmetric", "mean"]))
    width = draw(st.one_of(st.integers(0, 4), st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)),
                                                          min_size=ndim, max_size=ndim)))
    return shape, dist, mode, width, draw(st.integers(0, 2**16))


@given(case=pads())
@settings(max_examples=25, deadline=None)
def test_pad_as_numpy(case):
    """Every mode as NumPy's; modes and widths that run as statements do not gather."""
    shape, dist, mode, width, seed = case
    g = np.random.default_rng(seed).standard_normal(shape)
    kw = {"constant_values": 7.5} if mode == "constant" else {}
    A = pg.from_numpy(g, dist=dist)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = np.pad(A, width, mode, **kw)
    same_as_numpy(got, np.pad(g, width, mode, **kw), f"np.pad({shape}, {width}, {mode!r})")
    gathered = any(issubclass(x.category, pg.GatherWarning) for x in w)
    if mode in ("constant", "edge", "mean"):     # mirrors gather only where a margin is wider than its axis
        collective_verdict(gathered == (mode == "mean"), f"pad {mode!r} gathered: {gathered}")


def test_pad_constant_pairs_and_errors():
    g = np.arange(20.0).reshape(4, 5)
    A = pg.from_numpy(g)
    cv = ((1, 2), (3, 4))
    same_as_numpy(np.pad(A, ((1, 2), (2, 1)), constant_values=cv),
                  np.pad(g, ((1, 2), (2, 1)), constant_values=cv), "per-side constants")
    same_as_numpy(xp.pad(A, 1, mode="edge"), np.pad(g, 1, mode="edge"), "the namespace's pad")
    with pytest.raises(ValueError, match="non-negative"):
        np.pad(A, -1)
    with pytest.raises(ValueError, match="unsupported keyword"):
        np.pad(A, 1, mode="edge", constant_values=3)


@pytest.mark.parametrize("window, axis", [((2, 3), None), (3, 1), (2, 0), ((2, 2), (1, 1)), (4, -1)])
def test_sliding_window_view_as_numpy(window, axis):
    """A view with no copy: its values, and a reduction over its window axes, as NumPy's; it
    cannot be written (its windows overlap)."""
    g = np.arange(42.0).reshape(6, 7) ** 1.5
    A = pg.from_numpy(g, dist=pg.Block())
    want = sliding_window_view(g, window, axis=axis)
    W = sliding_window_view(A, window, axis=axis)
    same_as_numpy(W, want, f"window {window} axis {axis}")
    same_as_numpy(np.mean(W, axis=-1), want.mean(axis=-1), "its mean over the window")
    same_as_numpy(xp.lib.stride_tricks.sliding_window_view(A, window, axis=axis), want, "through the namespace")
    with pytest.raises(ValueError, match="writeable"):
        sliding_window_view(A, 2, axis=0, writeable=True)
    with pytest.raises(Exception, match="several iterations"):
        W[...] = 1.0
    with pytest.raises(ValueError, match="larger than input"):
        sliding_window_view(A, 8, axis=0)


def test_namespace_manipulation_does_not_gather():
    """The namespace's manipulation functions run on distributed operands without gathering
    (``pg.GatherWarning`` made an error), values as NumPy's; a gathered one warns."""
    g = np.random.default_rng(3).standard_normal((6, 5))
    A = xp.asarray(g)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pg.GatherWarning)
        same_as_numpy(xp.permute_dims(A, (1, 0)), g.T, "permute_dims")
        same_as_numpy(xp.matrix_transpose(A), g.T, "matrix_transpose")
        same_as_numpy(xp.flip(A, axis=0), g[::-1], "flip")
        same_as_numpy(xp.moveaxis(A, 0, 1), np.moveaxis(g, 0, 1), "moveaxis")
        same_as_numpy(xp.expand_dims(A, axis=1), g[:, None], "expand_dims")
        same_as_numpy(xp.roll(A, 2, axis=1), np.roll(g, 2, axis=1), "roll")
        same_as_numpy(xp.reshape(A, (5, 6)), g.reshape(5, 6), "reshape")
        same_as_numpy(xp.concat([A, A], axis=1), np.concat([g, g], axis=1), "concat")
        same_as_numpy(xp.concat([A, A], axis=None), np.concat([g, g], axis=None), "concat flat")
        same_as_numpy(xp.stack([A, A], axis=0), np.stack([g, g]), "stack")
        same_as_numpy(xp.tile(A, (1, 2)), np.tile(g, (1, 2)), "tile")
    with pytest.raises(ValueError, match="copy=False"):
        xp.reshape(A, (5, 6), copy=False)
    with pytest.warns(pg.GatherWarning, match="tile"):      # 5 dimensions: a NumPy array on every locale
        same_as_numpy(xp.tile(A, (2, 1, 1, 1, 1)), np.tile(g, (2, 1, 1, 1, 1)), "tile (gathered)")


def _field(g):
    coords = {"y": np.arange(g.shape[0]) * 0.5, "x": np.linspace(0.0, 1.0, g.shape[1])}
    return xr.DataArray(pg.from_numpy(g), dims=("y", "x"), coords=coords), xr.DataArray(g, dims=("y", "x"),
                                                                                       coords=coords)


#: xarray operations that run distributed on a DistArray (no gathering), each against xarray on NumPy.
XARRAY_OPS = {
    "arithmetic": lambda d: d * 2 - d ** 2,
    "ufunc": np.sin,
    "mean over x": lambda d: d.mean(dim="x"),
    "std over y": lambda d: d.std(dim="y", ddof=1),
    "max": lambda d: d.max(dim="x"),
    "sum": lambda d: d.sum(),
    "isel": lambda d: d.isel(x=slice(1, 5), y=2),
    "sel": lambda d: d.sel(x=slice(0.2, 0.7)),
    "transpose": lambda d: d.transpose("x", "y"),
    "rolling mean": lambda d: d.rolling(x=3).mean(),
    "rolling sum, centred": lambda d: d.rolling(y=3, center=True).sum(),
    "coarsen": lambda d: d.coarsen(x=2).mean(),
    "shift": lambda d: d.shift(x=1),
    "roll": lambda d: d.roll(x=2),
    "diff": lambda d: d.diff("x"),
    "cumsum": lambda d: d.cumsum("x"),
    "where": lambda d: d.where(d > 0),
    "fillna": lambda d: d.where(d > 0).fillna(-1.0),
    "argmax": lambda d: d.argmax(dim="x"),
    "concat": lambda d: xr.concat([d, d], dim="y"),
    "groupby": lambda d: d.groupby(d.y > 1).mean(),
}


@pytest.mark.parametrize("name", list(XARRAY_OPS))
def test_xarray_operation_as_on_numpy(name):
    g = np.random.default_rng(5).standard_normal((6, 8))
    da, ref = _field(g)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pg.GatherWarning)
        got = XARRAY_OPS[name](da)
    want = XARRAY_OPS[name](ref)
    data = got.data
    data = data if hasattr(data, "_storage") or not hasattr(data, "eval") else data.eval()
    values = data.to_numpy() if hasattr(data, "to_numpy") else np.asarray(data)
    collective_verdict(got.dims == want.dims and values.shape == want.shape and values.dtype == want.dtype
                       and np.allclose(values, want.values, rtol=1e-12, equal_nan=True),
                       lambda: f"{name}: {got.dims} {values!r} != {want.dims} {want.values!r}")


def test_dataarray_zarr_round_trip(tmp_path_factory):
    """``pg.to_zarr`` of a DataArray: xarray alone reads the store; ``pg.open_dataarray`` gives the
    data distributed again with coordinates and attributes; a second write replaces it whole."""
    base = comm.bcast(str(tmp_path_factory.mktemp("xr")) if pg.here == 0 else None, 0)
    store = os.path.join(base, "field.zarr")
    g = np.arange(48.0).reshape(6, 8)
    da, _ = _field(g)
    da = da.assign_coords(label=("x", np.arange(8) * 10)).rename("T")
    da.attrs["units"] = "K"
    pg.to_zarr(da, store)
    plain = xr.open_zarr(store)["T"]
    collective_verdict(np.array_equal(plain.values, g) and plain.dims == ("y", "x")
                       and np.array_equal(plain["label"].values, np.arange(8) * 10) and plain.attrs["units"] == "K",
                       f"xarray read {plain}")
    back = pg.open_dataarray(store, dist=pg.Cyclic())
    collective_verdict(isinstance(back.data, pg.DistArray) and back.name == "T" and back.attrs == {"units": "K"}
                       and set(back.coords) == {"x", "y", "label"}, f"reopened {back}")
    same_as_numpy(back.data, g, "reopened data")
    pg.to_zarr(xr.DataArray(pg.from_numpy(g[:3] + 1), dims=("y", "x")), store)
    again = pg.open_dataarray(store)
    collective_verdict(again.name is None and again.shape == (3, 8) and not again.coords, f"replaced: {again}")
    with pytest.raises(TypeError, match="DistArray"):
        pg.to_zarr(xr.DataArray(g, dims=("y", "x")), store)

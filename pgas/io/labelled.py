"""xarray DataArrays over DistArrays in zarr stores that xarray itself reads.

``xarray.DataArray(A, dims=..., coords=...)`` holds a DistArray as its data (NumPy's protocols
and the array API namespace carry xarray's arithmetic, reductions, ``isel``/``sel``, ``rolling``
and ``shift``), but xarray's own ``to_zarr`` converts the data to one NumPy array, which a
DistArray refuses.  :func:`to_zarr` writes such a DataArray with pgas's writer instead:

- a zarr v3 group at ``store``, written beside it and renamed into place once every locale
  has succeeded (:mod:`pgas.io.atomic`), so a failed write leaves the previous store whole;
- the data as the array ``name`` (:func:`pgas.to_zarr`: each chunk by its owner, with its
  checksums), with xarray's ``dimension_names`` and the DataArray's attributes;
- each coordinate as a small array written by locale 0, and consolidated metadata.

``xarray.open_zarr(store)`` then reads it on one process, and :func:`open_dataarray` reads
it back into a DataArray whose data is distributed again.  Collective; needs xarray and zarr
(``pip install 'pgas[xarray]'``).
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from .. import comm
from ..array.core import DistArray
from ..array.collective import checked
from ..layout import Distribution
from .atomic import replace
from .zarr import _local, _zarr, from_zarr
from .zarr import to_zarr as _array_to_zarr

#: The array name xarray gives a DataArray without a name when it writes one.
UNNAMED = "__xarray_dataarray_variable__"


def _xarray():
    try:
        import xarray
    except ImportError:
        raise ImportError("pgas's xarray support needs xarray: pip install 'pgas[xarray]' (or pip install xarray)") \
            from None
    return xarray


def _plain_attrs(attrs: dict) -> dict:
    """Attributes as JSON-ready values (NumPy scalars and arrays as Python's)."""
    return {str(k): (v.tolist() if isinstance(v, (np.ndarray, np.generic)) else v) for k, v in attrs.items()}


def to_zarr(da, store, chunks=None) -> None:
    """Collective: write the DataArray ``da``, whose data is a DistArray, as a zarr v3 group at
    ``store`` that ``xarray.open_zarr`` reads (see the module notes).

    Parameters
    ----------
    da : xarray.DataArray
        Its data a DistArray; its coordinates NumPy arrays (the same on every locale).
    store : str or os.PathLike
        A directory every locale sees alike; replaced whole if it exists.
    chunks : tuple of int, optional
        Chunk shape of the data; by default its blocks (:func:`pgas.to_zarr`).
    """
    xr = _xarray()
    checked("pgas.io.labelled.to_zarr(...)", args=(str(store),))
    if not isinstance(da, xr.DataArray) or not isinstance(da.data, DistArray):
        raise TypeError(f"to_zarr takes an xarray.DataArray whose data is a DistArray, got {type(da).__name__}"
                        + (f" of {type(da.data).__name__}" if isinstance(da, xr.DataArray) else ""))
    store = os.fspath(store)
    if not _local(store):
        raise ValueError(f"to_zarr writes a DataArray to a directory, got {store!r}")
    zarr = _zarr()
    name = UNNAMED if da.name is None else str(da.name)
    coords = {str(k): (tuple(str(d) for d in c.dims), np.asarray(c.values), _plain_attrs(c.attrs))
              for k, c in da.coords.items()}
    if name in coords:
        raise ValueError(f"to_zarr: the DataArray's name {name!r} is also a coordinate's")
    extra = sorted(k for k, (dims, _, _) in coords.items() if dims != (k,))
    attrs = _plain_attrs(da.attrs)
    if extra:
        attrs["coordinates"] = " ".join(extra)      # xarray's rule for coordinates that are not dimensions

    def write(tmp: str) -> None:
        err = None
        if comm.here() == 0:
            try:
                zarr.open_group(tmp, mode="w")
                for key, (dims, values, cattrs) in coords.items():
                    zarr.create_array(os.path.join(tmp, key), data=values, dimension_names=dims,
                                      attributes=cattrs)
            except Exception as e:                # noqa: BLE001 - raised on every locale below
                err = e
        comm.agree(err)
        _array_to_zarr(da.data, os.path.join(tmp, name), chunks=chunks,
                       dimension_names=tuple(str(d) for d in da.dims), attributes=attrs)
        err = None
        if comm.here() == 0:
            try:
                with warnings.catch_warnings():   # zarr: consolidated metadata is not in the v3 spec (xarray reads it)
                    warnings.simplefilter("ignore")
                    zarr.consolidate_metadata(tmp)
            except Exception as e:                # noqa: BLE001
                err = e
        comm.agree(err)

    replace(store, write)


def open_dataarray(store, dist: Distribution | None = None):
    """Collective: the DataArray :func:`to_zarr` wrote at ``store`` (or any zarr group holding
    one data variable with ``dimension_names``), its data a DistArray with distribution ``dist``
    (Block by default), its coordinates read by every locale."""
    xr = _xarray()
    checked("pgas.io.labelled.open_dataarray(...)", args=(str(store), repr(dist)))
    store = os.fspath(store)
    zarr = _zarr()
    err, found = None, None
    try:
        group = zarr.open_group(store, mode="r")
        arrays = dict(group.arrays())
        dims_of = {k: tuple(a.metadata.dimension_names or ()) for k, a in arrays.items()}
        data = [k for k, dims in dims_of.items() if dims != (k,) and not _is_coord(k, arrays)]
        if len(data) != 1:
            raise ValueError(f"{store}: holds {len(data)} data variables {data}; open_dataarray needs one")
        found = data[0]
    except Exception as e:                        # noqa: BLE001 - raised on every locale below
        err = e
    comm.agree(err)
    A = from_zarr(os.path.join(store, found), dist=dist)
    attrs = dict(arrays[found].attrs)
    attrs.pop("pgas_crc32", None)
    names = set(attrs.pop("coordinates", "").split())
    coords = {k: xr.Variable(dims_of[k], arrays[k][...], attrs=dict(arrays[k].attrs))
              for k in arrays if k != found and (dims_of[k] == (k,) or k in names)}
    return xr.DataArray(A, dims=dims_of[found], coords=coords, attrs=attrs,
                        name=None if found == UNNAMED else found)


def _is_coord(key: str, arrays: dict) -> bool:
    """Whether ``key`` is named as a coordinate by another array's ``coordinates`` attribute."""
    return any(key in str(a.attrs.get("coordinates", "")).split() for a in arrays.values())

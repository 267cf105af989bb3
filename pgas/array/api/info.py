"""The standard's inspection API: ``__array_namespace_info__()``."""

from __future__ import annotations

from . import device as _device
from . import dtypes as _dtypes


class Info:
    """What the namespace offers: its capabilities, device and data types."""

    __module__ = "pgas.array_api"

    def capabilities(self) -> dict:
        """Boolean indexing and data-dependent shapes (``unique_*``, ``nonzero``) are supported
        (they gather to every locale)."""
        return {"boolean indexing": True, "data-dependent shapes": True}

    def default_device(self):
        """The locale grid."""
        return _device.LOCALES

    def devices(self) -> list:
        """The locale grid, the only device."""
        return [_device.LOCALES]

    def default_dtypes(self, *, device=None) -> dict:
        """``float64``, ``complex128``, ``int64`` for integers and indexing."""
        _device.check(device)
        return {"real floating": _dtypes.float64, "complex floating": _dtypes.complex128,
                "integral": _dtypes.int64, "indexing": _dtypes.int64}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The data types of ``kind`` (a kind name or tuple of them; all when None), by name."""
        _device.check(device)
        if kind is None:
            return dict(_dtypes.DTYPES)
        return {n: d for n, d in _dtypes.DTYPES.items() if _dtypes.isdtype(d, kind)}


def __array_namespace_info__() -> Info:
    """The namespace's inspection object."""
    return Info()

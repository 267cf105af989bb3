"""The namespace's one device: the grid of locales a job runs on."""

from __future__ import annotations


class Device:
    """The locales of the job, taken together as one device (the standard's ``device``).

    Every distributed array lives on it; the 0-d (replicated) arrays are NumPy's, whose device
    ``"cpu"`` is accepted as the same device."""

    def __repr__(self) -> str:
        return "pgas.array_api.LOCALES"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) or other == "cpu"

    def __hash__(self) -> int:
        return hash("pgas-locales")


#: The device every array of the namespace is on.
LOCALES = Device()


def check(device) -> None:
    """Raise ValueError unless ``device`` is None or the locale grid."""
    if device is not None and not (device == LOCALES):
        raise ValueError(f"unknown device {device!r}: pgas has one device, the locale grid "
                         "(pgas.array_api.LOCALES, or x.device)")


def to_device(x, device, /, *, stream=None):
    """``x`` on ``device``: the locale grid is the only device, so ``x`` itself."""
    check(device)
    if stream is not None:
        raise ValueError("pgas has no streams")
    return x

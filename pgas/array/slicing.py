"""One-sided bulk transfers of basic slices (``A.get(key)`` / ``A.put(key, v)``).

The selection is split by owning locale; on each owner the selected local
indices of every dimension are, for step-1 slices on any distribution and
for any step on Block and Cyclic, one arithmetic run (local storage
concatenates a locale's blocks), so the owner's part is a single strided box:
one message with an O(ndim) datatype, and a plain slice view when local.
Selections that are not runs (Block-Cyclic with steps) fall back to an
indexed datatype — still one message per owning locale.
"""

from __future__ import annotations

import numpy as np

from .index import basic_index


def _run(idx: np.ndarray) -> tuple[int, int, int] | None:
    """``(start, count, step)`` if ``idx`` is an arithmetic progression with a non-zero step."""
    if len(idx) == 1:
        return int(idx[0]), 1, 1
    step = int(idx[1] - idx[0])
    if step != 0 and np.all(np.diff(idx) == step):
        return int(idx[0]), len(idx), step
    return None


def _slice(run: tuple[int, int, int]) -> slice:
    start, count, step = run
    stop = start + count * step
    return slice(start, stop if stop >= 0 else None, step)


def _key(parts: list[np.ndarray]):
    """An index of an ndarray selecting the product of ``parts``: basic slices when each
    part is a run, else ``np.ix_``."""
    runs = [_run(p) for p in parts]
    if all(r is not None for r in runs):
        return tuple(_slice(r) for r in runs)
    return np.ix_(*parts)


def _box(runs, local_shape) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """The strided box ``(offset, counts, strides)`` (elements) of a product of runs in a
    C-ordered array of ``local_shape``."""
    strides = np.cumprod((1,) + tuple(local_shape[:0:-1]))[::-1]
    offset = sum(r[0] * int(s) for r, s in zip(runs, strides))
    return offset, tuple(r[1] for r in runs), tuple(r[2] * int(s) for r, s in zip(runs, strides))


def _parts(A, key):
    sel, out_shape = basic_index(key, A.shape, A.label)
    full = tuple(len(s) for s in sel)
    return out_shape, full, A._by_owner(sel)


def get_slice(A, key) -> np.ndarray:
    """One-sided read of a basic slice of ``A``: one message per remote owning locale."""
    out_shape, full, parts = _parts(A, key)
    out = np.empty(full, dtype=A.dtype)
    for target, pos, lists in parts:
        if target == A._me:
            out[_key(pos)] = A.local[_key(lists)]
            continue
        buf = np.empty(tuple(len(p) for p in pos), dtype=A.dtype)
        runs = [_run(l) for l in lists]
        if all(r is not None for r in runs):
            offset, counts, strides = _box(runs, A.layout.local_shape(target))
            A._win.get(target, offset, buf, counts, strides)
        else:
            A._win.get_product(target, lists, A.layout.local_shape(target), buf)
        out[_key(pos)] = buf
    return out.reshape(out_shape)


def put_slice(A, key, value) -> None:
    """One-sided write of ``value`` (broadcast to the slice) into a basic slice of ``A``."""
    out_shape, full, parts = _parts(A, key)
    value = A._cast(value)
    try:
        value = np.broadcast_to(value, out_shape).reshape(full)
    except ValueError:
        raise ValueError(f"{A.label}: cannot put a value of shape {value.shape} into {key!r} "
                         f"of shape {out_shape}") from None
    for target, pos, lists in parts:
        part = value[_key(pos)]
        if target == A._me:
            A.local[_key(lists)] = part
            continue
        runs = [_run(l) for l in lists]
        if all(r is not None for r in runs):
            offset, counts, strides = _box(runs, A.layout.local_shape(target))
            A._win.put(target, offset, part, counts, strides)
        else:
            A._win.put_product(target, lists, A.layout.local_shape(target), part)

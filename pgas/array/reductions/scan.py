"""Scans along an axis: ``cumsum``, ``cumprod`` and ``ufunc.accumulate`` of ``add``,
``multiply``, ``maximum`` and ``minimum``.

Along the scanned axis a locale owns blocks of ``b`` consecutive indices (one
block for Block, ``b = 1`` for Cyclic), stored in increasing global order.
Each locale scans within each of its blocks with NumPy, sends the block
totals to the locales of its grid line along the axis (one message per such
peer), and every locale then knows every block total in global block order:
its exclusive prefix over the blocks before each of its own blocks is added
(multiplied) in.  The result has the input's layout.  With Block that is one
total per kept element; with Cyclic (``b = 1``) the totals are the local
elements themselves, so a Cyclic scan moves the whole local part to each peer
of the line.  ``axis=None`` scans the C-order ravel (a 1-D result), as NumPy.

``np.add.accumulate(A, axis)`` is the same scan in NumPy's ufunc loop dtype
(``int8`` stays ``int8``, ``bool`` adds as logical or), where ``np.cumsum``
widens small integers and booleans to the platform integer.
"""

from __future__ import annotations

import numpy as np

from ... import comm
from ...exec import fperr
from ..axes import normalize_axes
from .. import collective
from ..index import check_dtype
from ..operands import source
from .axisreduce import loop_dtype

_FNS = {"cumsum": np.add, "cumprod": np.multiply}

#: The ufuncs whose ``accumulate`` is this scan.
ACCUMULATE = (np.add, np.multiply, np.maximum, np.minimum)


def _line_peers(layout, ax: int, me: int) -> list[int]:
    """The locales whose grid coordinates equal ``me``'s except along ``ax``, in order of that coordinate."""
    coords = list(layout.coords(me))
    out = []
    for q in range(layout.grid[ax]):
        coords[ax] = q
        out.append(int(layout.locale_of(coords)))
    return out


def scan(a, op: str, axis=None, dtype=None, out=None):
    """Collective: NumPy's ``cumsum`` / ``cumprod`` of ``a`` along ``axis``; see the module docstring."""
    ufunc = _FNS[op]
    return _scan(a, op, ufunc, axis, dtype, out, np.cumsum if op == "cumsum" else np.cumprod)


def accumulate(ufunc, a, axis=0, dtype=None, out=None):
    """Collective: NumPy's ``ufunc.accumulate(a, axis, dtype, out)`` for the ufuncs of
    :data:`ACCUMULATE` (``axis=None`` is NumPy's error for an n-D ``a``)."""
    name = f"{ufunc.__name__}.accumulate"
    if axis is None and np.ndim(a) > 1:
        raise ValueError(f"{name}: axis=None is only valid for 1-D input (NumPy's rule); pass an axis or "
                         "A.ravel()")
    return _scan(a, name, ufunc, 0 if axis is None else axis, dtype, out, ufunc.accumulate)


@fperr.agreeing              # a local part's error raises on every locale, so none waits
def _scan(a, op: str, ufunc, axis, dtype, out, probe):
    from ..core import DistArray
    from ..shape import ravel

    A = source(a)
    collective.folded(f"np.{op}({{0}}, ...)" if "." in op else f"{{0}}.{op}(...)", A,   # agreed in the exchange
                      args=(collective.plain(axis), str(dtype), collective.plain(out)))
    if axis is None and A.ndim > 1:
        A = ravel(A)
    try:                                             # an argument's error on one locale: raised alike
        ax = 0 if axis is None else normalize_axes(axis, A.ndim, single=True)[0]
        if out is not None:
            if not isinstance(out, DistArray):
                raise TypeError(f"{op}: out= must be a DistArray, got {type(out).__name__}")
            if out.shape != A.shape:
                raise ValueError(f"{op}: out= has shape {out.shape}, the result has shape {A.shape}")
        dtype = loop_dtype(ufunc, A.dtype, dtype, out)
        rdt = check_dtype(probe(np.zeros(1, A.dtype), dtype=dtype).dtype)
    except (ValueError, TypeError) as e:
        comm.exchange([np.empty(0, np.uint8)] * comm.num_locales(), np.uint8, e)   # raises it on every locale
        raise
    fn = ufunc.accumulate
    me = comm.here()
    m = A.layout.maps[ax]
    b, p, q = m.b, m.p, A.layout.coords(me)[ax]
    x = np.moveaxis(A.local, ax, 0)
    L, rest = x.shape[0], x.shape[1:]
    k, r = divmod(L, b)
    within = np.empty(x.shape, rdt)
    ends = [min((j + 1) * b, L) - 1 for j in range(k + (r > 0))]
    peers = _line_peers(A.layout, ax, me)
    send = [np.empty(0, np.uint8)] * comm.num_locales()
    try:                                             # (an error here is raised alike by the exchange)
        if k:
            within[:k * b] = fn(x[:k * b].reshape(k, b, *rest), axis=1, dtype=rdt).reshape(k * b, *rest)
        if r:
            within[k * b:] = fn(x[k * b:], axis=0, dtype=rdt)
        totals = np.ascontiguousarray(within[ends])
        if totals.size:
            for t in peers:
                send[t] = totals.reshape(-1).view(np.uint8)
        err = None
    except (ValueError, TypeError, OverflowError) as e:
        err = e
    got = comm.exchange(send, np.uint8, err)
    nblocks = -(-m.n // b)
    G = np.zeros((nblocks, *rest), rdt)
    for qq, t in enumerate(peers):
        if got[t].size:
            G[qq::p] = got[t].view(rdt).reshape(-1, *rest)
    incl = fn(G, axis=0, dtype=rdt)
    first = q + p * np.arange(len(ends))             # the global block number of each local block
    before = incl[np.maximum(first - 1, 0)]          # the scan up to the block before it
    sizes = [b] * k + ([r] if r else [])
    res = within
    if L:
        res = ufunc(np.repeat(before, sizes, axis=0), within, dtype=rdt)
        if q == 0:                                   # global block 0 has nothing before it
            res[:sizes[0]] = within[:sizes[0]]
    res = np.moveaxis(res, 0, ax)
    if out is not None and out.layout.key == A.layout.key:
        from .. import engine

        if not np.can_cast(rdt, out.dtype, "same_kind"):
            raise TypeError(f"{op}: cannot store a {rdt} result in out= {out.label} (casting rule 'same_kind')")
        engine.before_write(out, None)
        out.local[...] = res
        comm.barrier([out._win])
        return out
    R = DistArray._create(A.layout, rdt)
    R.local[...] = res
    comm.barrier([R._win])
    if out is not None:
        out[...] = R
        return out
    return R

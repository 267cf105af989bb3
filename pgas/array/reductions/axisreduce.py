"""Reductions along axes: ``A.sum(axis=0)``, ``pg.var(A, axis=(0, 2), ddof=1)``, ``A.argmax(1)``.

Each locale reduces its local block along the reduced axes with NumPy (its
partial result covers the kept-axes indices it owns); the partial results go,
as ``(offset, fields)`` records, to the owners of the result elements in ONE
personalised exchange (at most one message per locale pair), and each owner
combines what it received in locale order.  The result is a DistArray over the
kept axes, distributed like the input (same kind, default grid), or into
``out=``; reducing every axis gives a scalar on every locale (the partials are
then folded in an MPI reduction tree, in locale order: O(log P) steps, no
locale receives one record per locale).

Partial results are combined with the operation's ufunc (``add``,
``multiply``, ``minimum``, ``maximum``, ``logical_or``, ``logical_and``);
``var``/``std`` combine per-locale (count, sum, sum of squared deviations)
with the parallel-variance formula; ``argmin``/``argmax`` combine (value,
global index) pairs, NaN first and ties to the smallest index, as NumPy.
Views and lazy expressions are materialised first.
"""

from __future__ import annotations

import numpy as np

from ... import comm
from ...comm.userwarn import warn
from ...exec import fperr
from ..axes import normalize_axes, result_dist
from ..index import check_dtype
from ..operands import source
from .. import collective

_NoValue = np._NoValue

# name: (combining ufunc, local NumPy reduction, has identity)
_OPS = {"sum": (np.add, np.sum), "prod": (np.multiply, np.prod), "min": (np.minimum, np.min),
        "max": (np.maximum, np.max), "any": (np.logical_or, np.any), "all": (np.logical_and, np.all),
        "count_nonzero": (np.add, None)}
_NO_IDENTITY = ("min", "max")


def loop_dtype(ufunc, in_dtype, dtype, out):
    """The ``dtype`` a sum, product or scan of ``in_dtype`` data computes in: the given one;
    else, with ``out=``, the loop NumPy resolves with out's dtype where that is out's dtype
    (``np.prod(ints, out=floats)`` multiplies in float64, not in int64 then cast; a float32
    sum into float64 adds in float64); else None (the operation's default)."""
    if dtype is not None or out is None or not hasattr(out, "dtype"):
        return dtype                          # (an out= of the wrong kind raises later)
    od = np.dtype(out.dtype)
    try:
        loop = ufunc.resolve_dtypes((od, np.dtype(in_dtype), None), reduction=True)[0]
    except (TypeError, ValueError):           # an unsafe cast into out: the default, then cast
        return None
    return loop if loop == od else None


def _where_local(A, where):
    """The local part of a ``where=`` mask: a DistArray of A's layout, or a replicated
    NumPy bool array broadcastable to A's shape."""
    if where is True:
        return True
    from ..core import DistArray

    if isinstance(where, DistArray) or hasattr(where, "eval"):   # distributed: a view or expression too
        if np.dtype(where.dtype) != bool:
            raise TypeError(f"where= must be a boolean mask, got {np.dtype(where.dtype)}")
        if not isinstance(where, DistArray) or where.layout.key != A.layout.key:
            try:
                np.broadcast_shapes(tuple(where.shape), A.shape)
            except ValueError:
                raise ValueError(f"where= of shape {tuple(where.shape)} does not broadcast to {A.label}") from None
            mask = DistArray._create(A.layout, np.dtype(bool))
            mask[...] = where                 # one statement: moved to A's distribution
            where = mask
        return where.local
    w = np.asarray(where)
    if w.dtype != bool:
        raise TypeError(f"where= must be a boolean mask, got {w.dtype}")
    try:
        w = np.broadcast_to(w, A.shape)
    except ValueError:
        raise ValueError(f"where= of shape {w.shape} does not broadcast to {A.label}") from None
    return w[np.ix_(*A.layout.owned(comm.here()))]


class _Target:
    """Where partial results go: the result's shape, layout (None for a scalar) and the
    global result index of each cell of this locale's partial."""

    def __init__(self, A, axes, keepdims, out, what):
        self.axes = axes
        kept = [d for d in range(A.ndim) if d not in axes]
        self.shape = tuple(1 if d in axes else A.shape[d] for d in range(A.ndim)) if keepdims else \
            tuple(A.shape[d] for d in kept)
        owned = A.layout.owned(comm.here())
        self.contributes = all(len(owned[d]) for d in axes)
        self.local_shape = tuple(len(owned[d]) for d in kept)
        if out is not None:
            from ..core import DistArray

            if not isinstance(out, DistArray):
                raise TypeError(f"{what}: out= must be a DistArray, got {type(out).__name__}")
            if out.shape != self.shape:
                raise ValueError(f"{what}: out= has shape {out.shape}, the result has shape {self.shape}")
            self.layout = out.layout.with_ghosts(())    # partials address the dense interior
        elif self.shape:
            self.layout = result_dist(A.layout, len(self.shape)).bind(self.shape, comm.num_locales())
        else:
            self.layout = None
        idx = [np.zeros(1, np.int64) if d in axes else owned[d] for d in range(A.ndim)] if keepdims else \
            [owned[d] for d in kept]
        self.cols = [g.reshape(-1) for g in np.meshgrid(*idx, indexing="ij")] if idx else []


def _axes(A, axis, name: str, single: bool = False) -> tuple:
    """``axis`` read for ``A`` (:func:`normalize_axes`); an axis out of range on one locale
    only is raised on every locale alike, in the exchange the others make for their
    partial results (:func:`_failed`), with the call folded (or agreed, under strict
    checking, where its other axis shows it differs)."""
    try:
        return normalize_axes(axis, A.ndim, single=single)
    except (ValueError, TypeError) as e:
        collective.folded(f"{{0}}.{name}({_axis_text(axis)})", A, args=(collective.plain(axis),))
        _failed(e)
        raise


def _checked(A, axes, keepdims, out, op: str, args) -> None:
    """Check the call ``op`` (with ``args``) on ``A``: where its result is an array, whose
    partial results go to their owners by one :func:`pgas.comm.exchange`, the call is only
    folded in the folding mode of collective checking (the exchange agrees on it, and on
    any locale's error in making its partial results: :func:`_partial`); a scalar result
    is combined by a reduction that does not, so that call is agreed first."""
    if out is None and not keepdims and len(axes) == A.ndim:
        collective.checked(op, A, args=args)
    else:
        collective.folded(op, A, args=args)


def _partial(A, axes, keepdims, out, make):
    """``(make(), None)``, or, where the result is an array (see :func:`_checked`), ``(None,
    error)`` for an error ``make`` raises, which :func:`_exchange` then raises alike."""
    if out is None and not keepdims and len(axes) == A.ndim:
        return make(), None
    try:
        return make(), None
    except (ValueError, TypeError, IndexError, OverflowError, NotImplementedError) as e:
        return None, e


def _failed(error: BaseException) -> None:
    """Raise ``error`` on every locale alike in the exchange the others make (:func:`_exchange`)."""
    comm.exchange([np.empty(0, np.uint8)] * comm.num_locales(), np.uint8, error)


def _exchange(t: _Target, fields: dict, fold) -> tuple[np.ndarray, dict]:
    """Send each partial cell's ``fields`` to the result owner; returns the received
    ``(local offsets, fields)``, concatenated in source locale order.

    A scalar result is combined in a reduction tree: ``fold(offs, fields)`` folds the
    records of some consecutive locales (in locale order) into the fields of one record,
    so no locale receives a record per locale."""
    n = int(np.prod(t.local_shape)) if t.contributes else 0
    rec = np.dtype([("off", np.int64)] + [(k, v.dtype) for k, v in fields.items()])
    if t.layout is None:                                  # scalar result: everyone gets everything
        mine = np.empty(1 if t.contributes else 0, rec)
        mine["off"] = 0
        for k, v in fields.items():
            mine[k] = v.reshape(-1)[:len(mine)]

        def combine(x, y):
            r = np.concatenate([x, y])
            if len(r) <= 1:
                return r
            one = np.zeros(1, rec)
            for k, v in fold(r["off"], {k: r[k] for k in fields}).items():
                one[k] = np.reshape(v, -1)
            return one
        got = comm.allreduce_with(mine, combine)
    else:
        records = np.empty(n, rec)
        P = comm.num_locales()
        if n:
            owners = np.asarray(t.layout.owners(tuple(t.cols)), dtype=np.int64).reshape(-1)
            records["off"] = t.layout.local_flat(tuple(t.cols), owners)
            for k, v in fields.items():
                records[k] = v.reshape(-1)
            order = np.argsort(owners, kind="stable")
            records = records[order]
            counts = np.bincount(owners, minlength=P)
        else:
            counts = np.zeros(P, np.int64)
        edges = np.concatenate([[0], np.cumsum(counts)])
        parts = [records[edges[r]:edges[r + 1]].view(np.uint8) for r in range(P)]
        got = np.concatenate([p.view(rec) for p in comm.exchange(parts, np.uint8)])
    return got["off"], {k: got[k] for k in fields}


def _finish(t: _Target, values: np.ndarray, out, dtype):
    """Store the combined local values (result layout's local storage order) as the result."""
    if t.layout is None:
        return values.astype(dtype, copy=False)[0]
    from .. import engine
    from ..core import DistArray

    if out is None:
        out = DistArray._create(t.layout, check_dtype(dtype))
    else:
        if values.dtype.kind == "c" and out.dtype.kind != "c":     # as NumPy does, on every locale alike
            warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning)
            values = values.real
        engine.before_write(out, None)      # NumPy casts a reduction's result into out= unsafely
    if out.layout.ghosts:
        out.local[...] = values.astype(out.dtype, copy=False).reshape(out.local.shape)
    else:
        out._flat_local[...] = values.astype(out.dtype, copy=False)
    comm.barrier([out._win])
    return out


def _size(t) -> int:
    return 1 if t.layout is None else int(np.prod(t.layout.local_shape(comm.here())))


def _combine(t, ufunc, offs, vals, dtype, initial):
    """``ufunc`` over the received values of each result element, in locale order."""
    res = np.empty(_size(t), dtype)
    if initial is not None:
        res[...] = initial
    elif ufunc.identity is not None and ufunc not in (np.minimum, np.maximum):
        res[...] = ufunc.identity
    else:                                  # no identity: start from each element's first value
        res[offs[::-1]] = vals[::-1]
    if len(offs):
        with np.errstate(invalid="ignore"):         # NaN propagates quietly, as in NumPy's min / max
            ufunc.at(res, offs, vals.astype(dtype, copy=False))
    return res


def _axis_text(axis) -> str:
    """How a reduction's call shows its axis in a mismatch message."""
    return "" if axis is None else f"axis={axis!r}"


@fperr.agreeing
def reduce(a, op: str, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """Collective: NumPy's ``op`` (sum, prod, min, max, any, all, count_nonzero) of ``a`` along
    ``axis``; see the module docstring."""
    A = source(a)
    axes = _axes(A, axis, op)
    ufunc, local_fn = _OPS[op]
    if op in ("sum", "prod"):
        dtype = loop_dtype(ufunc, A.dtype, dtype, out)
    what = f"{op} over {A.label}"
    if op in ("any", "all", "count_nonzero"):
        probe_dtype = np.dtype(bool) if op != "count_nonzero" else np.dtype(np.intp)
    elif op in _NO_IDENTITY:
        probe_dtype = A.dtype
    else:
        probe_dtype = local_fn(np.zeros(1, A.dtype), **({} if dtype is None else {"dtype": dtype})).dtype
    init = None if initial is _NoValue else initial
    if op in _NO_IDENTITY and init is None and any(A.shape[d] == 0 for d in axes):
        raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} which has no identity ({what})")
    if op in _NO_IDENTITY and where is not True and init is None:
        raise ValueError(f"reduction operation '{ufunc.__name__}' does not have an identity, so to use a where "
                         "mask one has to specify 'initial'")
    if (out is None and where is True and initial is _NoValue and not keepdims and dtype is None
            and len(axes) == A.ndim and op in ("sum", "prod", "min", "max")):
        from .whole import reduce_all

        return reduce_all(A, local_fn, op, None, None, None)        # checked there
    _checked(A, axes, keepdims, out, f"{{0}}.{op}({_axis_text(axis)})",
             (op, collective.plain(axis), str(dtype), keepdims, collective.plain(where), collective.plain(initial)))

    def make():
        t = _Target(A, axes, keepdims, out, what)
        mask = _where_local(A, where)
        if not t.contributes:
            return t, np.empty(0, probe_dtype)
        kw = {} if mask is True else {"where": mask}
        if op == "count_nonzero":
            part = np.count_nonzero(A.local, axis=axes) if mask is True else \
                np.sum((A.local != 0) & mask, axis=axes)
        elif op in ("any", "all"):
            part = local_fn(A.local, axis=axes, **kw)
        elif op in _NO_IDENTITY:        # initial is idempotent here, so each locale may apply it
            part = local_fn(A.local, axis=axes, **kw, **({} if init is None else {"initial": init}))
        else:                           # initial is applied once, when combining
            part = local_fn(A.local, axis=axes, dtype=probe_dtype, **kw)
        return t, part
    made, err = _partial(A, axes, keepdims, out, make)
    if err is not None:
        _failed(err)
    t, part = made
    offs, f = _exchange(t, {"v": np.asarray(part, dtype=probe_dtype)},
                        lambda o, g: {"v": _combine(t, ufunc, o, g["v"], probe_dtype, None)})
    res = _combine(t, ufunc, offs, f["v"], probe_dtype, init)
    if t.layout is None and op == "count_nonzero":
        return int(res[0])
    return _finish(t, res, out, probe_dtype)


@fperr.agreeing
def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=True):
    """Collective: NumPy's ``mean`` along ``axis`` (see :func:`reduce`)."""
    A = source(a)
    axes = _axes(A, axis, "mean")
    sdt = np.dtype(dtype) if dtype is not None else (       # (NumPy sums floats with out= as sum does)
        np.dtype(np.float64) if A.dtype.kind in "biu" else loop_dtype(np.add, A.dtype, None, out) or A.dtype)
    if where is True and not np.prod([A.shape[d] for d in axes]):      # NumPy's warning, alike
        _empty_mean()
    if where is True and out is None and not keepdims and len(axes) == A.ndim:
        # by NumPy's intp count (a Python int is weak: float32 / 2**24 + 1 would divide in float32)
        return np.true_divide(reduce(A, "sum", None, sdt), np.intp(A.size)).astype(sdt)   # checked there
    _checked(A, axes, keepdims, out, f"{{0}}.mean({_axis_text(axis)})",
             (collective.plain(axis), str(dtype), keepdims, collective.plain(where)))

    def make():
        t = _Target(A, axes, keepdims, out, f"mean over {A.label}")
        mask = _where_local(A, where)
        if not t.contributes:
            return t, {"s": np.empty(0, sdt), "n": np.empty(0, np.int64)}
        kw = {} if mask is True else {"where": mask}
        s = np.sum(A.local, axis=axes, dtype=sdt, **kw)
        n = np.sum(np.broadcast_to(mask, A.local.shape), axis=axes, dtype=np.int64) if mask is not True else \
            np.full(np.shape(s), int(np.prod([A.local.shape[d] for d in axes])), np.int64)
        return t, {"s": np.asarray(s, sdt), "n": np.asarray(n, np.int64)}
    made, err = _partial(A, axes, keepdims, out, make)
    if err is not None:
        _failed(err)
    t, fields = made
    offs, f = _exchange(t, fields, lambda o, g: {"s": _combine(t, np.add, o, g["s"], sdt, None),
                                                 "n": _combine(t, np.add, o, g["n"], np.int64, None)})
    s = _combine(t, np.add, offs, f["s"], sdt, None)
    n = _combine(t, np.add, offs, f["n"], np.int64, None)
    if where is not True:                 # a slice where= empties: NumPy warns (each locale holds others)
        empty = bool(np.any(n == 0))
        if (comm.allreduce(int(empty), "max") if t.layout is not None else empty):
            _empty_mean()
    res = np.true_divide(s, n)            # NumPy's invalid value of an empty slice, warned or raised
    return _finish(t, res.astype(sdt, copy=False), out, sdt)


def _empty_mean() -> None:
    warn("Mean of empty slice.", RuntimeWarning)


@fperr.agreeing
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, std=False, where=True):
    """Collective: NumPy's ``var`` (``std`` if ``std``) along ``axis`` with ``ddof`` over the
    elements ``where`` selects: per-locale (count, sum, squared deviations) combined with the
    parallel-variance formula."""
    A = source(a)
    axes = _axes(A, axis, "std" if std else "var")
    _checked(A, axes, keepdims, out, f"{{0}}.{'std' if std else 'var'}({_axis_text(axis)})",
             (collective.plain(axis), str(dtype), ddof, keepdims, std, collective.plain(where)))
    if dtype is not None and np.dtype(dtype).kind in "biu":
        # NumPy truncates the mean to that dtype and sums the squares with wrap-around:
        # not what the parallel formula below computes, and not something worth copying.
        raise TypeError(f"{'std' if std else 'var'}(dtype={np.dtype(dtype)}) of {A.label} is not supported "
                        "(NumPy computes it with a truncated mean and wrapping sums); use a floating dtype, "
                        "e.g. dtype=np.float64")
    cdt = np.dtype(dtype) if dtype is not None else (np.dtype(np.float64) if A.dtype.kind in "biu" else A.dtype)
    rdt = np.empty(0, cdt).real.dtype if cdt.kind == "c" else cdt
    res_dt = cdt if cdt.kind == "c" and A.dtype.kind != "c" else rdt   # NumPy: real input, complex dtype

    def make():
        t = _Target(A, axes, keepdims, out, f"{'std' if std else 'var'} over {A.label}")
        mask = _where_local(A, where)
        if not t.contributes:
            return t, {"n": np.empty(0, np.int64), "s": np.empty(0, cdt), "m2": np.empty(0, rdt)}
        x = A.local.astype(cdt, copy=False)
        kw = {} if mask is True else {"where": mask}
        if mask is True:
            cnt = np.full([1 if d in axes else x.shape[d] for d in range(x.ndim)],
                          int(np.prod([x.shape[d] for d in axes])), np.int64)
        else:
            cnt = np.sum(np.broadcast_to(mask, x.shape), axis=axes, keepdims=True, dtype=np.int64)
        s = np.sum(x, axis=axes, keepdims=True, **kw)
        with np.errstate(invalid="ignore", divide="ignore"):
            mu = s / np.maximum(cnt, 1)
        dev = x - mu                      # NumPy's x - mean: inf - inf is its invalid value
        m2 = np.sum((dev * dev.conj()).real if cdt.kind == "c" else dev * dev, axis=axes, **kw)
        return t, {"n": cnt.reshape(m2.shape), "s": s.reshape(m2.shape), "m2": np.asarray(m2, rdt)}
    made, err = _partial(A, axes, keepdims, out, make)
    if err is not None:
        _failed(err)
    t, fields = made

    def moments(o, g):                  # (count, sum, squared deviations) of each result element
        n = _combine(t, np.add, o, g["n"], np.int64, None)
        s = _combine(t, np.add, o, g["s"], cdt, None)
        with np.errstate(invalid="ignore", divide="ignore"):
            d = g["s"] / np.maximum(g["n"], 1) - (s / np.maximum(n, 1))[o]
            extra = g["n"] * ((d * d.conj()).real if cdt.kind == "c" else d * d)
            m2 = _combine(t, np.add, o, (g["m2"] + extra).astype(rdt), rdt, None)
        return {"n": n, "s": s, "m2": m2}
    offs, f = _exchange(t, fields, moments)
    n, s, m2 = moments(offs, f).values()
    dof = np.maximum(n - ddof, 0)
    none_left = bool(np.any(dof == 0))
    if t.layout is not None:              # each locale holds other results: warn alike everywhere
        none_left = bool(comm.allreduce(int(none_left), "max"))
    if none_left:
        warn("Degrees of freedom <= 0 for slice", RuntimeWarning)
    res = (m2 / dof).astype(rdt)          # NumPy's divide/invalid by no degrees of freedom, warned or raised
    if std:
        res = np.sqrt(res)
    return _finish(t, res.astype(res_dt, copy=False), out, res_dt)


def arg(a, op: str, axis=None, out=None, keepdims=False):
    """Collective: NumPy's ``argmin``/``argmax`` along one ``axis`` (global index along it), or
    with ``axis=None`` the flat global (C order) index; NaN wins, ties go to the smallest index."""
    A = source(a)
    single = _axes(A, axis, op, single=True) if axis is not None else None
    axes = single if single is not None else tuple(range(A.ndim))
    _checked(A, axes, keepdims, out, f"{{0}}.arg{op}({_axis_text(axis)})", (op, collective.plain(axis), keepdims))
    n_out = int(np.prod([A.shape[d] for d in range(A.ndim) if d not in axes]))
    if any(A.shape[d] == 0 for d in axes):        # NumPy: also when the result is empty (shape (0, 0))
        raise ValueError(f"attempt to get {op} of an empty sequence ({A.label})")
    t = _Target(A, axes, keepdims, out, f"{op} over {A.label}")
    if not n_out:     # an empty result (another axis has length 0): nothing to reduce
        return _finish(t, np.zeros(_size(t), np.intp), out, np.dtype(np.intp))
    owned = A.layout.owned(comm.here())
    fields = {"v": np.empty(0, A.dtype), "i": np.empty(0, np.int64)}
    fn = np.argmin if op == "argmin" else np.argmax
    if t.contributes:
        if single is None:
            k = int(fn(A.local))
            loc = np.unravel_index(k, A.local.shape)
            g = np.ravel_multi_index(tuple(o[j] for o, j in zip(owned, loc)), A.shape)
            fields = {"v": A.local.reshape(-1)[k:k + 1], "i": np.array([g], np.int64)}
        else:
            ax = single[0]
            pos = fn(A.local, axis=ax, keepdims=True)
            fields = {"v": np.take_along_axis(A.local, pos, ax).squeeze(ax),
                      "i": owned[ax][pos.squeeze(ax)].astype(np.int64)}

    def winners(offs, v, i):            # the record that wins each result element
        isnan = np.isnan(v) if v.dtype.kind in "fc" else np.zeros(len(v), bool)
        vk = [v.imag, v.real] if v.dtype.kind == "c" else [v.astype(np.int8) if v.dtype == bool else v]
        if op == "argmin":     # first of each group: NaN, then smallest value, then smallest index
            order = np.lexsort([i, *vk, ~isnan, offs])
            pick = np.ones(len(order), bool)
            pick[1:] = offs[order][1:] != offs[order][:-1]
        else:                  # last of each group: NaN, then largest value, then smallest index
            order = np.lexsort([-i, *vk, isnan, offs])
            pick = np.ones(len(order), bool)
            pick[:-1] = offs[order][1:] != offs[order][:-1]
        return order[pick]
    offs, f = _exchange(t, fields, lambda o, g: {k: g[k][winners(o, g["v"], g["i"])] for k in g})
    won = winners(offs, f["v"], f["i"])
    res = np.zeros(_size(t), np.intp)
    res[offs[won]] = f["i"][won]
    return _finish(t, res, out, np.dtype(np.intp))

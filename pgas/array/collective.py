"""The array side of collective call checking (:mod:`pgas.comm.check`), scalar
element access, and errors that must be raised on every locale alike.

- :func:`checked` / :func:`statement` / :func:`forall`: with checking on, every
  locale first agrees that it is making the same call (operation, arrays by
  creation number and shape, arguments, call site); otherwise each raises the
  same :class:`~pgas.comm.check.CollectiveMismatch`.
- :func:`read` / :func:`write`: a scalar ``A[i]`` read or write, with the
  locales agreeing on the array and the element and spreading a bad index or
  value to every locale (an ``IndexError`` on every locale, not a hang), with
  checking on or off.
- :func:`statement` also probes the statement (see :func:`pgas.array.expr.probe`)
  so errors that depend only on dtypes and scalars (``int32_array + 2**31``,
  ``int_array ** -1``) are raised on every locale, not only on those owning
  elements; an integer power's distributed exponent is checked for negative
  elements with one reduction first (:func:`power_data`).
"""

from __future__ import annotations

import numpy as np

from .. import comm
from ..comm import check
from . import engine as _engine  # noqa: F401 - loads expr and view in the order their imports need
from .expr import Affine, Expr, IndirectRef, Ref, probe, probe_errors


def ident(a) -> tuple:
    """The plain description of array ``a`` that :mod:`pgas.comm.check` takes (of anything
    else passed where an array belongs: its type, so that the call's own error is raised)."""
    if not hasattr(a, "_seq") or isinstance(a, Expr):
        return (-1, (), type(a).__qualname__, id(a), None)
    return (a._seq, a.shape, a.dtype.str, id(a), a.name)


def checked(op: str, *arrays, args=()) -> None:
    """Collective when checking is on: agree on the call ``op`` (``{k}`` naming ``arrays[k]``),
    and in the folding mode on every call folded before it (a call that reaches every
    locale anyway: a reduction, a constructor...)."""
    if check.enabled:
        check.collective(op, tuple(ident(a) for a in arrays), args)
    elif check.folding:
        check.agree_history(op, tuple(ident(a) for a in arrays), args, check.call_site())


def plain(x):
    """Argument ``x`` of a collective call as plain values that :mod:`pgas.comm.check` can
    compare: arrays by creation number, views by their array and position, NumPy arrays by
    :func:`pgas.comm.check.fingerprint`, slices and containers item by item."""
    t = type(x)
    if t in (int, float, bool, str, complex) or x is None:
        return x
    if t is tuple or t is list:
        return tuple([plain(v) for v in x])
    if t is slice:
        return ("slice", plain(x.start), plain(x.stop), plain(x.step))
    if isinstance(x, (Expr, Ref, Affine)):       # (an expression's _seq numbers it among pending ones)
        return ("expr", _Sig(values=True).key(x))
    if hasattr(x, "_seq"):
        return ("array", x._seq, x.shape)
    if hasattr(x, "base") and hasattr(x, "M"):
        return ("view", x.base._seq, x.shape, x.M, x.c)
    if isinstance(x, np.ndarray):
        return ("np", check.fingerprint(x))
    if isinstance(x, np.generic):
        return (x.dtype.str, check.meaningful(x).tobytes())
    return check.stable_repr(x)


def allocating(layout, dtype) -> bool:
    """Before a new array's window is made (collective, in MPI itself): in the folding mode,
    agree on the calls folded so far, so that locales whose calls differ (one making an
    array where another reduces) raise instead of meeting in different collectives.  The
    window pool's collection rides in the same reduction (:func:`pgas.comm.window.carried`):
    one collective per new array.  Returns whether the pool was collected so."""
    if not check.folding:
        return False
    win = comm.window
    got = check.agree_history("a new {dtype} array of shape {shape}".format(dtype=dtype, shape=layout.shape),
                              args=(layout.key, dtype.str), frame=check.call_site(),
                              carry=win.carried(check.CARRIED))
    win.collect(got)
    return True


def folded(op: str, *arrays, args=()) -> None:
    """Like :func:`checked`, for a call that communicates with some locales at most (a ghost
    update), or whose next step is a :func:`pgas.comm.exchange` (``update``), which
    agrees on the folded calls in its own messages: in the folding mode only folded,
    agreed at the next :func:`checked` call or exchange."""
    if check.enabled:
        check.collective(op, tuple(ident(a) for a in arrays), args)
    elif check.folding:
        check.fold_call(op, tuple(ident(a) for a in arrays), args, check.call_site())


def raise_folded(error: BaseException) -> None:
    """Raise ``error``, this locale's error for a call only :func:`folded` so far whose next
    collective would not carry it (a new array's window): in the folding mode after an
    agreement, so that every locale raises it alike (arguments agreed alike give the same
    error everywhere), or all raise a CollectiveMismatch where the calls differ; otherwise
    at once (strict checking has agreed on the call; unchecked, as any call's error)."""
    if check.folding:
        check.agree_history(frame=check.call_site(), error=error)
    raise error


def exchanging(op: str, *arrays, args=()) -> None:
    """Like :func:`folded`, for a call whose arguments decide which messages it exchanges
    with its neighbours (a ghost update, a shift): in the folding mode its first call with
    given arrays and arguments is agreed, later ones only folded
    (:func:`pgas.comm.check.fold_known`)."""
    if check.enabled:
        check.collective(op, tuple(ident(a) for a in arrays), args)
    elif check.folding:
        check.fold_known(op, tuple(ident(a) for a in arrays), args, check.call_site())


# -- statements in the folding mode ------------------------------------------------
_STABLE: dict = {}                 # statement structure -> its stable hash
STABLE_CACHE = 4096
_WRITING = ["a statement writing {0}", "a statement writing {0} from {1}"]


def _writing(n: int) -> str:
    """How a folded statement over ``n`` arrays is named (its target's array first)."""
    while len(_WRITING) < n:
        _WRITING.append(_WRITING[1] + "".join(f", {{{k}}}" for k in range(2, len(_WRITING) + 1)))
    return _WRITING[max(n, 1) - 1]


def statement_tag(key, bases, replay=None) -> list:
    """What folding statement structure ``key`` (:func:`pgas.array.lowering.structure`'s,
    a fill's value left out) over arrays ``bases`` takes (:func:`pgas.comm.check.repeat_tag`),
    kept with ``replay`` (the statement's recording, :class:`pgas.exec.persistent.Replay`,
    bound to these arrays) if given, so that a repeat folds by
    :func:`pgas.comm.check.fold_repeat` at once."""
    s = _STABLE.get(key)
    if s is None:
        if len(_STABLE) >= STABLE_CACHE:
            del _STABLE[next(iter(_STABLE))]
        s = _STABLE[key] = check.stable_hash(key)
    tag = check.repeat_tag(hash((s, *[a._seq for a in bases])) & _MASK, _writing(len(bases)),
                           tuple([(a._seq, None, None, id(a), a.name) for a in bases]))
    if replay is not None:
        replay.tag = tag
    return tag


def fold_statement(key, bases, fill=None) -> None:
    """Fold statement structure ``key`` over arrays ``bases`` (see :func:`statement_tag`),
    with scalar ``fill`` (a row fill's value), into the record of folded calls."""
    check.fold_repeat(statement_tag(key, bases), fill)


def _fold_sig(op: str, sig: "_Sig", key) -> None:
    """Fold a call whose signature ``key`` was made by ``sig`` (NumPy operands fingerprinted)."""
    check.fold(check.stable_hash((op, key, tuple(a._seq for a in sig.arrays))), op,
               tuple(ident(a) for a in sig.arrays), (), check.site_of(check.call_site()))


# -- statements -----------------------------------------------------------------
_SYMBOLS = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/", "divide": "/", "floor_divide": "//",
            "power": "**", "remainder": "%", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
            "left_shift": "<<", "right_shift": ">>", "less": "<", "less_equal": "<=", "greater": ">",
            "greater_equal": ">=", "equal": "==", "not_equal": "!=", "matmul": "@"}


_MASK = (1 << 62) - 1


class _Sig:
    """Signature key and display of statement operands, arrays numbered in order of appearance;
    ``values``: NumPy operands by their values' fingerprint, not only shape and dtype."""

    def __init__(self, values: bool = False) -> None:
        self.arrays: list = []
        self.values = values

    def slot(self, base) -> int:
        for k, a in enumerate(self.arrays):
            if a is base:
                return k
        self.arrays.append(base)
        return len(self.arrays) - 1

    def key(self, x):
        if isinstance(x, Expr):
            name = getattr(x.func, "__name__", repr(x.func))
            return (name, tuple(self.key(a) for a in x.args), repr(sorted(x.kwargs.items())))
        if isinstance(x, Ref):
            return ("ref", self.slot(x.base), x.M, x.c)
        if isinstance(x, IndirectRef):
            return ("iref", self.slot(x.base), tuple(self.key(s) for s in x.subs))
        if isinstance(x, Affine):
            return ("aff", x.coefs, x.const)
        if hasattr(x, "base") and hasattr(x, "M"):                        # a View
            return ("view", self.slot(x.base), x.shape, x.M, x.c)
        if isinstance(x, np.ndarray) and x.ndim:
            return ("np", check.fingerprint(x)) if self.values else ("np", x.shape, x.dtype.str)
        return ("const", type(x).__name__, repr(x))

    def show(self, x, top: bool = True) -> str:
        if isinstance(x, Expr):
            name = getattr(x.func, "__name__", repr(x.func))
            args = [self.show(a, False) for a in x.args]
            if name in _SYMBOLS and len(args) == 2 and not x.kwargs:
                text = f"{args[0]} {_SYMBOLS[name]} {args[1]}"
                return text if top else f"({text})"
            return f"np.{name}({', '.join(args)})"
        if isinstance(x, Ref):
            return f"{{{self.slot(x.base)}}}[...]"
        if isinstance(x, Affine):
            return repr(x)
        if hasattr(x, "base") and hasattr(x, "M"):
            k = self.slot(x.base)
            if x.shape == x.base.shape and all(r == tuple(int(i == d) for i in range(len(x.shape)))
                                               for d, r in enumerate(x.M)) and not any(x.c):
                return f"{{{k}}}[:]"
            return f"{{{k}}}[{_slices(x)}]"
        if isinstance(x, np.ndarray) and x.ndim:
            return f"<{x.dtype} array of shape {x.shape}>"
        return repr(x.item()) if isinstance(x, np.generic) else repr(x)


def _slices(view) -> str:
    """The basic index that gives ``view`` from its base, as written (``1:4, 2``)."""
    out = []
    for row, c in zip(view.M, view.c):
        cols = [j for j, a in enumerate(row) if a]
        if not cols:
            out.append(str(c))
        elif len(cols) == 1:
            s, n = row[cols[0]], view.shape[cols[0]]
            stop = c + s * n
            text = f"{c}:{stop}" if s == 1 else (f"{c}:{stop}:{s}" if stop >= 0 else f"{c}::{s}")
            out.append(text)
        else:
            return "..."
    return ", ".join(out)


def _statement_check(kind: str, sig: _Sig, key, show) -> None:
    check.collective(kind, tuple(ident(a) for a in sig.arrays), key, show=show)


def statement(target, value, checking: bool = True, powers: bool = True, known=None, fill=None) -> bool:
    """Top of a statement ``target = value``: check the call (when on; in the folding mode
    by ``known``, its structure key and arrays, when the statement has one, with scalar
    ``fill`` left out of the key), then raise, on every locale alike, what NumPy would raise
    computing it (see :func:`pgas.array.expr.probe_errors` and, unless ``powers`` is false,
    :func:`power_data`).  True if :func:`power_data` checked an exponent (a function of the
    statement's structure and dtypes alone)."""
    if check.enabled and checking:
        sig = _Sig(values=True)
        key = (sig.key(target), sig.key(value))
        _statement_check("statement", sig, key, lambda: f"{sig.show(target)} = {sig.show(value)}")
    elif check.folding and checking:
        if known is not None:
            fold_statement(known[0], known[1], fill)
        else:
            sig = _Sig(values=True)
            key = (sig.key(target), sig.key(value))
            _fold_sig(_writing(len(sig.arrays)), sig, key)
    found = False
    if isinstance(value, Expr):
        value.dtype                                       # noqa: B018 - probes the tree (cached)
        found = powers and power_data(value, checking)
    probe_assign(target.dtype, value)
    return found


def materialise(x, checking: bool = True) -> None:
    """Top of evaluating view or expression ``x`` into a new array."""
    if check.enabled and checking:
        sig = _Sig(values=True)
        key = sig.key(x)
        _statement_check("evaluation", sig, key, lambda: f"evaluation of {sig.show(x)} into a new array")
    elif check.folding and checking:
        sig = _Sig(values=True)
        key = sig.key(x)
        _fold_sig("an evaluation of {0}" if sig.arrays else "an evaluation", sig, key)
    if isinstance(x, Expr):
        power_data(x, checking)


def power_data(x, reduce: bool = True) -> bool:
    """Raise NumPy's ``ValueError`` on every locale alike when an integer power in
    expression ``x`` has a distributed exponent with a negative element: NumPy raises
    on data, which may lie on one locale only (the others would go on into the
    statement and wait).  One reduction per such power, before anything runs; a
    scalar exponent is probed from dtypes alone (:func:`pgas.array.expr.probe_errors`).
    The tree is left as it is (an expression exponent is reduced through a copy).  True
    if it found such a power (whatever its exponent's values).  ``reduce`` false (under
    ``pg.explain``, which is local): nothing is reduced or raised, only found."""
    found = False
    stack = [x]
    while stack:
        e = stack.pop()
        if type(e) is not Expr or e._value is not None or e.shape is None:
            continue
        stack.extend(e.args)
        if e.func is not np.power or len(e.args) != 2 or "where" in e.kwargs or not all(e.shape):
            continue
        exp = e.args[1]
        if not (isinstance(exp, Expr) or hasattr(exp, "base")) or exp.dtype.kind != "i" or e.dtype.kind not in "iu":
            continue
        found = True
        if reduce and type(exp) is Expr and exp._value is None:
            exp = Expr(exp.func, exp.args, exp.kwargs)
        if reduce and exp.size and exp.min() < 0:
            raise ValueError("Integers to negative integer powers are not allowed.")
    return found


def forall(domain, body, records) -> None:
    """After tracing a ``pg.forall`` body: check the call (the domain and every traced
    assignment) when on, then probe every assignment for errors."""
    if check.enabled or check.folding:
        sig = _Sig(values=True)
        key = (domain.key,
               tuple((sig.key(t), sig.key(v), getattr(uf, "__name__", None)) for t, v, uf, _ in records))
        shown = f"pg.forall({domain.text}, {getattr(body, '__qualname__', 'body')})"
        if check.enabled:
            _statement_check("forall", sig, key, lambda: shown)
        else:
            _fold_sig(shown.replace("{", "{{").replace("}", "}}"), sig, key)
    for target, value, _, _ in records:
        if isinstance(value, Expr):
            probe(value)
        probe_assign(target.dtype, value)


def ufunc(uf, inputs, outs) -> None:
    """Top of a ufunc on whole arrays of one layout (computed locally, no statement):
    check the call when on; raise data errors on every locale (``X ** -1``)."""
    if check.enabled or check.folding:
        sig = _Sig(values=True)
        args = tuple(sig.slot(x) if hasattr(x, "_seq") else sig.key(x) for x in inputs)
        res = tuple(sig.slot(o) for o in outs)
        if check.enabled:
            _statement_check("ufunc", sig, (uf.__name__, args, res), lambda: _show_ufunc(sig, uf, inputs, args, res))
        else:
            _fold_sig(_show_ufunc(sig, uf, inputs, args, res), sig, (uf.__name__, args, res))
    if uf is np.power:
        probe_errors(uf, [np.empty(0, x.dtype) if hasattr(x, "_seq") else x for x in inputs])


def _show_ufunc(sig: _Sig, uf, inputs, args, res) -> str:
    shown = [f"{{{a}}}" if isinstance(a, int) else sig.show(x) for a, x in zip(args, inputs)]
    name = uf.__name__
    if name in _SYMBOLS and len(shown) == 2:
        text = f"{shown[0]} {_SYMBOLS[name]} {shown[1]}"
        if res and res[0] == args[0]:
            return f"{shown[0]} {_SYMBOLS[name]}= {shown[1]}"
        return f"{{{res[0]}}} = {text}" if res else text
    return f"np.{name}({', '.join(shown)}{', out=...' if res else ''})"


def probe_assign(dtype, value) -> None:
    """Raise what storing ``value`` (a scalar or an expression) in ``dtype`` elements would."""
    if not isinstance(value, Expr) and not hasattr(value, "base"):
        np.empty(0, dtype)[...] = probe(value)


# -- scalar element access --------------------------------------------------------
def is_element(key, ndim: int) -> bool:
    """True if ``key`` is all integers, at least one per dimension (one element, or too many)."""
    key = key if isinstance(key, tuple) else (key,)
    return len(key) >= ndim and all(isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))
                                    for k in key)


def _locate(A, key, loc):
    if loc is not None:
        return loc, None
    try:
        loc = A._locate_slow(key)
    except IndexError as e:
        return None, e
    return loc, None if loc is not None else IndexError(f"{A.label}: {key!r} does not name one element")


def _shown(key) -> str:
    key = key if isinstance(key, tuple) else (key,)
    return ", ".join(str(int(k)) for k in key)


def read(A, key, loc):
    """Collective: element ``key`` of ``A`` on every locale (``loc`` its location, if known)."""
    loc, err = _locate(A, key, loc)
    show = lambda: "{0}[" + _shown(key) + "]"          # noqa: E731 - built only for a message
    if check.enabled:
        check.collective("{0}[...]", (ident(A),), detail=loc, error=err, show=show)
        owner, flat = loc
        return comm.bcast_value(A._storage[flat] if owner == A._me else 0, A.dtype, owner)
    mine = loc is not None and loc[0] == A._me
    return check.element(1, ident(A), loc, err, A._storage[loc[1]:loc[1] + 1] if mine else None, A.dtype, show)


def write(A, key, loc, value, before_write) -> None:
    """Collective: ``A[key] = value`` (``before_write`` materialises readers of ``A``)."""
    loc, err = _locate(A, key, loc)
    if err is None:
        try:
            value = A._element(value, key)
        except (TypeError, ValueError, OverflowError) as e:
            err = e
    show = lambda: "{0}[" + _shown(key) + "] = ..."    # noqa: E731
    written = None if err is not None else np.asarray(value)
    if check.enabled:
        check.collective("{0}[...] = ...", (ident(A),), error=err, show=show,
                         detail=(loc, None if written is None else check.digest(check.meaningful(written).tobytes())))
    else:
        check.element(2, ident(A), loc, err, None, A.dtype, show, written)
    before_write(A, None)
    owner, flat = loc
    if owner == A._me:
        A._storage[flat] = value[0]
    comm.statement_done()

"""Views: affine maps onto a base DistArray, made by basic indexing.

``A[1:, ::2]`` is a :class:`View` ``(base, shape, M, c)``: view index ``v``
names base element ``M @ v + c``.  Views of views compose (``M1 @ M2``); an
integer drops a dimension, ``None`` adds one of extent 1, a negative step
gives a negative entry.  Views hold no data: reading and writing them runs
collective statements (see :mod:`pgas.array.expr`).

>>> m = index_map((slice(1, None), slice(None, None, -2)), (5, 6))
>>> m
(((1, 0), (0, -2)), (1, 5), (4, 3))
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import engine, printing
from .expr import _DIRECT, _VIEW, Affine, IndirectRef, Lazy, Ref, TraceError, probe
from .index import describe_key, name
from .methods import ArrayMethods


def _is_int(k) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _expand(key, ndim: int, label: str) -> tuple:
    """``key`` as a tuple with ``...`` expanded and missing trailing dims filled."""
    key = key if isinstance(key, tuple) else (key,)
    ells = [i for i, k in enumerate(key) if k is Ellipsis]
    if len(ells) > 1:
        raise IndexError(f"{name(label)}: an index can only have a single ellipsis ('...')")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices for {name(label)}: {used} given for {ndim} dimensions")
    fill = (slice(None),) * (ndim - used)
    if ells:
        return key[:ells[0]] + fill + key[ells[0] + 1:]
    return key + fill


def index_map(key, shape, label: str = "array"):
    """``(K, k0, newshape)`` of a basic index over ``shape``: new index ``w`` reads old
    index ``K @ w + k0``."""
    key = _expand(key, len(shape), label)
    k0, newshape = [], []
    rows = [[] for _ in shape]
    d = 0
    for k in key:
        if k is None:
            newshape.append(1)
            for r in rows:
                r.append(0)
            continue
        n = shape[d]
        if _is_int(k):
            if not -n <= k < n:
                raise IndexError(f"index {int(k)} is out of bounds for axis {d} with size {n} of {name(label)}")
            k0.append(int(k) % n)
        elif isinstance(k, slice):
            start, stop, step = k.indices(n)
            newshape.append(len(range(start, stop, step)))
            for r in rows:
                r.append(0)
            rows[d][-1] = step
            k0.append(start)
        else:
            raise IndexError(f"{name(label)}: only integers, slices, None and ... are valid indices here, got {describe_key(k)}"
                             " (for indirect access use A.gather / A.update)")
        d += 1
    return tuple(tuple(r) for r in rows), tuple(k0), tuple(newshape)


def _compose(M, c, K, k0):
    """``(M @ K, M @ k0 + c)`` on small integer tuples (views have at most a few dims,
    where plain Python beats NumPy's per-call overhead)."""
    ncols = len(K[0]) if K else 0
    newM = tuple(tuple(sum(row[j] * K[j][col] for j in range(len(K))) for col in range(ncols)) for row in M)
    newc = tuple(sum(row[j] * k0[j] for j in range(len(k0))) + ci for row, ci in zip(M, c))
    return newM, newc


@lru_cache(maxsize=8)
def _identity(n: int) -> tuple:
    return tuple(tuple(int(a == b) for b in range(n)) for a in range(n))


class View(ArrayMethods, Lazy):
    """A strided window onto a DistArray; see the module docstring."""

    __slots__ = ("base", "shape", "M", "c")

    def __init__(self, base, shape, M, c) -> None:
        self.base = base
        self.shape = tuple(shape)
        self.M = tuple(tuple(r) for r in M)
        self.c = tuple(c)

    @classmethod
    def whole(cls, base) -> "View":
        """The view of all of ``base``."""
        n = base.ndim
        return cls(base, base.shape, _identity(n), (0,) * n)

    @property
    def dtype(self) -> np.dtype:
        return self.base.dtype

    @property
    def label(self) -> str:
        return f"view of shape {self.shape} of {self.base.label}"

    def same(self, other) -> bool:
        """True if ``other`` is a view of the same elements in the same order."""
        return (isinstance(other, View) and other.base is self.base and other.shape == self.shape
                and other.M == self.M and other.c == self.c)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key):
        return engine.getitem(self, key)

    def __setitem__(self, key, value) -> None:
        engine.setitem(self, key, value)

    def eval(self):
        """Collective: a new DistArray holding a copy of the view's elements."""
        return engine.materialise(self)

    copy = eval

    def to_numpy(self, root: int | None = None) -> np.ndarray | None:
        """Collective: the view's elements as a global NumPy array, on every locale (only on
        locale ``root``, None elsewhere, if ``root`` is given)."""
        return self.eval().to_numpy(root)

    def _astype(self, dtype):
        """Collective: a new DistArray with the view's elements converted to ``dtype``."""
        return engine.materialise(self, dtype)

    def __repr__(self) -> str:
        """Collective: the view's values as NumPy shows them (only the elements shown move);
        call it on every locale alike (see :mod:`pgas.array.printing`)."""
        return printing.view_repr(self)

    def __str__(self) -> str:
        """Collective: the view's values as NumPy's ``str`` shows them."""
        return printing.view_str(self)


_DIRECT.add(View)
_VIEW[0] = View


def select(src, key, for_write: bool = False):
    """``src[key]`` for a DistArray or View ``src``: a View, a forall Ref (affine
    subscripts), or (all integers) the element read collectively."""
    if type(key) is tuple and key and not engine.tracing():
        fast = _slices(src, key)
        if fast is not None:
            return fast
    view = src if isinstance(src, View) else View.whole(src)
    items = key if isinstance(key, tuple) else (key,)
    if engine.tracing() or any(isinstance(k, (Affine, Lazy)) for k in items):
        return _ref(view, items)
    K, k0, shape = index_map(key, view.shape, view.base)
    M, c = _compose(view.M, view.c, K, k0)
    if not shape and not for_write:
        return view.base[c]
    return View(view.base, shape, M, c)


def _slices(src, key):
    """:func:`select`'s common case, a slice on every dimension, in one pass (the view
    ``index_map`` and ``_compose`` give; :func:`_mixed` where some are in-bounds Python
    ints, ``A[0, :]``: kept apart, since its general loop takes 0.8 us more per view of
    a whole array); None for any other key."""
    if type(src) is View:
        base, shape, M, c = src.base, src.shape, src.M, src.c
    elif engine.is_array(src):
        base, shape, M = src, src.shape, None
    else:
        return None
    nd = len(shape)
    if len(key) != nd:
        return None
    newshape, starts, steps = [], [], []
    for k, n in zip(key, shape):
        if type(k) is not slice:
            return _mixed(base, shape, M, c if M is not None else None, key)
        start, stop, step = k.indices(n)
        newshape.append(len(range(start, stop, step)))
        starts.append(start)
        steps.append(step)
    v = object.__new__(View)
    v.base, v.shape = base, tuple(newshape)
    if M is None:                       # the whole array: M is the identity, c zero
        v.M = _diagonal(tuple(steps))
        v.c = tuple(starts)
    else:
        v.M = tuple([tuple([a * s for a, s in zip(row, steps)]) for row in M])
        v.c = tuple([sum([a * s for a, s in zip(row, starts)]) + ci for row, ci in zip(M, c)])
    return v


def _mixed(base, shape, M, c, key):
    """:func:`_slices` for a key of slices and in-bounds Python ints with at least one
    slice (an int selects an element of its dimension, which the view drops); None
    for any other (an int out of bounds: :func:`select` raises NumPy's IndexError)."""
    newshape, starts, steps, kept = [], [], [], []
    for d, (k, n) in enumerate(zip(key, shape)):
        t = type(k)
        if t is slice:
            start, stop, step = k.indices(n)
            newshape.append(len(range(start, stop, step)))
            starts.append(start)
            steps.append(step)
            kept.append(d)
        elif t is int and -n <= k < n:
            starts.append(k + n if k < 0 else k)
            steps.append(0)
        else:
            return None
    if not kept:
        return None                     # every dimension an int: one element, not a view
    v = object.__new__(View)
    v.base, v.shape = base, tuple(newshape)
    if M is None:
        v.M = tuple([tuple([steps[j] if j == d else 0 for j in kept]) for d in range(len(shape))])
        v.c = tuple(starts)
    else:
        v.M = tuple([tuple([row[j] * steps[j] for j in kept]) for row in M])
        v.c = tuple([sum([a * s for a, s in zip(row, starts)]) + ci for row, ci in zip(M, c)])
    return v


def _indirect(view: View, items) -> IndirectRef:
    """Subscripts of ``view`` some of which are not affine: each base dimension's index as an
    expression (``view.M @ items + view.c``)."""
    subs = []
    for row, c in zip(view.M, view.c):
        total = c
        for a, k in zip(row, items):
            if a:
                total = total + (k if a == 1 else a * k)
        subs.append(total)
    return IndirectRef(view.base, subs)


@lru_cache(maxsize=64)
def _diagonal(steps: tuple) -> tuple:
    return tuple(tuple(s if j == d else 0 for j in range(len(steps))) for d, s in enumerate(steps))


def _ref(view: View, items) -> Ref:
    """Affine subscripts (inside forall) on all dims of ``view``."""
    label = view.base
    if any(k is None or k is Ellipsis or isinstance(k, slice) for k in items):
        raise TraceError(f"{name(label)}: inside pg.forall subscript every dimension with an integer or an affine "
                         "index (A[i, j + 1]); slices, None and ... are for statements outside forall")
    indirect = False
    for k in items:
        if isinstance(k, Lazy) and k.shape is None:       # traced but not affine: i * j, i % 3, idx[i]
            if probe(k).dtype.kind not in "iu":
                raise TraceError(f"{name(label)}: subscript {k!r} is a {probe(k).dtype} value: subscripts must be "
                                 "integers (for a condition write `if cond:` or pg.where(cond, x, y))")
            indirect = True
        elif not (isinstance(k, Affine) or _is_int(k)):
            raise TraceError(f"{name(label)}: subscript {k!r} must be an int or affine in the loop variables "
                             "(2*i + j - 1), or an integer expression of them and of array elements (idx[i])")
    if len(items) != view.ndim:
        raise IndexError(f"{name(label)}: {len(items)} subscripts for {view.ndim} dimensions")
    if indirect:
        return _indirect(view, items)
    nv = max((len(k.coefs) for k in items if isinstance(k, Affine)), default=0)
    K = [list(k.coefs) if isinstance(k, Affine) else [0] * nv for k in items]
    k0 = [k.const if isinstance(k, Affine) else int(k) for k in items]
    M, c = _compose(view.M, view.c, K, k0)
    return Ref(view.base, M, c)

"""``pg.forall`` domains: rectangular, or with bounds that depend on outer loop variables.

A domain is a tuple with one entry per loop variable, outermost first: an int
``n`` (``range(n)``), a ``range``, or a *callable* giving the range of this
variable from the values of the first ``k`` variables (``k`` its number of
parameters): ``(range(n), lambda i: range(i + 1, n))`` is the strict upper
triangle, ``(range(n), lambda i: range(i + 1), range(m))`` a triangle times a
rectangle.  Chapel writes the same as nested loops over dependent ranges.

A callable is evaluated once per point of the variables it depends on (never
per element of the domain).  When every callable depends only on variables
with plain ranges and returns ``range(start, stop, s)`` with ``start`` and
``stop`` affine in them (integer coefficients, found from the points and
checked exactly at every one of them) and one step ``s > 0``, the domain is
its bounding box *clipped* by affine constraints (``x_v - start(i) >= 0``,
``stop(i) - 1 - x_v >= 0``): the planner cuts the box into its usual
lattices and clips each (:mod:`pgas.plan.clip`), so the number of pieces
grows with the distribution blocks, never with ``n``.  Otherwise the domain is
cut into rectangular *parts*: consecutive points with the same range share
one part (a triangle of side ``n`` is ``n - 1`` rows); the planner plans the
parts' pieces together, so a statement over it still sends at most one
message per (peer, array).
"""

from __future__ import annotations

import inspect
import itertools
from dataclasses import dataclass

import numpy as np

#: Evaluating a callable bound at more outer points than this is refused (it
#: would make as many parts).
MAX_POINTS = 1 << 20


@dataclass(frozen=True)
class Domain:
    """A resolved domain: ``box`` bounds it (``(start, step, count)`` per variable);
    ``parts`` are its disjoint rectangular parts, or ``clips`` the affine
    constraints ``(coefs, const)`` (``coefs @ x + const >= 0``) that cut it out of
    the box, with ``count`` its number of points (both empty: the box itself)."""

    box: tuple
    parts: tuple
    text: str
    clips: tuple = ()
    count: int = -1
    items: tuple = ()

    def as_parts(self) -> "Domain":
        """The same domain as rectangular parts (for what cannot clip: the inspector)."""
        return resolve_parts(self.items) if self.clips else self

    @property
    def ndim(self) -> int:
        return len(self.box)

    @property
    def key(self) -> tuple:
        """What every locale must agree on (collective call checking)."""
        return self.box, self.parts, self.clips


def _as_range(r, what: str) -> range:
    if isinstance(r, (int, np.integer)) and not isinstance(r, (bool, np.bool_)):
        return range(int(r))
    if not isinstance(r, range):
        raise TypeError(f"pg.forall: {what} must be a range, an int or (for an inner loop variable) a callable "
                        f"of the outer variables returning a range, got {r!r}")
    return r


def _norm(r: range) -> tuple[int, int, int]:
    n = len(r)
    return (r.start, r.step if n > 1 else 1, n)


def _nparams(f, v: int) -> int:
    try:
        ps = [p for p in inspect.signature(f).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
        k = len(ps)
    except (TypeError, ValueError):
        k = v
    if not 1 <= k <= v:
        raise TypeError(f"pg.forall: the range of loop variable {v} is a callable taking {k} arguments; it "
                        f"takes the values of the first 1 to {v} (outer) loop variables, e.g. lambda i: range(i + 1, n)")
    return k


def _call(f, args, v: int) -> tuple[int, int, int]:
    got = f(*args)
    return _norm(_as_range(got, f"the range of loop variable {v} at {tuple(args)}"))


def _outer_points(box: tuple, what: str) -> tuple[list, int]:
    """The ranges of ``box`` (``(start, step, count)`` each) and how many points they hold;
    a ValueError naming ``what`` when a range would depend on more than ``MAX_POINTS``."""
    outer = [range(s, s + st * n, st) for s, st, n in box]
    points = 1
    for r in outer:
        points *= len(r)
    if points > MAX_POINTS:
        raise ValueError(f"pg.forall: {what} depends on {points} outer points (more than "
                         f"{MAX_POINTS}); make it depend on fewer variables")
    return outer, points


def _split(box: tuple, f, k: int, v: int) -> list:
    """``box`` (ranges of variables ``< v``) times the ranges ``f`` gives, as parts."""
    outer, _ = _outer_points(box[:k], f"the range of loop variable {v}")
    out = []
    rest = box[k:]
    for head in itertools.product(*outer[:-1]):
        fixed = tuple((h, 1, 1) for h in head)
        last = outer[-1]
        run = None                                     # [first value, count, range]
        for x in last:
            r = _call(f, head + (x,), v)
            if run is not None and run[2] == r and r[2]:
                run[1] += 1
                continue
            if run is not None and run[2][2]:
                out.append(fixed + ((run[0], last.step if run[1] > 1 else 1, run[1]),) + rest + (run[2],))
            run = [x, 1, r]
        if run is not None and run[2][2]:
            out.append(fixed + ((run[0], last.step if run[1] > 1 else 1, run[1]),) + rest + (run[2],))
    return out


def resolve(domain) -> Domain:
    """The :class:`Domain` of a ``pg.forall`` domain argument (see the module docstring)."""
    items = domain if isinstance(domain, tuple) else (domain,)
    if not items:
        raise TypeError("pg.forall: the domain needs at least one range")
    got = _resolve_affine(items)
    return got if got is not None else resolve_parts(items)


def _text(items, ks) -> str:
    return "(" + ", ".join(repr(_as_range(it, "")) if k is None else
                           f"<range of {', '.join('ijklmnpq'[u] if u < 8 else f'i{u}' for u in range(k))}>"
                           for it, k in zip(items, ks)) + ")"


def _resolve_affine(items):
    """The clipped-box :class:`Domain` of ``items`` if every callable is affine in plain
    outer variables (see the module docstring), else None.  Each callable is called
    once per point of the plain variables it depends on, and checked at every one."""
    ks, plain = [], []
    for v, item in enumerate(items):
        if callable(item) and not isinstance(item, range):
            if v == 0:
                raise TypeError("pg.forall: the first (outermost) loop variable needs a range, not a callable")
            k = _nparams(item, v)
            if any(kk is not None for kk in ks[:k]):
                return None                            # depends on a dependent variable
            ks.append(k)
            plain.append(None)
        else:
            ks.append(None)
            plain.append(_norm(_as_range(item, "each range of the domain")))
    K = max((k for k in ks if k is not None), default=0)
    if K == 0:
        return None
    outer, npts = _outer_points(plain[:K], "an inner range")
    if npts == 0:
        return None
    grids = np.meshgrid(*[np.arange(r.start, r.stop, r.step, dtype=np.int64) for r in outer], indexing="ij")
    pts = np.stack([g.reshape(-1) for g in grids], axis=1)          # (npts, K)
    live = np.ones(npts, dtype=bool)
    sizes = np.ones(npts, dtype=np.int64)
    clips, lo_hi = [], {}
    for v, (item, k) in enumerate(zip(items, ks)):
        if k is None:
            continue
        counts = [len(r) for r in outer]
        sub = np.stack([g.reshape(-1) for g in np.meshgrid(
            *[np.arange(r.start, r.stop, r.step, dtype=np.int64) for r in outer[:k]], indexing="ij")], axis=1)
        got = _fit(item, k, v, sub, counts[:k])
        if got is None:
            return None
        (a0, a), (b0, b), step, first, last, lens = got
        first, last, lens = (np.broadcast_to(x.reshape(counts[:k] + [1] * (K - k)), counts).reshape(-1)
                             for x in (first, last, lens))
        live &= lens > 0
        sizes *= lens
        lo_hi[v] = (first, last, step)
        cv = [0] * len(items)
        cv[v] = 1
        clips.append((tuple(cv[u] - (a[u] if u < k else 0) for u in range(len(items))), -a0))
        cv[v] = -1
        clips.append((tuple(cv[u] + (b[u] if u < k else 0) for u in range(len(items))), b0 - 1))
    m = len(items)
    text = _text(items, ks)
    if not live.any() or any(p is not None and p[2] == 0 for p in plain):
        return Domain(((0, 1, 0),) * m, (), text, (), 0, items)
    box = []
    for v in range(m):
        if v < K:
            s, st, _ = plain[v]
            lo, hi = int(pts[live, v].min()), int(pts[live, v].max())
            box.append((lo, abs(st), (hi - lo) // abs(st) + 1))          # a set: walked upwards
        elif ks[v] is None:
            box.append(plain[v])
        else:
            first, last, step = lo_hi[v]
            lo, hi = int(first[live].min()), int(last[live].max())
            box.append((lo, step, (hi - lo) // step + 1))
    count = int(sizes[live].sum())
    for v in range(K, m):
        if ks[v] is None:
            count *= plain[v][2]
    return Domain(tuple(box), (), text, tuple(clips), count, items)


def _fit(f, k: int, v: int, pts: np.ndarray, counts):
    """``((a0, a), (b0, b), step, first, last, lens)`` if ``f`` returns
    ``range(a0 + a @ p, b0 + b @ p, step)`` at every point ``p`` of ``pts`` (one step
    ``> 0``, every non-empty range's start in one residue class mod ``step``), with
    per point the first and last element and the length; None otherwise."""
    rows = []
    for p in pts.tolist():
        r = f(*p)
        r = _as_range(r, f"the range of loop variable {v} at {tuple(p)}")
        rows.append((r.start, r.stop, r.step, len(r)))
    arr = np.array(rows, dtype=np.int64)
    step = int(arr[0, 2])
    if step <= 0 or (arr[:, 2] != step).any():
        return None
    fits = []
    for col in (0, 1):
        vals = arr[:, col]
        coef, stride = [0] * k, 1
        for u in reversed(range(k)):
            if counts[u] > 1:
                d, du = int(vals[stride] - vals[0]), int(pts[stride, u] - pts[0, u])
                if d % du:
                    return None
                coef[u] = d // du
            stride *= counts[u]
        c0 = int(vals[0]) - sum(c * int(x) for c, x in zip(coef, pts[0]))
        if (pts @ np.array(coef, dtype=np.int64) + c0 != vals).any():
            return None
        fits.append((c0, coef))
    lens = arr[:, 3]
    first = arr[:, 0]
    nz = lens > 0
    if nz.any() and len(np.unique(first[nz] % step)) > 1:
        return None
    return fits[0], fits[1], step, first, first + step * (lens - 1), lens


def resolve_parts(items) -> Domain:
    """The domain as disjoint rectangular parts (one per run of equal inner ranges)."""
    boxes = [()]
    texts = []
    rect = True
    for v, item in enumerate(items):
        if callable(item) and not isinstance(item, range):
            if v == 0:
                raise TypeError("pg.forall: the first (outermost) loop variable needs a range, not a callable")
            k = _nparams(item, v)
            rect = False
            boxes = [p for b in boxes for p in _split(b, item, k, v)]
            texts.append(f"<range of {', '.join('ijklmnpq'[u] if u < 8 else f'i{u}' for u in range(k))}>")
        else:
            r = _as_range(item, "each range of the domain")
            boxes = [b + (_norm(r),) for b in boxes]
            texts.append(repr(r))
    text = "(" + ", ".join(texts) + ")"
    m = len(items)
    if rect:
        return Domain(boxes[0], (), text, items=items)
    boxes = [b for b in boxes if all(n for _, _, n in b)]
    if len(boxes) == 1:
        return Domain(boxes[0], (), text, items=items)
    if not boxes:
        return Domain(((0, 1, 0),) * m, (), text, items=items)
    bound = []
    for v in range(m):
        lo = min(s if st > 0 else s + st * (n - 1) for s, st, n in (b[v] for b in boxes))
        hi = max(s + st * (n - 1) if st > 0 else s for s, st, n in (b[v] for b in boxes))
        bound.append((lo, 1, hi - lo + 1))
    return Domain(tuple(bound), tuple(boxes), text, items=items)

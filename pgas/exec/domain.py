"""``pg.forall`` domains: rectangular, or with bounds that depend on outer loop variables.

A domain is a tuple with one entry per loop variable, outermost first: an int
``n`` (``range(n)``), a ``range``, or a *callable* giving the range of this
variable from the values of the first ``k`` variables (``k`` its number of
parameters): ``(range(n), lambda i: range(i + 1, n))`` is the strict upper
triangle, ``(range(n), lambda i: range(i + 1), range(m))`` a triangle times a
rectangle.  Chapel writes the same as nested loops over dependent ranges.

The domain is cut into rectangular *parts*: a callable is evaluated once per
point of the variables it depends on (never per element of the domain), and
consecutive points with the same range share one part.  A triangle of side
``n`` is ``n - 1`` rows; the planner plans the parts' pieces together, so a
statement over it still sends at most one message per (peer, array).
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
    ``parts`` are its disjoint rectangular parts (empty when it is the box itself)."""

    box: tuple
    parts: tuple
    text: str

    @property
    def ndim(self) -> int:
        return len(self.box)

    @property
    def key(self) -> tuple:
        """What every locale must agree on (collective call checking)."""
        return self.box, self.parts


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


def _split(box: tuple, f, k: int, v: int) -> list:
    """``box`` (ranges of variables ``< v``) times the ranges ``f`` gives, as parts."""
    outer = [range(s, s + st * n, st) for s, st, n in box[:k]]
    points = 1
    for r in outer:
        points *= len(r)
    if points > MAX_POINTS:
        raise ValueError(f"pg.forall: the range of loop variable {v} depends on {points} outer points (more than "
                         f"{MAX_POINTS}); make it depend on fewer variables")
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
        return Domain(boxes[0], (), text)
    boxes = [b for b in boxes if all(n for _, _, n in b)]
    if len(boxes) == 1:
        return Domain(boxes[0], (), text)
    if not boxes:
        return Domain(((0, 1, 0),) * m, (), text)
    bound = []
    for v in range(m):
        lo = min(s if st > 0 else s + st * (n - 1) for s, st, n in (b[v] for b in boxes))
        hi = max(s + st * (n - 1) if st > 0 else s for s, st, n in (b[v] for b in boxes))
        bound.append((lo, 1, hi - lo + 1))
    return Domain(tuple(bound), tuple(boxes), text)

"""The ghost-cell exchange plan (pure): which owner supplies which ghost cells of a locale.

Boxes are ``((lo, hi), ...)`` per dimension; a ghost cell outside the array is
supplied by its periodic image where the dimension is periodic and left alone
otherwise.  :mod:`pgas.exec.ghostexchange` runs the exchanges these plans describe.
"""

from __future__ import annotations

import itertools


def pieces(layout, r: int, periodic, corners: bool) -> list:
    """``[(owner, local box of the owner, box in r's padded block)]`` for every ghost cell
    of locale ``r``; boxes are ``((lo, hi), ...)`` per dimension."""
    ls = layout.local_shape(r)
    if not all(ls):
        return []
    g = layout.ghosts
    coords = layout.coords(r)
    starts = [c * b for c, b in zip(coords, layout.blocks)]
    out = []
    for side in itertools.product((-1, 0, 1), repeat=layout.ndim):
        if not any(side) or (not corners and sum(1 for s in side if s) > 1):
            continue
        if any(s and not g[d] for d, s in enumerate(side)):
            continue
        # per dimension: global range mirrored and its position in the padded block
        dims = []
        for d, s in enumerate(side):
            n, lo = layout.shape[d], starts[d]
            if s == 0:
                dims.append([(lo, lo + ls[d], g[d])])
            elif s < 0:
                dims.append(_wrap(lo - g[d], lo, n, 0, periodic[d]))
            else:
                dims.append(_wrap(lo + ls[d], lo + ls[d] + g[d], n, g[d] + ls[d], periodic[d]))
        for combo in itertools.product(*dims):
            for owner, obox, dbox in split(layout, combo):
                out.append((owner, obox, dbox))
    return out


def _wrap(a: int, b: int, n: int, dest: int, periodic: bool) -> list:
    """Global range [a, b) as in-range pieces ``(lo, hi, dest)``; out-of-range parts wrap
    around when periodic and are dropped (left as they are) otherwise."""
    out = []
    for lo in range(a, b):
        gi = lo % n if periodic else lo
        if not 0 <= gi < n:
            continue
        if out and out[-1][1] == gi and out[-1][2] + (out[-1][1] - out[-1][0]) == dest + lo - a:
            out[-1] = (out[-1][0], gi + 1, out[-1][2])
        else:
            out.append((gi, gi + 1, dest + lo - a))
    return out


def split(layout, combo) -> list:
    """A global box (per dim ``(lo, hi, dest)``) split by Block owner."""
    per_dim = []
    for d, (lo, hi, dest) in enumerate(combo):
        b, parts, x = layout.blocks[d], [], lo
        while x < hi:
            q = x // b
            y = min(hi, (q + 1) * b)
            parts.append((q, (x - q * b, y - q * b), (dest + x - lo, dest + y - lo)))
            x = y
        per_dim.append(parts)
    out = []
    for parts in itertools.product(*per_dim):
        owner = layout.locale_of([int(p[0]) for p in parts])
        out.append((owner, tuple(p[1] for p in parts), tuple(p[2] for p in parts)))
    return out


def region(layout, r: int, box) -> tuple:
    """A box of locale ``r``'s interior as a storage region ``(offset, counts, strides)``."""
    S = layout.storage_strides(r)
    off = layout.storage_base(r) + sum(s * lo for s, (lo, _) in zip(S, box))
    return off, tuple(hi - lo for lo, hi in box), S


def neighbours(layout, r: int) -> list:
    """Locales whose ghost cells may mirror ``r``'s elements (grid distance bounded by the
    ghost widths over the block sizes), without ``r``."""
    coords = layout.coords(r)
    ranges = []
    for d, (c, p) in enumerate(zip(coords, layout.grid)):
        b = max(1, layout.blocks[d])
        empty = p - -(-layout.shape[d] // b)                # trailing locales owning nothing
        k = min(p - 1, -(-layout.ghosts[d] // b) + 1 + max(empty, 0))
        ranges.append(sorted({(c + j) % p for j in range(-k, k + 1)}))
    return [q for q in (layout.locale_of(list(c)) for c in itertools.product(*ranges)) if q != r]


def exchange_plan(layout, me: int, periodic, corners: bool):
    """``(by_source, readers)``: this locale's ghost pieces grouped by owner, and the
    locales that read this locale's elements into their ghost cells."""
    by_source: dict = {}
    for owner, obox, dbox in pieces(layout, me, periodic, corners):
        by_source.setdefault(owner, []).append((obox, dbox))
    readers = [q for q in neighbours(layout, me)
               if any(o == me for o, _, _ in pieces(layout, q, periodic, corners))]
    return by_source, readers


def slices(box) -> tuple:
    """A box as a tuple of slices."""
    return tuple(slice(lo, hi) for lo, hi in box)

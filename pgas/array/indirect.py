"""``pg.forall`` statements with subscripts that are not affine (``A[i * i]``,
``A[idx[i]]``, ``A[i % 3]``): correct, not planned.

The planner needs every access as an affine map of the loop variables to work out
owners and messages before anything runs; an index computed from the loop
variables' values or read from an array has no such map, so these statements run
as an inspector-executor over the iterations instead: each locale takes an equal
share of the domain's iterations (in order), evaluates the conditions, indices and
values on them, reads every element through an aggregated gather (the irregular
inspector of :mod:`pgas.array.irregular`: indices bucketed by owner and
deduplicated, one message per owner each way), and writes through a scatter (a plain
``=``) or an update (``+=``, ``min=``, ... accumulated, repeats included, as a
sequential loop would).  Every read of a statement happens before its write.  The
gathers, scatters and updates are collective and run in the same order on every
locale (the expression tree's), so a bad index raises on every locale alike.
"""

from __future__ import annotations

import numpy as np

from .. import comm
from ..exec import fperr
from ..exec.statement import explaining
from ..plan.clip import points_mask
from . import irregular
from .expr import Affine, Expr, IndirectRef, Ref, TraceError

#: ``A[...] op= v`` through a non-affine subscript: the update each reduction ufunc runs as.
UPDATE_OPS = {"add": "add", "subtract": "add", "bitwise_or": "or", "bitwise_and": "and", "bitwise_xor": "xor",
              "minimum": "min", "maximum": "max", "fmin": "min", "fmax": "max", "logical_or": "or",
              "logical_and": "and"}


def has_indirect(*nodes) -> bool:
    """True if any of ``nodes`` (traced operands) holds an :class:`IndirectRef`."""
    stack = list(nodes)
    while stack:
        x = stack.pop()
        if isinstance(x, IndirectRef):
            return True
        if isinstance(x, Expr):
            stack.extend(x.args)
    return False


def first_indirect(*nodes):
    stack = list(nodes)
    while stack:
        x = stack.pop(0)
        if isinstance(x, IndirectRef):
            return x
        if isinstance(x, Expr):
            stack.extend(x.args)
    return None


def points(dom) -> list[np.ndarray]:
    """The loop variables' values at every point of domain ``dom``, in iteration order."""
    boxes = dom.parts or (dom.box,)
    per = []
    for box in boxes:
        axes = [start + step * np.arange(count, dtype=np.int64) for start, step, count in box]
        per.append([g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")])
    pts = [np.concatenate([p[v] for p in per]) for v in range(dom.ndim)]
    if dom.clips and not dom.parts:
        keep = points_mask(pts, dom.clips)
        pts = [p[keep] for p in pts]
    return pts


def check(target, uf, reduce: bool) -> None:
    """Raise, on every locale alike (it depends on the trace only), for what this path cannot run."""
    if reduce and uf.__name__ not in UPDATE_OPS:
        raise TraceError(f"{target.base.label}: a {uf.__name__} reduction through a non-affine subscript is not "
                         f"supported (updates combine with {', '.join(sorted(set(UPDATE_OPS.values())))}): "
                         "compute the values into an array first")


def explain(target, value, reduce: bool, dom, masks) -> None:
    """Under ``pg.explain``: say how the statement runs, and why."""
    P = explaining[-1][0] or comm.num_locales()
    ref = first_indirect(target, value, *masks)
    what = ("the write" if ref is target else "a read" if ref is not None else "a condition")
    how = "an update (accumulated, repeats included)" if reduce else "a scatter (a repeated index keeps one value)"
    explaining[-1][1].append(
        f"forall statement writing {target.base.label} over {dom.text}: {what} of {ref.base.label} has a subscript "
        "that is not affine in the loop variables, so the planner cannot work out owners and messages; run by "
        f"the inspector fallback instead (unoptimised): each of {P} locales takes 1/{P} of the iterations, "
        f"reads through aggregated gathers (one message per owner) and writes through {how}")


def run(dom, target, value, uf, reduce: bool, masks, collective: bool = True) -> None:
    """Collective: ``target = value`` (``reduce``: ``target op= value`` with ``uf``'s reduction)
    over domain ``dom`` where every traced condition of ``masks`` holds."""
    fperr.run(lambda _: _run(dom, target, value, uf, reduce, masks), None, collective)


def _run(dom, target, value, uf, reduce, masks) -> None:
    pts = points(dom)
    n = len(pts[0]) if pts else 0
    P, r = comm.num_locales(), comm.here()
    lo, hi = r * n // P, (r + 1) * n // P
    ctx = _Context([p[lo:hi] for p in pts], dom)
    for cond in masks:
        keep = np.broadcast_to(np.asarray(ctx.eval(cond)), (ctx.n,)).astype(bool)
        ctx = _Context([p[keep] for p in ctx.pts], dom)
    vals = np.broadcast_to(np.asarray(ctx.eval(value)), (ctx.n,))
    idx = ctx.indices(target)
    base = target.base
    if not reduce:
        irregular.scatter(base, idx, vals.astype(base.dtype, copy=False))
        return
    name = uf.__name__
    if name == "subtract":
        vals = np.negative(vals)
    irregular.update(base, idx, vals.astype(base.dtype, copy=False), UPDATE_OPS[name])


class _Context:
    """Values of traced operands at this locale's points ``pts`` (one int64 array per variable)."""

    def __init__(self, pts, dom) -> None:
        self.pts, self.dom = pts, dom
        self.n = len(pts[0]) if pts else 0

    def affine(self, coefs, const) -> np.ndarray:
        out = np.full(self.n, const, dtype=np.int64)
        for a, p in zip(coefs, self.pts):
            if a:
                out += a * p
        return out

    def indices(self, ref) -> tuple:
        if isinstance(ref, Ref):
            return tuple(self.affine(row, c) for row, c in zip(ref.M, ref.c))
        out = []
        for s in ref.subs:
            x = np.asarray(self.eval(s))
            if x.dtype.kind not in "iu":
                raise TraceError(f"{ref.base.label}: a subscript evaluated to {x.dtype} values: subscripts must "
                                 "be integers")
            out.append(np.broadcast_to(x, (self.n,)).astype(np.int64, copy=False))
        return tuple(out)

    def eval(self, node):
        if isinstance(node, Expr):
            return node.func(*[self.eval(a) for a in node.args], **node.kwargs)
        if isinstance(node, Affine):
            return self.affine(node.coefs, node.const)
        if isinstance(node, (Ref, IndirectRef)):
            return irregular.gather(node.base, self.indices(node))
        if isinstance(node, np.ndarray) and node.ndim:
            shape = tuple(count for _, _, count in self.dom.box)
            full = np.broadcast_to(node, shape)
            pos = tuple((p - start) // step for p, (start, step, _) in zip(self.pts, self.dom.box))
            return full[pos]
        return node


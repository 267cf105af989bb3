"""Recording a step: the statements a dry run of its function assigns, with where each
array and parameter comes from, and the value trees rebuilt on a call's arrays and values."""

from __future__ import annotations

import numpy as np

from ...exec import statement as engine_statement
from .. import engine
from ..expr import Affine, CaptureError, Expr, Lazy, Param, Ref
from ..view import View

SCALARS = (bool, int, float, complex, np.generic)


# -- recording ------------------------------------------------------------------------
class Stmt:
    """One recorded statement: its target view and value tree (with parameters), where its
    arrays come from, and its compiled form once run."""

    __slots__ = ("target", "value", "casting", "fill", "params", "srcs", "r", "bases", "prog", "vals", "buf",
                 "how")

    def __init__(self, target, value, casting, fill, params, srcs) -> None:
        self.target, self.value, self.casting, self.fill = target, value, casting, fill
        self.params = params            # [(path in the value tree, argument index)]
        self.srcs = srcs                # per slot (structure's order): argument index, or -1 - fixed index
        self.r = self.bases = self.prog = self.vals = None
        self.buf = np.empty((), target.dtype) if fill else None
        self.how = "not run yet"


class Recorder:
    """Records the assignments of a dry run (:data:`pgas.array.engine.capturing`)."""

    def __init__(self, args, watch) -> None:
        self.args, self.watch = args, watch
        self.stmts: list[Stmt] = []

    def refuse(self, what: str) -> None:
        raise CaptureError(f"{what} inside the step cannot be recorded")

    def assign(self, target, value, casting) -> None:
        if engine_statement.explaining:
            self.refuse("pg.explain")
        if not isinstance(target, View):
            self.refuse("an assignment through forall subscripts")
        fill = type(value) is Param
        if not fill:
            if not isinstance(value, (np.ndarray, Lazy, Affine)) and not engine.is_array(value):
                value = engine._python_value(target, value)
                fill = isinstance(value, np.generic)
            value = engine.as_operand(value)
            engine.used(value)
        params = []
        _walk(value, (), params)
        srcs = [self._source(target.base)]
        seen = [target.base]
        for b in _bases(value):
            if not any(b is s for s in seen):
                seen.append(b)
                srcs.append(self._source(b))
        self.stmts.append(Stmt(target, value, casting, fill, params, srcs))

    def _source(self, base) -> int:
        for k, a in enumerate(self.args):
            if a is base:
                if id(base) in self.watch.arrays:
                    raise CaptureError(f"{base.label} is both argument {k} and a global or closure variable the "
                                       "step reads: a recording cannot tell which a statement means")
                return k
        if id(base) in self.watch.arrays:
            return -1
        raise CaptureError(f"{base.label} is neither an argument of the step nor a global or closure variable "
                           "it reads: pass it as an argument")


def _walk(node, path, params) -> None:
    """Collect ``(path, argument index)`` of the parameters in value tree ``node``."""
    if type(node) is Param:
        params.append((path, node.index))
    elif isinstance(node, Expr):
        if node._value is not None:
            raise CaptureError("an evaluated expression inside the step cannot be recorded")
        if any(type(v) is Param for v in node.kwargs.values()):
            raise CaptureError("a parameter as a keyword argument cannot be recorded")
        for k, a in enumerate(node.args):
            _walk(a, (*path, k), params)
    elif isinstance(node, Ref):
        raise CaptureError("forall subscripts inside the step cannot be recorded")


def _bases(node) -> list:
    """The arrays of value tree ``node`` in first-read order (as the structure numbers them)."""
    out: list = []
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, View):
            out.append(x.base)
        elif isinstance(x, Expr):
            stack.extend(reversed(x.args))
    return out


def rebuild(node, swap: dict, vals):
    """Value tree ``node`` with each array ``a`` replaced by ``swap[id(a)]`` and each parameter
    by its value in ``vals``."""
    if type(node) is Param:
        return vals[node.index]
    if isinstance(node, View):
        return View(swap.get(id(node.base), node.base), node.shape, node.M, node.c)
    if isinstance(node, Expr):
        return Expr(node.func, [rebuild(a, swap, vals) for a in node.args], node.kwargs)
    return node


def substitute(prog, path, value):
    """Program ``prog`` with the constant at value-tree ``path`` replaced by ``value``."""
    if not path:
        return ("const", value)
    k = path[0]
    args = list(prog[2])
    args[k] = substitute(args[k], path[1:], value)
    return (prog[0], prog[1], tuple(args), *prog[3:])



def all_bases(s: Stmt) -> list:
    seen = [s.target.base]
    for b in _bases(s.value):
        if not any(b is x for x in seen):
            seen.append(b)
    return seen

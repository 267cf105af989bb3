"""Recording a step: the statements a dry run of its function assigns, with where each
array and parameter comes from, and the value trees rebuilt on a call's arrays and values."""

from __future__ import annotations

import numpy as np

from ...exec import statement as engine_statement
from .. import engine
from ..expr import Affine, CaptureError, Expr, Lazy, Param, Ref
from ..expr import probe as expr_probe
from ..view import View

SCALARS = (bool, int, float, complex, np.generic)


# -- recording ------------------------------------------------------------------------
class Stmt:
    """One recorded statement: its target view and value tree (with parameters), where its
    arrays come from, and its compiled form once run."""

    __slots__ = ("target", "value", "casting", "fill", "params", "srcs", "r", "bases", "prog", "vals", "buf",
                 "how", "varies")

    def __init__(self, target, value, casting, fill, params, srcs) -> None:
        self.target, self.value, self.casting, self.fill = target, value, casting, fill
        self.params = params            # [(path in the value tree, argument index)]
        self.srcs = srcs                # per slot (structure's order): argument index, or -1 - fixed index
        self.r = self.bases = self.prog = self.vals = None
        self.buf = np.empty((), target.dtype) if fill else None
        self.how = "not run yet"
        self.varies = False             # its parameters' values changed between replays


class Recorder:
    """Records the assignments of a dry run (:data:`pgas.array.engine.capturing`)."""

    def __init__(self, args, watch) -> None:
        self.args, self.watch = args, watch
        self.stmts: list[Stmt] = []
        #: id(array) -> the expression sequence number (:data:`engine._seq`) at the last
        #: recorded statement writing it: an expression built before reads the old values.
        self.written: dict = {}

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
        self.fresh(value)
        if casting == "same_kind" and isinstance(value, Expr) and _casts(value, target.dtype):
            casting = "unsafe"      # (the cast depends on dtypes alone, which the signature fixes)
        params = []
        _walk(value, (), params)
        srcs = [self._source(target.base)]
        seen = [target.base]
        for b in _bases(value):
            if not any(b is s for s in seen):
                seen.append(b)
                srcs.append(self._source(b))
        self.stmts.append(Stmt(target, value, casting, fill, params, srcs))
        self.written[id(target.base)] = next(engine._seq)

    def fresh(self, value) -> None:
        """Refuse if an expression in ``value`` was built before a recorded statement wrote
        one of its arrays: run plainly, it holds the values of the moment it was built
        (whole-array arithmetic computes them then; a view expression is evaluated before
        the write), which a recording, reading the arrays when the statement runs, cannot."""
        if not self.written:
            return
        stack = [value]
        while stack:
            x = stack.pop()
            if isinstance(x, Expr):
                for b, _ in x._seen or ():
                    if self.written.get(id(b), -1) > x._seq:
                        raise CaptureError(
                            f"the step uses an array expression ({text(x)}) after a statement wrote {b.label}, which "
                            "it reads: run plainly it holds the values from before that write, which a recording "
                            "cannot; assign it to an array before the write")
                stack.extend(x.args)

    def materialise(self, e, how: str) -> None:
        """Refuse: expression ``e`` is used as an array (``how``), which makes a new array."""
        raise CaptureError(f"the step uses an array expression ({text(e)}) other than as the value of an "
                           f"assignment ({how}): that makes a new array, which a recording cannot hold; assign "
                           "it to a view of an existing array instead (B[...] = expression)")

    def index(self, e, key):
        """``e[key]`` as an expression of its operands' views indexed by ``key`` (indexing
        commutes with element-wise functions), where every operand array has ``e``'s shape
        and ``key`` is basic; else refuse (that would make a new array)."""
        self.fresh(e)
        got = _indexed(e, key) if _basic(key) else None
        if got is None:
            self.materialise(e, f"indexed with {key!r}, with broadcast operands or a key that is not basic")
        engine.used(e)
        return got

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



def _indexed(node, key):
    """Expression ``node`` with each operand view indexed by ``key``; None where an operand
    does not have ``node``'s shape (broadcast) or the key is not slices, integers, ``None``
    and ``...``."""
    if not isinstance(node, Expr):
        return node
    args = []
    for a in node.args:
        if isinstance(a, Expr):
            if a.shape != node.shape:
                return None
            a = _indexed(a, key)
            if a is None:
                return None
        elif isinstance(a, View):
            if a.shape != node.shape:
                return None
            a = a[key]
        elif isinstance(a, np.ndarray) and a.ndim or not isinstance(a, (*SCALARS, Param, np.ndarray)):
            return None
        args.append(a)
    return Expr(node.func, args, node.kwargs)


def _casts(value, dtype) -> bool:
    """Whether expression ``value``'s result casts to ``dtype`` under ``same_kind`` (``A += B``,
    ``np.add(A, B, out=C)``): then it runs as a plain assignment, as the replay's compiled
    forms do; else as written, and raises as the function run plainly does."""
    def probe(node):
        if type(node) is Param:
            return node.value
        if isinstance(node, Expr):
            return node.func(*[probe(a) for a in node.args], **node.kwargs)
        return expr_probe(node)
    try:
        got = probe(value)
    except Exception:     # noqa: BLE001 (run as written: the statement raises it)
        return False
    return np.can_cast(np.result_type(got), dtype, "same_kind")


def _basic(key) -> bool:
    key = key if type(key) is tuple else (key,)
    return all(k is None or k is Ellipsis or type(k) is slice or isinstance(k, (int, np.integer))
               and not isinstance(k, (bool, np.bool_)) for k in key)


def text(node) -> str:
    """How ``pg.explain`` shows a value tree or target view."""
    if type(node) is Param:
        return node.name
    if isinstance(node, View):
        name = node.base.name or "array"
        return name if node.shape == node.base.shape and node.c == (0,) * len(node.c) else f"{name}[view {node.shape}]"
    if isinstance(node, Expr):
        fname = getattr(node.func, "__name__", "f")
        return f"{fname}({', '.join(text(a) for a in node.args)})"
    return repr(node)


def all_bases(s: Stmt) -> list:
    seen = [s.target.base]
    for b in _bases(s.value):
        if not any(b is x for x in seen):
            seen.append(b)
    return seen


class Recorded:
    """Stands, in a recorded statement, for an array the recording call passed as an
    argument: its layout, dtype, shape, name and label, not the array, so that a compiled
    step does not keep that array (and its window) alive once the caller lets it go.  Each
    replay binds the statement to the call's own arrays (the replay's ``bases``)."""

    __slots__ = ("layout", "dtype", "shape", "ndim", "name", "label")

    def __init__(self, a) -> None:
        self.layout, self.dtype, self.shape, self.ndim = a.layout, a.dtype, a.shape, a.ndim
        self.name, self.label = a.name, a.label


def detach(s: Stmt, stand: dict) -> None:
    """Replace, in statement ``s``'s target and value tree, each array ``a`` with ``id(a)``
    in ``stand`` by ``stand[id(a)]`` (a :class:`Recorded`); the value tree's expressions
    (made by the recording's dry run, held by ``s`` alone) are changed in place and forget
    the arrays they read (``_seen``: a replay rebuilds them, :func:`rebuild`)."""
    def sub(node):
        if isinstance(node, View):
            b = stand.get(id(node.base))
            return node if b is None else View(b, node.shape, node.M, node.c)
        if isinstance(node, Expr):
            node.args = tuple([sub(a) for a in node.args])
            node._seen = ()
            node._value = None
        return node
    s.target = sub(s.target)
    s.value = sub(s.value)

"""Compiled steps: ``step = pg.compile(fn)`` records a time step's statements once and replays them.

The first call with a given *signature* (the layouts, dtypes, shapes and aliasing of
its DistArray arguments, the types of its scalar arguments) runs ``fn`` *dry*: each
scalar argument is a :class:`pgas.array.expr.Param`, and each assignment ``fn`` makes
(``A[...] = expr``, ``A[...] += expr``, ``np.add(A, B, out=C)``) is recorded instead of
run (its target view, its value tree, where each array comes from: an argument or a
global or closure variable, and where each parameter appears).  Nothing runs while
``fn`` runs dry: the library's communicators are silenced
(:func:`pgas.comm.runtime.silent`), so any collective call (creating an array, a
reduction, an element read, printing an array, a one-sided call) raises before
anything is sent, and any Python use of a parameter's value raises
:class:`pgas.array.expr.CaptureError`.  Either way (or on any other error) the
recording is abandoned with its reason, and ``fn`` runs plainly with the call's
arguments, now and on later calls of that signature (``pg.explain(step)`` names the
reason).

A complete recording then runs its statements one by one, as ``fn`` would, and keeps
each statement's recorded compiled form (:class:`pgas.exec.persistent.Replay`: its
lowered statement, program and persistent transfers).  Later calls replay: per
statement, the compiled form runs on the call's arrays (same layouts: the plans hold)
with the call's parameter values substituted into its program's constants (constants
are kernel arguments, :mod:`pgas.exec.fusecode`, so a new value compiles nothing; a
program is rebuilt only when a value changes), with no lowering, planning or checking.
A statement whose compiled form cannot run now (none was made, the settings or the
calibrated model changed, it was freed) runs the usual way, rebuilt from its recording
on the call's arrays and values, and its new compiled form is kept.  Under full
collective checking, ``np.errstate(all="raise")``, NumPy-only kernels, ``pg.explain`` or
tracing every statement runs the usual way.

Never a stale value: the globals ``fn`` reads (its code's names resolved in its
globals, nested code included), its closure cells, its defaults, the attributes its code
names of the modules and classes it reads, and those of plain functions it references
(recursively) are remembered when recorded and compared on every call: by identity for
objects, bit for bit for scalars, strings and tuples or lists of them (``0.0`` and
``-0.0`` differ), by :func:`pgas.comm.check.fingerprint` for NumPy arrays.  Any change
records again.  What cannot be watched makes the step run plainly, with that reason: a
global holding an object whose contents may change (anything with a ``__dict__`` other
than modules, classes and functions, mutable containers, other objects that are not
callable), a source of values that change by themselves (``random``, ``time``,
NumPy's random generators, functions bound to an object), reads by name (``globals()``,
``getattr``, ``eval``, an import inside the step), and Python side effects (assigning a
global or closure variable, or a dry run that changes a watched value).

Collective checking (on by default at two or more locales) folds one signature per
replayed call (the program and its arrays and parameter values), not one per statement.
"""

from __future__ import annotations

import builtins
import dis
import functools
import struct
import sys
import sysconfig
import types

import numpy as np

from .. import comm
from ..comm import check
from ..exec import fperr, merged, persistent, settings
from ..exec import statement as engine_statement
from ..exec.calibration import current as current_model
from ..exec.lowered import Lowered
from . import engine, statements
from .expr import Affine, CaptureError, Expr, Lazy, Param, Ref
from .lowering import structure
from .view import View

_SCALARS = (bool, int, float, complex, np.generic)
_EQUAL = (bool, int, float, complex, str, bytes, type(None), np.generic, np.dtype, slice, type(Ellipsis))
_MISSING = object()
_MASK = (1 << 62) - 1

#: Off: every replayed statement exchanges its own messages (to compare, and for tests).
MERGE = True


def compile(fn):
    """A compiled step of ``fn`` (also a decorator): ``step(A, B, t)`` records ``fn``'s
    statements on its first call with a given signature and replays them on later ones.

    The arguments are DistArrays (the signature holds their layouts, dtypes, shapes and
    which are the same array) and scalars (Python or NumPy numbers; the signature holds
    their types, and each call's value is used where the argument appears: in fills such
    as ``ey[0, :] = t`` and as constants in element-wise expressions such as
    ``A[1:-1] = c * B[1:-1]``).  ``fn`` must return None and may not use a scalar
    argument's value in Python (``if t > 0``, ``range(t)``, ``2 * t``: compute such values
    outside and pass them as arguments), communicate (create arrays, reduce, read
    elements, print arrays) or call ``pg.forall``: any of these makes the step run ``fn``
    plainly, with the reason shown by ``pg.explain(step)``.  A changed global or closure
    value records again.  See ``docs/compiled.md``.

    >>> @pg.compile                                              # doctest: +SKIP
    ... def step(A, B, c):
    ...     B[1:-1] = c * (A[:-2] + A[2:])
    ...     A[1:-1] = B[1:-1]
    >>> for t in range(100):                                     # doctest: +SKIP
    ...     step(A, B, 0.5)
    """
    if not callable(fn):
        raise TypeError(f"pg.compile takes a function, got {type(fn).__name__}")
    return Compiled(fn)


class Compiled:
    """A function compiled by :func:`compile`: its recordings by signature."""

    is_compiled_step = True

    def __init__(self, fn) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.programs: dict = {}
        #: The last call's arguments (scalars by type) and program: a repeat skips the signature.
        self.last = None
        #: Calls that replayed, recorded, ran ``fn`` plainly; statements replayed by their
        #: compiled forms (``fast``) and run the usual way within a replay (``slow``).
        self.stats = {"replays": 0, "records": 0, "plain": 0, "fast": 0, "slow": 0}

    def __call__(self, *args, **kwargs):
        if kwargs or engine_statement.explaining or engine.capturing or engine.tracing():
            self.stats["plain"] += 1
            return self.fn(*args, **kwargs)
        last = self.last
        if last is not None and len(args) == len(last[0]) and all(
                [a is b or type(a) is b for a, b in zip(args, last[0])]):
            prog = last[1]                      # the arrays and scalar types of the last call
            sig = None
        else:
            sig = _signature(args)
            prog = self.programs.get(sig)
        if prog is None or not prog.current():
            if sig is None:
                sig = _signature(args)
            self.last = None
            prog = self._record(sig, args)
            if prog is None:
                return None                     # recorded and run
        if sig is not None or self.last is None:
            self.last = (tuple([type(a) if isinstance(a, _SCALARS) else a for a in args]), prog)
        if prog.reason is not None:
            self.stats["plain"] += 1
            return self.fn(*args)
        if prog.replay(args, self.stats):
            self.stats["replays"] += 1
        return None

    def _record(self, sig, args):
        """Record ``fn`` for ``sig`` and run it (None), or, if it cannot be recorded, keep
        the reason and return that program (the caller runs ``fn``)."""
        self.stats["records"] += 1
        if sig is None:
            prog = self.programs[sig] = _Program(self.fn, args, [], _Watch(self.fn), _why_unsupported(args))
            return prog
        watch = _Watch(self.fn)
        rec = _Recorder(args, watch)
        params = [Param(k, _arg_name(self.fn, k), a) if isinstance(a, _SCALARS) else a for k, a in enumerate(args)]
        reason = watch.reason
        if reason is None:
            kept = watch.keep()
            first = next(engine._seq)
            engine.capturing.append(rec)
            restore = comm.runtime.silent(_silenced)
            try:
                if self.fn(*params) is not None:
                    reason = "the function returns a value (a compiled step returns None)"
            except Exception as e:     # noqa: BLE001 (any error: the plain run raises it again)
                reason = _describe(e)
            finally:
                restore()
                engine.capturing.pop()
                for k in [k for k in engine._pending if k > first]:
                    del engine._pending[k]   # the dry run's expressions: none of them ran
            changed = watch.changed(kept)
            if changed is not None:          # a side effect: undone where it can be, not replayed
                reason = (f"the step changes {changed!r}, which it reads, when run: Python side effects are "
                          "not replayed")
        prog = _Program(self.fn, args, rec.stmts, watch, reason)
        if len(self.programs) >= 16:
            self.programs.pop(next(iter(self.programs))).free_groups()
        self.programs[sig] = prog
        if reason is not None:
            return prog
        prog.first_run(args)
        return None

    def describe(self) -> str:
        """The recorded programs as text: each signature's statements and how each last ran,
        or why the step runs its function plainly."""
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        if not self.programs:
            return f"compiled step {name}: not called yet (nothing recorded)"
        return "\n\n".join(f"compiled step {name}, {p.describe()}" for p in self.programs.values())

    explain = describe

    def __get__(self, obj, objtype=None):
        return self if obj is None else types.MethodType(self, obj)


# -- signature and arguments ------------------------------------------------------------
def _signature(args):
    """What decides whether a recording holds for ``args``: per argument, a DistArray's
    layout, dtype, shape and the first argument that is the same array, or a scalar's type;
    None where an argument is neither."""
    sig = []
    for k, a in enumerate(args):
        if engine.is_array(a):
            same = next(j for j, b in enumerate(args) if b is a)
            sig.append((a.layout, a.dtype, a.shape, same))
        elif isinstance(a, _SCALARS):
            sig.append(type(a))
        else:
            return None
    return tuple(sig)


def _why_unsupported(args) -> str:
    for k, a in enumerate(args):
        if not engine.is_array(a) and not isinstance(a, _SCALARS):
            return (f"argument {k} is a {type(a).__name__}: a compiled step takes DistArrays and scalars "
                    "(views and other objects: pass the whole array, or read them from a global)")
    return "keyword arguments"


def _arg_name(fn, k: int) -> str:
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    off = 1 if isinstance(fn, types.MethodType) else 0
    if code is not None and k + off < code.co_argcount:
        return code.co_varnames[k + off]
    return f"argument {k}"


def _silenced(name: str) -> CaptureError:
    return CaptureError(f"the step communicates ({name}): creating an array, a reduction, an element read or "
                        "write, printing an array or a one-sided call cannot be recorded")


def _describe(e: BaseException) -> str:
    """The reason an error gives for abandoning a recording, with the user's line."""
    tb = e.__traceback__
    where = None
    while tb is not None:
        f = tb.tb_frame.f_code.co_filename
        if not f.startswith(_PKG) and "/numpy/" not in f:
            where = f"{f}:{tb.tb_lineno}"
        tb = tb.tb_next
    text = str(e) if isinstance(e, CaptureError) else f"{type(e).__name__}: {e}"
    return text + (f" (at {where})" if where else "")


_PKG = __file__.rsplit("/array/", 1)[0] + "/"


# -- globals and closures ---------------------------------------------------------------
class _Watch:
    """The globals, closure cells and defaults a function reads, with their values when
    recorded: :meth:`same` tells whether any changed."""

    def __init__(self, fn) -> None:
        self.items: list = []           # (namespace, cell or function, name, mode, value, fingerprint)
        self.reason = None
        self.arrays: dict = {}          # id -> DistArray read from a watched variable
        self._seen: set = set()
        self._function(fn, 0)

    def _refuse(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    def _function(self, fn, depth: int) -> None:
        if isinstance(fn, Compiled):
            fn = fn.fn
        if isinstance(fn, functools.partial):
            self._function(fn.func, depth + 1)
            for k, v in enumerate(fn.args):
                self._value(v, f"partial argument {k}", None, depth)
            for name, v in fn.keywords.items():
                self._value(v, name, fn.keywords, depth)
            self.items.append((fn.keywords, _KEYS, 1, None, tuple(fn.keywords)))
            return
        if isinstance(fn, types.MethodType):
            self._value(fn.__self__, "self", None)
            fn = fn.__func__
        if not isinstance(fn, types.FunctionType):
            if depth == 0:
                self._value(fn, "the step's function", None)
                self._refuse(f"the step's function is a {type(fn).__name__}: only functions, methods and "
                             "functools.partial of them can be watched")
            return
        if id(fn) in self._seen:
            return
        self.items.append((fn, _CODE, 0, fn.__code__, None))       # (code can be swapped in place)
        if depth > _DEPTH:
            self._refuse(f"{fn.__qualname__} is called more than {_DEPTH} functions deep: the values it reads "
                         "cannot all be watched")
            return
        self._seen.add(id(fn))
        g = fn.__globals__
        names = _names(fn.__code__)
        writes = _writes(fn.__code__, fn.__code__.co_freevars)
        if writes:
            self._refuse(f"{fn.__qualname__} assigns {writes}: Python side effects are not replayed")
        if names & _BY_NAME or _imports(fn.__code__):
            self._refuse(f"{fn.__qualname__} reads variables by name or imports ({', '.join(sorted(names & _BY_NAME)) or 'import'}): "
                         "its values cannot be watched; read them as plain globals")
        for name in sorted(names):
            v = g.get(name, _MISSING)
            self._value(v, name, g, depth)
            if isinstance(v, (types.ModuleType, type)):
                self._attributes(v, name, names, depth, 0)
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                v = _MISSING
            self._value(v, name, cell, depth)
            if isinstance(v, (types.ModuleType, type)):
                self._attributes(v, name, names, depth, 0)
        for k, v in enumerate(fn.__defaults__ or ()):
            self._value(v, f"default {k}", fn, depth, k)
        for name, v in (fn.__kwdefaults__ or {}).items():
            self._value(v, f"default {name}", fn, depth, name)

    def _attributes(self, obj, label: str, names: set, depth: int, level: int) -> None:
        """Watch the attributes of module or class ``obj`` that the code may read (its names)."""
        if level > 2 or obj is builtins:
            return
        if isinstance(obj, types.ModuleType):
            if _library_module(obj):                  # a library's attributes: constants, but not its random
                for name in names:
                    try:
                        v = getattr(obj, name, None)   # (a submodule may load on first use)
                    except Exception:   # noqa: BLE001 (a module's __getattr__ that fails: not a module)
                        continue
                    if isinstance(v, types.ModuleType) and _volatile(v):
                        self._value(v, f"{label}.{name}", None, depth)
                return
            spaces = [obj.__dict__]
            if "__getattr__" in obj.__dict__:
                self._refuse(f"{label} computes attributes on each read (a module __getattr__): they cannot be "
                             "watched")
        else:
            spaces = [k.__dict__ for k in obj.__mro__ if not _library_module(sys.modules.get(k.__module__))]
        for name in names:
            if not any(name in d for d in spaces):
                continue
            for d in spaces:
                v = d.get(name, _MISSING)
                if v is _MISSING or callable(v) and not isinstance(v, (types.ModuleType, type)):
                    if isinstance(v, types.FunctionType) and not _library(v):
                        self._function(v, depth + 1)
                    self.items.append((d, name, 0, v, None))
                    continue
                self._value(v, f"{label}.{name}", d, depth, name)
                if isinstance(v, (types.ModuleType, type)) and v is not obj:
                    self._attributes(v, f"{label}.{name}", names, depth, level + 1)

    def _value(self, v, name, where, depth: int = 0, key=None) -> None:
        if isinstance(v, Compiled):                   # a compiled step called inside: its function
            self._function(v.fn, depth + 1)
            mode, fp = 0, None
        elif isinstance(v, _EQUAL) or (isinstance(v, (tuple, list)) and all(isinstance(x, _EQUAL) for x in v)):
            mode, fp = 1, (tuple(v) if isinstance(v, list) else v)
        elif type(v) is np.ndarray and not v.dtype.hasobject:
            mode, fp = 2, check.fingerprint(v)
        elif type(v) is tuple and all(engine.is_array(x) or isinstance(x, _EQUAL) for x in v):
            mode, fp = 0, None                        # immutable: the same tuple holds the same arrays
            self.arrays.update((id(x), x) for x in v if engine.is_array(x))
        elif _volatile(v):
            mode, fp = 0, None
            self._refuse(f"{name!r} is {_volatile(v)}, whose results change from call to call: a recording "
                         "would keep one; compute such values outside and pass them as arguments")
        elif (v is _MISSING or engine.is_array(v) or isinstance(v, _CONSTANT)
              or not hasattr(v, "__dict__") and callable(v)):
            mode, fp = 0, None
            if engine.is_array(v):
                self.arrays[id(v)] = v
            elif isinstance(v, (types.FunctionType, types.MethodType)):
                self._function(v, depth + 1)
        else:
            mode, fp = 0, None
            self._refuse(f"{name!r} holds a {type(v).__name__}, whose contents may change unseen: pass "
                         "what the step uses as arguments, or keep it in scalars, tuples or NumPy arrays")
        if where is not None:
            self.items.append((where, name if key is None else key, mode, v, fp))

    def keep(self) -> dict:
        """Copies of the watched NumPy arrays (for :meth:`changed` to put back)."""
        return {id(v): v.copy() for _, _, mode, v, _ in self.items if mode == 2}

    def changed(self, kept: dict):
        """The name of the first watched value that changed (None if none did); a list of
        scalars or a NumPy array changed in place gets its recorded contents back (from
        ``kept``, :meth:`keep`'s copies)."""
        items = self.items
        found = None
        try:
            for item in items:
                self.items = [item]
                if not self.same():
                    where, name, mode, v, fp = item
                    if mode == 1 and type(v) is list and type(fp) is tuple:
                        v[:] = fp
                    elif mode == 2 and id(v) in kept:
                        v[...] = kept[id(v)]
                    found = name if found is None else found
        finally:
            self.items = items
        return found

    def same(self) -> bool:
        for where, name, mode, v, fp in self.items:
            t = type(where)
            if t is dict or t is types.MappingProxyType:
                cur = where.get(name, _MISSING) if name is not _KEYS else tuple(where)
                if name is _KEYS:
                    if cur != fp:
                        return False
                    continue
            elif t is types.FunctionType:
                if name is _CODE:
                    if where.__code__ is not v:
                        return False
                    continue
                d = where.__defaults__ if type(name) is int else where.__kwdefaults__
                try:
                    cur = d[name]
                except (TypeError, IndexError, KeyError):
                    cur = _MISSING
            else:
                try:
                    cur = where.cell_contents
                except ValueError:
                    cur = _MISSING
            if cur is v and mode != 2 and not (mode == 1 and type(fp) is tuple and type(v) is list):
                continue
            if mode == 1:
                got = tuple(cur) if type(cur) is list else cur
                if type(cur) is not type(v) or not (got is fp or _identical(got, fp)):
                    return False
            elif mode == 2:
                if cur is not v or check.fingerprint(cur) != fp:
                    return False
            else:
                return False
        return True


_DEPTH = 8
_CODE = object()                 # a watched function's code
_KEYS = object()                 # a watched dict's keys (a partial's keywords)
#: Names through which code reads variables a watch cannot see.
_BY_NAME = frozenset({"globals", "vars", "locals", "eval", "exec", "getattr", "hasattr", "__import__",
                      "import_module", "__dict__", "modules"})
#: Modules whose functions return another value on each call.
_VOLATILE = ("random", "time", "datetime", "secrets", "uuid", "os", "sys", "numpy.random")
_CONSTANT = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, np.ufunc, slice, range,
             type(Ellipsis), type(NotImplemented), property, classmethod, staticmethod)
_LIBRARY = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")}) + (_PKG,)


def _library(fn) -> bool:
    return fn.__code__.co_filename.startswith(_LIBRARY)


def _library_module(mod) -> bool:
    """Whether module ``mod`` is Python's, an installed package's or pgas's (or unknown)."""
    if mod is None or mod is builtins:
        return True
    f = getattr(mod, "__file__", None)
    return bool(f) and f.startswith(_LIBRARY)


def _volatile(v) -> str:
    """What makes ``v`` return another value on each call ('' if nothing known does)."""
    if isinstance(v, types.ModuleType):
        mod = v.__name__
    elif isinstance(v, types.BuiltinFunctionType) and v.__self__ is not None:
        if not isinstance(v.__self__, types.ModuleType):
            return f"a function bound to a {type(v.__self__).__name__}"
        mod = v.__self__.__name__
    elif type(v).__module__.startswith("numpy.random"):
        return f"a {type(v).__name__}"
    else:
        return ""
    return f"the module {mod}" if any(mod == m or mod.startswith(m + ".") for m in _VOLATILE) else ""


def _identical(a, b) -> bool:
    """Whether scalars (or tuples of them) ``a`` and ``b`` are the same value, bit for bit
    where they are numbers (0.0 and -0.0 differ, NaN is NaN)."""
    if type(a) is tuple:
        return type(b) is tuple and len(a) == len(b) and all(_identical(x, y) for x, y in zip(a, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, (float, complex)):
        return _bits(a) == _bits(b)
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    try:
        return bool(a == b)
    except Exception:     # noqa: BLE001 (an element comparison that fails: treat as changed)
        return False


def _bits(x):
    return struct.pack("<2d", x.real, x.imag) if isinstance(x, complex) else struct.pack("<d", x)


def _writes(code, free) -> str:
    """The global or closure variables ``code`` (or code nested in it) assigns or deletes."""
    out = sorted({i.argval for i in dis.get_instructions(code)
                  if i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL")
                  or i.opname in ("STORE_DEREF", "DELETE_DEREF") and i.argval in free})
    nested = [_writes(c, ()) for c in code.co_consts if isinstance(c, types.CodeType)]
    return ", ".join(x for x in (", ".join(out), *nested) if x)


def _imports(code) -> bool:
    """Whether ``code`` or the code nested in it imports."""
    if any(i.opname in ("IMPORT_NAME", "IMPORT_FROM") for i in dis.get_instructions(code)):
        return True
    return any(isinstance(c, types.CodeType) and _imports(c) for c in code.co_consts)


def _names(code) -> set:
    """The global names ``code`` and the code nested in it (lambdas, comprehensions) may read."""
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


# -- recording ------------------------------------------------------------------------
class _Stmt:
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


class _Recorder:
    """Records the assignments of a dry run (:data:`pgas.array.engine.capturing`)."""

    def __init__(self, args, watch) -> None:
        self.args, self.watch = args, watch
        self.stmts: list[_Stmt] = []

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
        self.stmts.append(_Stmt(target, value, casting, fill, params, srcs))

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


def _rebuild(node, swap: dict, vals):
    """Value tree ``node`` with each array ``a`` replaced by ``swap[id(a)]`` and each parameter
    by its value in ``vals``."""
    if type(node) is Param:
        return vals[node.index]
    if isinstance(node, View):
        return View(swap.get(id(node.base), node.base), node.shape, node.M, node.c)
    if isinstance(node, Expr):
        return Expr(node.func, [_rebuild(a, swap, vals) for a in node.args], node.kwargs)
    return node


def _substitute(prog, path, value):
    """Program ``prog`` with the constant at value-tree ``path`` replaced by ``value``."""
    if not path:
        return ("const", value)
    k = path[0]
    args = list(prog[2])
    args[k] = _substitute(args[k], path[1:], value)
    return (prog[0], prog[1], tuple(args), *prog[3:])


# -- programs ----------------------------------------------------------------------------
class _Program:
    """One signature's recording: its statements, or why it runs ``fn`` plainly."""

    def __init__(self, fn, args, stmts, watch, reason) -> None:
        self.fn, self.stmts, self.watch, self.reason = fn, stmts, watch, reason
        self.fixed: list = []
        self.bound: tuple | None = None                 # the arrays of the last binding
        #: ``(settings key, per statement its Kept repeat or None)`` (:meth:`_keep`), or None.
        self.kept = None
        #: Runs of consecutive statements whose transfers travel together (:meth:`_group`):
        #: ``[first, end, Replays or None, exchange, why the run ends]``, made for
        #: ``merge_key`` (the settings' version and calibrated model), None until made.
        self.groups: list | None = None
        self.merge_key = None
        self.merging = False                            # whether a run of ``groups`` merges anything
        self.shape = tuple(type(a).__name__ if isinstance(a, _SCALARS) else "array" for a in args)
        self.params = [k for k, a in enumerate(args) if isinstance(a, _SCALARS)]
        self.hash = check.stable_hash((getattr(fn, "__qualname__", ""), len(stmts),
                                       tuple((s.casting, s.fill, len(s.srcs)) for s in stmts)))
        if reason is None:
            for s in stmts:                              # fixed arrays: held by the watch, by identity
                s.srcs = [k if k >= 0 else -1 - self._fix(b) for k, b in zip(s.srcs, _all_bases(s))]

    def _fix(self, base) -> int:
        for k, b in enumerate(self.fixed):
            if b is base:
                return k
        self.fixed.append(base)
        return len(self.fixed) - 1

    def current(self) -> bool:
        return self.watch.same()

    def first_run(self, args) -> None:
        """Run the statements one by one the usual way (as ``fn`` would), keeping their
        compiled forms."""
        self._bind(args)
        vals = list(args)
        for s in self.stmts:
            self._slow(s, args, vals)
        self.free_groups()

    def free_groups(self) -> None:
        """Forget the runs of statements sharing an exchange, freeing their transfers."""
        for g in self.groups or ():
            if g[3] is not None:
                g[3].free()
        self.groups = None

    def _bind(self, args) -> bool:
        """Bind the statements to ``args``' arrays; False (nothing bound) where an argument
        is an array that the recording read from a global or closure variable: the
        statements' arrays would alias where they did not when recorded."""
        for s in self.stmts:
            bases = [args[k] if k >= 0 else self.fixed[-1 - k] for k in s.srcs]
            if len({id(b) for b in bases}) < len(bases):
                self.bound = None
                return False
            s.bases = bases
        self.kept = None
        self.bound = tuple(a for a in args if engine.is_array(a))
        return True

    def _slow(self, s: _Stmt, args, vals) -> None:
        """Run statement ``s`` the usual way on the call's arrays and values, and keep its
        compiled form if it made one."""
        swap = {id(b): a for b, a in zip(_all_bases(s), s.bases)}
        t = s.target
        target = View(s.bases[0], t.shape, t.M, t.c)
        value = _rebuild(s.value, swap, vals)
        if s.fill and not isinstance(value, np.generic):
            value = engine._python_value(target, value)
        if s.casting == "same_kind":
            try:
                statements.assign(target, value, "same_kind")
            finally:
                engine.used(value)
        else:
            engine.assign(target, value, s.casting)
        known = structure(target, value)
        s.r = None
        s.how = "runs the usual way: its statement has no recorded compiled form"
        if known is not None:
            key = known[0] if not s.fill else (*known[0][:3], "fill", value.dtype)
            r = persistent._replays.get(key)
            if r is not None and r.fs is not None and len(r.refs) == len(known[1]) and all(
                    w() is b for w, b in zip(r.refs, known[1])):
                s.r, s.prog, s.vals = r, None, None
                s.how = "replays its compiled form (persistent transfers, kept kernel calls)"
            elif r is None or r.fs is None:
                s.how = "runs the usual way: it does not run by persistent transfers (pgas.exec.persistent)"

    def replay(self, args, stats) -> bool:
        """Run the recording on ``args`` (its signature's); where they alias an array the
        recording reads from a global (:meth:`_bind`), run the function plainly."""
        bound = self.bound
        k = 0
        for a in args:
            if engine.is_array(a):
                if bound is None or k >= len(bound) or bound[k] is not a:
                    if not self._bind(args):
                        stats["plain"] += 1
                        self.fn(*args)
                        return False
                    break
                k += 1
        fast = not (check.enabled or fperr.numpy_only or fperr.raising() or engine_statement.explaining)
        if check.folding:
            self._fold(args)
        stmts = self.stmts
        groups = self.groups
        if groups is not None and self.merge_key != (settings.version[0], current_model()):
            self.free_groups()                           # made under other settings: made again below
            groups = None
        if groups is None or not fast or not MERGE or not self.merging:
            if fast and self._again(args, stats):
                return True
            self._each(stmts, args, stats, fast)
            if groups is None and fast and MERGE:
                self._group()                            # (collective: one reduction)
            if fast:
                self._keep()
            return True
        valid = persistent.valid_everywhere
        for g in groups:
            rs = g[2]
            if rs is None or not all([valid(r) for r in rs]):
                self._each(stmts[g[0]:g[1]], args, stats, fast)
                continue
            items = []
            for s, r in zip(stmts[g[0]:g[1]], rs):
                got = self._program(s, r, args)
                if got is None:                          # a fill that does not convert: the usual way
                    items = None
                    break
                items.append((r.fs, Lowered(r.stmt, s.bases, got, r.names), s.bases[0]))
            if items is None:
                self._each(stmts[g[0]:g[1]], args, stats, fast)
                continue
            if g[3] is None:
                g[3] = merged.Group()
            g[3].run(items, engine_statement.compute_tasks, engine_statement.write_results, engine.before_write)
            stats["fast"] += len(items)
        return True

    def _keep(self) -> None:
        """After statements ran one by one: hold each statement's repeat by its kept kernel
        calls (:func:`pgas.exec.persistent.kept`, None where there is none) for the next
        replay, if any statement has one."""
        kept = [None if s.r is None else persistent.kept_fill(s.r, s.bases) if s.fill
                else None if s.params else persistent.kept(s.r, s.bases) for s in self.stmts]
        self.kept = (persistent.settings_key(), kept) if any(kept) else None

    def _again(self, args, stats) -> bool:
        """Replay by the repeats :meth:`_keep` holds, statements without one the usual way
        (all or nothing: False, nothing run, where the settings or any repeat changed).  A
        repeat freed within the step (a statement run the usual way built its compiled form
        again beyond ``KEEP_BYTES``, evicting another's) runs the usual way too."""
        kept = self.kept
        if kept is None:
            return False
        if kept[0] != persistent.settings_key() or not all([k is None or k.valid() for k in kept[1]]):
            self.kept = None
            return False
        before = engine.before_write
        # the fills' values converted before the flags are cleared: a conversion that fails
        # (NaN to an integer) may set one, which is no error of the step's
        fills = [self._program(s, s.r, args) if k is not None and s.fill else None for s, k in zip(self.stmts, kept[1])]
        mask = fperr.cleared()                     # the kernels' flags read once (around statements
        try:                                       # run the usual way, which read their own)
            for s, k, prog in zip(self.stmts, kept[1], fills):
                if k is not None and not k.valid():
                    k = None                       # freed by a statement run the usual way before it
                if k is not None and s.fill:
                    if prog is not None and k.takes(prog[1]):
                        before(s.bases[0], None)
                        k.run(prog[1])
                        stats["fast"] += 1
                        continue
                    k = None                       # (the usual way: it raises as a plain run does)
                if k is None:
                    fperr.reported(mask)
                    mask = 0                       # (flags after an error of the usual way: not read)
                    self._each((s,), args, stats, True)
                    mask = fperr.cleared()
                else:
                    before(s.bases[0], None)
                    k.run(False)
                    stats["fast"] += 1
        finally:
            fperr.reported(mask)
        return True

    def _each(self, stmts, args, stats, fast) -> None:
        """Run ``stmts`` one by one, each exchanging its own messages."""
        before = engine.before_write
        rerun = persistent.rerun
        compute, write = engine_statement.compute_tasks, engine_statement.write_results
        valid = persistent.valid
        for s in stmts:
            r = s.r
            if fast and r is not None and valid(r):
                if s.fill or s.params:
                    prog = self._program(s, r, args)
                    if prog is None:
                        self._slow(s, args, args)          # raises as the usual path does
                        stats["slow"] += 1
                        continue
                else:
                    prog = r.prog
                bases = s.bases
                before(bases[0], None)
                rerun(r, bases, compute, write, None, prog)
                stats["fast"] += 1
            elif fast and check.folding:
                self._unfolded(s, args)
                stats["slow"] += 1
            else:
                self._slow(s, args, args)
                stats["slow"] += 1

    def _unfolded(self, s: _Stmt, args) -> None:
        """:meth:`_slow` in a replay that runs by compiled forms, whose call :meth:`_fold` folded
        whole: the statement is not folded again, for whether it runs the usual way is this
        locale's own (its compiled form freed here, beyond ``KEEP_BYTES``, kept elsewhere)."""
        check.folding = False
        try:
            self._slow(s, args, args)
        finally:
            check.folding = True

    def _program(self, s: _Stmt, r, args):
        """Statement ``s``'s program (recorded as ``r``'s) with the call's parameter values,
        or None where a fill's value does not convert to the target's dtype."""
        if s.fill:
            if not s.params:
                return ("const", s.value)
            try:
                s.buf[()] = args[s.params[0][1]]
            except (TypeError, ValueError, OverflowError):
                return None
            return ("const", s.buf[()])
        if not s.params:
            return r.prog
        vals = tuple([args[i] for _, i in s.params])
        if s.prog is None or s.vals is None or not _same_values(vals, s.vals) or s.prog[0] is not r:
            p = r.prog
            for (path, _), v in zip(s.params, vals):
                p = _substitute(p, path, v)
            s.prog, s.vals = (r, p), vals
        return s.prog[1]

    def _group(self) -> None:
        """Split the statements into runs whose transfers can travel together, agreed by
        every locale (collective: one reduction).  A statement joins the run before it
        unless it does not replay by persistent transfers, or it moves in messages an
        array region that a statement of the run writes: the messages of a run are packed
        before its first statement computes, so none may carry what the run itself
        changes (regions by their bounding boxes in the whole array).  Each locale decides
        by the messages it sends and receives; a run ends where it ends on any locale."""
        stmts = self.stmts
        n = len(stmts)
        # per statement: not mergeable, starts a run, moves messages, sends or receives several
        # messages with one peer (a run that merges nothing runs its statements one by one)
        local = np.zeros(4 * n, dtype=np.int64)
        why = [""] * n
        run_start = None
        for k, s in enumerate(stmts):
            r = s.r
            if r is None or not persistent.valid(r):
                local[k] = local[n + k] = 1
                why[k] = "it does not replay by persistent transfers"
                run_start = None
                continue
            fs = r.fs
            recv, send = [p for p, _, _ in fs.recvs], [p for p, _, _, _ in fs.sends]
            local[2 * n + k] = bool(recv or send)
            local[3 * n + k] = len(set(recv)) < len(recv) or len(set(send)) < len(send)
            reason = None if run_start is None else _conflict(stmts[run_start:k], s, run_start, _moved(fs, s))
            if reason is not None or run_start is None:
                local[n + k] = 1
                why[k] = f"statement {k + 1} {reason}" if reason else ""
                run_start = k
        agreed = comm.allreduce(local, "max")
        groups: list = []
        for k, s in enumerate(stmts):
            if agreed[k]:
                groups.append([k, k + 1, None, None, why[k] or "it does not replay by persistent transfers "
                               "on every locale"])
            elif agreed[n + k] or not groups or groups[-1][2] is None:
                groups.append([k, k + 1, [s.r], None, why[k] or ("" if k == 0 or agreed[k - 1] else
                                                                   "another locale starts a new run here")])
            else:
                groups[-1][1] = k + 1
                groups[-1][2].append(s.r)
        for g in groups:                       # (from agreed facts: the same on every locale)
            if g[2] is not None and sum(agreed[2 * n + g[0]:2 * n + g[1]]) < 2 and not any(
                    agreed[3 * n + g[0]:3 * n + g[1]]):
                g[2] = None
                g[4] = ("nothing to merge (fewer than two statements with messages, none with several to one peer)"
                        + ("; a new run starts here: " + g[4] if g[4] else ""))
        self.groups = groups
        self.merging = any(g[2] is not None for g in groups)
        self.merge_key = (settings.version[0], current_model())

    def _fold(self, args) -> None:
        """Fold one signature for the whole call (collective checking's running hash)."""
        items = [self.hash]
        arrays = []
        for a in args:
            if engine.is_array(a):
                items.append(a._seq)
                arrays.append((a._seq, None, None, id(a), a.name))
            else:
                v = a.item() if isinstance(a, np.generic) else a
                items.append(v if v == v else "nan")
        check.fold(check.stable_hash(tuple(items)) & _MASK, "compiled step", tuple(arrays), (),
                   check.site_of(check.call_site()))

    def describe(self) -> str:
        head = f"arguments ({', '.join(self.shape)})"
        if self.reason is not None:
            return f"{head}: runs its function plainly: {self.reason}"
        lines = [f"{head}: {len(self.stmts)} statements recorded"]
        for n, s in enumerate(self.stmts, 1):
            lines.append(f"  {n}. {_text(s.target)} = {_text(s.value)}: {s.how}")
        lines.extend(self._describe_groups())
        return "\n".join(lines)

    def _describe_groups(self) -> list:
        """The runs of statements sharing one exchange, with this locale's messages merged."""
        if not MERGE:
            return ["  exchanges: each statement its own (merging is off: pgas.array.compiled.MERGE)"]
        if self.groups is None:
            return ["  exchanges: each statement its own until the runs that share one are made "
                    "(on the first replay)"]
        merging = sum(g[2] is not None for g in self.groups)
        out = [f"  exchanges on locale {comm.here()}: {merging} merged of {len(self.groups)} runs of statements"]
        for first, end, rs, ex, why in self.groups:
            which = f"statement {first + 1}" if end == first + 1 else f"statements {first + 1}-{end}"
            if rs is None:
                out.append(f"    {which}: {'its' if end == first + 1 else 'their'} own exchanges: {why}")
                continue
            text = f"    {which}: one exchange"
            if ex is not None and ex.ex is not None:
                (recv, send), (nr, ns) = ex.ex.peers, ex.ex.parts
                text += (f": sends {_count(len(send), 'message')} (to locales {send}) carrying "
                         f"{_count(ns, 'statement message')}, receives {len(recv)} (from locales {recv}) "
                         f"carrying {nr}")
            if why:
                text += f"; a new exchange starts here: {why}"
            out.append(text)
        return out


def _moved(fs, s: _Stmt) -> set:
    """The ids of the arrays that statement ``s`` (compiled as ``fs``) moves in messages from
    or to this locale."""
    slots = {m.slot for m in fs.plan.fetches} | {slot for _, slot, _, _ in fs.sends}
    bases = _all_bases(s)                             # (the recording's arrays, slot by slot)
    return {id(bases[k]) for k in slots}


def _conflict(run, s: _Stmt, first: int, moved: set) -> str | None:
    """Why statement ``s``'s messages cannot travel before the statements ``run`` (the first
    numbered ``first``, from 0): it moves (``moved``: the ids of the arrays it moves in
    messages here) a region of an array that one of them writes; None if it moves none
    (regions by their bounding boxes in the whole array; reads of arrays that travel in
    no message here are computed in order, after the writes)."""
    reads = [v for v in _views(s.value) if id(v.base) in moved]
    for k, m in enumerate(run):
        t = m.target
        box = None
        for v in reads:
            if v.base is t.base:
                box = box or _box(t)
                if _overlap(box, _box(v)):
                    return (f"reads {t.base.label} where statement {first + k + 1} writes it: its messages "
                            "must carry the new values")
    return None


def _views(node) -> list:
    out: list = []
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, View):
            out.append(x)
        elif isinstance(x, Expr):
            stack.extend(x.args)
    return out


def _box(v: View) -> tuple:
    """The bounding box of view ``v``'s elements in its base: ``(low, high)`` per dimension."""
    out = []
    for row, c in zip(v.M, v.c):
        lo = hi = c
        for m, n in zip(row, v.shape):
            if n == 0:
                return ()
            step = m * (n - 1)
            lo, hi = lo + min(step, 0), hi + max(step, 0)
        out.append((lo, hi))
    return tuple(out)


def _overlap(a: tuple, b: tuple) -> bool:
    if not a or not b:
        return False                                   # an empty view
    return all(lo1 <= hi2 and lo2 <= hi1 for (lo1, hi1), (lo2, hi2) in zip(a, b))


def _count(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def _same_values(a, b) -> bool:
    return all(x is y or _identical(x, y) for x, y in zip(a, b))


def _all_bases(s: _Stmt) -> list:
    seen = [s.target.base]
    for b in _bases(s.value):
        if not any(b is x for x in seen):
            seen.append(b)
    return seen


def _text(node) -> str:
    if type(node) is Param:
        return node.name
    if isinstance(node, View):
        name = node.base.name or "array"
        return name if node.shape == node.base.shape and node.c == (0,) * len(node.c) else f"{name}[view {node.shape}]"
    if isinstance(node, Expr):
        fname = getattr(node.func, "__name__", "f")
        return f"{fname}({', '.join(_text(a) for a in node.args)})"
    return repr(node)

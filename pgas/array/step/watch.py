"""Never a stale value: the globals, closure cells, defaults and attributes a step's
function reads, remembered when recorded and compared on every call."""

from __future__ import annotations

import builtins
import dis
import functools
import struct
import sys
import sysconfig
import types

import numpy as np

from ...comm import check
from .. import engine

_EQUAL = (bool, int, float, complex, str, bytes, type(None), np.generic, np.dtype, slice, type(Ellipsis))
_MISSING = object()
#: pgas's own files (a recording's error names the user's line outside them).
PKG = __file__.rsplit("/array/", 1)[0] + "/"


# -- globals and closures ---------------------------------------------------------------
class Watch:
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
        if getattr(fn, "is_compiled_step", False):
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
        if getattr(v, "is_compiled_step", False) and callable(v):   # a compiled step called inside: its function
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
                if type(cur) is not type(v) or not (got is fp or identical(got, fp)):
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
_LIBRARY = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")}) + (PKG,)


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


def identical(a, b) -> bool:
    """Whether scalars (or tuples of them) ``a`` and ``b`` are the same value, bit for bit
    where they are numbers (0.0 and -0.0 differ, NaN is NaN)."""
    if type(a) is tuple:
        return type(b) is tuple and len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
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

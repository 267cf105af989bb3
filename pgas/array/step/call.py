"""The front of compiled steps: :func:`compile`, and :class:`Compiled`, which keeps a
function's recordings by signature and picks the one a call replays (see :mod:`pgas.array.step`)."""

from __future__ import annotations

import functools
import types
import weakref

from ... import comm
from ...exec import statement as engine_statement
from .. import engine
from ..expr import CaptureError, Param
from .record import SCALARS, Recorder
from .replay import Program
from .watch import PKG, Watch


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
        #: The last call's arguments (scalars by type, arrays by weak reference: the step keeps
        #: no argument alive) and program: a repeat skips the signature.
        self.last = None
        #: Calls that replayed, recorded, ran ``fn`` plainly; statements replayed by their
        #: compiled forms (``fast``) and run the usual way within a replay (``slow``).
        self.stats = {"replays": 0, "records": 0, "plain": 0, "fast": 0, "slow": 0}

    def __call__(self, *args, **kwargs):
        if kwargs or engine_statement.explaining or engine.capturing or engine._tracers:    # (engine.tracing())
            self.stats["plain"] += 1
            return self.fn(*args, **kwargs)
        last = self.last
        prog = sig = None
        if last is not None and len(args) == len(last[0]):
            prog = last[1]                      # the arrays and scalar types of the last call
            for a, b in zip(args, last[0]):
                if a is not b and type(a) is not b and (type(b) is not weakref.ref or b() is not a):
                    prog = None
                    break
        if prog is None:
            sig = _signature(args)
            prog = self.programs.get(sig)
        if prog is None or not prog.watch.same():       # (prog.current())
            if sig is None:
                sig = _signature(args)
            self.last = None
            prog = self._record(sig, args)
            if prog is None:
                return None                     # recorded and run
        if sig is not None or self.last is None:
            self.last = (tuple([type(a) if isinstance(a, SCALARS) else weakref.ref(a) if engine.is_array(a) else a
                               for a in args]), prog)
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
            prog = self.programs[sig] = Program(self.fn, args, [], Watch(self.fn), _why_unsupported(args))
            return prog
        watch = Watch(self.fn)
        rec = Recorder(args, watch)
        params = [Param(k, _arg_name(self.fn, k), a) if isinstance(a, SCALARS) else a for k, a in enumerate(args)]
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
        prog = Program(self.fn, args, rec.stmts, watch, reason)
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
        elif isinstance(a, SCALARS):
            sig.append(type(a))
        else:
            return None
    return tuple(sig)


def _why_unsupported(args) -> str:
    for k, a in enumerate(args):
        if not engine.is_array(a) and not isinstance(a, SCALARS):
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
        if not f.startswith(PKG) and "/numpy/" not in f:
            where = f"{f}:{tb.tb_lineno}"
        tb = tb.tb_next
    text = str(e) if isinstance(e, CaptureError) else f"{type(e).__name__}: {e}"
    return text + (f" (at {where})" if where else "")


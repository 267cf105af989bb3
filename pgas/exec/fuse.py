"""Fused local kernels: a task's expression program as one compiled loop nest.

The NumPy path (:func:`pgas.exec.tasks.evaluate`) runs an expression tree as one
ufunc call per node, each making a temporary and a pass over memory.  This
module turns the same program into the source of one loop nest over the task's
strided views (one load per operand element, one store per result element, no
temporaries), compiles it with numba (the ``fast`` extra) and keeps the kernel
by the program's structure and dtypes, in memory and on disk, so a statement
run again (or in a later script) does not compile again.

Results are identical to the NumPy path, bit for bit: every node casts its
operands to the dtypes of the loop NumPy itself resolves for them
(``ufunc.resolve_dtypes``, NEP 50 rules for Python scalars, which are converted
by NumPy before the call), computes in that dtype and casts the result to the
loop's output dtype, so promotion, integer wrap-around, ``x // 0 == 0``,
``MIN // -1 == MIN`` and IEEE infinities and NaNs of float division match.
Only operations whose NumPy loops are exactly one IEEE operation (or an
integer operation) are compiled: ``+ - * / // %`` (``//`` and ``%`` on
integers), negation, ``abs``, ``square``, ``sqrt``, comparisons, logical and
bitwise operations, ``minimum``/``maximum`` on integers, and ``where``, on
bool, integer, float32 and float64 data.  Anything else (transcendental
functions, whose NumPy SIMD loops round differently from libm; float ``//``,
``%``, ``minimum`` and ``maximum`` with their signed-zero rules; complex and
float16 data; ufunc keyword arguments) leaves the task on the NumPy path.  A
kernel's floating-point errors are reported from the processor's flags
(:func:`pgas.exec.fperr.compiled`): by category, not naming the ufunc, and an
integer division by zero or ``MIN // -1`` sets none; the values are the same.

``pg.config(fuse=...)``: ``"auto"`` (default) fuses tasks of at least
:data:`FUSE_MIN` elements of a program run at least :data:`FUSE_AFTER` times
(numba's start-up, about 1-2 s per process even with every kernel cached on
disk, and a compilation must pay for themselves), and a program's smaller tasks
once it has a kernel or has put :data:`FUSE_MIN` elements through NumPy in them
(a stencil's border tasks, a statement cut small over many locales), unless it
divides integers (:func:`_small`); in a compiled step's replay (:data:`replaying`) its small
tasks too (once their kernel has been asked for :data:`FUSE_AFTER` times): the step repeats them, so a kernel
compiled (or loaded) once is repaid, and a replayed statement keeps its kernel calls
(:mod:`pgas.exec.persistent`), which cost less Python than NumPy's path;
``True`` fuses every task it can, ``False`` none.  Without numba every task takes the NumPy path.

Each kernel is kept as a :class:`pgas.exec.workers.Split`: with ``pg.config(threads=N)``
a large call runs over blocks of its outermost loop on the locale's threads (the same
values; at one thread the kernel is called as it is).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import fperr, fusecode, fuserows, settings, workers

#: Elements a task needs in ``fuse="auto"`` mode to be run by a kernel ...
FUSE_MIN = 1 << 16
#: ... and how many times its program must have been run (numba's start-up in a process
#: costs about 1-2 s, and compiling a kernel 0.3-1 s: a short script should not pay them).
FUSE_AFTER = 3

#: Counters: tasks fused, tasks left to NumPy (by reason), kernels compiled or loaded,
#: tasks run by a row kernel (:mod:`pgas.exec.fuserows`).
stats = {"fused": 0, "numpy": 0, "kernels": 0, "rows": 0}

class Unfusable(Exception):
    """The program (or a value in it) has something no kernel computes exactly."""


def load_numba():
    """The numba module, or None when it cannot be imported (then nothing fuses)."""
    global _NUMBA
    if _NUMBA is _UNSET:
        try:
            import numba

            from .. import numbacache
            numbacache.install()
            _NUMBA = numba
        except ImportError:
            _NUMBA = None
    return _NUMBA


_UNSET = object()
_NUMBA = _UNSET
_kernels: dict = {}
_seen: dict = {}
#: Bumped by :func:`reset`: kernel calls recorded before it (:data:`capture`) are not made again.
generation = [0]


def reset() -> None:
    """Forget the loaded compiler and kernels (tests simulate numba's absence with it)."""
    global _NUMBA
    _NUMBA = _UNSET
    generation[0] += 1
    _kernels.clear()
    _seen.clear()
    _programs.clear()
    _small_seen.clear()
    stats.update(fused=0, numpy=0, kernels=0, rows=0)


def _cast(code: str, src: np.dtype, dst: np.dtype) -> str:
    if src == dst:
        return code
    if dst.kind == "b":
        return f"({code} != 0)"
    return f"{dst.name}({code})"


def _scalar_dtype(v):
    """The dtype NumPy resolves a constant operand with (Python int/float are weak: NEP 50)."""
    if isinstance(v, bool):
        return np.dtype(bool)
    if isinstance(v, (int, float)):
        return type(v)
    if isinstance(v, (np.generic, np.ndarray)):
        return v.dtype
    raise Unfusable(f"constant of type {type(v).__name__}")


class _Analysis:
    """Walk a program once: its structure key, its kernel source, and per call the arguments."""

    def __init__(self, dtypes) -> None:
        self.dtypes = dtypes           # access number -> dtype
        self.key: list = []
        self.params: list = []         # per leaf, in order: ("arr", None) or ("const", dtype)

    def node(self, prog):
        """(code, dtype) of ``prog``; appends to the key and the parameters."""
        kind = prog[0]
        if kind == "acc":
            return self.leaf(("acc", self.dtypes[prog[1]]), self.dtypes[prog[1]])
        if kind == "np":
            return self.leaf(("np", prog[1].dtype), prog[1].dtype)
        if kind == "aff":
            return self.leaf(("aff",), np.dtype(np.int64))
        if kind == "const":
            raise Unfusable("constant outside a call")
        func, args, kwargs = prog[1], prog[2], prog[3]
        if kwargs:
            raise Unfusable("ufunc keyword arguments")
        if func is np.where:
            return self.where(args)
        name = getattr(func, "__name__", None)
        table = fusecode.BIN if len(args) == 2 else fusecode.UN if len(args) == 1 else {}
        if not isinstance(func, np.ufunc) or name not in table:
            raise Unfusable(f"{name} is not compiled")
        self.key.append(("call", name))
        ins = [self.operand(a) for a in args]
        try:
            loop = func.resolve_dtypes(tuple(d for _, d in ins) + (None,))
        except (TypeError, ValueError) as e:
            raise Unfusable(str(e)) from None
        if any(np.dtype(d) not in fusecode.DTYPES for d in loop) or len(set(loop[:-1])) != 1:
            raise Unfusable(f"{name} loop {loop}")
        kind_ = loop[0].kind
        template = next((t for kinds, t in table[name].items() if kind_ in kinds), None)
        if template is None:
            raise Unfusable(f"{name} on {loop[0]}")
        codes = [self.bind(c, d, loop[0]) for c, d in ins]
        return _cast(template.format(*codes, t=loop[0].name), _result(name, loop[0]), loop[-1]), loop[-1]

    def where(self, args):
        self.key.append(("call", "where"))
        ins = [self.operand(a) for a in args]
        probes = [np.empty(0, d) if isinstance(d, np.dtype) else v for (_, d), v in
                  zip(ins, [a[1] if a[0] == "const" else None for a in args])]
        out = np.where(*probes).dtype
        if out not in fusecode.DTYPES:
            raise Unfusable(f"where on {out}")
        for (_, d), a in zip(ins[1:], args[1:]):
            if not isinstance(d, np.dtype):
                self.key.append(("value", a[1]))      # the result dtype may depend on a Python scalar's value
        c, x, y = (self.bind(code, d, t) for (code, d), t in zip(ins, (np.dtype(bool), out, out)))
        return f"({x} if {c} else {y})", out

    def operand(self, prog):
        """(code or pending constant, dtype) of a call's argument."""
        if prog[0] == "const":
            d = _scalar_dtype(prog[1])
            if isinstance(d, np.dtype) and d not in fusecode.DTYPES:
                raise Unfusable(f"constant of dtype {d}")
            self.key.append(("const", d))
            self.params.append(["const", None])        # a slot in leaf order; its dtype comes with the loop
            return len(self.params) - 1, d
        return self.node(prog)

    def bind(self, code, src, dst: np.dtype) -> str:
        """The operand as ``dst``; a constant becomes a kernel parameter converted by NumPy."""
        if isinstance(code, int):
            self.params[code][1] = dst
            return f"c{code}"
        return _cast(code, src, dst)

    def leaf(self, key, dtype):
        self.key.append(key)
        self.params.append(["arr", None])
        return f"c{len(self.params) - 1}[IDX]", dtype


def _result(name: str, dt: np.dtype) -> np.dtype:
    """The dtype of a template's expression before its cast (comparisons give bool)."""
    bools = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
             "logical_and", "logical_or", "logical_xor", "logical_not")
    if name in bools:
        return np.dtype(bool)
    # numba computes small integers as int64, and is not relied on to round float32 results:
    # anything but int64, float64 and bool gets an explicit cast to the loop's output dtype
    return dt if dt in (np.dtype(np.int64), np.dtype(np.float64), np.dtype(bool)) else np.dtype(np.int64)


def _load(source: str):
    """The ``kernel`` function of ``source``, from a module file named by its hash."""
    stats["kernels"] += 1
    return fusecode.load_module(source, "fuse").kernel


def kernel_for(prog, dtypes, ndim: int, hot: bool = True, rows=None):
    """``(kernel, params, dtype)`` for a program, or raise :class:`Unfusable`.  With
    ``hot=False`` a program not compiled yet raises :class:`Unfusable` until it has been
    asked for :data:`FUSE_AFTER` times (``"auto"`` mode).  ``rows``: ``(kinds, outer
    axes)`` of a row kernel (:mod:`pgas.exec.fuserows`) instead of the generic one."""
    a = _Analysis(dtypes)
    code, dtype = a.node(prog)
    return _kernel(a, code, dtype, ndim, hot, rows)


def _kernel(a, code, dtype, ndim, hot, rows):
    key = (tuple(a.key), ndim)
    full = key if rows is None else key + rows
    k = _kernels.get(full)
    if k is None:
        if ndim < 1:
            raise Unfusable("0-dimensional task")
        if key not in _seen or _seen[key] < FUSE_AFTER:
            _seen[key] = _seen.get(key, 0) + 1
            if not hot and _seen[key] < FUSE_AFTER:
                raise Unfusable("not run often enough yet")
        if load_numba() is None:
            raise Unfusable("numba is not installed")
        src = (fusecode.source(code, len(a.params), ndim) if rows is None
               else fuserows.source(code, a.params, rows[0], rows[1], fusecode.HELPERS))
        k = _kernels[full] = (_split(_load(src), a.params, rows), a.params, dtype)
    return k


def _split(kernel, params, rows):
    """``kernel`` as a :class:`pgas.exec.workers.Split`: a large call runs over blocks of its
    outermost loop on the locale's threads (a row kernel's by :func:`fuserows.cut`, the
    generic kernel's by slicing its arrays' first axis)."""
    if rows is None:
        arrays = (0,) + tuple(1 + k for k, (p, _) in enumerate(params) if p == "arr")
        return workers.Split(kernel, _measure, functools.partial(_cut, arrays))
    return workers.Split(kernel, fuserows.measure, functools.partial(fuserows.cut, fuserows.offsets(params, rows[0])))


def _measure(args):
    return args[0].size, args[0].shape[0]


def _cut(arrays, args, start, stop):
    got = list(args)
    for k in arrays:
        got[k] = args[k][start:stop]
    return got


def _leaves(prog, ctx, out, lazy=False):
    kind = prog[0]
    if kind == "acc":
        out.append(prog[1] if lazy else ctx.access(prog[1]))        # lazy: the access number
    elif kind == "np":
        out.append(ctx.replicated(prog[1]))
    elif kind == "aff":
        out.append(ctx.affine(prog[1], prog[2]))
    elif kind == "const":
        out.append(prog[1])
    else:
        for a in prog[2]:
            _leaves(a, ctx, out, lazy)
    return out


#: Elements each program has put through the NumPy path in small tasks (``"auto"`` mode):
#: ``key -> (program, elements)``, at most :data:`PROGRAM_CACHE` programs, only those that
#: :func:`_keeps` (one lowered afresh on every run has nothing to count, and would be held).
_small_seen: dict = {}


def _small(prog, dtypes, shape) -> bool:
    """Whether a task of ``shape`` takes the NumPy path under ``fuse="auto"`` for its size
    alone: it has fewer than :data:`FUSE_MIN` elements, its program has no kernel yet,
    and the program's small tasks have not yet put :data:`FUSE_MIN` elements through
    NumPy in this process.  So a stencil's border tasks use the kernels its interior
    compiled, and a statement cut into small tasks on many locales (strong scaling)
    is compiled once it has run often enough, while a short script compiles nothing.
    While a compiled step replays (:data:`replaying`) no task is small: the step repeats
    its statements, which then keep their kernel calls.  A program that is not kept (:func:`_keeps`: a replicated NumPy operand), or that
    divides integers (:data:`_DIVIDES`: NumPy warns of a division by zero, a kernel
    cannot), keeps its small tasks on NumPy."""
    size = math.prod(shape)
    if size >= FUSE_MIN:
        return False
    key = (id(prog), tuple(dtypes))
    seen = _small_seen.get(key)
    if seen is not None and seen[0] is prog:
        if seen[1] < 0:
            return True
        total = size + seen[1]
    elif not _keeps(prog):
        return True          # lowered afresh on every run: held here, it would keep its NumPy operands alive
    elif _divides(prog):
        _remember(key, prog, -1)
        return True
    else:
        total = size
    if replaying:
        return False
    P = _programs.get(key)
    if P is not None and P.prog is prog and P.kernels:
        return False
    _remember(key, prog, min(total, FUSE_MIN))
    return total < FUSE_MIN


def _remember(key, prog, total: int) -> None:
    if key not in _small_seen and len(_small_seen) >= PROGRAM_CACHE:
        del _small_seen[next(iter(_small_seen))]
    _small_seen[key] = (prog, total)


#: Ufuncs whose errors a kernel does not report (an integer division by zero, or ``MIN // -1``,
#: sets no processor flag): a program calling one keeps its small tasks on NumPy, which warns.
_DIVIDES = frozenset({"floor_divide", "remainder", "fmod", "divmod"})


def _divides(prog) -> bool:
    """Whether ``prog`` calls one of :data:`_DIVIDES`."""
    if prog[0] != "call":
        return False
    return getattr(prog[1], "__name__", None) in _DIVIDES or any(_divides(a) for a in prog[2])


#: What :func:`evaluate` returns when the kernel stored the values in the target itself.
WRITTEN = object()

#: True while a compiled step (``pg.compile``) replays its recorded statements: their small
#: tasks are run by kernels too (:func:`_small`).
replaying = False

#: A list while a compiled statement records the kernel calls of its run
#: (:mod:`pgas.exec.persistent`): each fused task appends ``(kernel, args)``, or None when its
#: arguments are not the same on a repeat (a constant converted per call).
capture = None


def in_place(plan, dtypes, axes, structure_only: bool = False) -> bool:
    """True if a statement's kernels may store straight into the written array's local
    elements while the statement still reads: a plain assignment (no reduction) that no
    other locale writes into here, whose written array is read by no access but the
    written one itself (``x[s] = x[s] + ...``: each element is read by the loop step
    that writes it, before the store), so no task reads an element another task (or
    step) has already written, and no other locale reads the written array here (it
    would read elements it computes, so it would write them here too).  Other locales
    may be reading this locale's other arrays meanwhile.  ``structure_only``: the plan's
    part alone, without the ``fuse`` setting's (a pure function of the plan)."""
    stmt = plan.stmt
    W = stmt.write
    slot = stmt.accesses[W].slot
    return ((structure_only or settings.get("fuse") is not False) and not axes and stmt.reduce is None and not plan.accumulate
            and not plan.writers
            and all(x.slot != slot or x == stmt.accesses[W] for k, x in enumerate(stmt.accesses) if k != W))


def evaluate(prog, ctx, shape, dtypes, target=None):
    """The value of ``prog`` on one task of ``shape`` computed by a kernel, or None
    when the task is to take the NumPy path (see :func:`_small`, :class:`Unfusable`).
    ``dtypes`` maps access numbers to dtypes.  With ``target`` (a view of the written
    elements, see :func:`in_place`) of the result's dtype the kernel stores there and
    :data:`WRITTEN` is returned.  What depends only on the program and the dtypes is
    worked out once (:class:`_Program`); a row kernel's loop shape is memoised by its
    operands' offsets and strides."""
    mode = settings.get("fuse")
    if prog[0] != "call" or not mode or fperr.numpy_only or (mode is not True and _small(prog, dtypes, shape)):
        stats["numpy"] += 1
        return None
    P = _program(prog, tuple(dtypes))
    if P.code is None:
        stats["numpy"] += 1
        return None
    try:
        direct = target is not None and target.dtype == P.dtype
        out = target if direct else np.empty(shape, P.dtype)
    except (Unfusable, OverflowError, TypeError, ValueError):
        stats["numpy"] += 1
        return None
    bound = P.bound.get((id(ctx.task), direct))
    args = None if bound is None else bound.arguments(ctx, out)
    if args is not None:                              # a repeat of this task: its row layout as bound
        fperr.compiled(bound.kernel, args)          # NumPy's warnings from the processor's flags
        if capture is not None:
            capture.append((bound.kernel, args) if direct and P.keep else None)
        stats["fused"] += 1
        stats["rows"] += 1
        return WRITTEN if direct else out
    try:
        specs = [fuserows.address(ctx, None if direct else out, shape)]
        specs += [fuserows.address(ctx, _lazy(n, ctx), shape) for n in P.arrays]
        lay = fuserows.layout(shape, specs, P.layouts)
        rows = None if lay is None else (lay[1], len(lay[0]) - 1)
        kernel = P.kernels.get((len(shape), rows))
        if kernel is None:
            kernel = _kernel(P.analysis, P.code, P.dtype, len(shape), mode is True, rows)[0]
            P.kernels[(len(shape), rows)] = kernel
        if lay is None:
            vals = _leaves(prog, ctx, [])
            args = [out] + [np.broadcast_to(v, shape) if p == "arr" else np.array(v, dtype=d)[()]
                            for (p, d), v in zip(P.params, vals)]
        else:
            dims, _, specs = lay
            args = [dims, *specs[0]] + P.arguments(specs)
            _Bound.make(P, ctx, direct, lay, kernel, out)
    except (Unfusable, OverflowError, TypeError, ValueError):
        stats["numpy"] += 1
        return None
    fperr.compiled(kernel, args)
    if capture is not None:
        capture.append((kernel, args) if direct and P.keep and lay is not None
                       and all(n[0] == "acc" for n in P.arrays) else None)
    stats["fused"] += 1
    stats["rows"] += lay is not None
    return WRITTEN if direct else out


class _Bound:
    """A task's row-kernel call as its first run laid it out (:func:`fuserows.layout`),
    for its repeats: where each operand's flat buffer comes from (the output, a local
    array's storage by slot, or a message buffer by number), its offset and outer
    strides.  A repeat takes the buffers of its own run, and is used only if they are
    as the layout needs them (flat, C-contiguous, the output's buffer shared by the
    same operands as before); otherwise the generic path lays the task out afresh."""

    __slots__ = ("P", "task", "stmt", "kernel", "dims", "places", "outer", "shared")
    #: Bound tasks a program keeps (the dict starts again when full).
    LIMIT = 256

    @classmethod
    def make(cls, P, ctx, direct: bool, lay, kernel, out) -> None:
        if not ctx.aggregate or ctx.copies or not all(n[0] == "acc" for n in P.arrays):
            return                                    # (privatise=False's copies: laid out as copies, not slots)
        task, stmt = ctx.task, ctx.plan.stmt
        places = [("slot", stmt.accesses[stmt.write].slot) if direct else ("out", 0)]
        for n in P.arrays:
            ref = task.refs[n[1]]
            places.append(("slot", stmt.accesses[n[1]].slot) if ref.msg < 0 else ("buf", ref.msg))
        b = cls()
        b.P, b.task, b.stmt, b.kernel, b.dims, b.places = P, task, stmt, kernel, lay[0], places
        b.outer = [None if x is None else (x[1], x[2]) for x in lay[2]]
        first = b._buffers(ctx, out)
        b.shared = None if first is None else tuple(f is first[0] for f in first)
        if len(P.bound) >= cls.LIMIT:
            P.bound.clear()
        P.bound[(id(task), direct)] = b

    def _buffers(self, ctx, out):
        got = []
        try:
            for kind, i in self.places:
                f = out.reshape(-1) if kind == "out" else ctx.flats[i] if kind == "slot" else ctx.bufs[i]
                if type(f) is not np.ndarray or f.ndim != 1 or not f.flags.c_contiguous:
                    return None
                got.append(f)
        except (IndexError, KeyError, TypeError):
            return None                               # buffers of another kind (baseline, strips)
        return got

    def arguments(self, ctx, out):
        """The kernel's arguments for this run, or None when the layout does not apply."""
        if (ctx.task is not self.task or ctx.plan.stmt is not self.stmt or self.shared is None or not ctx.aggregate
                or ctx.copies):
            return None
        flats = self._buffers(ctx, out)
        if flats is None or tuple(f is flats[0] for f in flats) != self.shared:
            return None
        specs = [None if x is None else (f, x[0], x[1]) for f, x in zip(flats, self.outer)]
        try:
            return [self.dims, *specs[0]] + self.P.arguments(specs)
        except (OverflowError, TypeError, ValueError):
            return None                               # (a constant's conversion: as the generic path finds)


def _lazy(node, ctx):
    """An array leaf as :func:`fuserows.address` takes it: an access's number, else its value."""
    return node[1] if node[0] == "acc" else _leaves(node, ctx, [])[0]


#: Analysed programs by ``(id(program), access dtypes)``.  Each entry holds its program,
#: so no other program can have that id while the entry lives; oldest dropped first.
_programs: dict = {}
PROGRAM_CACHE = 512


def _program(prog, dtypes: tuple) -> "_Program":
    key = (id(prog), dtypes)
    P = _programs.get(key)
    if P is None or P.prog is not prog:
        P = _Program(prog, dtypes)
        if P.keep:
            if len(_programs) >= PROGRAM_CACHE:
                del _programs[next(iter(_programs))]
            _programs[key] = P
    return P


_IMMUTABLE = (bool, int, float, np.generic)


def _keeps(prog) -> bool:
    """Whether ``prog`` may be held between runs: it has no replicated NumPy array and no
    0-d array constant (such a program is lowered afresh on every run, the front end's
    lowering memo skips it: held, it would only keep those arrays alive)."""
    return all(n[0] in ("acc", "aff") or (n[0] == "const" and isinstance(n[1], _IMMUTABLE))
               for n in _nodes(prog, []))


class _Program:
    """One program over given access dtypes, analysed once (a pure function of them):
    the kernel expression (``code`` None: unfusable), its parameters, its array leaves,
    its constants converted to their loops' dtypes (immutable ones; a 0-d array may
    change between runs and is converted per call), the kernels found per loop shape
    and the row layouts seen (:func:`fuserows.layout`)."""

    def __init__(self, prog, dtypes) -> None:
        self.prog, self.code, self.kernels, self.layouts, self.bound = prog, None, {}, {}, {}
        # a program with a replicated NumPy array or a 0-d array constant is lowered afresh on
        # every run (the front end's lowering memo skips it): kept here it would only keep those arrays alive
        self.keep = _keeps(prog)
        try:
            a = _Analysis(dtypes)
            code, self.dtype = a.node(prog)
            leaves = _nodes(prog, [])
            consts = [np.array(n[1], dtype=d)[()] if p == "const" and isinstance(n[1], _IMMUTABLE) else None
                      for (p, d), n in zip(a.params, leaves)]
        except (Unfusable, OverflowError, TypeError, ValueError):
            return                                  # as every call would find: the NumPy path
        self.analysis, self.params, self.code = a, a.params, code
        self.arrays = [n for (p, _), n in zip(a.params, leaves) if p == "arr"]
        self.consts = [(p == "arr", d, n[1], c) for (p, d), n, c in zip(a.params, leaves, consts)]

    def arguments(self, specs) -> list:
        """The row kernel's arguments after the output's (see :func:`fuserows.arguments`)."""
        args, k = [], 1
        for arr, d, v, c in self.consts:
            if arr:
                args += specs[0][:1] if specs[k] is None else specs[k]     # None: read through the output
                k += 1
            else:
                args.append(np.array(v, dtype=d)[()] if c is None else c)
        return args


def _nodes(prog, out: list) -> list:
    """The leaf nodes of ``prog``, depth first (the order of :class:`_Analysis`'s parameters)."""
    if prog[0] == "call":
        for a in prog[2]:
            _nodes(a, out)
    else:
        out.append(prog)
    return out

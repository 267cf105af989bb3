"""Floating-point errors that ``np.errstate(...="raise")`` turns on, raised on every
locale alike.

Under ``np.errstate(divide="raise")`` NumPy raises ``FloatingPointError`` when an
element divides by zero.  In a distributed statement only the locales holding such
an element would raise, in the middle of the statement's messages, and the others
would wait for them forever; and a compiled (numba) kernel raises nothing at all.
So while a statement runs with any category set to ``"raise"``, :func:`run`
turns those categories into ``"call"`` (NumPy reports each error to a callback and
goes on), keeps every task on the NumPy path (whose ufuncs check the flags), and
after the statement agrees by one reduction whether any locale saw an error: if
so, every locale raises ``FloatingPointError`` (the locales that saw none raise one
that is also a :class:`pgas.comm.LocaleError`).  The statement has then run to its
end; the arrays it wrote are put back as they were before (:class:`restoring`: their
local storage, ghost cells included, copied first while a category raises, nothing
copied otherwise), on every locale, as NumPy leaves ``T`` when ``T[:] = A / B`` raises
(its right side is a temporary): a slice assignment, one reading its own target, a
compiled step's statement (those before it keep their writes, as the function's
lines before it), a ``pg.forall`` (every statement of the loop), a group of statements.
Where NumPy writes before it raises, the target is written: a ufunc's ``out=``
(``np.divide(A, B, out=T)``, ``A += B``, ``A[1:] /= B[1:]``), a plain copy whose cast
raises (``T[:] = X[:]``, NaN into integers), ``update``/``scatter`` (``np.add.at``).
Reductions, scans, ``var``,
``matmul``, ``astype`` and ``update`` (:func:`agreeing`) report the errors of their local
parts and of combining done by NumPy; a whole-array ``sum``/``prod`` combined by an MPI
reduction reports an overflow of the combining itself when every partial result was
finite (the front end's whole-array reduction).  The user's own ``"call"`` and ``"log"``
categories still reach the user's callback (:class:`_Report`).  Nothing changes, and no
message is sent, when no category is set to ``"raise"``.

A ``"warn"`` category (NumPy's default) whose RuntimeWarning a warnings filter turns into
an exception (``warnings.simplefilter("error")``) would likewise raise on the locales
holding the element only, in the middle of the statement: while such a filter is set,
those categories are reported the same way and the RuntimeWarning raised on every locale
alike.  Every message names the locale(s) that saw the error (:func:`pgas.comm.agree`).
An error state set on some locales only makes them agree where the others do not: with
``pg.config(check=True)`` every locale then raises the same ``CollectiveMismatch``.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import comm
from ..comm import check, trace

#: Nonzero while a statement runs under :func:`run` with errors to report: every
#: task takes the NumPy path (:func:`pgas.exec.fuse.evaluate` reads it).
numpy_only = 0


def run(fn, arg, collective: bool = True, written=None):
    """``fn(arg)`` (a statement's execution, collective), with NumPy's ``"raise"``
    categories reported to a callback while it runs, then ``FloatingPointError`` raised on
    every locale alike if any locale saw one.  ``written``: None, or a function giving the
    :class:`pgas.exec.store.Store` of each array the statement writes, called only here
    (while a category raises): their local storage is copied first and put back before the
    error is raised (:class:`restoring`).  Without ``"raise"`` categories, inside
    another such run, or without ``collective`` (``pg.explain``, which runs nothing and
    may run on one locale): just ``fn(arg)``."""
    if numpy_only or not collective or not raising():
        return fn(arg)
    with restoring(written), _agreed():
        return fn(arg)


def raising() -> bool:
    """True if NumPy's error handling has a category set to ``"raise"``, or a ``"warn"``
    category whose RuntimeWarning a warnings filter turns into an error
    (``warnings.simplefilter("error")``): :func:`run` would report and agree."""
    return _state()[1] or _warnings_raise()


#: The filter list :func:`_warnings_raise` last read, its length and first filter, and its
#: answer.  The list and the filter are held, not only their ids: the list of a
#: ``warnings.catch_warnings()`` block, freed at its end, and the next block's list (its
#: first filter too) are made at the same addresses, so a block under ``"ignore"`` got the
#: answer of the block under ``"error"`` before it, and the other way round (a RuntimeWarning
#: then raised on the locale meeting it alone, in the middle of the statement); and as each
#: process reuses addresses in its own way, locales could answer differently.
_filters_seen: list = [None, 0, None, False]


def _warnings_raise() -> bool:
    """True if the warnings filters may turn NumPy's RuntimeWarning into an exception: the
    first filter for its category says ``"error"``, or one that names a message, module or
    line does (such a filter may match NumPy's warning).  Kept while the filter list is
    the same list, of the same length and with the same first filter (``simplefilter``
    and ``filterwarnings`` insert at its head, ``catch_warnings`` replaces it)."""
    import warnings

    fl = warnings.filters
    first = fl[0] if fl else None
    seen = _filters_seen
    if seen[0] is fl and seen[1] == len(fl) and seen[2] is first:
        return seen[3]
    got = False
    for action, msg, cat, mod, line in fl:
        if issubclass(RuntimeWarning, cat):
            if action == "error":
                got = True
                break
            if msg is None and mod is None and not line:
                break
    seen[:] = [fl, len(fl), first, got]
    return got


try:                     # NumPy 2: the error state is an immutable object in a context variable
    from numpy._core._ufunc_config import _extobj_contextvar as _EXTOBJ
except ImportError:      # pragma: no cover - another NumPy: ask it every time
    _EXTOBJ = None
_cached: list = [None, None]


def _state():
    """``(np.geterr(), any "raise", mask of the categories a kernel must report)`` for the
    current error state (a statement asks two or three times: ``np.geterr`` builds a
    dict each time, so the answer is kept while the state object is the same one;
    ``np.errstate`` and ``np.seterr`` set a new one)."""
    obj = None if _EXTOBJ is None else _EXTOBJ.get()
    if obj is not None and _cached[0] is obj:
        return _cached[1]
    err = np.geterr()
    fe = _fenv()
    mask = 0
    if fe is not None:
        for cat, bit in fe[2].items():
            if err[cat] != "ignore":
                mask |= bit
    got = (err, "raise" in err.values(), mask)
    if obj is not None:
        _cached[0], _cached[1] = obj, got
    return got


def raises_under(err: dict) -> bool:
    """True if :func:`run` may raise under error state ``err`` (an ``np.geterr()``): a
    category set to ``"raise"``, or a ``"warn"`` one while warnings are errors."""
    return "raise" in err.values() or ("warn" in err.values() and _warnings_raise())


class restoring:
    """``with restoring(written):`` the local storage of each store ``written()`` gives
    (:class:`pgas.exec.store.Store`: the flat block, ghost cells included) copied on
    entry, and copied back if the block raises ``FloatingPointError`` or a RuntimeWarning
    (what :class:`_agreed` raises on every locale alike), so that a statement that raises
    leaves its targets as they were, as NumPy's ``T[:] = A / B`` does (its right side is a
    temporary).  The ghost cells' state is left as the statement made it: a written array's
    ghost cells are no longer current, and the next ``update_ghosts`` fills them again.
    Nothing is copied where ``written`` is None."""

    __slots__ = ("saved", "stores")

    def __init__(self, written) -> None:
        self.saved: list = []
        self.stores: list = []
        if written is not None:
            for st in written():
                if not any(st is s for s in self.stores):
                    self.stores.append(st)
                    self.saved.append((st.storage, st.storage.copy()))

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, value, tb) -> None:
        saved, self.saved = self.saved, []
        if not saved or kind is None:
            return
        if not issubclass(kind, (FloatingPointError, RuntimeWarning)) and value is not _raised[0]:
            return                           # (NumPy's integer-power ValueError, agreed: put back too)
        for storage, copy in saved:
            storage[...] = copy
        if value is _raised[0]:              # raised on every locale alike: each has put its part back
            _raised[0] = None
            comm.barrier([st.window for st in self.stores])      # before any locale reads it one-sided


def agreeing(fn):
    """Decorator: the collective ``fn(*args, **kw)`` run under :func:`run` (a reduction: its
    local parts raise on every locale alike)."""
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        return run(lambda _: fn(*args, **kw), None)
    return wrapper


#: NumPy's flag bit of each category, as its error callback receives it.
_FLAGS = {"divide": 1, "over": 2, "under": 4, "invalid": 8}


class _Report:
    """The error callback while :func:`run` runs: the ``"raise"`` categories, and the
    ``"warn"`` ones when warnings are errors (all turned into ``"call"``), are
    remembered; the user's own ``"call"`` and ``"log"`` categories still go to
    the callback the user set (``np.seterrcall``), as NumPy would send them (they are not
    errors to raise, and a ``"log"`` category must not raise AttributeError on one locale)."""

    def __init__(self, raising, warning, user) -> None:
        self.mask = sum(_FLAGS[k] for k in raising)
        self.warn = sum(_FLAGS[k] for k in warning)
        self.user = user
        self.seen: str | None = None
        self.kind: type = FloatingPointError

    def __call__(self, kind, flag) -> None:
        if flag & (self.mask | self.warn):
            if self.seen is None:
                self.seen = kind
                self.kind = FloatingPointError if flag & self.mask else RuntimeWarning
        elif self.user is not None:
            self.user(kind, flag)

    def write(self, msg) -> None:
        self.user.write(msg)


#: What a locale with errors to agree on calls, as :func:`pgas.comm.check.collective` shows it
#: (with checking on, a locale whose error state alone raises meets the others' next call).
AGREE_CALL = "a statement's floating-point errors (np.errstate raise, or warnings as errors)"


class _agreed:
    """While a statement runs: the categories to report turned into ``"call"``
    (:class:`_Report`); then one agreement on what any locale saw.  (A class, not a
    ``contextlib`` generator, so the agreement's caller, as checking shows it, is the
    user's line.)"""

    def __enter__(self) -> None:
        global numpy_only
        err = np.geterr()
        raising = [k for k, v in err.items() if v == "raise"]
        warning = [k for k, v in err.items() if v == "warn"] if _warnings_raise() else []
        self.report = _Report(raising, warning, np.geterrcall())
        self.state = np.errstate(call=self.report, **{k: "call" for k in raising + warning})
        self.state.__enter__()
        numpy_only += 1

    def __exit__(self, kind, value, tb) -> None:
        global numpy_only
        numpy_only -= 1
        self.state.__exit__(kind, value, tb)
        if kind is not None:                  # the statement raised (alike, or here alone): no agreement
            return
        report = self.report
        error = (report.kind(f"{report.seen} encountered in a distributed statement")
                 if report.seen is not None else None)
        try:
            if check.enabled:
                check.collective(AGREE_CALL, error=error)
            elif check.folding:                   # a locale whose error state alone raises: its call differs
                check.agree_history(AGREE_CALL, frame=check.call_site(), error=error)
            else:
                comm.agree(error)
        except (FloatingPointError, RuntimeWarning) as e:
            _raised[0] = e                        # the agreed error (restoring: every locale raises it)
            raise


#: The last error :class:`_agreed` raised (on every locale alike), for :class:`restoring`.
_raised: list = [None]


#: While a statement that may raise NumPy's integer-power ValueError on data runs under
#: :func:`deferring_powers` (a ``pg.forall`` record, whose exponent's data is not checked
#: first): the errors seen, None otherwise (read by :func:`pgas.exec.tasks.evaluate`).
power_errors: list | None = None

_NEGATIVE_POWER = "Integers to negative integer powers are not allowed."


def power_args(args, kwargs):
    """``np.power``'s arguments with a negative integer exponent, which NumPy's integer
    loop raises ValueError on, noted in :data:`power_errors` and replaced by 0 (the
    statement then runs to its end, and :func:`deferring_powers` raises on every locale)."""
    e = args[1]
    if isinstance(e, np.ndarray) and e.dtype.kind == "i" and e.size and e.min() < 0 \
            and integer_loop(np.power, args, kwargs):
        power_errors.append(_NEGATIVE_POWER)
        args = [args[0], np.maximum(e, 0), *args[2:]]
    return args


def integer_loop(ufunc, args, kwargs) -> bool:
    """True if NumPy computes ``ufunc(*args, **kwargs)`` with an integer loop, whatever an
    ``out=``'s dtype (``np.power(int_array, int_array, out=float_array)`` still raises on a
    negative exponent), probed on empty arrays of the arguments' dtypes."""
    probe = ufunc(*[np.empty(0, x.dtype) if isinstance(x, np.ndarray) else x for x in args], **kwargs)
    return probe.dtype.kind in "iu"


def deferring_powers(fn, arg, collective: bool = True):
    """``fn(arg)`` (a statement's execution, collective) on the NumPy path with integer
    powers' negative exponents noted instead of raised (:func:`power_args`), then NumPy's
    ValueError on every locale alike if any locale saw one (raised on the locale holding
    the element alone, a ``pg.forall`` record would leave the others waiting).  The
    statement has run to its end: a caller under :class:`restoring` puts its targets back."""
    global power_errors, numpy_only
    if power_errors is not None or not collective:
        return fn(arg)
    power_errors = []
    numpy_only += 1
    try:
        res = fn(arg)
    finally:
        numpy_only -= 1
        seen, power_errors = power_errors, None
    try:
        comm.agree(ValueError(_NEGATIVE_POWER) if seen else None)
    except ValueError as e:
        _raised[0] = e                       # raised on every locale alike (restoring: put targets back)
        raise
    return res


# -- compiled kernels: NumPy's warnings from the processor's floating-point flags --------------

@functools.lru_cache(maxsize=None)
def _fenv():
    """``(clear, test, {category: flag bit})`` of the C library's floating-point status
    (``feclearexcept``/``fetestexcept``), or None where this machine's bits are not known."""
    import ctypes
    import ctypes.util
    import platform

    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64", "i386", "i686", "x86"):
        bits = {"invalid": 0x01, "divide": 0x04, "over": 0x08, "under": 0x10}
    elif machine in ("aarch64", "arm64"):
        bits = {"invalid": 0x01, "divide": 0x02, "over": 0x04, "under": 0x08}
    else:
        return None
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        clear, test = libm.feclearexcept, libm.fetestexcept
    except (OSError, AttributeError):
        return None
    for f in (clear, test):
        f.argtypes, f.restype = [ctypes.c_int], ctypes.c_int
    return clear, test, bits


def in_thread(fn, args):
    """``(fn(*args), flags)``: a call made in a worker thread (:mod:`pgas.exec.workers`),
    with the floating-point flags it raised there (each thread has its own; 0 where the
    machine's bits are not known), for :func:`raise_flags` in the calling thread."""
    env = _fenv()
    if env is None:
        return fn(*args), 0
    clear, test, bits = env
    every = sum(bits.values())
    clear(every)
    got = fn(*args)
    return got, test(every)


def raise_flags(flags: int) -> None:
    """Set ``flags`` (from :func:`in_thread`) in this thread's floating-point status, as
    if its own code had raised them, so that :func:`compiled` reports them."""
    if flags:
        _raise()(flags)


@functools.lru_cache(maxsize=None)
def _raise():
    import ctypes
    import ctypes.util
    f = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").feraiseexcept
    f.argtypes, f.restype = [ctypes.c_int], ctypes.c_int
    return f


#: Each category's error made by NumPy itself, so that NumPy reports it as its
#: ``np.errstate`` says (warn, print, log, call; "raise" never reaches a kernel).
_MAKE = {"divide": lambda: np.divide(np.float64(1.0), np.float64(0.0)),
         "over": lambda: np.multiply(np.float64(1e308), np.float64(10.0)),
         "under": lambda: np.multiply(np.float64(1e-308), np.float64(1e-308)),
         "invalid": lambda: np.subtract(np.float64(np.inf), np.float64(np.inf))}


#: The same made by a NumPy reduction, whose message says ``"... encountered in reduce"``.
_MAKE_REDUCE = {"divide": lambda: np.divide.reduce(np.array([1.0, 0.0])),
                "over": lambda: np.add.reduce(np.array([1e308, 1e308])),
                "under": lambda: np.multiply.reduce(np.array([1e-308, 1e-308])),
                "invalid": lambda: np.add.reduce(np.array([np.inf, -np.inf]))}


def quietly(fn, args):
    """``(fn(*args), flags)``: ``fn`` called with NumPy's floating-point errors collected,
    not reported: ``flags`` or's their bits (:data:`_FLAGS`), for :func:`report_reduced`."""
    seen = [0]

    def note(kind, flag) -> None:
        seen[0] |= flag
    with np.errstate(call=note, all="call"):
        got = fn(*args)
    return got, seen[0]


def report_reduced(flags: int) -> None:
    """Report each category of ``flags`` (:func:`quietly`'s, or'ed over the parts of one
    reduction) once, as one NumPy reduction that met it reports it under the current
    ``np.errstate`` (a reduction split over threads warns once, as NumPy's own call)."""
    if flags:
        for cat, bit in _FLAGS.items():
            if flags & bit:
                _MAKE_REDUCE[cat]()


def cleared() -> int:
    """Start compiled calls made directly (no :func:`compiled` each): the flags of the
    categories to report cleared; the mask for :func:`reported` (0: nothing to report,
    or their bits are not known, or a trace is on: then call :func:`compiled` for each)."""
    if trace.on:
        return 0
    mask = _state()[2]
    if mask:
        _fenv()[0](mask)
    return mask


def reported(mask: int) -> None:
    """After the calls since :func:`cleared` returned ``mask``: each category that any of
    them met reported once, as one NumPy call that met it reports it."""
    if mask:
        clear, test, bits = _fenv()
        _report(test(mask), clear, bits)


def compiled_calls(calls) -> None:
    """Each ``kernel(*args)`` of ``calls`` in turn, as :func:`compiled` makes them, with the
    flags cleared before the first and read after the last (two C calls in all, none for
    no calls): each category that any of them met is reported once."""
    if not calls:
        return
    if trace.on:
        for kernel, args in calls:
            compiled(kernel, args)
        return
    mask = cleared()
    for kernel, args in calls:
        kernel(*args)
    reported(mask)


def _report(got: int, clear, bits) -> None:
    """Report the categories of flags ``got`` as NumPy would (then clear them)."""
    if got:
        clear(got)
        for cat, bit in bits.items():
            if got & bit:
                _MAKE[cat]()


def compiled(kernel, args) -> None:
    """``kernel(*args)``, a compiled (numba) kernel, with the floating-point errors it met
    reported as NumPy reports a ufunc's under the current ``np.errstate`` (a
    RuntimeWarning by default): numba's code sets the processor's flags but checks none.
    The flags are cleared before and read after the call (two C calls);
    nothing is read where every category is ``"ignore"`` or the machine's flag bits are
    not known.  An integer division by zero sets no flag, so it is not reported."""
    t0 = trace.on and trace.now()
    mask = _state()[2]
    if not mask:                          # (also where the flag bits are not known)
        kernel(*args)
        if t0:
            trace.add("kernel", "fused kernel", t0)
        return
    clear, test, bits = _fenv()
    clear(mask)
    kernel(*args)
    got = test(mask)
    if t0:
        trace.add("kernel", "fused kernel", t0)
    _report(got, clear, bits)

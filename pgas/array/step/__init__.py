"""Compiled steps: ``step = pg.compile(fn)`` records a time step's statements once and replays them.

The first call with a given *signature* (the layouts, dtypes, shapes and aliasing of
its DistArray arguments, the types of its scalar arguments) runs ``fn`` *dry*: each
scalar argument is a :class:`pgas.array.expr.Param`, and each assignment ``fn`` makes
(``A[...] = expr``, ``A[...] += expr``, ``np.add(A, B, out=C)``) is recorded instead of
run (its target view, its value tree, where each array comes from: an argument or a
global or closure variable, and where each parameter appears).  Whole-array arithmetic
(``A * 2.0 + C``), which outside a step makes a new array at once, builds the lazy
expression its views would (``A[...] * 2.0 + C[...]``), recorded as their statement; an
expression used other than as an assignment's value, or after a statement wrote an
array it reads, cannot be recorded (:class:`pgas.array.step.record.Recorder`).  Nothing runs while
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

from .call import Compiled, compile  # noqa: A004 (pg.compile, as jax.jit)

__all__ = ["Compiled", "compile"]

"""A polyshift set up once (the CM-200's PSHIFT_SETUP): :func:`pshift_setup` checks and plans
the shifts for every array of one shape, dtype and distribution; :class:`PShiftPlan` runs them,
compiled (persistent transfers), on any such array."""

from __future__ import annotations

import weakref

from .. import engine
from .. import statements as stmts
from ..collective import exchanging
from .spec import check_out, parse
from .statements import setup_plans


class PShiftPlan:
    """A polyshift set up once for arrays of one shape, dtype and distribution
    (:func:`pshift_setup`); call it as ``plan(A, out=None)``.  Free it with
    :meth:`free` or use it in a ``with`` block.

    Its runs are compiled (:mod:`pgas.exec.shiftgroup`): persistent MPI transfers,
    and NumPy views of the arrays of the last call, which the plan holds (with
    their memory) until it runs on other arrays or is freed."""

    def __init__(self, A, shifts) -> None:
        self.specs = parse(A, shifts, "pg.pshift_setup")
        self.shape, self.dtype, self.layout = A.shape, A.dtype, A.layout
        self.label = f"{A.dtype} array of shape {A.shape} with {A.dist}"
        self._proto = A
        self._dests, self._items = setup_plans(A, self.specs)
        self._fast = stmts.compile_group(self._items)
        self._live = True
        self._args = tuple(s.key() for s in self.specs)
        self._last = ()                                # weak references to the last checked arrays
        self._order = None                             # see _key_order (None: not known yet; (): none)

    def __call__(self, A, out=None):
        """Collective: run the shifts on ``A`` (like the prototype); see :func:`pshift`."""
        if not self._live:
            raise RuntimeError("pg.pshift_setup: this plan was freed")
        last = self._last
        if last and isinstance(out, (list, tuple)) and last[0]() is A and len(out) == len(last) - 1 \
                and all(w() is R for w, R in zip(last[1:], out)):
            outs = list(out)                           # the arrays of the last call: checked then
            exchanging("pshift plan({0})", A, args=self._args)
            order = self._order
            if order:                                  # the compiled group's arrays, in its order
                arrays = (A, *outs)
                if stmts.rerun(self._fast, [arrays[k] for k in order]):
                    return outs
        else:
            outs = self._check(A, out)
            self._last = tuple(weakref.ref(a) for a in [A, *outs]) if isinstance(out, (list, tuple)) else ()
            exchanging("pshift plan({0})", A, args=self._args)
        rebind = {id(self._proto): A, **{id(d): R for d, R in zip(self._dests, outs)}}
        stmts.run_planned(self._items, rebind, "pg.pshift", self._fast)
        if self._order is None and self._fast.ok:
            self._order = self._key_order() or ()
        return outs

    def _key_order(self):
        """Per array of the compiled group (in its order), its place in ``(A, *out)``; None
        if the group holds another array (an end-off boundary), which the plan does not rebind."""
        place = {id(self._proto): 0, **{id(d): k + 1 for k, d in enumerate(self._dests)}}
        keys = self._fast.keys
        return [place[k] for k in keys] if all(k in place for k in keys) else None

    def _check(self, A, out) -> list:
        """The destinations, after checking ``A`` and ``out`` (errors alike everywhere)."""
        if not engine.is_array(A):
            raise TypeError(f"pshift plan: the source must be a DistArray, got {type(A).__name__}")
        if (A.shape, A.dtype, A.layout.key) != (self.shape, self.dtype, self.layout.key):
            raise ValueError(f"pshift plan: set up for a {self.label}, used on a {A.dtype} array of shape "
                             f"{A.shape} with {A.dist}: make a plan per shape, dtype and distribution")
        return check_out(A, out, len(self.specs), "pshift plan")

    def free(self) -> None:
        """Release the plan (it cannot be used afterwards)."""
        if self._live:
            self._fast.free()
        self._live = False
        self.specs, self._items, self._dests, self._proto, self._last = [], [], [], None, ()

    def __enter__(self) -> PShiftPlan:
        return self

    def __exit__(self, *exc) -> None:
        self.free()

    def __repr__(self) -> str:
        state = "" if self._live else ", freed"
        return f"PShiftPlan({self.specs}, for a {self.label}{state})"


def pshift_setup(A, shifts) -> PShiftPlan:
    """Set up a polyshift once for every array of A's shape, dtype and distribution
    (the CM-200's PSHIFT_SETUP): the shifts are checked and planned once; run it
    with ``plan(B, out=None)``, free it with ``plan.free()`` or a ``with`` block.

    Parameters
    ----------
    A : DistArray
        A prototype array (its values are not used).
    shifts : sequence of tuple
        As for :func:`pshift`.

    Returns
    -------
    PShiftPlan

    Examples
    --------
    >>> with pg.pshift_setup(U, [(1, 0), (-1, 0)]) as plan:         # doctest: +SKIP
    ...     up, down = plan(U)
    """
    return PShiftPlan(A, shifts)

"""A polyshift set up once (the CM-200's PSHIFT_SETUP): :func:`pshift_setup` checks and plans
the shifts for every array of one shape, dtype and distribution; :class:`PShiftPlan` runs them,
compiled (persistent transfers), on any such array."""

from __future__ import annotations

import weakref

from .. import statements as stmts
from .spec import check_outs, parse, sources
from .statements import checked, run_bound, setup_plans


class PShiftPlan:
    """A polyshift set up once for arrays of one shape, dtype and distribution (or one
    such per source, for several sources; :func:`pshift_setup`); call it as
    ``plan(A, out=None)``.  Free it with :meth:`free` or use it in a ``with`` block.

    Its runs are compiled (:mod:`pgas.exec.shiftgroup`): persistent MPI transfers,
    and NumPy views of the arrays of the last call, which the plan holds (with
    their memory) until it runs on other arrays or is freed."""

    def __init__(self, A, shifts) -> None:
        srcs, self._several = sources(A, "pg.pshift_setup")
        self.specs = [parse(S, shifts, "pg.pshift_setup") for S in srcs]
        self._like = [(S.shape, S.dtype, S.layout.key) for S in srcs]
        self.label = " and ".join(f"{S.dtype} array of shape {S.shape} with {S.dist}" for S in srcs)
        self._protos = srcs
        self._dests, self._items = setup_plans(srcs, self.specs)
        self._fast = stmts.compile_group(self._items)
        self._live = True
        self._args = tuple(s.key() for row in self.specs for s in row)
        self._last = ()                                # weak references to the last checked arrays
        self._order = None                             # see _key_order (None: not known yet; (): none)

    def __call__(self, A, out=None):
        """Collective: run the shifts on ``A`` (like the prototype, or a sequence of sources
        like the prototypes); see :func:`pshift`."""
        if not self._live:
            raise RuntimeError("pg.pshift_setup: this plan was freed")
        srcs = list(A) if self._several and isinstance(A, (list, tuple)) else [A]
        outs = self._same(srcs, out)
        if outs is not None:                           # the arrays of the last call: checked then
            checked("pshift plan", srcs, self.specs, outs)
            order = self._order
            if order:                                  # the compiled group's arrays, in its order
                flat = (*srcs, *(R for row in outs for R in row))
                if stmts.rerun(self._fast, [flat[k] for k in order]):
                    return outs if self._several else outs[0]
        else:
            outs = self._check(A, out)
            flat = (*srcs, *(R for row in outs for R in row))
            self._last = tuple(weakref.ref(a) for a in flat) if isinstance(out, (list, tuple)) else ()
            checked("pshift plan", srcs, self.specs, outs)
        run_bound(self._items, self._fast, self._protos, self._dests, srcs, outs, "pg.pshift")
        if self._order is None and self._fast.ok:
            self._order = self._key_order() or ()
        return outs if self._several else outs[0]

    def _same(self, srcs, out):
        """``out`` as one list per source if the arrays are those of the last call (the same
        objects, so checked then), else None."""
        last = self._last
        if not last or not isinstance(out, (list, tuple)) or len(srcs) != len(self._protos):
            return None
        rows = [list(o) for o in out] if self._several else [list(out)]
        if self._several and not all(isinstance(o, (list, tuple)) for o in out):
            return None
        flat = (*srcs, *(R for row in rows for R in row))
        if len(flat) != len(last) or not all(w() is a for w, a in zip(last, flat)):
            return None
        return rows

    def _key_order(self):
        """Per array of the compiled group (in its order), its place in ``(*sources, *outs)``
        (flattened); None if the group holds another array (an end-off boundary), which
        the plan does not rebind."""
        place = {id(p): k for k, p in enumerate(self._protos)}
        n = len(self._protos)
        for d in (d for row in self._dests for d in row):
            place[id(d)] = n
            n += 1
        keys = self._fast.keys
        return [place[k] for k in keys] if all(k in place for k in keys) else None

    def _check(self, A, out) -> list:
        """The destinations, one list per source, after checking the sources and ``out``
        (errors alike everywhere)."""
        srcs, several = sources(A, "pshift plan")
        if several != self._several or len(srcs) != len(self._like):
            raise ValueError(f"pshift plan: set up for {len(self._like)} source(s) "
                             f"({'a sequence' if self._several else 'one array'}), called with "
                             f"{len(srcs) if several else 'one array'}")
        for S, like in zip(srcs, self._like):
            if (S.shape, S.dtype, S.layout.key) != like:
                raise ValueError(f"pshift plan: set up for a {self.label}, used on a {S.dtype} array of shape "
                                 f"{S.shape} with {S.dist}: make a plan per shape, dtype and distribution")
        return check_outs(srcs, out, len(self.specs[0]), "pshift plan", several)

    def free(self) -> None:
        """Release the plan (it cannot be used afterwards)."""
        if self._live:
            self._fast.free()
        self._live = False
        self.specs, self._items, self._dests, self._protos, self._last = [], [], [], [], ()

    def __enter__(self) -> PShiftPlan:
        return self

    def __exit__(self, *exc) -> None:
        self.free()

    def __repr__(self) -> str:
        state = "" if self._live else ", freed"
        specs = self.specs[0] if len(self.specs) == 1 else self.specs
        return f"PShiftPlan({specs}, for a {self.label}{state})"


def pshift_setup(A, shifts) -> PShiftPlan:
    """Set up a polyshift once for every array of A's shape, dtype and distribution
    (the CM-200's PSHIFT_SETUP): the shifts are checked and planned once; run it
    with ``plan(B, out=None)``, free it with ``plan.free()`` or a ``with`` block.

    Parameters
    ----------
    A : DistArray or sequence of DistArray
        A prototype array (its values are not used), or one per source for a
        polyshift of several sources (:func:`pshift`).
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

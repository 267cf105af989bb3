"""A lowered statement: what the engine runs.

The front end turns views, refs and expressions into
this form: the planner's :class:`pgas.plan.Statement`, the array of each slot, and
the right-hand side as a small *program*: nested tuples whose leaves are
``("acc", k)`` (access ``k``), ``("const", v)``, ``("np", array)`` (a replicated
NumPy array broadcast to the box) and ``("aff", coefs, const)`` (a loop variable
used as a value), with ``("call", func, args, kwargs)`` nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..plan import Statement


@dataclass
class Lowered:
    """A statement with what the executor needs besides the plan."""

    stmt: Statement
    arrays: list           # DistArray per slot
    prog: tuple            # the right-hand side program
    names: list            # array names per slot, for explain


def slot_name(a, k: int) -> str:
    """The name ``pg.explain`` and error messages give the array of slot ``k``."""
    return a.name or f"X{k}"

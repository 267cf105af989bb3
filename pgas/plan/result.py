"""The planner's results: immutable per-locale plans, messages, tasks."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .model import Statement


@dataclass(frozen=True)
class Ref:
    """Where one access's elements for one task live: the LMAD ``offset``/``strides``
    in the ``owner``'s local storage, and, when the owner is not the executing
    locale, the message (index ``msg`` in the executing locale's fetches, or
    write-backs for the write) and the strided view ``boffset``/``bstrides`` of
    its buffer."""

    owner: int
    offset: int
    strides: tuple[int, ...]
    msg: int = -1
    boffset: int = 0
    bstrides: tuple[int, ...] = ()


@dataclass(frozen=True)
class Task:
    """One piece as run by its executing locale: the lattice ``shape``
    ``(ntiles_0, len_0, ntiles_1, len_1, ...)``, one :class:`Ref` per access, and
    for a piece of a clipped domain the constraints that cut through it (over the
    shape's dims, :func:`pgas.plan.clip.mask`): only elements inside are written."""

    piece: int
    shape: tuple[int, ...]
    refs: tuple[Ref, ...]
    clip: tuple = ()


@dataclass(frozen=True)
class Message:
    """One message: the ``regions`` of array ``slot`` on locale ``peer``, moved
    as one contiguous buffer of ``size`` elements."""

    peer: int
    slot: int
    regions: tuple
    size: int


@dataclass(frozen=True)
class Plan:
    """What ONE locale does for one statement: its pieces (lattices per loop
    variable), its tasks, the messages it fetches before computing and writes
    back (or accumulates, see :attr:`accumulate`) after, and its *peers*: the
    locales that read its memory (``readers``) or write into it (``writers``)
    in this statement, with whom alone it synchronises.  Made for any locale by
    :func:`pgas.plan.planner.plan_local` without planning any other locale."""

    stmt: Statement
    nlocales: int
    locale: int
    kind: str                                   # "pieces" or "inspector"
    owning: int                                 # index of the owning access
    pieces: tuple                               # this locale's pieces: lattices per loop var
    tasks: tuple[Task, ...]
    fetches: tuple
    writebacks: tuple
    readers: tuple[int, ...] = ()
    writers: tuple[int, ...] = ()
    accumulate: str | None = None               # MPI op of the write-backs if they accumulate
    valid: bool = True                          # False: accumulate regions would overlap
    inspector: object = None                    # InspectorLocale for kind "inspector"

    @property
    def messages(self) -> int:
        """Messages this locale starts in aggregated mode."""
        return len(self.fetches) + len(self.writebacks)

    @property
    def moved(self) -> int:
        """Elements this locale moves in aggregated mode."""
        return sum(m.size for m in self.fetches + self.writebacks)

    @cached_property
    def reduce_axes(self) -> tuple[int, ...]:
        """Lattice axes the write ignores (summed / reduced before writing)."""
        return tuple(a for v in self.stmt.reduced_vars for a in (2 * v, 2 * v + 1))


@dataclass(frozen=True)
class GlobalPlan:
    """Every locale's :class:`Plan` of one statement, for tests and ``pg.explain`` at
    small locale counts (running a statement never builds one)."""

    stmt: Statement
    nlocales: int
    kind: str
    owning: int
    locales: tuple[Plan, ...]
    candidates: tuple[tuple[int, int, int], ...]  # (access, elements moved, messages) considered
    accumulate: str | None = None

    @property
    def pieces(self) -> list:
        """``(lattices, executing locale)`` of every piece."""
        return [(pc, lp.locale) for lp in self.locales for pc in lp.pieces]

    @property
    def messages(self) -> int:
        """Messages between distinct locales in aggregated mode."""
        return sum(lp.messages for lp in self.locales)

    @property
    def moved(self) -> int:
        """Elements moved between distinct locales in aggregated mode."""
        return sum(lp.moved for lp in self.locales)

    @cached_property
    def reduce_axes(self) -> tuple[int, ...]:
        return self.locales[0].reduce_axes if self.locales else ()

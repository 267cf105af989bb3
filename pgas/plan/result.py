"""The planner's results: immutable plans, per-locale parts, messages, tasks."""

from __future__ import annotations

from dataclasses import dataclass

from .model import Statement
from .pieces import Lattice


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
    ``(ntiles_0, len_0, ntiles_1, len_1, ...)`` and one :class:`Ref` per access."""

    piece: int
    shape: tuple[int, ...]
    refs: tuple[Ref, ...]


@dataclass(frozen=True)
class Message:
    """One message: the ``regions`` of array ``slot`` on locale ``peer``, moved
    as one contiguous buffer of ``size`` elements."""

    peer: int
    slot: int
    regions: tuple
    size: int


@dataclass(frozen=True)
class LocalePlan:
    """What one locale does: its tasks, the messages it fetches before computing
    and the messages it writes back (or accumulates, see :attr:`Plan.accumulate`) after."""

    tasks: tuple[Task, ...]
    fetches: tuple[Message, ...]
    writebacks: tuple[Message, ...]


@dataclass(frozen=True)
class Plan:
    """An immutable plan for one statement on ``nlocales`` locales."""

    stmt: Statement
    nlocales: int
    kind: str                                   # "pieces" or "inspector"
    owning: int                                 # index of the owning access
    pieces: tuple[tuple[tuple[Lattice, ...], int], ...]   # (lattices, executing locale)
    locales: tuple                              # LocalePlan (or inspector plans) per locale
    candidates: tuple[tuple[int, int, int], ...]  # (access, elements moved, messages) considered
    accumulate: str | None = None               # MPI op of the write-backs if they accumulate

    @property
    def messages(self) -> int:
        """Messages between distinct locales in aggregated mode."""
        return sum(len(lp.fetches) + len(lp.writebacks) for lp in self.locales)

    @property
    def moved(self) -> int:
        """Elements moved between distinct locales in aggregated mode."""
        return sum(m.size for lp in self.locales for m in lp.fetches + lp.writebacks)

    @property
    def any_fetch(self) -> bool:
        return any(lp.fetches for lp in self.locales)

    @property
    def any_writeback(self) -> bool:
        return any(lp.writebacks for lp in self.locales)

    @property
    def reduce_axes(self) -> tuple[int, ...]:
        """Lattice axes the write ignores (summed / reduced before writing)."""
        return tuple(a for v in self.stmt.reduced_vars for a in (2 * v, 2 * v + 1))

"""A lattice: one loop variable's part of a piece (:mod:`pgas.plan.pieces`), the unit the
planner's pieces, clipped domains (:mod:`pgas.plan.clip`) and strips
(:mod:`pgas.plan.strips`) are made of."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lattice:
    """One loop variable's part of a piece: ``i = first + du*u + dt*t``."""

    first: int
    du: int
    length: int
    dt: int
    ntiles: int

    def values(self) -> range | list:
        """The loop variable's values on this lattice (in (t, u) order)."""
        return [self.first + self.dt * t + self.du * u for t in range(self.ntiles) for u in range(self.length)]

"""Warnings that point at the user's line, not at pgas's.

``warnings.warn(..., stacklevel=k)`` names the file and line ``k`` frames up, and how many
frames lie between a warning raised deep in pgas and the user's call depends on the path
the call took.  :func:`warn` counts them: the warning names the first frame outside the
``pgas`` package (and NumPy, whose operator mixins forward to pgas), found by
:func:`pgas.comm.check.call_site`, as NumPy's own warnings name the caller's line.
"""

from __future__ import annotations

import sys
import warnings

from .check import call_site


def stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` called by this function's caller
    name the user's frame (2, the caller's caller, if every frame is pgas's)."""
    site = call_site()
    f, level = sys._getframe(1), 1
    while f is not None and f is not site:
        f, level = f.f_back, level + 1
    return level if f is not None else 2


def warn(message, category=UserWarning) -> None:
    """``warnings.warn(message, category)`` naming the user's line (:func:`stacklevel`)."""
    warnings.warn(message, category, stacklevel=stacklevel())


class GatherWarning(UserWarning):
    """A function computed on operands gathered to every locale instead of distributed (a copy of
    each whole array on every locale, for a moment).  ``warnings.simplefilter("error",
    pg.GatherWarning)`` finds every such call in a program; ``"ignore"`` silences them."""

"""What a distributed operand is, and the forms the front end's functions take it in.

A distributed operand is a DistArray, a View or a lazy expression; anything else
(a NumPy array, a scalar) is NumPy's.  Functions that need a DistArray take
:func:`source` (views and expressions materialised), those that need a View take
:func:`as_view`.  Both are collective when they materialise.
"""

from __future__ import annotations


def distributed(a) -> bool:
    """Whether ``a`` is a DistArray, a View or a lazy expression."""
    from .core import DistArray
    from .expr import Lazy

    return isinstance(a, (DistArray, Lazy))


def source(a):
    """``a`` as a DistArray: views and expressions are materialised (collective)."""
    from .core import DistArray

    if isinstance(a, DistArray):
        return a
    if hasattr(a, "eval"):
        return a.eval()
    raise TypeError(f"expected a distributed array, view or expression, got {type(a).__name__}")


def as_view(a):
    """``a`` (DistArray, View or expression) as a View (an expression is materialised)."""
    from .core import DistArray
    from .view import View

    if isinstance(a, View):
        return a
    if isinstance(a, DistArray):
        return View.whole(a)
    if hasattr(a, "eval"):
        return View.whole(a.eval())
    raise TypeError(f"expected a distributed array, view or expression, got {type(a).__name__}")

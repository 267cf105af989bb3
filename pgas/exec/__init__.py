"""Running statements: lowering front-end objects, executing plans, forall, explain.

Importing this package registers the executor with :mod:`pgas.array.engine`.
"""

from ..array import engine as _engine
from .settings import config
from .statement import Executor, execute, explain, forall

_engine.register(Executor())

__all__ = ["config", "explain", "forall", "execute", "Executor"]

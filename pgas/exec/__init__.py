"""The statement engine: running lowered statements, ghost cells, ``pg.config``, ``pg.explain``."""

from .settings import config
from .statement import explain

__all__ = ["config", "explain"]

"""The multi-locale harness (``harness.py``: hooks, the ``fused`` fixture, Hypothesis's profile)."""

from harness import *  # noqa: F401,F403

"""The pure planner (no MPI, no arrays): affine statements in, immutable plans out.

See :mod:`pgas.plan.model` for the statement form, :mod:`pgas.plan.pieces`
for the piece decomposition, :mod:`pgas.plan.transfers` for footprints and
messages, :mod:`pgas.plan.planner` for owner-computes and the cache, and
:mod:`pgas.plan.inspector` for the non-separable fallback.
"""

from .explain import describe, var_names
from .model import Access, PlanError, Statement
from .planner import ACCUMULATE_OPS, OWNER_POLICIES, candidates, choose, plan, plan_local
from .result import GlobalPlan, Message, Plan, Ref, Task

__all__ = ["Access", "Statement", "PlanError", "Plan", "GlobalPlan", "Message", "Ref", "Task", "plan",
           "plan_local", "candidates", "choose",
           "describe", "var_names", "OWNER_POLICIES", "ACCUMULATE_OPS"]
